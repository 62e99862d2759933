// Index reads, PyTorch semantics: each output element copies the input element an index
// picks (the "gather" kernel family, core/families/gather_family.cpp).
//
// index_select(input, dim, index): index a vector (or 0-d); the output is input with dim
//   resized to index.numel() (a 0-d input stays 0-d and takes exactly one index).
// gather(input, dim, index): index has input's rank (a 0-d tensor counting as 1-d) and, in
//   every other dim, a size no larger than input's; the output has index's shape.
// take_along_dim(input, indices, dim): input and indices broadcast against each other in
//   every dim but `dim`, then gather; without dim, both are flattened.
// embedding(indices, weight, padding_idx, max_norm): rows of the 2-d `weight`; the output
//   is indices.shape + [weight.size(1)]. padding_idx changes only gradients (none here) and
//   is range-checked as PyTorch does; max_norm (which renormalises `weight` in place) is
//   refused by name (Unsupported, capability "embedding.max_norm").
// take(input, index): input read as if flattened; negative indices count from the end.
//
// Index tensors are int32 or int64 (PyTorch's gather, take and take_along_dim take only
// int64; int32 is accepted here too). An index outside the range is a device fault: the
// kernel reads nothing out of range, and the next synchronize() or read back throws
// nbx::DeviceFault naming the op, the index, the bound and its position in the index
// tensor (the host throws at once). Only take wraps negative indices, once, as PyTorch.
// Throws InvalidArgument for undefined tensors, devices that differ, a wrong rank, a dim
// out of range, sizes that do not fit, a non-integer index dtype.
#pragma once

#include <cstdint>
#include <optional>

#include "core/tensor.hpp"

namespace nbx::ops {

Tensor index_select(const Tensor& input, std::int64_t dim, const Tensor& index);
Tensor gather(const Tensor& input, std::int64_t dim, const Tensor& index);
Tensor take_along_dim(const Tensor& input, const Tensor& indices,
                      std::optional<std::int64_t> dim = {});
Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<std::int64_t> padding_idx = {}, std::optional<double> max_norm = {});
Tensor take(const Tensor& input, const Tensor& index);

}  // namespace nbx::ops
