// Matrix products, PyTorch semantics, all through the one "matmul" kernel family
// (out[b] = alpha * A[b] @ B[b] + beta * addend[b]). Transposed and strided operands are
// read through their strides and broadcast batch dims through stride 0: no copies.
//
// dtypes: float16, bfloat16, float32, float64 and the integer types (as PyTorch on CPU;
// integer products wrap). Both operands (and the addend) must share one dtype. Half types
// accumulate in float32 on GPUs, the host reference in float64. On a device without native
// bf16 (the sm_70/sm_75 class) a float16 product returns float32, as overflow protection —
// plan_matmul() says so, and `nbx explain` shows it.
//
// Variant (MatmulPlan::variant, shown by `nbx explain`): on a device answering
// offers(matmul.blas) (CUDA with cuBLASLt loaded) floating dtypes take the vendor BLAS;
// on one answering offers(matmul.coopmat) float16/bfloat16 take the cooperative-matrix
// kernel; everything else (HIP, integers, a CUDA device whose cuBLASLt did not load) the own
// tiled kernel. NBX_MATMUL=tiled|blas|coopmat (read once) asks for one variant: tiled is
// always there, a variant the device lacks is refused by name (Unsupported), never swapped.
// The vendor BLAS reads row- or column-major matrices only: an operand whose last two dims
// have no unit stride (or overlapping rows) is first copied to a contiguous tensor on the
// device; a broadcast batch operand is read through stride 0 as it is.
//
// Errors: InvalidArgument for undefined tensors, ranks an op does not take, shapes that do
// not multiply or broadcast (the message names both shapes), mixed dtypes or devices, bool
// tensors, and a non-integral alpha/beta with integer tensors; Unsupported when the device
// lacks a dtype (fp64, int64, …) or its shared memory holds no matmul tile.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/capabilities.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/plan.hpp"
#include "core/tensor.hpp"

namespace nbx::ops {

// What a matmul of `in_dtype` operands does on a device. Tiles come from a fixed list of
// shapes (largest first: 128x128x32, 128x64x32, 64x64x32, 64x64x16, 32x32x16, 16x16x16); the
// first whose pipelined footprint num_stages * (tile_m + tile_n) * tile_k * itemsize fits
// shared_memory.per_block is taken, with as many stages (≤ pipelining.max_num_stages, ≤ 4)
// as fit, and at least 2 where the device pipelines at all.
struct MatmulPlan {
  DType in_dtype = DType::kFloat32;
  DType out_dtype = DType::kFloat32;
  DType accumulate_dtype = DType::kFloat32;
  int tile_m = 0, tile_n = 0, tile_k = 0;
  int num_stages = 1;
  abi::MatmulVariant variant = abi::kMatmulTiled;
  std::int64_t shared_memory_bytes = 0;  // the tiles' footprint, all stages
  std::int64_t shared_memory_limit = 0;  // shared_memory.per_block
  std::vector<PlanChoice> choices;
};

// Works without a device (capabilities of an absent architecture from its device file).
// `device`: the present device whose offers() answers pick the variant; nullptr derives
// the variant from caps.backend and the matrix unit (cuda: vendor BLAS when cuBLASLt loads
// at run time; vulkan with a cooperative-matrix unit: coopmat for 16-bit floats).
// Throws InvalidArgument for bool; Unsupported (naming `op`, caps.device and the key) when
// the capabilities lack the dtype, no tile fits the shared memory, or NBX_MATMUL asks for a
// variant the device does not offer (capability "matmul.blas" / "matmul.coopmat").
MatmulPlan plan_matmul(DType in_dtype, const Capabilities& caps, const std::string& op = "matmul",
                       const BackendDevice* device = nullptr);

// What NBX_MATMUL asks for (auto when unset), read once per process. Throws
// InvalidArgument for any other value.
enum class MatmulRequest { kAuto, kTiled, kBlas, kCoopMatrix };
MatmulRequest matmul_variant_request();
// Replaces the request for this process (tests and benchmarks compare variants in one run).
// Not synchronised with matmuls running on other threads.
void set_matmul_variant_request(MatmulRequest request);
const char* variant_name(abi::MatmulVariant v);  // "tiled", "vendor BLAS", "cooperative matrix"

// The shape torch.matmul gives for operands of shapes `a` and `b`. Throws InvalidArgument
// naming both shapes.
Shape matmul_shape(const Shape& a, const Shape& b);

// The public forms of the product, each one "matmul" kernel launch: matmul, mm, mv, dot,
// bmm, addmm, baddbmm, addmv, addr, linear, with their tensor operands in the op's order.
struct ProductForm {
  std::string_view name;
  int operands;                    // tensors the form takes
  int optional_operands;           // more it may take (linear's bias)
  std::string_view operand_names;  // "input; m1; m2"
};
std::span<const ProductForm> product_forms();

// What one form does: the shape it returns and the matmul plan of its dtype. Shapes and
// dtypes only, so `nbx explain` runs it for absent devices; each form calls it first.
// Throws InvalidArgument with the op's messages (ranks, sizes that do not multiply or
// broadcast, mixed dtypes, bool) and Unsupported as plan_matmul does.
struct ProductPlan {
  Shape out_shape;
  MatmulPlan matmul;
};
ProductPlan plan_product(std::string_view op, std::span<const DType> dtypes,
                         std::span<const Shape> shapes, const PlanTarget& target);

// torch.matmul: 1-d·1-d dot (0-d), 2-d·1-d mv, 1-d·2-d (a row vector, squeezed back),
// 2-d·2-d mm, and batched products whose batch dims broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);      // 2-d × 2-d
Tensor mv(const Tensor& mat, const Tensor& vec);  // 2-d × 1-d
Tensor bmm(const Tensor& a, const Tensor& b);     // 3-d × 3-d, equal batch sizes
Tensor dot(const Tensor& a, const Tensor& b);     // 1-d × 1-d, equal lengths → 0-d
// beta * input + alpha * (m1 @ m2); input broadcasts to the product's shape. With beta 0
// the input is not read (NaN there does not propagate), as PyTorch's.
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta = 1,
             double alpha = 1);
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, double beta = 1,
               double alpha = 1);
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, double beta = 1,
             double alpha = 1);
// beta * input + alpha * outer(vec1, vec2); of bool tensors (beta && input) || (alpha && outer),
// as PyTorch.
Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, double beta = 1,
            double alpha = 1);
// x @ weight^T + bias: x is (*, in), weight (out, in) or (in), bias broadcasts to the result.
Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = {});

// ---- out= forms (libtorch's matmul_out(out, a, b) order) ----
// The product written into `out` (returned): out must have the form's result shape (never
// resized), exactly its dtype (MatmulPlan::out_dtype) and the operands' device. An out that
// surely shares elements with an operand (the same view, or both dense and overlapping) is
// refused by name, since the kernel reads every input element many times. A contiguous out
// whose first byte is 16-byte aligned is written by the product's own launch; any other
// view, or one whose memory range only interleaves with an operand's, gets the product
// through a temporary and one copy.
Tensor matmul_out(const Tensor& out, const Tensor& a, const Tensor& b);
Tensor mm_out(const Tensor& out, const Tensor& a, const Tensor& b);
Tensor mv_out(const Tensor& out, const Tensor& mat, const Tensor& vec);
Tensor bmm_out(const Tensor& out, const Tensor& a, const Tensor& b);
Tensor dot_out(const Tensor& out, const Tensor& a, const Tensor& b);
Tensor addmm_out(const Tensor& out, const Tensor& input, const Tensor& m1, const Tensor& m2,
                 double beta = 1, double alpha = 1);
Tensor baddbmm_out(const Tensor& out, const Tensor& input, const Tensor& b1, const Tensor& b2,
                   double beta = 1, double alpha = 1);
Tensor addmv_out(const Tensor& out, const Tensor& input, const Tensor& mat, const Tensor& vec,
                 double beta = 1, double alpha = 1);
Tensor addr_out(const Tensor& out, const Tensor& input, const Tensor& vec1, const Tensor& vec2,
                double beta = 1, double alpha = 1);
Tensor linear_out(const Tensor& out, const Tensor& x, const Tensor& weight,
                  const std::optional<Tensor>& bias = {});

namespace detail {
// A matrix of rows x cols with strides rs, cs is row- or column-major: one unit stride (any
// stride on a dim of size 1) and rows (columns) that do not overlap — what a vendor BLAS reads
// (matmul.blas, grouped_matmul.blas); another layout is copied first.
bool blas_layout(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs);
}  // namespace detail

}  // namespace nbx::ops
