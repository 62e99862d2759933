// The reduction wrappers: dims, dtypes, the row tile from capabilities, the launch.
#include "core/ops/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/plan.hpp"
#include "core/ops/reduce_detail.hpp"
#include "core/ops/tiling.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops {
namespace {

std::string dtype_str(DType t) {
  return std::string(dtype_name(t));
}

enum class Family {
  kSumLike,       // sum, prod: integers → int64, or the requested dtype
  kFloatOnly,     // mean, var, std, norm: floating inputs only
  kSameDtype,     // amax, amin, max, min
  kIndex,         // argmax, argmin: int64 out, no bool
  kLogical,       // any, all: bool out (uint8 for uint8)
  kCount,         // count_nonzero: int64 out
  kFloatPromote,  // logsumexp: integers → default float
  kNanMean,       // nanmean: floating inputs only, even with a requested dtype (PyTorch)
};

struct ReduceRequest {
  const char* name;
  abi::ReduceOp op;
  Family family;
  const Tensor& x;
  DimList dims;
  bool keepdim;
  std::optional<DType> dtype;
  double attr = 0;
  bool float32_out = false;  // half inputs: write the float32 accumulator, unrounded (detail::)
};

// Marks the reduced dims; an empty list means all of them.
std::vector<bool> reduced_mask(const char* op, const Tensor& x, const DimList& dims) {
  std::vector<bool> mask(static_cast<std::size_t>(x.dim()), dims.empty());
  for (std::int64_t d : dims) {
    const int w = wrap_dim(d, x.dim(), op);
    if (x.dim() == 0) continue;
    if (mask[static_cast<std::size_t>(w)])
      throw InvalidArgument(op, std::string(op) + ": dimension " + std::to_string(w) +
                                    " appears more than once in the reduction dims.");
    mask[static_cast<std::size_t>(w)] = true;
  }
  return mask;
}

DType accumulate_dtype(Family f, DType in) {
  if (is_half_type(in)) return DType::kFloat32;
  if (f == Family::kSumLike && !is_floating(in)) return DType::kInt64;
  return in;
}

struct ReduceOpInfo {
  std::string_view name;
  abi::ReduceOp op;
  Family family;
};

constexpr ReduceOpInfo kReduceOps[] = {
    {"sum", abi::kReduce_sum, Family::kSumLike},
    {"prod", abi::kReduce_prod, Family::kSumLike},
    {"mean", abi::kReduce_mean, Family::kFloatOnly},
    {"amax", abi::kReduce_amax, Family::kSameDtype},
    {"amin", abi::kReduce_amin, Family::kSameDtype},
    {"max", abi::kReduce_max_with_index, Family::kSameDtype},
    {"min", abi::kReduce_min_with_index, Family::kSameDtype},
    {"argmax", abi::kReduce_argmax, Family::kIndex},
    {"argmin", abi::kReduce_argmin, Family::kIndex},
    {"var", abi::kReduce_var, Family::kFloatOnly},
    {"std", abi::kReduce_std, Family::kFloatOnly},
    {"norm", abi::kReduce_norm, Family::kFloatOnly},
    {"logsumexp", abi::kReduce_logsumexp, Family::kFloatPromote},
    {"any", abi::kReduce_any, Family::kLogical},
    {"all", abi::kReduce_all, Family::kLogical},
    {"count_nonzero", abi::kReduce_count_nonzero, Family::kCount},
    {"aminmax", abi::kReduce_aminmax, Family::kSameDtype},
    {"nansum", abi::kReduce_nansum, Family::kSumLike},
    {"nanmean", abi::kReduce_nanmean, Family::kNanMean},
    {"var_mean", abi::kReduce_var_mean, Family::kFloatOnly},
    {"std_mean", abi::kReduce_std_mean, Family::kFloatOnly},
};

const ReduceOpInfo& info_for(std::string_view name) {
  for (const ReduceOpInfo& i : kReduceOps)
    if (i.name == name) return i;
  throw InvalidArgument(std::string(name), "'" + std::string(name) + "' is not a reduction.");
}

// The table row of a kernel op: the public max(x) and min(x) of a whole tensor run amax and
// amin under their own names.
const ReduceOpInfo& info_for(abi::ReduceOp op) {
  for (const ReduceOpInfo& i : kReduceOps)
    if (i.op == op) return i;
  throw Internal("reduce: no table row for reduce op " + std::to_string(op) + ".");
}

// The ops whose buffer 2 is a second output of the first one's dtype (not int64 indices).
bool writes_second_value(abi::ReduceOp op) {
  return op == abi::kReduce_aminmax || op == abi::kReduce_var_mean || op == abi::kReduce_std_mean;
}

RowPlan plan_for(const ReduceOpInfo& info, std::string_view name, DType in,
                 std::optional<DType> requested, std::int64_t row_len, const PlanTarget& target);

struct Launched {
  Tensor out;
  Tensor indices;  // max/min: int64 indices; aminmax: the maxima; var_mean/std_mean: the means
};

Launched run(const ReduceRequest& r, bool with_indices = false) {
  const Tensor& x = r.x;
  if (!x.defined())
    throw InvalidArgument(r.name, std::string(r.name) + ": the tensor is undefined.");
  const Device& device = x.device();
  const PlanTarget target{device.capabilities(), device.str(), device.display_name(),
                          &device.context().backend_device()};
  std::int64_t row_len_estimate = 1;  // for the plan; the exact row length follows below
  {
    const std::vector<bool> m = reduced_mask(r.name, x, r.dims);
    for (int d = 0; d < x.dim(); ++d)
      if (m[static_cast<std::size_t>(d)]) row_len_estimate *= x.shape()[d];
  }
  const RowPlan plan =
      plan_for(info_for(r.op), r.name, x.dtype(), r.dtype, row_len_estimate, target);
  const DType out_dtype =
      r.float32_out && is_half_type(plan.out_dtype) ? DType::kFloat32 : plan.out_dtype;
  const Tensor src = x.to(plan.input_dtype);  // a requested dtype casts first, as PyTorch does

  const std::vector<bool> mask = reduced_mask(r.name, src, r.dims);
  abi::ReduceParams p{};
  p.op = r.op;
  p.in_dtype = static_cast<std::int32_t>(src.dtype());
  p.out_dtype = static_cast<std::int32_t>(out_dtype);
  p.accumulate_dtype = static_cast<std::int32_t>(plan.accumulate_dtype);
  p.in_offset = src.offset();
  p.attr = r.attr;
  Shape out_shape, kept_shape;
  for (int d = 0; d < src.dim(); ++d) {
    if (mask[static_cast<std::size_t>(d)]) {
      p.red_sizes[p.red_ndim] = src.shape()[d];
      p.in_red_strides[p.red_ndim++] = src.strides()[d];
      if (r.keepdim) out_shape.push_back(1);
    } else {
      p.out_sizes[p.out_ndim] = src.shape()[d];
      p.in_kept_strides[p.out_ndim++] = src.strides()[d];
      out_shape.push_back(src.shape()[d]);
      kept_shape.push_back(src.shape()[d]);
    }
  }
  p.rows = numel(kept_shape);
  p.row_len = 1;
  for (int d = 0; d < p.red_ndim; ++d) p.row_len *= p.red_sizes[d];
  const Family family = r.family;
  // ±inf norms are extrema too: PyTorch refuses them over an empty dim, as amax.
  const bool extreme = family == Family::kSameDtype || family == Family::kIndex ||
                       (r.op == abi::kReduce_norm && std::isinf(r.attr));
  if (extreme && p.row_len == 0 && p.rows > 0)
    throw InvalidArgument(r.name, std::string(r.name) +
                                      ": cannot reduce over a zero-size dimension (shape " +
                                      to_string(x.shape()) + ") — the result has no identity.");

  p.row_tile = plan.row_tile;
  std::vector<PlanChoice> choices;
  const int candidates[] = {abi::kReduceRows, abi::kReduceGeneral};
  choose_variant(p, candidates, target, choices);

  Launched result;
  // The output is written in the kept-dims layout; keepdim only re-views it.
  result.out = Tensor::empty(kept_shape, out_dtype, device);
  const Strides out_strides = result.out.strides();
  for (int d = 0; d < p.out_ndim; ++d) p.out_strides[d] = out_strides[d];
  KernelBuffer buffers[3] = {
      {result.out.storage() ? result.out.storage()->memory() : DeviceMemory{}, true},
      {src.storage()->memory(), false},
      {}};
  std::size_t n_buffers = 2;
  if (with_indices) {
    const DType second = writes_second_value(r.op) ? out_dtype : DType::kInt64;
    result.indices = Tensor::empty(kept_shape, second, device);
    const Strides is = result.indices.strides();
    for (int d = 0; d < p.out_ndim; ++d) p.index_strides[d] = is[d];
    buffers[2] = {result.indices.storage()->memory(), true};
    n_buffers = 3;
  }
  if (p.rows > 0) {
    KernelLaunch kl;
    kl.family = KernelFamily::kReduce;
    kl.buffers = std::span<const KernelBuffer>(buffers, n_buffers);
    kl.params = std::as_bytes(std::span<const abi::ReduceParams>(&p, 1));
    DeviceContext& ctx = device.context();
    std::lock_guard lock(ctx.launch_mutex());
    ctx.backend_device().launch(kl);
  }
  if (r.keepdim) {
    result.out = result.out.view(out_shape);
    if (with_indices) result.indices = result.indices.view(out_shape);
  }
  return result;
}

}  // namespace

namespace {

RowPlan plan_for(const ReduceOpInfo& info, std::string_view op, DType in,
                 std::optional<DType> requested, std::int64_t row_len, const PlanTarget& target) {
  const std::string name(op);
  RowPlan plan;
  plan.input_dtype = requested.value_or(in);
  const DType t = plan.input_dtype;
  std::string rule;
  switch (info.family) {
    case Family::kSumLike:
      plan.out_dtype = requested || is_floating(t) ? t : DType::kInt64;
      rule = requested ? "a requested dtype is the output's"
                       : "integer and bool sums and products give int64; floats keep their dtype";
      break;
    case Family::kFloatOnly:
      if (!is_floating(t))
        throw InvalidArgument(name, name + " is not defined for " + dtype_str(t) +
                                        " tensors (it takes floating dtypes).");
      plan.out_dtype = t;
      rule = "floating inputs only; the output keeps the dtype";
      break;
    case Family::kSameDtype:
      plan.out_dtype = t;
      rule = "extrema keep the input dtype";
      // max/min also return int64 indices: refused by name here, not by the allocation.
      if (info.op == abi::kReduce_max_with_index || info.op == abi::kReduce_min_with_index)
        detail::require_dtype_support(name, DType::kInt64, target.caps, target.device_id,
                                      target.device_name);
      break;
    case Family::kIndex:
      if (t == DType::kBool)
        throw InvalidArgument(name, name + " is not defined for bool tensors.");
      plan.out_dtype = DType::kInt64;
      rule = "indices are int64";
      break;
    case Family::kLogical:
      // PyTorch keeps uint8 for uint8 inputs (its masks before bool existed).
      plan.out_dtype = t == DType::kUInt8 ? DType::kUInt8 : DType::kBool;
      rule = "any/all give bool, uint8 for uint8";
      break;
    case Family::kCount:
      plan.out_dtype = DType::kInt64;
      rule = "counts are int64";
      break;
    case Family::kFloatPromote:
      plan.out_dtype = is_floating(t) ? t : kDefaultFloat;
      plan.input_dtype = plan.out_dtype;
      rule = "integers are computed as the default float";
      break;
    case Family::kNanMean:
      // PyTorch checks the input's own dtype before a requested one.
      if (!is_floating(in) || !is_floating(t))
        throw InvalidArgument(name, name + " is not defined for " +
                                        dtype_str(is_floating(in) ? t : in) +
                                        " tensors (it takes floating dtypes).");
      plan.out_dtype = t;
      rule = "floating inputs only; the output keeps the dtype";
      break;
  }
  // Integer sums and products wrap, so their low bits do not depend on the accumulator's
  // width: they accumulate in int64 and narrow to a requested int32/int16/int8/uint8/bool
  // (wrapping, as PyTorch's int64 accumulation does); a device without int64 accumulates
  // such an output in int32.
  const bool integer_sum = info.family == Family::kSumLike && !is_floating(plan.input_dtype);
  const bool narrow_accumulator = integer_sum && !target.caps.int64.value &&
                                  dtype_size(plan.out_dtype) <= 4 && !is_floating(plan.out_dtype);
  plan.accumulate_dtype = !integer_sum         ? accumulate_dtype(info.family, plan.input_dtype)
                          : narrow_accumulator ? DType::kInt32
                                               : DType::kInt64;
  for (DType d : {in, plan.input_dtype, plan.out_dtype, plan.accumulate_dtype})
    detail::require_dtype_support(name, d, target.caps, target.device_id, target.device_name);
  plan.row_tile = detail::row_tile(target.caps, row_len);
  plan.choices.push_back({"out_dtype", dtype_str(plan.out_dtype), "", "", rule + " (PyTorch)."});
  plan.choices.push_back(
      {"accumulate_dtype", dtype_str(plan.accumulate_dtype), integer_sum ? "int64" : "",
       integer_sum ? target.caps.int64.source : "",
       is_half_type(plan.input_dtype) ? "float16/bfloat16 accumulate in float32."
       : narrow_accumulator
           ? "no int64: the integer output accumulates in int32, whose wrapping keeps the "
             "same low bits."
       : integer_sum && plan.out_dtype != DType::kInt64
           ? "integers accumulate in int64, then narrow to the output (wrapping)."
           : "accumulates in the dtype that holds the result exactly."});
  plan.choices.push_back(detail::row_tile_choice(target.caps, row_len, plan.row_tile));
  if (writes_second_value(info.op))
    plan.choices.push_back(
        {"outputs", info.op == abi::kReduce_aminmax ? "min, max" : "statistic, mean", "", "",
         "one launch writes both outputs from one read of each row (PyTorch returns the pair)."});
  return plan;
}

}  // namespace

RowPlan plan_reduce(std::string_view op, DType in, std::optional<DType> requested,
                    std::int64_t row_len, const PlanTarget& target) {
  return plan_for(info_for(op), op, in, requested, row_len, target);
}

Tensor sum(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  return run({"sum", abi::kReduce_sum, Family::kSumLike, x, dims, keepdim, dtype}).out;
}
Tensor prod(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  return run({"prod", abi::kReduce_prod, Family::kSumLike, x, dims, keepdim, dtype}).out;
}
Tensor mean(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  return run({"mean", abi::kReduce_mean, Family::kFloatOnly, x, dims, keepdim, dtype}).out;
}
Tensor amax(const Tensor& x, const DimList& dims, bool keepdim) {
  return run({"amax", abi::kReduce_amax, Family::kSameDtype, x, dims, keepdim, {}}).out;
}
Tensor amin(const Tensor& x, const DimList& dims, bool keepdim) {
  return run({"amin", abi::kReduce_amin, Family::kSameDtype, x, dims, keepdim, {}}).out;
}
ValuesAndIndices max(const Tensor& x, std::int64_t dim, bool keepdim) {
  Launched l =
      run({"max", abi::kReduce_max_with_index, Family::kSameDtype, x, {dim}, keepdim, {}}, true);
  return {l.out, l.indices};
}
ValuesAndIndices min(const Tensor& x, std::int64_t dim, bool keepdim) {
  Launched l =
      run({"min", abi::kReduce_min_with_index, Family::kSameDtype, x, {dim}, keepdim, {}}, true);
  return {l.out, l.indices};
}
// argmax/argmin without a dim and with keepdim: the flat index with every dim kept as 1,
// as PyTorch 2.x (argmax(x[2, 3], keepdim=True) is [1, 1]).
static Tensor keep_every_dim(const Tensor& flat_index, const Tensor& x, bool keepdim) {
  if (!keepdim) return flat_index;
  Shape ones;
  for (std::int64_t d = 0; d < x.dim(); ++d) ones.push_back(1);
  return flat_index.reshape(ones);
}

Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  if (!dim)
    return keep_every_dim(
        run({"argmax", abi::kReduce_argmax, Family::kIndex, x.reshape({-1}), {}, false, {}}).out, x,
        keepdim);
  return run({"argmax", abi::kReduce_argmax, Family::kIndex, x, {*dim}, keepdim, {}}).out;
}
Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  if (!dim)
    return keep_every_dim(
        run({"argmin", abi::kReduce_argmin, Family::kIndex, x.reshape({-1}), {}, false, {}}).out, x,
        keepdim);
  return run({"argmin", abi::kReduce_argmin, Family::kIndex, x, {*dim}, keepdim, {}}).out;
}
Tensor var(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return run({"var", abi::kReduce_var, Family::kFloatOnly, x, dims, keepdim, {}, correction}).out;
}
Tensor stddev(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return std(x, dims, correction, keepdim);
}
Tensor norm(const Tensor& x, double p, const DimList& dims, bool keepdim) {
  if (std::isnan(p)) throw InvalidArgument("norm", "norm: the order p must not be NaN.");
  return run({"norm", abi::kReduce_norm, Family::kFloatOnly, x, dims, keepdim, {}, p}).out;
}
Tensor logsumexp(const Tensor& x, const DimList& dims, bool keepdim) {
  return run({"logsumexp", abi::kReduce_logsumexp, Family::kFloatPromote, x, dims, keepdim, {}})
      .out;
}
Tensor any(const Tensor& x, const DimList& dims, bool keepdim) {
  return run({"any", abi::kReduce_any, Family::kLogical, x, dims, keepdim, {}}).out;
}
Tensor all(const Tensor& x, const DimList& dims, bool keepdim) {
  return run({"all", abi::kReduce_all, Family::kLogical, x, dims, keepdim, {}}).out;
}
Tensor count_nonzero(const Tensor& x, const DimList& dims) {
  return run({"count_nonzero", abi::kReduce_count_nonzero, Family::kCount, x, dims, false, {}}).out;
}

// ---- issue 11's reductions ----

Tensor max(const Tensor& x) {
  return run({"max", abi::kReduce_amax, Family::kSameDtype, x, {}, false, {}}).out;
}
Tensor min(const Tensor& x) {
  return run({"min", abi::kReduce_amin, Family::kSameDtype, x, {}, false, {}}).out;
}
MinMax aminmax(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  const DimList dims = dim ? DimList{*dim} : DimList{};
  Launched l =
      run({"aminmax", abi::kReduce_aminmax, Family::kSameDtype, x, dims, keepdim, {}}, true);
  return {l.out, l.indices};
}
Tensor nansum(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  // Of integers nansum is sum (a bool result a logical or); PyTorch's floating nansum has no
  // bool kernel.
  if (dtype == DType::kBool && x.defined() && is_floating(x.dtype()))
    throw InvalidArgument("nansum",
                          "nansum of a floating tensor cannot produce bool (PyTorch's "
                          "nansum has no bool kernel).");
  return run({"nansum", abi::kReduce_nansum, Family::kSumLike, x, dims, keepdim, dtype}).out;
}
Tensor nanmean(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  return run({"nanmean", abi::kReduce_nanmean, Family::kNanMean, x, dims, keepdim, dtype}).out;
}
Tensor std(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return run({"std", abi::kReduce_std, Family::kFloatOnly, x, dims, keepdim, {}, correction}).out;
}
StatisticAndMean var_mean(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  Launched l =
      run({"var_mean", abi::kReduce_var_mean, Family::kFloatOnly, x, dims, keepdim, {}, correction},
          true);
  return {l.out, l.indices};
}
StatisticAndMean std_mean(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  Launched l =
      run({"std_mean", abi::kReduce_std_mean, Family::kFloatOnly, x, dims, keepdim, {}, correction},
          true);
  return {l.out, l.indices};
}

namespace detail {

Tensor sum_float32(const Tensor& x, const DimList& dims, bool keepdim) {
  ReduceRequest r{"sum", abi::kReduce_sum, Family::kSumLike, x, dims, keepdim, {}};
  r.float32_out = true;
  return run(r).out;
}
Tensor logsumexp_float32(const Tensor& x, const DimList& dims, bool keepdim) {
  ReduceRequest r{"logsumexp", abi::kReduce_logsumexp, Family::kFloatPromote, x, dims, keepdim, {}};
  r.float32_out = true;
  return run(r).out;
}

}  // namespace detail

std::vector<std::string> reduction_op_names() {
  return {"sum",    "prod",          "mean",    "amax",   "amin",    "max",       "min",
          "argmax", "argmin",        "var",     "std",    "norm",    "logsumexp", "any",
          "all",    "count_nonzero", "aminmax", "nansum", "nanmean", "var_mean",  "std_mean"};
}

}  // namespace nbx::ops
