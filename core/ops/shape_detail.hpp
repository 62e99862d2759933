// Helpers the shape ops (shape.hpp) share: argument checks in one wording, and the one
// host-built index read through ops::index_select. Internal to core/ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace nbx::ops::detail {

// Throws InvalidArgument naming `op` when `x` is undefined.
void require_defined_input(const char* op, const Tensor& x);
// "[1, 2, 3]" for a list of integers (the messages quote the caller's arguments).
std::string list_text(const std::vector<std::int64_t>& values);
// x.index_select(dim, index) with `index` built on the host and uploaded to x's device:
// int32 where every entry fits (every device takes it), int64 otherwise. The gather family's
// one launch; a 0-size result launches nothing.
Tensor select_along(const Tensor& x, int dim, const std::vector<std::int64_t>& index);
// A 0-d tensor read as [1] (PyTorch's ensure_nonempty_dim); others unchanged.
Tensor at_least_1d(const Tensor& x);

}  // namespace nbx::ops::detail

namespace nbx::ops::detail {

// torch.cat's shape rule over the inputs' shapes (the op and `nbx explain` both use it): the
// legacy 1-d [0] inputs skipped, ranks and sizes checked, dim wrapped against the first input
// kept. Returns the output shape ([0] when every input was skipped). `what` is the op name
// in messages ("cat", "stack").
Shape cat_shape(const char* what, const std::vector<Shape>& shapes, std::int64_t dim);
// torch.result_type of the inputs of cat/stack (all tensors with dims). InvalidArgument for
// an empty list.
DType cat_dtype(const char* what, const std::vector<DType>& dtypes);

}  // namespace nbx::ops::detail
