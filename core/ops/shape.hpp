// Shape ops, PyTorch semantics (torch names): joining, splitting, repeating, reordering,
// padding and diagonal views. No kernel of their own: each is a composition of Tensor views
// (view, expand, permute, slice, the Tensor(storage, offset, shape, strides) constructor),
// Tensor::copy_ (the elementwise copy, writing into a view of a fresh output), ops::full,
// ops::index_select (the gather family) and ops::sum. `nbx explain OP` says which (family
// "shape"). Negative strides are refused by the launch checks, so a reversal (flip, reflect
// padding, rot90) is an index_select with an index built on the host, one per reversed dim.
//
// Common rules: dims wrap once (-1 is the last); a 0-d tensor counts as 1-d where PyTorch
// says so; inputs may be any view; every dtype (bool … float64) is taken; results are new
// contiguous tensors unless the op is documented as a view (split, chunk, diagonal, unfold,
// meshgrid share the input's storage, as PyTorch's do). Errors: InvalidArgument (an undefined
// tensor, tensors on different devices, a dim out of range, sizes that do not fit, in
// PyTorch's words where it has them); Unsupported when the device lacks the dtype (fp64,
// int64 …); OutOfMemory as any allocation.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"

namespace nbx::ops {

using IntList = std::vector<std::int64_t>;
using TensorList = std::vector<Tensor>;

// ---- joining and splitting (shape_join.cpp) ----

// The tensors joined along `dim` (torch.cat): every other dim must match; the result dtype is
// torch.result_type of the inputs (int32 + float16 → float16), each input cast by its copy.
// PyTorch's legacy rule: a 1-d tensor of size [0] is skipped (its shape and rank are not
// checked; its dtype still takes part). InvalidArgument for an empty list, a 0-d input, ranks
// or sizes that differ.
Tensor cat(const TensorList& tensors, std::int64_t dim = 0);
// cat into `out` (shape exactly the result's, never resized; its dtype one the result casts
// to, PyTorch's can_cast). Refuses an out that overlaps an input. Returns out.
Tensor cat_out(const Tensor& out, const TensorList& tensors, std::int64_t dim = 0);
// The tensors (all of one shape) joined along a new dim `dim` in [-(rank+1), rank]
// (torch.stack): cat of each unsqueezed.
Tensor stack(const TensorList& tensors, std::int64_t dim = 0);
Tensor stack_out(const Tensor& out, const TensorList& tensors, std::int64_t dim = 0);

// Views of `x` along `dim` (torch.split): pieces of `split_size` (the last one shorter),
// or of the given sizes, which must sum to x.size(dim). A split_size of 0 takes only a size-0
// dim. InvalidArgument for a 0-d x, a negative size.
TensorList split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0);
TensorList split(const Tensor& x, const IntList& split_sizes, std::int64_t dim = 0);
// `chunks` views (torch.chunk): pieces of ceil(size / chunks), so fewer than `chunks` can come
// back (size 5 in 4 chunks gives 2, 2, 1); a size-0 dim gives `chunks` empty views.
TensorList chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0);

// Coordinate grids (torch.meshgrid): each input 0-d or 1-d, one dtype and device; output i is
// input i expanded (a view) over the shape of all their sizes. "ij" indexes in input order;
// "xy" swaps the first two dims of every output (Cartesian).
TensorList meshgrid(const TensorList& tensors, std::string_view indexing = "ij");

// ---- repeating (shape_repeat.cpp) ----

// x tiled `repeats` times along each dim (torch.Tensor.repeat): repeats has at least x's
// rank; x is read as if it had leading dims of 1. One copy per repeated dim.
Tensor repeat(const Tensor& x, const IntList& repeats);
// torch.tile: repeat, with `dims` first padded by leading 1s to x's rank.
Tensor tile(const Tensor& x, const IntList& dims);
// Each element repeated `repeats` times along `dim` (torch.repeat_interleave); without dim
// x is flattened first. One index_select.
Tensor repeat_interleave(const Tensor& x, std::int64_t repeats,
                         std::optional<std::int64_t> dim = {});
// The same with a repeat count per element: `repeats` is an int32/int64 tensor, 0-d, of one
// element, or of x.size(dim) elements. Synchronises: the counts are read to the host once to
// size the output, as PyTorch does (its output_size argument is not offered).
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats,
                         std::optional<std::int64_t> dim = {});

// ---- reordering (shape_reorder.cpp) ----

// x reversed along each of `dims` (torch.flip; a dim named twice is refused).
Tensor flip(const Tensor& x, const IntList& dims);
// Elements shifted along dims, wrapping around (torch.roll): shifts and dims pair up; with no
// dims, x is rolled flattened (one shift) and keeps its shape.
Tensor roll(const Tensor& x, const IntList& shifts, const IntList& dims = {});
// Rotated by k · 90° from dims[0] towards dims[1] (torch.rot90); k may be negative. The result
// of an odd k is a transposed view of a flipped copy, as PyTorch's.
Tensor rot90(const Tensor& x, std::int64_t k = 1, const IntList& dims = {0, 1});
// [*, C·r², H, W] → [*, C, H·r, W·r] (torch.nn.functional.pixel_shuffle) and its inverse
// [*, C, H·r, W·r] → [*, C·r², H, W] (pixel_unshuffle); x has at least 3 dims.
Tensor pixel_shuffle(const Tensor& x, std::int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& x, std::int64_t downscale_factor);

// ---- diagonals and windows (shape_views.cpp) ----

// The view of the diagonal `offset` of the (dim1, dim2) planes (torch.diagonal): both dims
// removed, the diagonal appended as the last dim; shares x's storage.
Tensor diagonal(const Tensor& x, std::int64_t offset = 0, std::int64_t dim1 = 0,
                std::int64_t dim2 = 1);
// A new tensor of rank + 1 whose (dim1, dim2) planes hold x's last dim on diagonal `offset`
// and zeros elsewhere (torch.diag_embed).
Tensor diag_embed(const Tensor& x, std::int64_t offset = 0, std::int64_t dim1 = -2,
                  std::int64_t dim2 = -1);
// Sum of the main diagonal of a 2-d x (torch.trace), a 0-d tensor: integers and bool give
// int64, floats keep their dtype (the sum's rule).
Tensor trace(const Tensor& x);
// A contiguous copy of x.narrow(dim, start, length) (torch.narrow_copy).
Tensor narrow_copy(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t length);
// The view of every window of `size` elements, `step` apart, along `dim` (torch.Tensor.unfold):
// dim becomes the window count (size(dim) - size) / step + 1 and a last dim of `size` is
// appended. A 0-d x counts as [1].
Tensor unfold(const Tensor& x, std::int64_t dim, std::int64_t size, std::int64_t step);
// The coordinates of the lower (tril_indices: col - row <= offset) or upper (triu_indices:
// col - row >= offset) triangle of a row × col matrix, row-major, as an int64 [2, N] tensor
// (torch.tril_indices). Computed on the host and uploaded (N is known there; no kernel).
Tensor tril_indices(std::int64_t row, std::int64_t col, std::int64_t offset = 0,
                    const Device& device = host_device());
Tensor triu_indices(std::int64_t row, std::int64_t col, std::int64_t offset = 0,
                    const Device& device = host_device());

// ---- padding (shape_pad.cpp) ----

enum class PadMode { kConstant, kReflect, kReplicate, kCircular };

// torch.nn.functional.pad: `pads` are (left, right) pairs from the last dim backwards
// ([l_last, r_last, l_prev, r_prev, …]), an even count of at most 2 · rank.
// - constant: any rank; `value`, read as a float as PyTorch's (so -2 does not wrap into uint8:
//   refused), fills the border; negative pads crop.
// - reflect, replicate, circular: 2 pads for a 2-3-d x, 4 for 3-4-d, 6 for 4-5-d (a leading
//   batch dim optional), value must be 0; reflect needs each pad < that dim's size,
//   circular each pad <= its size (and the size left after cropping: it wraps around that,
//   as PyTorch 2.x); reflect and replicate take no size-0 dim but the first and refuse only
//   when every padded dim comes out empty. Negative pads crop in every mode. One index_select per
//   padded dim (index built on the host: a reflection reads backwards, which no stride can
//   express).
Tensor pad(const Tensor& x, const IntList& pads, PadMode mode = PadMode::kConstant,
           Scalar value = 0);
// "constant", "reflect", "replicate", "circular"; InvalidArgument for any other name.
PadMode pad_mode_named(std::string_view name);

}  // namespace nbx::ops
