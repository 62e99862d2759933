// The scan family (abi::ScanParams): inclusive scans along rows read through strides;
// buffers [0] out, [1] in, [2] int64 indices (cummax/cummin).
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"};

std::string op_name(std::int32_t code) {
  return name_from_list("scan", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"lanes", "block", "chunked"};

void validate(const abi::ScanParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op < 0 || std::size_t(p.op) >= std::size(kOpNames))
    check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant < 0 || std::size_t(p.variant) >= std::size(kVariants))
    check.fail("unknown variant " + std::to_string(p.variant));
  if (p.variant == abi::kScanLanes &&
      (p.lanes < 1 || p.lanes > abi::kScanMaxLanes || (p.lanes & (p.lanes - 1)) != 0))
    check.fail("lanes " + std::to_string(p.lanes) + " is not a power of two in [1, " +
               std::to_string(abi::kScanMaxLanes) + "]");
  if (p.variant == abi::kScanChunked && p.rows > 0 &&
      (p.chunk_len <= 0 || p.chunk_len % abi::kScanTile != 0 || p.chunk_len >= p.row_len))
    check.fail("chunk_len " + std::to_string(p.chunk_len) + " is not a positive multiple of " +
               std::to_string(abi::kScanTile) + " below row_len " + std::to_string(p.row_len));
  const bool extreme = p.op == abi::kScan_cummax || p.op == abi::kScan_cummin;
  check.buffer_count(buffers.size(), extreme ? 3 : 2);
  check.count(p.outer_ndim, abi::kMaxDims, "outer_ndim");
  check.dtype(p.in_dtype, "the input");
  check.dtype(p.out_dtype, "the output");
  check.dtype(p.accumulate_dtype, "the accumulate dtype");
  // One arithmetic class end to end: extremes copy input values (an int64 compared in a
  // float type would lose its low bits), and sums and products keep integers integers.
  const bool fl = is_floating(DType(p.accumulate_dtype));
  if (is_floating(DType(p.in_dtype)) != fl || is_floating(DType(p.out_dtype)) != fl)
    check.fail("accumulating in " + std::string(dtype_name(DType(p.accumulate_dtype))) + " needs " +
               (fl ? "floating" : "integer") + " input and output dtypes, got " +
               std::string(dtype_name(DType(p.in_dtype))) + " and " +
               std::string(dtype_name(DType(p.out_dtype))));
  if (p.op == abi::kScan_logcumsumexp && !fl)
    check.fail("logcumsumexp needs a floating accumulate dtype");
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
  if (extreme)
    check.view("the index output", p.index_offset)
        .dims(p.outer_ndim, p.outer_sizes, p.index_outer_strides)
        .dim(p.row_len, p.index_row_stride)
        .inside(buffers[2], std::int32_t(DType::kInt64));
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"input"}, {"indices", true}};

}  // namespace

extern const FamilySpec scan_family{KernelFamily::kScan,
                                    "scan",
                                    sizeof(abi::ScanParams),
                                    kBuffers,
                                    kVariants,
                                    field_of<abi::ScanParams, &abi::ScanParams::op>,
                                    field_of<abi::ScanParams, &abi::ScanParams::variant>,
                                    op_name,
                                    validate_bytes<abi::ScanParams, validate>,
                                    serves_all,
                                    set_field<abi::ScanParams, &abi::ScanParams::variant>,
                                    describe_common_fault};

}  // namespace nbx::families
