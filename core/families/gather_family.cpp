// The gather family (abi::GatherParams): index_select, gather, take_along_dim, embedding
// and take, each output element copying the input element its index picks; buffers [0] out,
// [1] input, [2] index. Bad indices are device faults, decoded here. The strided variant
// serves any block; the rows variant (CUDA/HIP) rows of the last dim that output and input
// hold contiguously and the index does not vary along (embedding, index_select along a
// leading dim).
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"index_select", "gather", "take_along_dim", "embedding",
                                         "take"};

std::string op_name(std::int32_t code) {
  return name_from_list("gather", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"strided", "rows"};

void validate(const abi::GatherParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op < 0 || std::size_t(p.op) >= std::size(kOpNames))
    check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant < 0 || std::size_t(p.variant) >= std::size(kVariants))
    check.fail("unknown variant " + std::to_string(p.variant));
  check.buffer_count(buffers.size(), 3);
  check.count(p.ndim, abi::kMaxDims, "ndim");
  check.dtype(p.dtype, "the input");
  if (p.index_dtype != std::int32_t(DType::kInt32) && p.index_dtype != std::int32_t(DType::kInt64))
    check.fail("the index dtype code " + std::to_string(p.index_dtype) + " is not int32 or int64");
  if (p.wrap_negative != 0 && p.wrap_negative != 1) check.fail("wrap_negative is not 0 or 1");
  const std::int64_t n = check.product(p.ndim, p.sizes, "the sizes");
  if (n != p.numel)
    check.fail("numel " + std::to_string(p.numel) + " is not the product of the sizes (" +
               std::to_string(n) + ")");
  if (p.bound < 0) check.fail("the bound " + std::to_string(p.bound) + " is negative");
  for (int d = 0; d < p.ndim; ++d)
    if (p.index_positions[d] < 0) check.fail("an index position stride is negative");
  check.view("the output", p.out_offset)
      .dims(p.ndim, p.sizes, p.out_strides)
      .inside(buffers[0], p.dtype);
  check.view("the index", p.index_offset)
      .dims(p.ndim, p.sizes, p.index_strides)
      .inside(buffers[2], p.index_dtype);
  // Every element an in-range index can pick, whichever it is: the output's span along the
  // kept dims and the whole indexed dim.
  if (n > 0)
    check.view("the input", p.src_offset)
        .dims(p.ndim, p.sizes, p.src_strides)
        .dim(p.bound, p.src_index_stride)
        .inside(buffers[1], p.dtype);
}

// The rows variant (gather_kernels.cu, gather_rows.comp; abi::kGatherRows): output row r (the last
// dim) is one contiguous copy of the input row one index picks, so the output and the input must
// run along the last dim with stride 1 and the index must not vary along it; a row of one element
// has no stride to speak of. Positions within a row are 32-bit in its kernel.
std::string refusal(std::int32_t variant, const abi::GatherParams& p, int) {
  if (variant != abi::kGatherRows) return {};
  if (p.ndim < 1 || p.ndim > abi::kMaxDims || p.numel < 1) return "there is no row";
  const int last = p.ndim - 1;
  const std::int64_t n = p.sizes[last];
  if (n > abi::kGatherRowsMaxLen)
    return "rows of " + std::to_string(n) + " elements exceed the rows variant's " +
           std::to_string(abi::kGatherRowsMaxLen);
  if (n == 1) return {};
  if (p.index_strides[last] != 0) return "the index varies along the last dim";
  if (p.out_strides[last] != 1 || p.src_strides[last] != 1)
    return "the output and the input do not run along the last dim with stride 1";
  return {};
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"input"}, {"index"}};

std::string describe_fault(const abi::FaultRecord& r) {
  if (r.code != abi::kFaultIndexOutOfRange) return describe_common_fault(r);
  const bool wraps = (r.op & 0xffff) == abi::kGather_take;
  return "index " + std::to_string(r.index) + " is out of range [" +
         (wraps ? std::to_string(-r.bound) : std::string("0")) + ", " + std::to_string(r.bound) +
         ") at position " + std::to_string(r.position);
}

}  // namespace

extern const FamilySpec gather_family{KernelFamily::kGather,
                                      "gather",
                                      sizeof(abi::GatherParams),
                                      kBuffers,
                                      kVariants,
                                      field_of<abi::GatherParams, &abi::GatherParams::op>,
                                      field_of<abi::GatherParams, &abi::GatherParams::variant>,
                                      op_name,
                                      validate_bytes<abi::GatherParams, validate>,
                                      refusal_bytes<abi::GatherParams, refusal>,
                                      set_field<abi::GatherParams, &abi::GatherParams::variant>,
                                      describe_fault};

}  // namespace nbx::families
