// The reduce family (abi::ReduceParams): each output element reduces one row of the input
// read through strides; buffers [0] out, [1] input, [2] int64 indices (max/min_with_index) or
// a second output of out's dtype (aminmax: the maxima; var_mean/std_mean: the means).
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {
#define NBX_REDUCE_OP(name, code) #name,
#include "core/reduce_op_list.inc"
#undef NBX_REDUCE_OP
};

std::string op_name(std::int32_t code) {
  return name_from_list("reduce", kOpNames, code);
}

bool writes_index_buffer(std::int32_t op) {
  return op == abi::kReduce_max_with_index || op == abi::kReduce_min_with_index;
}
bool writes_second_value(std::int32_t op) {
  return op == abi::kReduce_aminmax || op == abi::kReduce_var_mean || op == abi::kReduce_std_mean;
}

void validate(const abi::ReduceParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op < 0 || std::size_t(p.op) >= std::size(kOpNames))
    check.fail("unknown op code " + std::to_string(p.op));
  check.require(p.variant == abi::kReduceGeneral || p.variant == abi::kReduceRows,
                "unknown variant");
  const bool third_buffer = writes_index_buffer(p.op) || writes_second_value(p.op);
  check.buffer_count(buffers.size(), third_buffer ? 3 : 2);
  check.count(p.out_ndim, abi::kMaxDims, "out_ndim");
  check.count(p.red_ndim, abi::kMaxDims, "red_ndim");
  check.dtype(p.in_dtype, "the input");
  check.dtype(p.out_dtype, "the output");
  check.dtype(p.accumulate_dtype, "the accumulate dtype");
  check.require(p.row_tile >= 1, "row_tile is below 1");
  const DType in = DType(p.in_dtype), out = DType(p.out_dtype), acc = DType(p.accumulate_dtype);
  const bool index_out = p.op == abi::kReduce_argmax || p.op == abi::kReduce_argmin ||
                         p.op == abi::kReduce_count_nonzero;
  if (index_out && out != DType::kInt64)
    check.fail("the op writes int64, not " + std::string(dtype_name(out)));
  if (is_floating(acc) != is_floating(in))
    check.fail("it accumulates " + std::string(dtype_name(in)) + " in " +
               std::string(dtype_name(acc)));
  const bool float_op = p.op == abi::kReduce_mean || p.op == abi::kReduce_var ||
                        p.op == abi::kReduce_std || p.op == abi::kReduce_norm ||
                        p.op == abi::kReduce_logsumexp || p.op == abi::kReduce_nanmean ||
                        p.op == abi::kReduce_var_mean || p.op == abi::kReduce_std_mean;
  if (float_op && !is_floating(acc)) check.fail("the op needs a floating accumulate dtype");
  const std::int64_t rows = check.product(p.out_ndim, p.out_sizes, "the kept sizes");
  const std::int64_t len = check.product(p.red_ndim, p.red_sizes, "the reduced sizes");
  if (rows != p.rows || len != p.row_len)
    check.fail("rows " + std::to_string(p.rows) + " and row_len " + std::to_string(p.row_len) +
               " disagree with the sizes (" + std::to_string(rows) + ", " + std::to_string(len) +
               ")");
  check.view("the output", p.out_offset)
      .dims(p.out_ndim, p.out_sizes, p.out_strides)
      .inside(buffers[0], p.out_dtype);
  check.view("the input", p.in_offset)
      .dims(p.out_ndim, p.out_sizes, p.in_kept_strides)
      .dims(p.red_ndim, p.red_sizes, p.in_red_strides)
      .inside(buffers[1], p.in_dtype);
  if (writes_index_buffer(p.op))
    check.view("the index output", p.index_offset)
        .dims(p.out_ndim, p.out_sizes, p.index_strides)
        .inside(buffers[2], std::int32_t(DType::kInt64));
  if (writes_second_value(p.op))
    check.view("the second output", p.index_offset)
        .dims(p.out_ndim, p.out_sizes, p.index_strides)
        .inside(buffers[2], p.out_dtype);
}

// The usual accumulation of each input dtype: 16-bit floats and float32 in a 16/32-bit float,
// float64 in float64, integers and bool in an integer.
bool usual_accumulation(DType in, DType acc) {
  const bool acc_float =
      acc == DType::kFloat16 || acc == DType::kBFloat16 || acc == DType::kFloat32;
  if (in == DType::kFloat16 || in == DType::kBFloat16 || in == DType::kFloat32) return acc_float;
  if (in == DType::kFloat64) return acc == DType::kFloat64;
  return !acc_float && acc != DType::kFloat64;
}

// The rows variant (CUDA/HIP reduce_rows_fast.cu) folds contiguous rows a vector at a time
// for the sums, products, extremes, counts and logsumexp (one pass, a rescaled running sum).
std::string variant_refusal(std::int32_t variant, const abi::ReduceParams& p, int) {
  if (variant != abi::kReduceRows) return {};
  if (p.red_ndim != 1 || p.in_red_strides[0] != 1) return "the reduced elements are not contiguous";
  if (p.rows < 1 || p.row_len < 1) return "there is no row to fold";
  switch (p.op) {
    case abi::kReduce_var:
    case abi::kReduce_std:
    case abi::kReduce_norm:
    case abi::kReduce_aminmax:
    case abi::kReduce_nansum:
    case abi::kReduce_nanmean:
    case abi::kReduce_var_mean:
    case abi::kReduce_std_mean:
      return "the row kernel has no " + op_name(p.op);
    default:
      break;
  }
  if (!usual_accumulation(DType(p.in_dtype), DType(p.accumulate_dtype)))
    return "the row kernel accumulates only in the input's usual dtype";
  return {};
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"input"}, {"indices", true}};
constexpr std::string_view kVariants[] = {"general", "rows"};

}  // namespace

extern const FamilySpec reduce_family{KernelFamily::kReduce,
                                      "reduce",
                                      sizeof(abi::ReduceParams),
                                      kBuffers,
                                      kVariants,
                                      field_of<abi::ReduceParams, &abi::ReduceParams::op>,
                                      field_of<abi::ReduceParams, &abi::ReduceParams::variant>,
                                      op_name,
                                      validate_bytes<abi::ReduceParams, validate>,
                                      refusal_bytes<abi::ReduceParams, variant_refusal>,
                                      set_field<abi::ReduceParams, &abi::ReduceParams::variant>,
                                      describe_common_fault};

}  // namespace nbx::families
