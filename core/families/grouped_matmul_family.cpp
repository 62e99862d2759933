// The grouped_matmul family (abi::GroupedMatmulParams): one product a[rows of group e] @ b[e]^T
// per group, every group in one launch, the group offsets read on the device. Buffers [0] out,
// [1] a, [2] b, [3] offsets. Offsets that do not partition the rows are a device fault,
// decoded here; every view is checked against its buffer, so a kernel reads out of range
// only through an offset, which it checks before any product.
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"grouped_matmul"};

std::string op_name(std::int32_t code) {
  return name_from_list("grouped_matmul", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"tiled", "mma", "blas"};

bool is_operand_dtype(std::int32_t code) {
  const DType t = DType(code);
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32;
}

void validate(const abi::GroupedMatmulParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op != abi::kGroupedMatmul_grouped_matmul)
    check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant != abi::kGroupedMatmulTiled && p.variant != abi::kGroupedMatmulMma &&
      p.variant != abi::kGroupedMatmulBlas)
    check.fail("unknown variant " + std::to_string(p.variant));
  check.buffer_count(buffers.size(), 4);
  check.dtype(p.dtype, "a and b");
  check.dtype(p.out_dtype, "the output");
  if (!is_operand_dtype(p.dtype))
    check.fail("the operand dtype code " + std::to_string(p.dtype) +
               " is not float16, bfloat16 or float32");
  if (p.out_dtype != p.dtype) check.fail("the output dtype differs from the operands'");
  if (p.offsets_dtype != std::int32_t(DType::kInt32) &&
      p.offsets_dtype != std::int32_t(DType::kInt64))
    check.fail("the offsets dtype code " + std::to_string(p.offsets_dtype) +
               " is not int32 or int64");
  if (p.variant == abi::kGroupedMatmulMma && p.num_stages != 3 && p.num_stages != 4)
    check.fail("the mma variant takes 3 or 4 stages, not " + std::to_string(p.num_stages));
  if (p.groups < 1) check.fail("groups " + std::to_string(p.groups) + " is not positive");
  if (p.rows < 0 || p.n < 0 || p.k < 0) check.fail("negative rows, n or k");
  // Row and tile counts are computed in 64 bits, but the kernels number groups and the
  // grid's tiles in 32: keep every count well inside.
  check.count(p.groups, std::int64_t(1) << 24, "groups");
  check.count(p.rows, std::int64_t(1) << 31, "rows");
  check.count(p.n, std::int64_t(1) << 31, "n");
  const std::int64_t out_elems[2] = {p.rows, p.n};
  check.product(2, out_elems, "the output");
  check.view("the output", p.out_offset)
      .dim(p.rows, p.out_row_stride)
      .dim(p.n, p.out_col_stride)
      .inside(buffers[0], p.out_dtype);
  check.view("the offset array", p.offsets_offset)
      .dim(p.groups + 1, p.offsets_stride)
      .inside(buffers[3], p.offsets_dtype);
  if (p.rows > 0 && p.n > 0) {
    check.view("a", p.a_offset)
        .dim(p.rows, p.a_row_stride)
        .dim(p.k, p.a_col_stride)
        .inside(buffers[1], p.dtype);
    check.view("b", p.b_offset)
        .dim(p.groups, p.b_group_stride)
        .dim(p.n, p.b_n_stride)
        .dim(p.k, p.b_k_stride)
        .inside(buffers[2], p.dtype);
  }
}

// The mma kernel copies 16-byte chunks of k-contiguous rows with cp.async and multiplies
// bf16/f16 fragments: it needs a and b with unit k stride, every row start (and offset) a
// multiple of 8 elements, and writes the output as element pairs.
std::string variant_refusal(std::int32_t variant, const abi::GroupedMatmulParams& p, int) {
  // The vendor GEMM reads each operand with a unit stride in one of its two dims (either
  // orientation) and writes row-major output.
  if (variant == abi::kGroupedMatmulBlas) {
    if (p.a_col_stride != 1 && p.a_row_stride != 1)
      return "the vendor GEMM needs a with a unit stride in one dim";
    if (p.b_k_stride != 1 && p.b_n_stride != 1)
      return "the vendor GEMM needs b with a unit stride in n or k";
    if (p.out_col_stride != 1) return "the vendor GEMM writes a row-major output";
    return {};
  }
  if (variant != abi::kGroupedMatmulMma) return {};
  const DType t = DType(p.dtype);
  if (t != DType::kFloat16 && t != DType::kBFloat16)
    return "the mma kernel multiplies float16 or bfloat16 operands";
  const std::int64_t c = abi::kGroupedMmaChunk;
  if (p.a_col_stride != 1 || p.b_k_stride != 1)
    return "the mma kernel reads a and b along unit-stride k (b as [E, N, K], PyTorch Linear "
           "weights)";
  if (p.k % c != 0 || p.a_row_stride % c != 0 || p.a_offset % c != 0 || p.b_n_stride % c != 0 ||
      p.b_group_stride % c != 0 || p.b_offset % c != 0)
    return "the mma kernel copies 16-byte chunks: k, the row strides and offsets of a and b "
           "must be multiples of 8 elements";
  if (p.out_col_stride != 1 || p.out_row_stride % 2 != 0 || p.out_offset % 2 != 0)
    return "the mma kernel writes element pairs: the output needs unit column stride and an "
           "even row stride and offset";
  return {};
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"a"}, {"b"}, {"offsets"}};

std::string describe_fault(const abi::FaultRecord& r) {
  if (r.code != abi::kFaultIndexOutOfRange) return describe_common_fault(r);
  const std::string at =
      "group offset " + std::to_string(r.position) + " is " + std::to_string(r.index);
  if (r.index < 0 || r.index > r.bound)
    return at + ", out of range [0, " + std::to_string(r.bound) + "] (the rows)";
  return at + ": the offsets must start at 0, never decrease and end at the row count " +
         std::to_string(r.bound);
}

}  // namespace

extern const FamilySpec grouped_matmul_family{
    KernelFamily::kGroupedMatmul,
    "grouped_matmul",
    sizeof(abi::GroupedMatmulParams),
    kBuffers,
    kVariants,
    field_of<abi::GroupedMatmulParams, &abi::GroupedMatmulParams::op>,
    field_of<abi::GroupedMatmulParams, &abi::GroupedMatmulParams::variant>,
    op_name,
    validate_bytes<abi::GroupedMatmulParams, validate>,
    refusal_bytes<abi::GroupedMatmulParams, variant_refusal>,
    set_field<abi::GroupedMatmulParams, &abi::GroupedMatmulParams::variant>,
    describe_fault};

}  // namespace nbx::families
