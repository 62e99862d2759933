// Writing into a caller's tensor (copy_, fill_, the in-place forms add_ … and the out= forms):
// PyTorch's rules for the destination, its dtype and its memory overlaps, in one place.
// Internal to core/ops; not part of the public API.
#pragma once

#include <string_view>

#include "core/tensor.hpp"

namespace nbx::ops::detail {

// PyTorch's can_cast: whether a result of dtype `from` may be written into `to` (no floating
// value into an integer or bool tensor, no number into a bool tensor).
bool can_cast(DType from, DType to);

// How an input's elements, read as the destination's shape, sit in memory relative to the
// destination's (PyTorch's get_overlap_status, refined by nbx's broadcast strides).
enum class Overlap {
  kNone,       // different storage, or disjoint byte ranges
  kSame,       // every element read is the one written at the same index: safe in place
  kPartial,    // both dense and their byte ranges intersect otherwise: refused by name
  kMayOverlap  // strided views whose ranges intersect: computed through a temporary
};
Overlap overlap_of(const Tensor& destination, const Tensor& input);

// Throws InvalidArgument naming `form` when more than one element of `destination` refers to
// one memory location (an expanded view), in PyTorch's words.
void require_no_internal_overlap(std::string_view form, const Tensor& destination);
// Throws InvalidArgument naming `form` for an Overlap::kPartial input, in PyTorch's words.
void require_no_partial_overlap(std::string_view form, const Tensor& destination,
                                const Tensor& input);

// What a destination must agree with: the shape (equal, never resized — an nbx Tensor is a
// handle, so a resize could not reach other handles of the same tensor), the device, and
// the dtype, which must be the result's (`exact_dtype`) or one the result can cast to.
// `in_place` picks PyTorch's in-place wording for a shape that would grow self. Throws
// InvalidArgument naming `form`.
void check_destination(std::string_view form, const Tensor& destination, const Shape& result_shape,
                       DType result_dtype, const Device& device, bool exact_dtype,
                       bool in_place = false);

// Casts and broadcasts `src` into `destination` with one copy launch on the destination's
// device (src from another device is cast there, then moved; between two non-host devices
// through the host). Refuses an expanded destination and a partially overlapping src;
// a strided src that may overlap is copied first. The Tensor::copy_ contract.
void copy_into(std::string_view form, const Tensor& destination, const Tensor& src);

// Writes `value` into every element of `destination` (any view, expanded ones included, as
// PyTorch's fill_). Refuses a value the dtype cannot hold, as `fill` does.
void fill_into(std::string_view form, const Tensor& destination, const Scalar& value);

// The out= forms whose kernels write only fresh contiguous outputs (reductions, softmax,
// norms): `result` is checked against `out` (check_destination) and copied into it.
// Returns out.
Tensor write_result(std::string_view form, const Tensor& out, const Tensor& result,
                    bool exact_dtype);

}  // namespace nbx::ops::detail
