// Reductions over any set of dims (empty = all dims), with keepdim, PyTorch semantics:
// float16/bfloat16 accumulate in float32; integer and bool sums and products give int64
// (refused by name on a device without int64), or the requested `dtype` (the input is cast
// to it first; integers accumulate in int64, or int32 without int64, and wrap to it);
// any/all give bool, uint8 for uint8 inputs; NaN propagates through amax/amin/max/min
// and argmax/argmin pick the first NaN. Row tiles never exceed the device's
// reduce.tile_max. Throws InvalidArgument for a dtype an op does not define, a repeated
// or out-of-range dim, and extrema over a zero-size dimension.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor.hpp"

namespace nbx::ops {

using DimList = std::vector<std::int64_t>;

Tensor sum(const Tensor& x, const DimList& dims = {}, bool keepdim = false,
           std::optional<DType> dtype = {});
Tensor prod(const Tensor& x, const DimList& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = {});
Tensor mean(const Tensor& x, const DimList& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = {});
Tensor amax(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const DimList& dims = {}, bool keepdim = false);

struct ValuesAndIndices {
  Tensor values;
  Tensor indices;  // int64
};
ValuesAndIndices max(const Tensor& x, std::int64_t dim, bool keepdim = false);
ValuesAndIndices min(const Tensor& x, std::int64_t dim, bool keepdim = false);
// Without a dim: the index into the flattened tensor.
Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim = {}, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim = {}, bool keepdim = false);

// Sample variance with Bessel's correction by default (correction = 1).
Tensor var(const Tensor& x, const DimList& dims = {}, double correction = 1, bool keepdim = false);
Tensor stddev(const Tensor& x, const DimList& dims = {}, double correction = 1,
              bool keepdim = false);
// The p-norm: p = 0 counts non-zeros, ±inf is the max/min of |x|.
Tensor norm(const Tensor& x, double p = 2, const DimList& dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor any(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor all(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor count_nonzero(const Tensor& x, const DimList& dims = {});

// Reduction op names, for the CLI and conformance.
std::vector<std::string> reduction_op_names();

}  // namespace nbx::ops
