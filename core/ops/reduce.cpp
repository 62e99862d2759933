// The reduction wrappers: dims, dtypes, the row tile from capabilities, the launch.
#include "core/ops/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/tiling.hpp"

namespace nbx::ops {
namespace {

std::string dtype_str(DType t) {
  return std::string(dtype_name(t));
}

enum class Family {
  kSumLike,       // sum, prod: integers → int64
  kFloatOnly,     // mean, var, std, norm: floating inputs only
  kSameDtype,     // amax, amin, max, min
  kIndex,         // argmax, argmin: int64 out, no bool
  kLogical,       // any, all: bool out
  kCount,         // count_nonzero: int64 out
  kFloatPromote,  // logsumexp: integers → default float
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

struct Launched {
  Tensor out;
  Tensor indices;
};

Launched run(const ReduceRequest& r, bool with_indices = false) {
  const Tensor& x = r.x;
  if (!x.defined())
    throw InvalidArgument(r.name, std::string(r.name) + ": the tensor is undefined.");
  const DType in = x.dtype();
  DType out_dtype = in;
  Tensor src = x;
  switch (r.family) {
    case Family::kSumLike:
      out_dtype = r.dtype ? *r.dtype : (is_floating(in) ? in : DType::kInt64);
      break;
    case Family::kFloatOnly:
      if (!is_floating(r.dtype.value_or(in)))
        throw InvalidArgument(r.name, std::string(r.name) + " is not defined for " +
                                          dtype_str(r.dtype.value_or(in)) +
                                          " tensors (it takes floating dtypes).");
      out_dtype = r.dtype.value_or(in);
      break;
    case Family::kSameDtype:
      break;
    case Family::kIndex:
      if (in == DType::kBool)
        throw InvalidArgument(r.name, std::string(r.name) + " is not defined for bool tensors.");
      out_dtype = DType::kInt64;
      break;
    case Family::kLogical:
      out_dtype = DType::kBool;
      break;
    case Family::kCount:
      out_dtype = DType::kInt64;
      break;
    case Family::kFloatPromote:
      out_dtype = is_floating(in) ? in : kDefaultFloat;
      break;
  }
  // A requested dtype (sum(x, dtype=float64)) casts the input first, as PyTorch does.
  if (r.dtype && *r.dtype != in) src = x.to(*r.dtype);
  if (r.family == Family::kFloatPromote && !is_floating(in)) src = x.to(out_dtype);

  const std::vector<bool> mask = reduced_mask(r.name, src, r.dims);
  abi::ReduceParams p{};
  p.op = r.op;
  p.in_dtype = static_cast<std::int32_t>(src.dtype());
  p.out_dtype = static_cast<std::int32_t>(out_dtype);
  p.accumulate_dtype = static_cast<std::int32_t>(accumulate_dtype(r.family, src.dtype()));
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
  const bool extreme = r.family == Family::kSameDtype || r.family == Family::kIndex;
  if (extreme && p.row_len == 0 && p.rows > 0)
    throw InvalidArgument(r.name, std::string(r.name) +
                                      ": cannot reduce over a zero-size dimension (shape " +
                                      to_string(x.shape()) + ") — the result has no identity.");

  const Device& device = src.device();
  for (DType t : {src.dtype(), out_dtype, static_cast<DType>(p.accumulate_dtype)})
    detail::require_dtype_support(r.name, t, device);
  p.row_tile = detail::row_tile(device, p.row_len);

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
    result.indices = Tensor::empty(kept_shape, DType::kInt64, device);
    const Strides is = result.indices.strides();
    for (int d = 0; d < p.out_ndim; ++d) p.index_strides[d] = is[d];
    buffers[2] = {result.indices.storage()->memory(), true};
    n_buffers = 3;
  }
  if (p.rows > 0) {
    KernelLaunch kl;
    kl.kernel = "reduce";
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
Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  if (!dim)
    return run({"argmax", abi::kReduce_argmax, Family::kIndex, x.reshape({-1}), {}, false, {}}).out;
  return run({"argmax", abi::kReduce_argmax, Family::kIndex, x, {*dim}, keepdim, {}}).out;
}
Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  if (!dim)
    return run({"argmin", abi::kReduce_argmin, Family::kIndex, x.reshape({-1}), {}, false, {}}).out;
  return run({"argmin", abi::kReduce_argmin, Family::kIndex, x, {*dim}, keepdim, {}}).out;
}
Tensor var(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return run({"var", abi::kReduce_var, Family::kFloatOnly, x, dims, keepdim, {}, correction}).out;
}
Tensor stddev(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return run({"std", abi::kReduce_std, Family::kFloatOnly, x, dims, keepdim, {}, correction}).out;
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

std::vector<std::string> reduction_op_names() {
  return {"sum",    "prod", "mean", "amax", "amin",      "max", "min", "argmax",
          "argmin", "var",  "std",  "norm", "logsumexp", "any", "all", "count_nonzero"};
}

}  // namespace nbx::ops
