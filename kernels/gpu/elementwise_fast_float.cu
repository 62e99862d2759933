// Fast-path instantiations for float32, float16 and bfloat16 (the common ML dtypes): the ops
// that dominate models, plus the casts among the three. Every other (op, dtype) pair runs
// the generic kernel, which is exact but reads dtypes and the op at run time.
#include "kernels/gpu/elementwise_fast.cuh"

namespace nbx::gpu {
namespace {

#define NBX_UNARY(OP, T) fast_entry<abi::kOp_##OP, T, T, float, 1>()
#define NBX_BINARY(OP, T) fast_entry<abi::kOp_##OP, T, T, float, 2>()
#define NBX_FLOAT_OPS(T)                                                                       \
  NBX_BINARY(add, T), NBX_BINARY(sub, T), NBX_BINARY(mul, T), NBX_BINARY(div, T),              \
      NBX_BINARY(maximum, T), NBX_BINARY(minimum, T), NBX_UNARY(copy, T), NBX_UNARY(neg, T),   \
      NBX_UNARY(relu, T), NBX_UNARY(silu, T), NBX_UNARY(gelu_erf, T), NBX_UNARY(gelu_tanh, T), \
      NBX_UNARY(exp, T), NBX_UNARY(sigmoid, T), NBX_UNARY(tanh, T), NBX_GATED_OPS(T)
// The gated products (glu.hpp): the halves of an [n, 2d] input take the rows path (row
// stride 2d, unit column stride) with vector loads wherever d keeps them aligned.
#define NBX_GATED_OPS(T)                                                            \
  NBX_BINARY(sigmoid_mul, T), NBX_BINARY(silu_mul, T), NBX_BINARY(gelu_erf_mul, T), \
      NBX_BINARY(gelu_tanh_mul, T)
#define NBX_CAST(TIN, TOUT) fast_entry<abi::kOp_copy, TIN, TOUT, float, 1>()

constexpr FastEntry kEntries[] = {
    NBX_FLOAT_OPS(float),        NBX_FLOAT_OPS(bfloat16_t),    NBX_FLOAT_OPS(half_t),
    NBX_CAST(float, bfloat16_t), NBX_CAST(bfloat16_t, float),  NBX_CAST(float, half_t),
    NBX_CAST(half_t, float),     NBX_CAST(half_t, bfloat16_t), NBX_CAST(bfloat16_t, half_t),
};

}  // namespace

FastTable fast_table_16bit_and_float() {
  return {kEntries, int(sizeof(kEntries) / sizeof(kEntries[0]))};
}

}  // namespace nbx::gpu
