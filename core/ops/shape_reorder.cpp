// Reordering (shape.hpp). A reversal cannot be a view here: the launch checks refuse negative
// strides (core/shape.hpp), so flip reads each reversed dim through ops::index_select with an
// index [n-1, …, 0] built on the host, one launch per flipped dim; roll does the same with a
// rotated index. pixel_(un)shuffle is one copy of a permuted 6-d view.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/errors.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/shape_detail.hpp"

namespace nbx::ops {
namespace {

// The wrapped dims of `dims`, each at most once.
std::vector<int> distinct_dims(const char* op, const IntList& dims, int rank) {
  std::vector<int> out;
  for (std::int64_t d : dims) {
    const int w = wrap_dim(d, rank, op);
    if (std::find(out.begin(), out.end(), w) != out.end())
      throw InvalidArgument(op, std::string(op) + ": dim " + std::to_string(w) +
                                    " appears multiple times in the list of dims.");
    out.push_back(w);
  }
  return out;
}

// Source position of output position i when a dim of n elements is shifted by `shift`.
std::vector<std::int64_t> rotated(std::int64_t n, std::int64_t shift) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
  const std::int64_t s = ((shift % n) + n) % n;
  for (std::int64_t i = 0; i < n; ++i) idx[std::size_t(i)] = (i - s + n) % n;
  return idx;
}

// [*, C, H, W] as [B, C, H, W] (the batch dims merged; a copy only when a view cannot).
Tensor batched(const Tensor& x) {
  std::int64_t b = 1;
  for (int i = 0; i + 3 < x.dim(); ++i) b *= x.shape()[i];
  return x.reshape({b, x.shape()[x.dim() - 3], x.shape()[x.dim() - 2], x.shape()[x.dim() - 1]});
}

void require_image(const char* op, const Tensor& x, std::int64_t factor, const char* factor_name) {
  detail::require_defined_input(op, x);
  if (x.dim() < 3)
    throw InvalidArgument(op, std::string(op) + ": " + op +
                                  " expects input to have at least 3 dimensions, but got input "
                                  "with " +
                                  std::to_string(x.dim()) + " dimension(s).");
  if (factor <= 0)
    throw InvalidArgument(op, std::string(op) + ": " + op + " expects a positive " + factor_name +
                                  ", but got " + std::to_string(factor) + ".");
}

}  // namespace

Tensor flip(const Tensor& x, const IntList& dims) {
  detail::require_defined_input("flip", x);
  Tensor y = x;
  for (int d : distinct_dims("flip", dims, x.dim())) {
    if (x.dim() == 0 || x.shape()[d] <= 1) continue;
    std::vector<std::int64_t> idx(static_cast<std::size_t>(x.shape()[d]));
    std::iota(idx.rbegin(), idx.rend(), 0);
    y = detail::select_along(y, d, idx);
  }
  return y.storage() == x.storage() ? x.clone() : y;  // nothing to reverse: still a new tensor
}

Tensor roll(const Tensor& x, const IntList& shifts, const IntList& dims) {
  detail::require_defined_input("roll", x);
  if (shifts.empty()) throw InvalidArgument("roll", "roll: `shifts` required.");
  if (dims.empty()) {
    if (shifts.size() != 1)
      throw InvalidArgument("roll", "roll: shifts and dimensions must align. shifts: " +
                                        std::to_string(shifts.size()) + ", dims:0.");
    return roll(x.reshape({-1}), shifts, {0}).view(x.shape());
  }
  if (shifts.size() != dims.size())
    throw InvalidArgument(
        "roll", "roll: shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
                    ", dims:" + std::to_string(dims.size()) + ".");
  if (x.dim() == 0)  // PyTorch reads size(dim), which a 0-d tensor has not
    throw InvalidArgument("roll", "roll: Dimension specified as " + std::to_string(dims[0]) +
                                      " but tensor has no dimensions.");
  Tensor y = x;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const int d = wrap_dim(dims[k], x.dim(), "roll");
    if (x.shape()[d] <= 1 || shifts[k] % x.shape()[d] == 0) continue;
    y = detail::select_along(y, d, rotated(x.shape()[d], shifts[k]));
  }
  return y.storage() == x.storage() ? x.clone() : y;
}

Tensor rot90(const Tensor& x, std::int64_t k, const IntList& dims) {
  detail::require_defined_input("rot90", x);
  if (dims.size() != 2)
    throw InvalidArgument("rot90", "rot90: expected total rotation dims == 2, but got dims = " +
                                       std::to_string(dims.size()) + ".");
  if (x.dim() < 2)
    throw InvalidArgument("rot90", "rot90: expected total dims >= 2, but got total dims = " +
                                       std::to_string(x.dim()) + ".");
  const int d0 = wrap_dim(dims[0], x.dim(), "rot90"), d1 = wrap_dim(dims[1], x.dim(), "rot90");
  if (d0 == d1)
    throw InvalidArgument("rot90",
                          "rot90: expected rotation dims to be different, but got dim0 = " +
                              std::to_string(d0) + " and dim1 = " + std::to_string(d1) + ".");
  // PyTorch's composition: a quarter turn is a flip of dims[1] read transposed.
  switch (((k % 4) + 4) % 4) {
    case 1:
      return flip(x, {d1}).transpose(d0, d1);
    case 2:
      return flip(x, {d0, d1});
    case 3:
      return flip(x, {d0}).transpose(d0, d1);
    default:
      return x.clone();
  }
}

Tensor pixel_shuffle(const Tensor& x, std::int64_t upscale_factor) {
  const char* op = "pixel_shuffle";
  require_image(op, x, upscale_factor, "upscale_factor");
  const std::int64_t r = upscale_factor, c = x.shape()[x.dim() - 3];
  if (c % (r * r) != 0)
    throw InvalidArgument(op,
                          "pixel_shuffle: pixel_shuffle expects its input's 'channel' "
                          "dimension to be divisible by the square of upscale_factor, but "
                          "input.size(-3)=" +
                              std::to_string(c) + " is not divisible by " + std::to_string(r * r) +
                              ".");
  const Tensor b = batched(x);
  const std::int64_t n = b.shape()[0], oc = c / (r * r), h = b.shape()[2], w = b.shape()[3];
  Shape out_shape = x.shape();
  out_shape[x.dim() - 3] = oc;
  out_shape[x.dim() - 2] = h * r;
  out_shape[x.dim() - 1] = w * r;
  const Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  // out[n, oc, y·r + i, x·r + j] = in[n, oc·r² + i·r + j, y, x].
  if (out.numel() > 0)
    out.view({n, oc, h, r, w, r}).copy_(b.reshape({n, oc, r, r, h, w}).permute({0, 1, 4, 2, 5, 3}));
  return out;
}

Tensor pixel_unshuffle(const Tensor& x, std::int64_t downscale_factor) {
  const char* op = "pixel_unshuffle";
  require_image(op, x, downscale_factor, "downscale_factor");
  const std::int64_t r = downscale_factor;
  const std::int64_t h = x.shape()[x.dim() - 2], w = x.shape()[x.dim() - 1];
  if (h % r != 0 || w % r != 0)
    throw InvalidArgument(op,
                          std::string("pixel_unshuffle: pixel_unshuffle expects ") +
                              (h % r ? "height" : "width") +
                              " to be divisible by downscale_factor, but input.size(" +
                              (h % r ? "-2)=" + std::to_string(h) : "-1)=" + std::to_string(w)) +
                              " is not divisible by " + std::to_string(r) + ".");
  const Tensor b = batched(x);
  const std::int64_t n = b.shape()[0], c = b.shape()[1], oh = h / r, ow = w / r;
  Shape out_shape = x.shape();
  out_shape[x.dim() - 3] = c * r * r;
  out_shape[x.dim() - 2] = oh;
  out_shape[x.dim() - 1] = ow;
  const Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  // out[n, c·r² + i·r + j, y, x] = in[n, c, y·r + i, x·r + j].
  if (out.numel() > 0)
    out.view({n, c, r, r, oh, ow})
        .copy_(b.reshape({n, c, oh, r, ow, r}).permute({0, 1, 3, 5, 2, 4}));
  return out;
}

}  // namespace nbx::ops
