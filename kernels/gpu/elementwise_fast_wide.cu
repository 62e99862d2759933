// Fast-path instantiations for float64 and the 32/64-bit integers: arithmetic and copies.
// Integers compute in int64 and wrap when stored (elementwise_values.cuh).
#include "kernels/gpu/elementwise_fast.cuh"

namespace nbx::gpu {
namespace {

#define NBX_ENTRY(OP, T, C, ARITY) fast_entry<abi::kOp_##OP, T, T, C, ARITY>()

constexpr FastEntry kEntries[] = {
    NBX_ENTRY(add, double, double, 2),     NBX_ENTRY(sub, double, double, 2),
    NBX_ENTRY(mul, double, double, 2),     NBX_ENTRY(div, double, double, 2),
    NBX_ENTRY(copy, double, double, 1),    NBX_ENTRY(add, std::int32_t, i64, 2),
    NBX_ENTRY(sub, std::int32_t, i64, 2),  NBX_ENTRY(mul, std::int32_t, i64, 2),
    NBX_ENTRY(copy, std::int32_t, i64, 1), NBX_ENTRY(add, i64, i64, 2),
    NBX_ENTRY(sub, i64, i64, 2),           NBX_ENTRY(mul, i64, i64, 2),
    NBX_ENTRY(copy, i64, i64, 1),
};

}  // namespace

FastTable fast_table_wide() {
  return {kEntries, int(sizeof(kEntries) / sizeof(kEntries[0]))};
}

}  // namespace nbx::gpu
