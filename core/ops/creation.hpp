// Creation and shape helpers, PyTorch semantics. Values are made on the device by the
// "fill" kernel family (arange, linspace, triu, tril) or the elementwise copy (full, fill):
// no host buffer of numel elements and no host round trip.
//
// Errors: InvalidArgument for negative sizes, a zero or NaN arange step, a step walking away
// from the end, negative linspace steps, triu/tril on fewer than 2 dims; Unsupported when
// the device lacks the dtype (fp64, int64, …). OutOfMemory as any allocation.
#pragma once

#include <cstdint>
#include <optional>

#include "core/tensor.hpp"

namespace nbx::ops {

// A new tensor of `shape` filled with `value` (torch.full).
Tensor full(const Shape& shape, Scalar value, DType dtype, const Device& device = host_device());
// A new tensor shaped, typed and placed like `like`, filled with `value` (torch.full_like).
// (Tensor::fill_ writes in place; this is the out-of-place form.)
Tensor fill(const Tensor& like, Scalar value);

// [start, end) by step (torch.arange): ceil((end - start) / step) elements, value i being
// start + i * step. Computed in int64 when bounds and step are integers, or when `dtype` is
// an integer type: then the values are trunc(start) + i * trunc(step) (a step that truncates
// to 0 is refused), and the count, as PyTorch's, is the truncated bounds' for int64 and
// ceil((end - start) / step) of the given ones for the other integer dtypes. In floating
// point otherwise.
Tensor arange(Scalar start, Scalar end, Scalar step, DType dtype,
              const Device& device = host_device());

// `steps` evenly spaced values from start to end inclusive (torch.linspace), by PyTorch's
// symmetric formula (the first half from start, the second from end), so both ends are
// exact. steps = 1 gives [start]; steps = 0 an empty tensor. Integer dtypes truncate start
// and end first, as PyTorch does.
Tensor linspace(Scalar start, Scalar end, std::int64_t steps, DType dtype,
                const Device& device = host_device());

// The upper / lower triangle over the last two dims of any batch: elements with
// col - row >= diagonal (triu) or <= diagonal (tril) are kept, the rest are zero. Any dtype;
// the result is a new contiguous tensor.
Tensor triu(const Tensor& x, std::int64_t diagonal = 0);
Tensor tril(const Tensor& x, std::int64_t diagonal = 0);

// ---- issue 11's creation ops (PyTorch names and semantics) ----

// A new tensor shaped like `like`, of `dtype` and on `device` (like's where not given), as
// torch.empty_like / zeros_like / ones_like / full_like with memory_format=preserve_format: a
// `like` whose elements tile its storage once (dense, non-overlapping: contiguous, transposed,
// permuted) lends its strides, any other (sliced, expanded) gets contiguous ones. empty_like's
// elements are uninitialized. full_like refuses a value the dtype cannot hold (InvalidArgument,
// as full). Unsupported when the device lacks the dtype.
Tensor empty_like(const Tensor& like, std::optional<DType> dtype = {},
                  std::optional<Device> device = {});
Tensor zeros_like(const Tensor& like, std::optional<DType> dtype = {},
                  std::optional<Device> device = {});
Tensor ones_like(const Tensor& like, std::optional<DType> dtype = {},
                 std::optional<Device> device = {});
Tensor full_like(const Tensor& like, Scalar value, std::optional<DType> dtype = {},
                 std::optional<Device> device = {});

// The n × m identity (torch.eye; m = n in the first form): 1 where row == col, 0 elsewhere,
// any dtype (bool: true/false), made on the device by the fill family. InvalidArgument for
// a negative n or m.
Tensor eye(std::int64_t n, DType dtype = kDefaultFloat, const Device& device = host_device());
Tensor eye(std::int64_t n, std::int64_t m, DType dtype = kDefaultFloat,
           const Device& device = host_device());

// An uninitialized tensor with the given sizes and element strides (torch.empty_strided):
// its storage holds the largest offset the strides reach, plus one element (none when a size
// is 0), so overlapping strides (0, or smaller than a dim's extent) are allowed, as PyTorch.
// InvalidArgument for sizes and strides of different ranks, a negative size or stride, or a
// storage past 2^63 bytes.
Tensor empty_strided(const Shape& sizes, const Strides& strides, DType dtype,
                     const Device& device = host_device());

}  // namespace nbx::ops
