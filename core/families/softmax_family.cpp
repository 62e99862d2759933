// The softmax family (abi::SoftmaxParams): softmax/log_softmax over rows, with an optional
// boolean mask; buffers [0] out, [1] in, [2] mask (when has_mask).
#include <algorithm>
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"softmax", "log_softmax"};

std::string op_name(std::int32_t code) {
  return name_from_list("softmax", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"one_pass", "looped", "rows"};

void validate(const abi::SoftmaxParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op != abi::kSoftmax_softmax && p.op != abi::kSoftmax_log_softmax)
    check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant < 0 || std::size_t(p.variant) >= std::size(kVariants))
    check.fail("unknown variant " + std::to_string(p.variant));
  check.require(p.has_mask == 0 || p.has_mask == 1, "has_mask is neither 0 nor 1");
  check.buffer_count(buffers.size(), p.has_mask ? 3 : 2);
  check.count(p.outer_ndim, abi::kMaxDims, "outer_ndim");
  check.floating_dtype(p.in_dtype, "the input");
  check.floating_dtype(p.out_dtype, "the output");
  check.floating_dtype(p.accumulate_dtype, "the accumulate dtype");
  check.require(p.row_tile >= 1, "row_tile is below 1");
  const std::int64_t rows = check.product(p.outer_ndim, p.outer_sizes, "the outer sizes");
  if (rows != p.rows || p.row_len < 0)
    check.fail("rows " + std::to_string(p.rows) + " and row_len " + std::to_string(p.row_len) +
               " disagree with the sizes");
  check.view("the output", p.out_offset)
      .dims(p.outer_ndim, p.outer_sizes, p.out_outer_strides)
      .dim(p.row_len, p.out_row_stride)
      .inside(buffers[0], p.out_dtype);
  check.view("the input", p.in_offset)
      .dims(p.outer_ndim, p.outer_sizes, p.in_outer_strides)
      .dim(p.row_len, p.in_row_stride)
      .inside(buffers[1], p.in_dtype);
  if (p.has_mask)
    check.view("the mask", p.mask_offset)
        .dims(p.outer_ndim, p.outer_sizes, p.mask_outer_strides)
        .dim(p.row_len, p.mask_row_stride)
        .inside(buffers[2], std::int32_t(DType::kBool));
}

// The rows variant (CUDA/HIP softmax_rows_fast.cu): contiguous rows, in registers for a
// group of up to kSoftmaxRowsMaxGroup threads holding kSoftmaxRowsMaxVecs 16-byte vectors
// each (starting at a subgroup), one kSoftmaxRowsLoopBlock-thread block per longer row — no
// group past the launch's row_tile.
std::string variant_refusal(std::int32_t variant, const abi::SoftmaxParams& p, int subgroup_size) {
  if (variant != abi::kSoftmaxRows) return {};
  if (p.rows < 1 || p.row_len < 1) return "there is no row";
  if (p.in_dtype != p.out_dtype) return "the row kernel keeps the input's dtype";
  if (p.row_len > 0x7fffffff - 64) return "positions within a row are 32-bit in the row kernel";
  const bool unit = p.row_len == 1;  // a row of one element has no stride to speak of
  if (!unit &&
      (p.in_row_stride != 1 || p.out_row_stride != 1 || (p.has_mask && p.mask_row_stride != 1)))
    return "the rows are not contiguous";
  const DType t = DType(p.in_dtype), acc = DType(p.accumulate_dtype);
  if (t == DType::kFloat64 ? acc != DType::kFloat64 : acc == DType::kFloat64)
    return "the row kernel accumulates only in the input's usual dtype";
  const std::int64_t tile = p.row_tile;
  if (tile >= abi::kSoftmaxRowsLoopBlock) return {};
  const std::int64_t vec = std::int64_t(16 / dtype_size(t));
  const std::int64_t need = std::max<std::int64_t>(p.row_len / vec, 1);
  std::int64_t group = subgroup_size == 64 ? 64 : 32;
  while (group * abi::kSoftmaxRowsMaxVecs < need && group < abi::kSoftmaxRowsMaxGroup &&
         group * 2 <= tile)
    group *= 2;
  if (group <= tile && group * abi::kSoftmaxRowsMaxVecs >= need) return {};
  return "the row needs more than row_tile " + std::to_string(tile) + " threads";
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"input"}, {"mask"}};

}  // namespace

extern const FamilySpec softmax_family{KernelFamily::kSoftmax,
                                       "softmax",
                                       sizeof(abi::SoftmaxParams),
                                       kBuffers,
                                       kVariants,
                                       field_of<abi::SoftmaxParams, &abi::SoftmaxParams::op>,
                                       field_of<abi::SoftmaxParams, &abi::SoftmaxParams::variant>,
                                       op_name,
                                       validate_bytes<abi::SoftmaxParams, validate>,
                                       refusal_bytes<abi::SoftmaxParams, variant_refusal>,
                                       set_field<abi::SoftmaxParams, &abi::SoftmaxParams::variant>,
                                       describe_common_fault};

}  // namespace nbx::families
