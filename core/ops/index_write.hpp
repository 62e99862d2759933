// Index writes, PyTorch semantics, on the "scatter" kernel family
// (core/families/scatter_family.cpp), and the binary searches of the "search" family.
//
// Each op has an in-place form (name_, writing through self's strides, returning self) and an
// out-of-place one (a copy of self written the same way).
//
// scatter(self, dim, index, src | value, reduce): self[..index[i][j]..] = src[i][j] along dim,
//   where index has self's rank, index.size(d) <= src.size(d) for every d and <= self.size(d)
//   for d != dim; reduce "add" or "multiply" accumulates instead. src has self's dtype.
// scatter_add: scatter with "add". scatter_reduce(…, reduce, include_self): "sum", "prod",
//   "mean", "amax", "amin"; include_self = false starts every destination that is written
//   from the reduction's identity instead of self ("mean" then divides by the number of
//   sources; integers floor-divide).
// index_add(self, dim, index, source, alpha): self.select(dim, index[i]) += alpha ·
//   source.select(dim, i); index is a vector (or 0-d), source has self's shape with
//   index.numel() along dim. index_copy writes instead of adding; index_fill writes a scalar
//   (negative indices wrap once, as PyTorch's index_fill).
// index_put(self, indices, values, accumulate): self[indices] = values with advanced
//   indexing: `indices` index the leading dims (an undefined tensor takes the whole dim);
//   int32/int64 tensors broadcast together (negative indices wrap once), a bool/uint8 mask
//   stands for its nonzero() coordinates (one host read); values broadcast to the result.
// masked_scatter(self, mask, source): self's elements where mask (broadcast to self) is true
//   take source's elements in order; source must hold at least as many (checked with one
//   host read of the count). masked_select(self, mask): the elements where mask is true,
//   1-d (one host read for the size).
// nonzero(x): int64 [n, x.dim()], the coordinates of non-zero elements in row-major order;
//   nonzero_tuple: one int64 vector per dim; argwhere = nonzero. One host read (the count),
//   as PyTorch's nonzero synchronises.
// one_hot(x, num_classes): int64 x.shape + [num_classes]; -1 takes max(x) + 1 (a host read).
//   x is int64 (PyTorch) or int32 (accepted here, as every index op here takes).
// bincount(x, weights, minlength): 1-d non-negative integers; counts (int64) or the sum of
//   weights (float32 weights stay float32, others give float64) per value; the size
//   max(x) + 1 (at least minlength) is read to the host. An empty x gives int64 zeros of
//   minlength, whatever the weights (as PyTorch).
// searchsorted(sorted_sequence, values, out_int32, right, side, sorter): the index each value
//   would be inserted at in its row of the sorted last dim (the sequence is 1-d, or has
//   values' leading dims), left (first position >= v) or right (first > v); `side` "left" /
//   "right" overrides right (both given must agree). sorter: int64 indices that sort the
//   sequence (gathered first, checked by the fault channel). Values and sequence promote to
//   one dtype. bucketize(x, boundaries, out_int32, right): searchsorted of x in the 1-d
//   boundaries.
//
// Indices are int32 or int64; one outside its range is a device fault (nbx::DeviceFault at the
// next synchronize or read back, naming op, index, bound and position; the kernel writes
// nothing for it). Duplicate destinations: assignment keeps one of the writes (which one is
// unspecified, as PyTorch's), float sums and products accumulate in an unspecified order —
// unless deterministic algorithms are on (set_deterministic_algorithms(true) or
// NBX_DETERMINISTIC=1): then the scatter sorts the destinations stably and folds each one's
// sources in index order on one thread (the last write wins; sums in index order), the same
// result on every backend as on the host. `nbx explain` names the mode an op runs in.
// NBX_SCATTER=atomic|sorted forces one (tests).
// Throws InvalidArgument for undefined tensors, devices that differ, ranks, shapes or dtypes
// PyTorch refuses, a reduce it does not know; Unsupported where the device lacks a dtype.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/scalar.hpp"
#include "core/tensor.hpp"

namespace nbx {

// PyTorch's torch.use_deterministic_algorithms for the accumulating scatters. Starts from
// NBX_DETERMINISTIC ("1" on). Process-wide.
void set_deterministic_algorithms(bool on);
bool deterministic_algorithms();

}  // namespace nbx

namespace nbx::ops {

Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
               std::optional<std::string_view> reduce = {});
Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value,
               std::optional<std::string_view> reduce = {});
Tensor scatter_(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                std::optional<std::string_view> reduce = {});
Tensor scatter_(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value,
                std::optional<std::string_view> reduce = {});
Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add_(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_reduce(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self = true);
Tensor scatter_reduce_(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                       std::string_view reduce, bool include_self = true);

Tensor index_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha = 1);
Tensor index_add_(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source,
                  Scalar alpha = 1);
Tensor index_copy(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_copy_(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_fill(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value);
Tensor index_fill_(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value);

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate = false);
Tensor index_put_(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                  bool accumulate = false);

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);
Tensor masked_scatter_(const Tensor& self, const Tensor& mask, const Tensor& source);
Tensor masked_select(const Tensor& self, const Tensor& mask);

Tensor nonzero(const Tensor& x);
std::vector<Tensor> nonzero_tuple(const Tensor& x);
Tensor argwhere(const Tensor& x);

Tensor one_hot(const Tensor& x, std::int64_t num_classes = -1);
Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights = {},
                std::int64_t minlength = 0);

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false,
                    bool right = false, std::optional<std::string_view> side = {},
                    const std::optional<Tensor>& sorter = {});
Tensor searchsorted(const Tensor& sorted_sequence, Scalar value, bool out_int32 = false,
                    bool right = false, std::optional<std::string_view> side = {},
                    const std::optional<Tensor>& sorter = {});
Tensor bucketize(const Tensor& x, const Tensor& boundaries, bool out_int32 = false,
                 bool right = false);

}  // namespace nbx::ops
