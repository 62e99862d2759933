// median, nanmedian, quantile, nanquantile: a sort, then the row position each statistic
// picks, computed on the device from the rows' NaN counts (NaNs sort last), and gathered —
// PyTorch's own composition (aten/src/ATen/native/Sorting.cpp), so its rounding is PyTorch's:
// ranks q · (n − 1) in the input dtype, linear interpolation by lerp.
#include <array>
#include <limits>
#include <string>

#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/index.hpp"
#include "core/ops/sort.hpp"
#include "core/ops/sort_detail.hpp"

namespace nbx::ops {
namespace {

// Row positions (int64, the rows' shape with dim kept as 1) gathered from the sorted rows.
ValuesAndIndices gather_positions(const ValuesAndIndices& s, int dim, const Tensor& positions,
                                  bool keepdim) {
  Tensor v = gather(s.values, dim, positions), i = gather(s.indices, dim, positions);
  if (keepdim) return {v, i};
  return {v.squeeze(dim), i.squeeze(dim)};
}

ValuesAndIndices median_along(const char* name, const Tensor& x, std::int64_t dim, bool keepdim,
                              bool ignore_nan) {
  if (!x.defined()) throw InvalidArgument(name, std::string(name) + ": the tensor is undefined.");
  detail::require_not_bool(name, x);
  const std::int64_t n = detail::sorted_size(name, x, dim);
  if (n == 0)
    throw InvalidArgument(name, std::string(name) + ": expected reduction dim " +
                                    std::to_string(dim) + " to have non-zero size.");
  // A 0-d tensor is its own median: sorted as [1] and given back 0-d.
  const Tensor rows = x.dim() == 0 ? x.reshape({1}) : x;
  const int d = wrap_dim(dim, rows.dim(), name);
  const ValuesAndIndices s = detail::sort_rows(name, rows, d, false);
  ValuesAndIndices r;
  if (!is_floating(x.dtype())) {
    r = detail::select_position(s, d, (n - 1) / 2, keepdim);
  } else {
    const Tensor nans = sum(isnan(rows), {d}, /*keepdim=*/true);  // int64
    // median: a row with a NaN picks its first NaN (position n − nans); nanmedian: the lower
    // median of the non-NaN values, position 0 (a NaN) for a row of NaNs.
    const Tensor valid = sub(n, nans);
    const Tensor positions = ignore_nan ? where(gt(valid, 0), floor_divide(sub(valid, 1), 2), 0)
                                        : where(gt(nans, 0), valid, (n - 1) / 2);
    r = gather_positions(s, d, positions, keepdim);
  }
  if (x.dim() == 0) return {r.values.reshape({}), r.indices.reshape({})};
  return r;
}

Tensor median_all(const char* name, const Tensor& x, bool ignore_nan) {
  if (!x.defined()) throw InvalidArgument(name, std::string(name) + ": the tensor is undefined.");
  detail::require_not_bool(name, x);
  if (x.numel() == 0) {
    if (!is_floating(x.dtype()))
      throw InvalidArgument(name, std::string(name) + " of an empty " +
                                      std::string(dtype_name(x.dtype())) +
                                      " tensor has no value (an empty float tensor gives NaN).");
    return full({}, Scalar(std::numeric_limits<double>::quiet_NaN()), x.dtype(), x.device());
  }
  return median_along(name, x.reshape({-1}), 0, false, ignore_nan).values.reshape({});
}

constexpr std::array<std::string_view, 5> kInterpolations = {"linear", "lower", "higher",
                                                             "midpoint", "nearest"};

Tensor quantile_impl(const char* name, const Tensor& x, const Tensor& q, bool q_scalar,
                     std::optional<std::int64_t> dim, bool keepdim, std::string_view mode,
                     bool ignore_nan) {
  const std::string op(name);
  if (!x.defined() || !q.defined()) throw InvalidArgument(op, op + ": a tensor is undefined.");
  if (x.dtype() != DType::kFloat32 && x.dtype() != DType::kFloat64)
    throw InvalidArgument(op, op + "() input tensor must be either float or double dtype (got " +
                                  std::string(dtype_name(x.dtype())) + ").");
  if (q.dtype() != x.dtype())
    throw InvalidArgument(op, op + "() q tensor must be same dtype as the input tensor (" +
                                  std::string(dtype_name(q.dtype())) + " and " +
                                  std::string(dtype_name(x.dtype())) + ").");
  if (!(q.device() == x.device()))
    throw InvalidArgument(op, op + "() q tensor must be on the same device as the input (" +
                                  q.device().str() + " and " + x.device().str() + ").");
  if (q.dim() > 1)
    throw InvalidArgument(
        op, op + "() q must be a scalar or 1D tensor (got " + std::to_string(q.dim()) + " dims).");
  if (x.numel() == 0) throw InvalidArgument(op, op + "() input tensor must be non-empty.");
  bool known = false;
  for (std::string_view m : kInterpolations) known |= m == mode;
  if (!known)
    throw InvalidArgument(op, op +
                                  "() interpolation must be one of linear, lower, higher, "
                                  "midpoint or nearest, but got " +
                                  std::string(mode) + ".");
  if (!q_scalar) {
    // PyTorch reads the check to the host too (q.ge(0).logical_and_(q.le(1)).all()).
    const Tensor in_range = all(logical_and(ge(q, 0), le(q, 1)));
    if (!in_range.to(host_device()).item().to_bool())
      throw InvalidArgument(op, op + "() q values must be in the range [0, 1].");
  }

  // Rows along `d` of `rows`; the result's shape without q's dim.
  const bool flatten = !dim || x.dim() == 0;
  const Tensor rows = flatten ? x.reshape({-1}) : x;
  const int d = flatten ? 0 : wrap_dim(*dim, x.dim(), name);
  const std::int64_t n = rows.shape()[d];
  Shape kept;  // the result's shape (q's dim aside)
  if (flatten) {
    if (keepdim) kept = Shape(std::vector<std::int64_t>(std::size_t(x.dim()), 1));
  } else {
    for (int k = 0; k < x.dim(); ++k)
      if (k != d)
        kept.push_back(x.shape()[k]);
      else if (keepdim)
        kept.push_back(1);
  }

  const Tensor sorted = detail::sort_rows(name, rows, d, false).values;
  // One leading dim for q's values: ranks are [nq, rows' shape with d as 1].
  const std::int64_t nq = q.numel();
  Shape q_shape(std::vector<std::int64_t>(std::size_t(rows.dim()) + 1, 1));
  q_shape[0] = nq;
  const Tensor qs = q.reshape(q_shape);
  Tensor ranks;
  if (ignore_nan) {
    const Tensor valid = sum(logical_not(isnan(sorted)), {d}, /*keepdim=*/true);
    ranks = mul(qs, sub(valid, 1));
    ranks = masked_fill(ranks, lt(ranks, 0), 0);  // a row of NaNs: rank 0, a NaN
  } else {
    const Tensor has_nan = any(isnan(sorted), {d}, /*keepdim=*/true);
    ranks = where(has_nan.unsqueeze(0), Scalar(n - 1), mul(qs, n - 1));  // NaN: the last, a NaN
  }
  if (mode == "lower") ranks = floor(ranks);
  if (mode == "higher") ranks = ceil(ranks);
  if (mode == "nearest") ranks = round(ranks);
  Shape expanded = rows.shape();
  expanded.insert(0, nq);
  const Tensor table = sorted.unsqueeze(0).expand(expanded);
  const Tensor below = cast(ranks, DType::kInt64);
  Tensor result = gather(table, d + 1, below);
  if (mode == "linear" || mode == "midpoint") {
    const Tensor weights = mode == "midpoint" ? full_like(ranks, 0.5) : sub(ranks, below);
    result = lerp(result, gather(table, d + 1, cast(ceil(ranks), DType::kInt64)), weights);
  }
  Shape out_shape = kept;
  if (!q_scalar) out_shape.insert(0, nq);
  return result.reshape(out_shape);
}

Tensor scalar_q(const char* name, const Tensor& x, double q) {
  if (!(q >= 0 && q <= 1))
    throw InvalidArgument(name, std::string(name) + "() q must be in the range [0, 1] but got " +
                                    std::to_string(q) + ".");
  if (!x.defined()) throw InvalidArgument(name, std::string(name) + ": the tensor is undefined.");
  // An integer x is refused by quantile_impl (float or double only) before q's dtype counts.
  return full({}, q, is_floating(x.dtype()) ? x.dtype() : DType::kFloat64, x.device());
}

}  // namespace

Tensor median(const Tensor& x) {
  return median_all("median", x, false);
}
ValuesAndIndices median(const Tensor& x, std::int64_t dim, bool keepdim) {
  return median_along("median", x, dim, keepdim, false);
}
Tensor nanmedian(const Tensor& x) {
  return median_all("nanmedian", x, true);
}
ValuesAndIndices nanmedian(const Tensor& x, std::int64_t dim, bool keepdim) {
  return median_along("nanmedian", x, dim, keepdim, true);
}

Tensor quantile(const Tensor& x, double q, std::optional<std::int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  return quantile_impl("quantile", x, scalar_q("quantile", x, q), true, dim, keepdim, interpolation,
                       false);
}
Tensor quantile(const Tensor& x, const Tensor& q, std::optional<std::int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  return quantile_impl("quantile", x, q, q.defined() && q.dim() == 0, dim, keepdim, interpolation,
                       false);
}
Tensor nanquantile(const Tensor& x, double q, std::optional<std::int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl("nanquantile", x, scalar_q("nanquantile", x, q), true, dim, keepdim,
                       interpolation, true);
}
Tensor nanquantile(const Tensor& x, const Tensor& q, std::optional<std::int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl("nanquantile", x, q, q.defined() && q.dim() == 0, dim, keepdim,
                       interpolation, true);
}

}  // namespace nbx::ops
