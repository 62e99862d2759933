// The out= forms of the reductions, softmax and norms: the op's result, checked against out
// and copied into it (their kernels write fresh contiguous rows only; the elementwise and
// matrix-product forms write out directly, in inplace_elementwise.cpp and linalg.cpp).
#include <string>

#include "core/ops/inplace_write.hpp"
#include "core/ops/norm.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/softmax.hpp"

namespace nbx::ops {
namespace {

constexpr bool kExactDtype = true;

void require_out(const char* form, const Tensor& out) {
  if (!out.defined())
    throw InvalidArgument(form, std::string(form) + ": the out tensor is undefined.");
}

// sum-like reductions take out's dtype as the requested one, as PyTorch does; a requested
// dtype that differs from out's is refused in PyTorch's words.
DType reduce_dtype_of(const char* form, const Tensor& out, std::optional<DType> dtype) {
  require_out(form, out);
  if (dtype && *dtype != out.dtype())
    throw InvalidArgument(form, std::string(form) + ": Expected out tensor to have dtype " +
                                    std::string(dtype_name(*dtype)) + ", but got " +
                                    std::string(dtype_name(out.dtype())) + " instead.");
  return out.dtype();
}

Tensor write(const char* form, const Tensor& out, const Tensor& result) {
  require_out(form, out);
  return detail::write_result(form, out, result, kExactDtype);
}

}  // namespace

#define NBX_SUM_LIKE_OUT(op)                                                             \
  Tensor op##_out(const Tensor& out, const Tensor& x, const DimList& dims, bool keepdim, \
                  std::optional<DType> dtype) {                                          \
    const DType d = reduce_dtype_of(#op "_out", out, dtype);                             \
    return write(#op "_out", out, op(x, dims, keepdim, d));                              \
  }
NBX_SUM_LIKE_OUT(sum)
NBX_SUM_LIKE_OUT(prod)
NBX_SUM_LIKE_OUT(mean)
NBX_SUM_LIKE_OUT(nansum)
NBX_SUM_LIKE_OUT(nanmean)
#undef NBX_SUM_LIKE_OUT

#define NBX_DIMS_OUT(op)                                                                   \
  Tensor op##_out(const Tensor& out, const Tensor& x, const DimList& dims, bool keepdim) { \
    return write(#op "_out", out, op(x, dims, keepdim));                                   \
  }
NBX_DIMS_OUT(amax)
NBX_DIMS_OUT(amin)
NBX_DIMS_OUT(logsumexp)
NBX_DIMS_OUT(any)
NBX_DIMS_OUT(all)
#undef NBX_DIMS_OUT

ValuesAndIndices max_out(const Tensor& values, const Tensor& indices, const Tensor& x,
                         std::int64_t dim, bool keepdim) {
  const ValuesAndIndices r = max(x, dim, keepdim);
  return {write("max_out", values, r.values), write("max_out", indices, r.indices)};
}
ValuesAndIndices min_out(const Tensor& values, const Tensor& indices, const Tensor& x,
                         std::int64_t dim, bool keepdim) {
  const ValuesAndIndices r = min(x, dim, keepdim);
  return {write("min_out", values, r.values), write("min_out", indices, r.indices)};
}

Tensor argmax_out(const Tensor& out, const Tensor& x, std::optional<std::int64_t> dim,
                  bool keepdim) {
  return write("argmax_out", out, argmax(x, dim, keepdim));
}
Tensor argmin_out(const Tensor& out, const Tensor& x, std::optional<std::int64_t> dim,
                  bool keepdim) {
  return write("argmin_out", out, argmin(x, dim, keepdim));
}

Tensor var_out(const Tensor& out, const Tensor& x, const DimList& dims, double correction,
               bool keepdim) {
  return write("var_out", out, var(x, dims, correction, keepdim));
}
Tensor std_out(const Tensor& out, const Tensor& x, const DimList& dims, double correction,
               bool keepdim) {
  return write("std_out", out, ops::std(x, dims, correction, keepdim));
}
Tensor norm_out(const Tensor& out, const Tensor& x, double p, const DimList& dims, bool keepdim) {
  return write("norm_out", out, norm(x, p, dims, keepdim));
}

Tensor softmax_out(const Tensor& out, const Tensor& x, std::int64_t dim,
                   std::optional<DType> dtype) {
  return write("softmax_out", out, softmax(x, dim, dtype));
}
Tensor log_softmax_out(const Tensor& out, const Tensor& x, std::int64_t dim,
                       std::optional<DType> dtype) {
  return write("log_softmax_out", out, log_softmax(x, dim, dtype));
}

Tensor layer_norm_out(const Tensor& out, const Tensor& x, const Shape& normalized_shape,
                      const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                      double eps) {
  return write("layer_norm_out", out, layer_norm(x, normalized_shape, weight, bias, eps));
}
Tensor rms_norm_out(const Tensor& out, const Tensor& x, const Shape& normalized_shape,
                    const std::optional<Tensor>& weight, std::optional<double> eps) {
  return write("rms_norm_out", out, rms_norm(x, normalized_shape, weight, eps));
}

}  // namespace nbx::ops
