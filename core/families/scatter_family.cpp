// The scatter family (abi::ScatterParams): index writes — scatter, scatter_add/reduce,
// index_add/copy/fill, index_put and the compactions (masked_select, nonzero) and
// one_hot/bincount built on them; buffers [0] out, [1] src, [2] index, [3] order. Four
// variants: atomic (one read-modify-write per element), sorted (the deterministic pass over
// stably sorted destination keys), keys (the destination offsets, for sorting or for
// index_put's several index tensors) and partitioned (the atomics bucket by bucket of
// destinations, in three passes over a workspace). Bad indices are device faults, decoded here.
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {
    "scatter",   "scatter_add",   "scatter_reduce", "index_add", "index_copy", "index_fill",
    "index_put", "masked_select", "nonzero",        "one_hot",   "bincount"};

std::string op_name(std::int32_t code) {
  return name_from_list("scatter", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"atomic", "sorted", "keys", "partitioned"};

constexpr std::int32_t kInt64Code = std::int32_t(DType::kInt64);

void validate(const abi::ScatterParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op < 0 || std::size_t(p.op) >= std::size(kOpNames))
    check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant < 0 || std::size_t(p.variant) >= std::size(kVariants))
    check.fail("unknown variant " + std::to_string(p.variant));
  if (p.reduce < abi::kScatterAssign || p.reduce > abi::kScatterMin)
    check.fail("unknown reduction " + std::to_string(p.reduce));
  check.buffer_count(buffers.size(), 4);
  check.count(p.ndim, abi::kMaxDims, "ndim");
  check.dtype(p.dtype, "the output");
  if (p.index_dtype != std::int32_t(DType::kInt32) && p.index_dtype != kInt64Code)
    check.fail("the index dtype code " + std::to_string(p.index_dtype) + " is not int32 or int64");
  if (p.wrap_negative != 0 && p.wrap_negative != 1) check.fail("wrap_negative is not 0 or 1");
  if (p.accumulate_keys != 0 && p.accumulate_keys != 1) check.fail("accumulate_keys is not 0 or 1");
  const std::int64_t n = check.product(p.ndim, p.sizes, "the sizes");
  if (n != p.numel)
    check.fail("numel " + std::to_string(p.numel) + " is not the product of the sizes (" +
               std::to_string(n) + ")");
  if (p.bound < 0) check.fail("the bound " + std::to_string(p.bound) + " is negative");
  if (p.index_scale < 0) check.fail("index_scale is negative");
  for (int d = 0; d < p.ndim; ++d)
    if (p.index_positions[d] < 0) check.fail("an index position stride is negative");
  if (n == 0) return;

  const auto iteration_view = [&](const char* label, std::int64_t offset,
                                  const std::int64_t* strides, const KernelBuffer& b,
                                  std::int32_t dtype) {
    check.view(label, offset).dims(p.ndim, p.sizes, strides).inside(b, dtype);
  };
  const auto flat_view = [&](const char* label, std::int64_t offset, std::int64_t count,
                             const KernelBuffer& b, std::int32_t dtype) {
    check.view(label, offset).dim(count, 1).inside(b, dtype);
  };
  switch (p.variant) {
    case abi::kScatterAtomic:
      // Every element an in-range index can reach, whichever it is.
      if (p.bound > 0)
        check.view("the output", p.out_offset)
            .dims(p.ndim, p.sizes, p.out_strides)
            .dim(p.bound, p.index_scale)
            .inside(buffers[0], p.dtype);
      iteration_view("the source", p.src_offset, p.src_strides, buffers[1], p.dtype);
      iteration_view("the index", p.index_offset, p.index_strides, buffers[2], p.index_dtype);
      break;
    case abi::kScatterSorted:
      if (p.index_dtype != kInt64Code) check.fail("the sorted keys must be int64");
      if (p.bound > 0) flat_view("the output", p.out_offset, p.bound, buffers[0], p.dtype);
      iteration_view("the source", p.src_offset, p.src_strides, buffers[1], p.dtype);
      flat_view("the keys", p.index_offset, p.numel, buffers[2], kInt64Code);
      flat_view("the order", p.key_offset, p.numel, buffers[3], kInt64Code);
      break;
    case abi::kScatterPartitioned: {
      if (p.pass < abi::kPassCount || p.pass > abi::kPassApply)
        check.fail("unknown pass " + std::to_string(p.pass));
      if (p.buckets < 1 || p.buckets > abi::kScatterMaxBuckets)
        check.fail("buckets " + std::to_string(p.buckets) + " outside [1, " +
                   std::to_string(abi::kScatterMaxBuckets) + "]");
      if (p.bucket_shift < 0 || p.bucket_shift > 31)
        check.fail("bucket_shift " + std::to_string(p.bucket_shift) + " outside [0, 31]");
      if (dtype_size(DType(p.dtype)) > 4) check.fail("the partitioned pass takes at most 4 bytes");
      // Every relative destination offset an in-range index reaches: below 2^32 - 1 (the bad
      // index's mark) and inside the buckets.
      std::int64_t span = 0;
      bool overflow = false;
      const auto add = [&](std::int64_t count, std::int64_t stride) {
        std::int64_t term = 0;
        overflow = overflow || __builtin_mul_overflow(count, stride, &term) ||
                   __builtin_add_overflow(span, term, &span);
      };
      for (int d = 0; d < p.ndim; ++d) add(p.sizes[d] - 1, p.out_strides[d]);
      if (p.bound > 0) add(p.bound - 1, p.index_scale);
      if (overflow || span < 0 || span >= 0xffffffffLL || (span >> p.bucket_shift) >= p.buckets)
        check.fail("destination offsets up to " + std::to_string(span) +
                   " do not fit the buckets or 32 bits");
      if (p.parts < 1 || p.parts > abi::kScatterMaxParts)
        check.fail("parts " + std::to_string(p.parts) + " outside [1, " +
                   std::to_string(abi::kScatterMaxParts) + "]");
      const std::int32_t word = std::int32_t(DType::kInt32);
      const std::int64_t table = (p.buckets + 1) * p.parts;
      switch (p.pass) {
        case abi::kPassCount:
          flat_view("the counts", 0, table, buffers[0], word);
          iteration_view("the index", p.index_offset, p.index_strides, buffers[2], p.index_dtype);
          break;
        case abi::kPassPartition:
          flat_view("the pairs", 0, 2 * p.numel, buffers[0], word);
          iteration_view("the source", p.src_offset, p.src_strides, buffers[1], p.dtype);
          iteration_view("the index", p.index_offset, p.index_strides, buffers[2], p.index_dtype);
          flat_view("the starts", 0, table, buffers[3], word);
          break;
        default:
          if (p.bound > 0)
            check.view("the output", p.out_offset)
                .dims(p.ndim, p.sizes, p.out_strides)
                .dim(p.bound, p.index_scale)
                .inside(buffers[0], p.dtype);
          flat_view("the pairs", 0, 2 * p.numel, buffers[2], word);
          break;
      }
      break;
    }
    default:  // kScatterKeys
      if (p.dtype != kInt64Code) check.fail("the keys pass writes int64");
      flat_view("the keys", p.key_offset, p.numel, buffers[0], kInt64Code);
      iteration_view("the index", p.index_offset, p.index_strides, buffers[2], p.index_dtype);
      break;
  }
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"source"}, {"index"}, {"order"}};

std::string describe_fault(const abi::FaultRecord& r) {
  if (r.code != abi::kFaultIndexOutOfRange) return describe_common_fault(r);
  const int op = r.op & 0xffff;
  const bool wraps = op == abi::kScatter_index_put || op == abi::kScatter_index_fill;
  return "index " + std::to_string(r.index) + " is out of range [" +
         (wraps ? std::to_string(-r.bound) : std::string("0")) + ", " + std::to_string(r.bound) +
         ") at position " + std::to_string(r.position);
}

}  // namespace

extern const FamilySpec scatter_family{KernelFamily::kScatter,
                                       "scatter",
                                       sizeof(abi::ScatterParams),
                                       kBuffers,
                                       kVariants,
                                       field_of<abi::ScatterParams, &abi::ScatterParams::op>,
                                       field_of<abi::ScatterParams, &abi::ScatterParams::variant>,
                                       op_name,
                                       validate_bytes<abi::ScatterParams, validate>,
                                       serves_all,
                                       set_field<abi::ScatterParams, &abi::ScatterParams::variant>,
                                       describe_fault};

}  // namespace nbx::families
