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
// An alias of std (below), PyTorch's name; kept so existing callers keep compiling.
Tensor stddev(const Tensor& x, const DimList& dims = {}, double correction = 1,
              bool keepdim = false);
// The p-norm: p = 0 counts non-zeros, ±inf is the max/min of |x|.
Tensor norm(const Tensor& x, double p = 2, const DimList& dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor any(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor all(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor count_nonzero(const Tensor& x, const DimList& dims = {});

// ---- issue 11's reductions (PyTorch names and semantics) ----

// The maximum / minimum of every element (torch.max(x)): a 0-d tensor of x's dtype; NaN
// propagates. Throws InvalidArgument for an empty tensor (PyTorch: "Expected reduction dim
// to be specified for input.numel() == 0").
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);

// torch.aminmax: the minima and maxima over `dim` (every element without one) in one launch
// that reads each row once, both of x's dtype; NaN propagates to both. Throws
// InvalidArgument over a zero-size dim.
struct MinMax {
  Tensor min;
  Tensor max;
};
MinMax aminmax(const Tensor& x, std::optional<std::int64_t> dim = {}, bool keepdim = false);

// torch.nansum / torch.nanmean: NaN elements count as zero / are left out. nansum's dtypes
// are sum's (integers and bool give int64, or the requested dtype: bool only for integer inputs);
// nanmean takes floating inputs only (a requested dtype does not lift that, as PyTorch),
// and a row with no non-NaN element gives NaN.
Tensor nansum(const Tensor& x, const DimList& dims = {}, bool keepdim = false,
              std::optional<DType> dtype = {});
Tensor nanmean(const Tensor& x, const DimList& dims = {}, bool keepdim = false,
               std::optional<DType> dtype = {});

// torch.std, the public name (stddev above is its alias, kept for existing callers).
Tensor std(const Tensor& x, const DimList& dims = {}, double correction = 1, bool keepdim = false);

// torch.var_mean / torch.std_mean: the statistic (with `correction`) and the mean in one
// launch; the statistic is exactly var's / std's, the mean exactly mean's. Floating inputs
// only.
struct StatisticAndMean {
  Tensor statistic;  // the variance or the standard deviation
  Tensor mean;
};
StatisticAndMean var_mean(const Tensor& x, const DimList& dims = {}, double correction = 1,
                          bool keepdim = false);
StatisticAndMean std_mean(const Tensor& x, const DimList& dims = {}, double correction = 1,
                          bool keepdim = false);

// ---- out= forms (core/ops/inplace_out.cpp) ----
// The op's result written into `out` (returned), which must have the result's shape (nbx
// never resizes it) and live on x's device. sum/prod/mean/nansum/nanmean reduce in out's
// dtype, as PyTorch takes it for the requested dtype (a `dtype` other than out's is refused);
// the others write only their own result dtype. The reduce kernels write fresh contiguous
// rows, so the result goes through a temporary and one copy into out's view.
Tensor sum_out(const Tensor& out, const Tensor& x, const DimList& dims = {}, bool keepdim = false,
               std::optional<DType> dtype = {});
Tensor prod_out(const Tensor& out, const Tensor& x, const DimList& dims = {}, bool keepdim = false,
                std::optional<DType> dtype = {});
Tensor mean_out(const Tensor& out, const Tensor& x, const DimList& dims = {}, bool keepdim = false,
                std::optional<DType> dtype = {});
Tensor nansum_out(const Tensor& out, const Tensor& x, const DimList& dims = {},
                  bool keepdim = false, std::optional<DType> dtype = {});
Tensor nanmean_out(const Tensor& out, const Tensor& x, const DimList& dims = {},
                   bool keepdim = false, std::optional<DType> dtype = {});
Tensor amax_out(const Tensor& out, const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor amin_out(const Tensor& out, const Tensor& x, const DimList& dims = {}, bool keepdim = false);
ValuesAndIndices max_out(const Tensor& values, const Tensor& indices, const Tensor& x,
                         std::int64_t dim, bool keepdim = false);
ValuesAndIndices min_out(const Tensor& values, const Tensor& indices, const Tensor& x,
                         std::int64_t dim, bool keepdim = false);
Tensor argmax_out(const Tensor& out, const Tensor& x, std::optional<std::int64_t> dim = {},
                  bool keepdim = false);
Tensor argmin_out(const Tensor& out, const Tensor& x, std::optional<std::int64_t> dim = {},
                  bool keepdim = false);
Tensor var_out(const Tensor& out, const Tensor& x, const DimList& dims = {}, double correction = 1,
               bool keepdim = false);
Tensor std_out(const Tensor& out, const Tensor& x, const DimList& dims = {}, double correction = 1,
               bool keepdim = false);
Tensor norm_out(const Tensor& out, const Tensor& x, double p = 2, const DimList& dims = {},
                bool keepdim = false);
Tensor logsumexp_out(const Tensor& out, const Tensor& x, const DimList& dims = {},
                     bool keepdim = false);
Tensor any_out(const Tensor& out, const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor all_out(const Tensor& out, const Tensor& x, const DimList& dims = {}, bool keepdim = false);

// Reduction op names, for the CLI and conformance.
std::vector<std::string> reduction_op_names();

}  // namespace nbx::ops
