// Inclusive scans along one dim, PyTorch semantics.
//
// cumsum / cumprod: integer and bool inputs give int64 (as sum does) unless `dtype` asks
// otherwise, in which case the input is cast first and the output has that dtype (integers
// accumulate in int64 and wrap to it; bool is refused, as PyTorch has no bool scan);
// float16/bfloat16 accumulate in float32 on GPUs (the host reference in float64) and keep
// their dtype.
// cummax / cummin: values of the input's dtype and int64 indices. Ties take the later
// index; a NaN, once seen, stays the running value, and each NaN takes the index (PyTorch's
// cummax_cummin_helper).
// logcumsumexp: log(Σ_{j<=i} exp(x_j)) along dim, computed stably (a running maximum and a
// sum of exp(x - maximum) rescaled when the maximum grows); floating inputs only (PyTorch's
// kernels have no integer or bool form), the output keeps the dtype, float16/bfloat16
// accumulate in float32. -inf terms add nothing (a row of -inf gives -inf), +inf gives +inf
// from there on, and a NaN gives NaN from there on, as PyTorch's _log_add_exp_helper.
// A 0-d input scans as one element (dim 0 or -1). Zero-size inputs give zero-size outputs.
// Throws InvalidArgument for an undefined tensor or an out-of-range dim; Unsupported when
// the device lacks a dtype the scan needs (int64 for integer sums, fp64 …).
#pragma once

#include <cstdint>
#include <optional>

#include "core/ops/reduce.hpp"  // ValuesAndIndices
#include "core/tensor.hpp"

namespace nbx::ops {

Tensor cumsum(const Tensor& x, std::int64_t dim, std::optional<DType> dtype = {});
Tensor cumprod(const Tensor& x, std::int64_t dim, std::optional<DType> dtype = {});
ValuesAndIndices cummax(const Tensor& x, std::int64_t dim);
ValuesAndIndices cummin(const Tensor& x, std::int64_t dim);
Tensor logcumsumexp(const Tensor& x, std::int64_t dim);

}  // namespace nbx::ops
