// The sort family (abi::SortParams): rows sorted stably by the order-preserving transform of
// their keys; buffers [0] values, [1] int64 indices, [2] input, [3] the radix or onesweep
// workspace. The rows variant serves rows that fit its tile; the radix variant serves any row,
// the onesweep variant any row below abi::kSortOnesweepMaxRow; the select variant serves
// topk (the first k of each sorted row) for k up to abi::kSortSelectMaxK.
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"sort", "topk"};

std::string op_name(std::int32_t code) {
  return name_from_list("sort", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"rows", "radix", "onesweep", "select"};

bool power_of_two(std::int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

void validate(const abi::SortParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op != abi::kSort_sort && p.op != abi::kSort_topk)
    check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant < 0 || std::size_t(p.variant) >= std::size(kVariants))
    check.fail("unknown variant " + std::to_string(p.variant));
  check.buffer_count(buffers.size(), 4);
  check.count(p.outer_ndim, abi::kMaxDims, "outer_ndim");
  check.dtype(p.dtype, "the input");
  if (p.key_bits != 8 * std::int32_t(dtype_size(DType(p.dtype))))
    check.fail("key_bits " + std::to_string(p.key_bits) + " is not 8 × the dtype's size");
  if (p.descending != 0 && p.descending != 1) check.fail("descending is not 0 or 1");
  const std::int64_t rows = check.product(p.outer_ndim, p.outer_sizes, "the outer sizes");
  if (rows != p.rows) check.fail("rows " + std::to_string(p.rows) + " disagrees with the sizes");
  check.count(p.row_len, 0x7fffffff, "row_len");
  // The values and indices hold k elements of each row: all of it for sort, k for topk.
  if (p.op == abi::kSort_sort && p.k != p.row_len)
    check.fail("k " + std::to_string(p.k) + " is not row_len " + std::to_string(p.row_len) +
               " (sort writes whole rows)");
  if (p.op == abi::kSort_topk && p.rows > 0 && (p.k < 1 || p.k > p.row_len))
    check.fail("k " + std::to_string(p.k) + " is not in [1, row_len " + std::to_string(p.row_len) +
               "]");
  if (p.variant == abi::kSortRows && p.rows > 0 && p.row_len > 0) {
    if (!power_of_two(p.segment) || p.segment < p.row_len)
      check.fail("segment " + std::to_string(p.segment) + " is not a power of two >= row_len " +
                 std::to_string(p.row_len));
    if (!power_of_two(p.tile) || p.tile < p.segment || p.tile > abi::kSortRowsTileMax)
      check.fail("tile " + std::to_string(p.tile) + " is not a power of two in [segment, " +
                 std::to_string(abi::kSortRowsTileMax) + "]");
  }
  if (p.variant == abi::kSortSelect && p.rows > 0 && p.row_len > 0 &&
      (!power_of_two(p.tile) || p.tile < p.k || p.tile > abi::sort_select_candidates(p.key_bits)))
    check.fail("tile " + std::to_string(p.tile) +
               " (the candidates) is not a power of two in [k, " +
               std::to_string(abi::sort_select_candidates(p.key_bits)) + "]");
  // The input holds whole rows; the values and indices k of each (all of it for sort).
  const auto rows_view = [&](const char* label, std::int64_t offset, const std::int64_t* outer,
                             std::int64_t len, std::int64_t row_stride, const KernelBuffer& b,
                             std::int32_t dtype) {
    check.view(label, offset)
        .dims(p.outer_ndim, p.outer_sizes, outer)
        .dim(len, row_stride)
        .inside(b, dtype);
  };
  rows_view("the values", p.values_offset, p.values_outer_strides, p.k, p.values_row_stride,
            buffers[0], p.dtype);
  rows_view("the indices", p.indices_offset, p.indices_outer_strides, p.k, p.indices_row_stride,
            buffers[1], std::int32_t(DType::kInt64));
  rows_view("the input", p.in_offset, p.in_outer_strides, p.row_len, p.in_row_stride, buffers[2],
            p.dtype);
  if (p.variant != abi::kSortRows && p.rows > 0 && p.row_len > 0) {
    if (p.rows > (std::int64_t(1) << 40) / p.row_len) check.fail("rows × row_len is too large");
    const std::int64_t words =
        abi::sort_variant_workspace_words(p.variant, p.rows, p.row_len, p.key_bits);
    check.view("the workspace", 0).dim(words, 1).inside(buffers[3], std::int32_t(DType::kInt32));
  }
}

// The rows variant sorts a row inside one tile; longer rows need the radix variant.
std::string refusal(std::int32_t variant, const abi::SortParams& p, int) {
  if (variant == abi::kSortRows && p.row_len > abi::kSortRowsTileMax)
    return "rows of " + std::to_string(p.row_len) + " elements exceed the rows variant's tile of " +
           std::to_string(abi::kSortRowsTileMax);
  // topk is served by the select variant only, sort by every other variant.
  if (variant == abi::kSortSelect && p.op != abi::kSort_topk)
    return "the select variant writes only topk's first k of each row";
  if (variant != abi::kSortSelect && p.op == abi::kSort_topk)
    return "topk's first-k launch is the select variant's (the others sort whole rows)";
  if (variant == abi::kSortSelect && p.k > abi::kSortSelectMaxK)
    return "k " + std::to_string(p.k) + " is above the select variant's " +
           std::to_string(abi::kSortSelectMaxK);
  if (variant == abi::kSortOnesweep && p.row_len >= abi::kSortOnesweepMaxRow)
    return "rows of " + std::to_string(p.row_len) +
           " elements reach the onesweep variant's limit of 2^30 (30-bit look-back counts)";
  return {};
}

constexpr BufferRole kBuffers[] = {
    {"values", true}, {"indices", true}, {"input"}, {"workspace", true}};

}  // namespace

extern const FamilySpec sort_family{KernelFamily::kSort,
                                    "sort",
                                    sizeof(abi::SortParams),
                                    kBuffers,
                                    kVariants,
                                    field_of<abi::SortParams, &abi::SortParams::op>,
                                    field_of<abi::SortParams, &abi::SortParams::variant>,
                                    op_name,
                                    validate_bytes<abi::SortParams, validate>,
                                    refusal_bytes<abi::SortParams, refusal>,
                                    set_field<abi::SortParams, &abi::SortParams::variant>,
                                    describe_common_fault};

}  // namespace nbx::families
