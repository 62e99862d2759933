// The softmax family along any dim, PyTorch semantics. Floating inputs only (InvalidArgument
// otherwise); float16/bfloat16 compute in float32. One pass over the row when it fits the
// device's shared memory, a looped (online) pass otherwise — 128k-vocabulary rows included.
#pragma once

#include <optional>

#include "core/tensor.hpp"

namespace nbx::ops {

Tensor softmax(const Tensor& x, std::int64_t dim, std::optional<DType> dtype = {});
Tensor log_softmax(const Tensor& x, std::int64_t dim, std::optional<DType> dtype = {});
// softmax(scale * x) with `mask` (bool, broadcastable to x; true = excluded). A fully
// masked row gives zeros (log: -inf).
Tensor scaled_masked_softmax(const Tensor& x, std::int64_t dim, double scale,
                             const std::optional<Tensor>& mask = {}, bool log = false);
// softmax(x / temperature) (sampling's temperature): the softmax kernel with scale
// 1 / temperature, one launch. Floating x only, as softmax (PyTorch's x / T would promote an
// integer x to float32: cast it first). A temperature that is not finite and positive, or
// whose reciprocal overflows the rows' arithmetic (float32 but for float64 x), is
// InvalidArgument (T -> 0 is argmax, which this op does not approximate).
Tensor softmax_with_temperature(const Tensor& x, std::int64_t dim, double temperature);

// ---- out= forms (core/ops/inplace_out.cpp) ----
// The result (of x's dtype, or `dtype`) written into `out` (returned), which must have x's
// shape, that dtype and x's device; through a temporary and one copy, as the kernels write
// fresh contiguous rows.
Tensor softmax_out(const Tensor& out, const Tensor& x, std::int64_t dim,
                   std::optional<DType> dtype = {});
Tensor log_softmax_out(const Tensor& out, const Tensor& x, std::int64_t dim,
                       std::optional<DType> dtype = {});

}  // namespace nbx::ops
