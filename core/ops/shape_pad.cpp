// torch.nn.functional.pad (shape.hpp). Constant padding is a fill and one copy of the kept
// part of x into its window of the output (negative pads crop x instead). The other modes
// map each output position of a padded dim to the input position it repeats — a reflection
// reads backwards, which no stride can express (negative strides are refused by the launch
// checks) — and read it with one index_select per padded dim, the index built on the host.
#include <string>

#include <algorithm>
#include "core/errors.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/shape_detail.hpp"

namespace nbx::ops {
namespace {

const char* mode_name(PadMode m) {
  switch (m) {
    case PadMode::kConstant:
      return "constant";
    case PadMode::kReflect:
      return "reflect";
    case PadMode::kReplicate:
      return "replicate";
    case PadMode::kCircular:
      return "circular";
  }
  return "?";
}

// The input position output position o of a dim of n elements reads, with `left` elements
// added before it and `right` after (negative: cropped). Reflect and replicate map in x's own
// coordinates, as PyTorch's kernels; circular wraps around the cropped part, as PyTorch 2.x's
// _pad_circular (its padding copies from the cropped centre).
std::int64_t source_of(PadMode mode, std::int64_t o, std::int64_t left, std::int64_t right,
                       std::int64_t n) {
  const std::int64_t j = o - left;  // the position in x's coordinates, possibly outside
  switch (mode) {
    case PadMode::kReflect:
      return j < 0 ? -j : j >= n ? 2 * (n - 1) - j : j;
    case PadMode::kReplicate:
      return std::clamp<std::int64_t>(j, 0, n - 1);
    default: {
      const std::int64_t begin = std::max<std::int64_t>(-left, 0);
      const std::int64_t kept = n - begin - std::max<std::int64_t>(-right, 0);
      const std::int64_t k = o - std::max<std::int64_t>(left, 0);
      return begin + ((k % kept) + kept) % kept;
    }
  }
}

// PyTorch's rank rule for the non-constant modes: 2k pads for a (k+1)-d or (k+2)-d input.
void check_non_constant(PadMode mode, const Tensor& x, const IntList& pads, const Scalar& value) {
  const std::string m = mode_name(mode);
  if (value.to_double() != 0)
    throw InvalidArgument("pad", "pad: Padding mode \"" + m + "\" doesn't take in value argument.");
  const int k = static_cast<int>(pads.size()) / 2;
  bool some_output = false;
  if (k < 1 || k > 3 || (x.dim() != k + 1 && x.dim() != k + 2))
    throw InvalidArgument("pad", "pad: mode " + m +
                                     " pads the last 1, 2 or 3 dims of a 2-3-d, 3-4-d or 4-5-d "
                                     "input (a batch dim optional): " +
                                     std::to_string(pads.size()) + " pads for a " +
                                     std::to_string(x.dim()) +
                                     "-d input are not supported (PyTorch: Only 2D, 3D, 4D, 5D "
                                     "padding with non-constant padding are supported for now).");
  for (int i = 0; i < k; ++i) {
    const int d = x.dim() - 1 - i;
    const std::int64_t n = x.shape()[d], left = pads[std::size_t(2 * i)],
                       right = pads[std::size_t(2 * i + 1)];
    if (mode == PadMode::kReflect && (left >= n || right >= n))
      throw InvalidArgument("pad",
                            "pad: Argument #4: Padding size should be less than the "
                            "corresponding input dimension, but got: padding (" +
                                std::to_string(left) + ", " + std::to_string(right) +
                                ") at dimension " + std::to_string(d) + " of input " +
                                to_string(x.shape()) + ".");
    // Circular padding wraps around the cropped part once at most (PyTorch checks the
    // uncropped size; past the cropped one its copies would read their own padding).
    const std::int64_t kept =
        n - std::max<std::int64_t>(-left, 0) - std::max<std::int64_t>(-right, 0);
    if (mode == PadMode::kCircular &&
        (left > n || right > n || (kept <= 0 && left + right > 0) || left > kept || right > kept))
      throw InvalidArgument("pad",
                            "pad: Padding value causes wrapping around more than once "
                            "(padding (" +
                                std::to_string(left) + ", " + std::to_string(right) +
                                ") of dimension " + std::to_string(d) + " of size " +
                                std::to_string(n) + ").");
    if (n + left + right < 0)
      throw InvalidArgument("pad",
                            "pad: Negative padding value is resulting in an empty "
                            "dimension: padding (" +
                                std::to_string(left) + ", " + std::to_string(right) +
                                ") of dimension " + std::to_string(d) + " of size " +
                                std::to_string(n) + ".");
    some_output = some_output || n + left + right >= 1;
  }
  // PyTorch's reflect/replicate kernels refuse only when every padded dim comes out empty
  // (output_w >= 1 || output_h >= 1 …).
  if (mode != PadMode::kCircular && !some_output)
    throw InvalidArgument("pad", "pad: input " + to_string(x.shape()) +
                                     " is too small: the padding leaves no element in any "
                                     "padded dim.");
  if (mode != PadMode::kCircular)
    for (int d = 1; d < x.dim(); ++d)
      if (x.shape()[d] == 0)
        throw InvalidArgument("pad", "pad: Expected " + std::to_string(k + 1) + "D or " +
                                         std::to_string(k + 2) +
                                         "D (batch mode) tensor with possibly 0 batch size and "
                                         "other non-zero dimensions for input, but got: " +
                                         to_string(x.shape()) + ".");
}

Tensor pad_constant(const Tensor& x, const IntList& pads, const Scalar& value) {
  Shape shape = x.shape();
  Tensor kept = x;              // x cropped by the negative pads
  IntList at(pads.size() / 2);  // where kept starts in the output, per padded dim
  for (std::size_t i = 0; i < at.size(); ++i) {
    const int d = x.dim() - 1 - static_cast<int>(i);
    const std::int64_t left = pads[2 * i], right = pads[2 * i + 1], n = x.shape()[d];
    shape[d] = n + left + right;
    if (shape[d] < 0)  // PyTorch 2.x takes a size-0 result (1.13 refused it too)
      throw InvalidArgument("pad", "pad: The input size " + std::to_string(n) +
                                       ", plus negative padding " + std::to_string(left) + " and " +
                                       std::to_string(right) +
                                       " resulted in a negative output size, which is invalid. "
                                       "Check dimension " +
                                       std::to_string(d) + " of your input.");
    // PyTorch narrows x by each negative pad in turn: cropping more than is there is refused.
    const std::int64_t begin = std::max<std::int64_t>(-left, 0);
    const std::int64_t end = n - std::max<std::int64_t>(-right, 0);
    if (begin > n || end < begin)
      throw InvalidArgument("pad", "pad: the negative padding (" + std::to_string(left) + ", " +
                                       std::to_string(right) + ") crops more than dimension " +
                                       std::to_string(d) + " of size " + std::to_string(n) +
                                       " holds.");
    kept = kept.slice(d, begin, end);
    at[i] = std::max<std::int64_t>(left, 0);
  }
  // PyTorch: no positive pad, no border: the cropped copy, the value never converted.
  if (std::all_of(pads.begin(), pads.end(), [](std::int64_t p) { return p <= 0; }))
    return kept.clone();
  // PyTorch's pad value is a float: fill_ then refuses one the dtype cannot hold (-2.0 for
  // uint8, where an integer -2 would wrap) and truncates 2.5 into an integer tensor.
  const Tensor out = Tensor::empty(shape, x.dtype(), x.device());
  out.fill_(Scalar(value.to_double()));
  if (kept.numel() == 0) return out;
  Tensor window = out;
  for (std::size_t i = 0; i < at.size(); ++i) {
    const int d = x.dim() - 1 - static_cast<int>(i);
    window = window.narrow(d, at[i], kept.shape()[d]);
  }
  window.copy_(kept);
  return out;
}

}  // namespace

PadMode pad_mode_named(std::string_view name) {
  for (PadMode m : {PadMode::kConstant, PadMode::kReflect, PadMode::kReplicate, PadMode::kCircular})
    if (name == mode_name(m)) return m;
  throw InvalidArgument("pad", "pad: Unrecognised padding mode " + std::string(name) +
                                   " (constant, reflect, replicate or circular).");
}

Tensor pad(const Tensor& x, const IntList& pads, PadMode mode, Scalar value) {
  detail::require_defined_input("pad", x);
  if (pads.size() % 2 != 0)
    throw InvalidArgument(
        "pad", "pad: Padding length must be divisible by 2 (got " + detail::list_text(pads) + ").");
  if (static_cast<int>(pads.size()) > 2 * x.dim())
    throw InvalidArgument("pad",
                          "pad: Padding length should be less than or equal to two times "
                          "the input dimension but got padding length " +
                              std::to_string(pads.size()) + " and input of dimension " +
                              std::to_string(x.dim()) + ".");
  if (mode == PadMode::kConstant) return pad_constant(x, pads, value);
  check_non_constant(mode, x, pads, value);
  Tensor y = x;
  for (std::size_t i = 0; i < pads.size() / 2; ++i) {
    const int d = x.dim() - 1 - static_cast<int>(i);
    const std::int64_t left = pads[2 * i], right = pads[2 * i + 1], n = x.shape()[d];
    if (left == 0 && right == 0) continue;
    std::vector<std::int64_t> idx(static_cast<std::size_t>(n + left + right));
    for (std::size_t o = 0; o < idx.size(); ++o)
      idx[o] = source_of(mode, static_cast<std::int64_t>(o), left, right, n);
    y = detail::select_along(y, d, idx);
  }
  return y.storage() == x.storage() ? x.clone() : y;
}

}  // namespace nbx::ops
