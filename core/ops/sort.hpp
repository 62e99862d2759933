// Sorting and order statistics, PyTorch semantics, on the "sort" kernel family
// (core/families/sort_family.cpp): every row along `dim` sorted stably by value — floats
// with -0 equal to +0 and NaN above +inf (last ascending, first descending) — ties in input
// order on every backend, so indices agree everywhere (PyTorch's `stable=False` makes no
// promise about ties; nbx is always stable).
//
// sort(x, dim, descending, stable): values (x's dtype) and int64 indices, x's shape. A 0-d
//   tensor sorts as one element.
// argsort: sort's indices.  msort(x): sort(x, 0)'s values.
// topk(x, k, dim, largest, sorted): the k largest (smallest) along dim in order; 0 <= k <=
//   size. kthvalue(x, k, dim, keepdim): the k-th smallest, 1 <= k <= size.
// median: the lower median; a row holding a NaN gives that NaN (the first in input order).
//   nanmedian: the lower median of the row's non-NaN values (NaN for an all-NaN row).
//   Without dim: of the flattened tensor, a 0-d value (NaN for an empty float tensor).
// quantile/nanquantile(x, q, dim, keepdim, interpolation): q in [0, 1], a double or a 0-d/1-d
//   tensor of x's dtype; float32/float64 only; interpolation "linear", "lower", "higher",
//   "midpoint" or "nearest" (half to even). With a 1-d q the result has q's size as its first
//   dim. quantile is NaN for a row holding a NaN; nanquantile ignores NaNs (NaN if all are).
//   A tensor q is range-checked on the host (one read, as PyTorch does).
// topk, kthvalue, median and nanmedian refuse bool tensors, as PyTorch (sort takes them).
// The order statistics are compositions run on the device: sort, then the row position each
// one picks (computed there from the NaN counts) gathered — no value is read to the host.
// Throws InvalidArgument for an undefined tensor, a dim out of range, k out of range, an empty
// dim where the op needs an element, q outside [0, 1] or of another dtype, an unknown
// interpolation; Unsupported where the device lacks the dtype or int64 (the indices).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/ops/reduce.hpp"
#include "core/tensor.hpp"

namespace nbx::ops {

ValuesAndIndices sort(const Tensor& x, std::int64_t dim = -1, bool descending = false,
                      bool stable = false);
Tensor argsort(const Tensor& x, std::int64_t dim = -1, bool descending = false,
               bool stable = false);
Tensor msort(const Tensor& x);
ValuesAndIndices topk(const Tensor& x, std::int64_t k, std::int64_t dim = -1, bool largest = true,
                      bool sorted = true);
ValuesAndIndices kthvalue(const Tensor& x, std::int64_t k, std::int64_t dim = -1,
                          bool keepdim = false);
Tensor median(const Tensor& x);
ValuesAndIndices median(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor nanmedian(const Tensor& x);
ValuesAndIndices nanmedian(const Tensor& x, std::int64_t dim, bool keepdim = false);
// mode(x, dim, keepdim): the most frequent value along dim (the smallest among equally
//   frequent ones; each NaN counts alone) and the index of its last occurrence, as PyTorch.
ValuesAndIndices mode(const Tensor& x, std::int64_t dim = -1, bool keepdim = false);
// unique(x): the distinct values of the flattened x in ascending order (PyTorch's sorted
//   unique; -0 and +0 are one value, the first in order kept; every NaN distinct), with the
//   inverse (x's shape: each element's place in values) and the counts where asked. Reads
//   the number of distinct values to the host once (its size), as PyTorch does.
struct UniqueResult {
  Tensor values;
  Tensor inverse;  // int64; undefined unless return_inverse
  Tensor counts;   // int64; undefined unless return_counts
};
UniqueResult unique(const Tensor& x, bool sorted = true, bool return_inverse = false,
                    bool return_counts = false);
Tensor quantile(const Tensor& x, double q, std::optional<std::int64_t> dim = {},
                bool keepdim = false, std::string_view interpolation = "linear");
Tensor quantile(const Tensor& x, const Tensor& q, std::optional<std::int64_t> dim = {},
                bool keepdim = false, std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& x, double q, std::optional<std::int64_t> dim = {},
                   bool keepdim = false, std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& x, const Tensor& q, std::optional<std::int64_t> dim = {},
                   bool keepdim = false, std::string_view interpolation = "linear");

}  // namespace nbx::ops
