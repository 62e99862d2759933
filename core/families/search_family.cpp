// The search family (abi::SearchParams): searchsorted and bucketize, a binary search of
// every value in its sorted row, PyTorch's loop and comparisons; buffers [0] out, [1] the
// sorted sequence, [2] the values. Nothing is indexed by data, so it has no faults.
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"searchsorted", "bucketize"};

std::string op_name(std::int32_t code) {
  return name_from_list("search", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"binary"};

void validate(const abi::SearchParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op < 0 || std::size_t(p.op) >= std::size(kOpNames))
    check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant != abi::kSearchBinary) check.fail("unknown variant " + std::to_string(p.variant));
  check.buffer_count(buffers.size(), 3);
  check.count(p.ndim, abi::kMaxDims, "ndim");
  check.dtype(p.dtype, "the values");
  if (p.out_dtype != std::int32_t(DType::kInt32) && p.out_dtype != std::int32_t(DType::kInt64))
    check.fail("the output dtype code " + std::to_string(p.out_dtype) + " is not int32 or int64");
  if (p.right != 0 && p.right != 1) check.fail("right is not 0 or 1");
  const std::int64_t n = check.product(p.ndim, p.sizes, "the sizes");
  if (n != p.numel)
    check.fail("numel " + std::to_string(p.numel) + " is not the product of the sizes (" +
               std::to_string(n) + ")");
  check.count(p.seq_len, std::int64_t(1) << 62, "seq_len");
  if (n == 0) return;
  check.view("the output", p.out_offset)
      .dims(p.ndim, p.sizes, p.out_strides)
      .inside(buffers[0], p.out_dtype);
  check.view("the values", p.values_offset)
      .dims(p.ndim, p.sizes, p.values_strides)
      .inside(buffers[2], p.dtype);
  if (p.seq_len > 0)
    check.view("the sorted sequence", p.seq_offset)
        .dims(p.ndim, p.sizes, p.seq_strides)
        .dim(p.seq_len, p.seq_stride)
        .inside(buffers[1], p.dtype);
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"sorted_sequence"}, {"values"}};

}  // namespace

extern const FamilySpec search_family{KernelFamily::kSearch,
                                      "search",
                                      sizeof(abi::SearchParams),
                                      kBuffers,
                                      kVariants,
                                      field_of<abi::SearchParams, &abi::SearchParams::op>,
                                      field_of<abi::SearchParams, &abi::SearchParams::variant>,
                                      op_name,
                                      validate_bytes<abi::SearchParams, validate>,
                                      serves_all,
                                      set_field<abi::SearchParams, &abi::SearchParams::variant>,
                                      describe_common_fault};

}  // namespace nbx::families
