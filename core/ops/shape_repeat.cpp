// Repeating (shape.hpp): repeat and tile copy an expanded view once per repeated dim;
// repeat_interleave is one index_select with a host-built index.
#include <string>

#include "core/errors.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/shape_detail.hpp"

namespace nbx::ops {
namespace {

void require_non_negative(const char* op, const Shape& out_shape, const IntList& repeats) {
  for (std::int64_t r : repeats)
    if (r < 0)
      throw InvalidArgument(op,
                            std::string(op) + ": Trying to create tensor with negative dimension " +
                                std::to_string(r) + ": " + detail::list_text(repeats) +
                                " (repeats of a tensor of shape " + to_string(out_shape) + ").");
}

// The index that repeats position i of a dim `counts[i]` times, in order.
std::vector<std::int64_t> interleaved(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> idx;
  for (std::size_t i = 0; i < counts.size(); ++i)
    idx.insert(idx.end(), static_cast<std::size_t>(counts[i]), static_cast<std::int64_t>(i));
  return idx;
}

// repeat_interleave with `counts` per element (one count broadcasts): x along dim, or x
// flattened without dim.
Tensor interleave(const Tensor& x, std::vector<std::int64_t> counts,
                  std::optional<std::int64_t> dim) {
  const char* op = "repeat_interleave";
  const Tensor src = dim ? detail::at_least_1d(x) : x.reshape({-1});
  const int d = dim ? wrap_dim(*dim, x.dim(), op) : 0;
  const std::int64_t n = src.shape()[d];
  // One count broadcasts first, as PyTorch's expand: a negative one over nothing is no error.
  if (counts.size() == 1) counts.assign(static_cast<std::size_t>(n), counts[0]);
  for (std::int64_t c : counts)
    if (c < 0) throw InvalidArgument(op, "repeat_interleave: repeats can not be negative.");
  if (static_cast<std::int64_t>(counts.size()) != n)
    throw InvalidArgument(op,
                          "repeat_interleave: repeats must have the same size as input "
                          "along dim, but got repeats.size(0) = " +
                              std::to_string(counts.size()) + " and input.size(" +
                              std::to_string(d) + ") = " + std::to_string(n) + ".");
  return detail::select_along(src, d, interleaved(counts));
}

}  // namespace

Tensor repeat(const Tensor& x, const IntList& repeats) {
  detail::require_defined_input("repeat", x);
  if (static_cast<int>(repeats.size()) < x.dim())
    throw InvalidArgument("repeat",
                          "repeat: Number of dimensions of repeat dims can not be "
                          "smaller than number of dimensions of tensor (" +
                              std::to_string(repeats.size()) + " repeats for " +
                              to_string(x.shape()) + ").");
  require_non_negative("repeat", x.shape(), repeats);
  // x with leading 1s up to the repeats' rank (a view), then one dim at a time: the result
  // so far, read as [before, 1, size, after] and expanded to [before, r, size, after], is
  // copied into the next result. Four dims whatever the rank, so rank 8 repeats too.
  Tensor y = x;
  while (y.dim() < static_cast<int>(repeats.size())) y = y.unsqueeze(0);
  if (y.dim() == 0) return y.clone();
  for (int d = 0; d < y.dim(); ++d) {
    const std::int64_t r = repeats[static_cast<std::size_t>(d)];
    if (r == 1) continue;
    Shape next = y.shape();
    next[d] *= r;
    const Tensor out = Tensor::empty(next, y.dtype(), y.device());
    if (out.numel() > 0) {
      std::int64_t before = 1, after = 1;
      for (int i = 0; i < d; ++i) before *= y.shape()[i];
      for (int i = d + 1; i < y.dim(); ++i) after *= y.shape()[i];
      const std::int64_t size = y.shape()[d];
      out.view({before, r, size, after})
          .copy_(y.reshape({before, 1, size, after}).expand({before, r, size, after}));
    }
    y = out;
  }
  return y.storage() == x.storage() ? y.clone() : y;  // every repeat 1: still a new tensor
}

Tensor tile(const Tensor& x, const IntList& dims) {
  detail::require_defined_input("tile", x);
  IntList repeats = dims;
  if (static_cast<int>(repeats.size()) < x.dim())
    repeats.insert(repeats.begin(), static_cast<std::size_t>(x.dim()) - repeats.size(), 1);
  return repeat(x, repeats);
}

Tensor repeat_interleave(const Tensor& x, std::int64_t repeats, std::optional<std::int64_t> dim) {
  detail::require_defined_input("repeat_interleave", x);
  return interleave(x, {repeats}, dim);
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<std::int64_t> dim) {
  const char* op = "repeat_interleave";
  detail::require_defined_input(op, x);
  detail::require_defined_input(op, repeats);
  if (repeats.dim() > 1)
    throw InvalidArgument(op, "repeat_interleave: repeats must be 0-dim or 1-dim tensor, got " +
                                  to_string(repeats.shape()) + ".");
  if (repeats.dtype() != DType::kInt32 && repeats.dtype() != DType::kInt64)
    throw InvalidArgument(op, "repeat_interleave: repeats has to be Long or Int tensor, got " +
                                  std::string(dtype_name(repeats.dtype())) + ".");
  if (!(repeats.device() == x.device()))
    throw InvalidArgument(op, "repeat_interleave: the input is on " + x.device().str() +
                                  " and the repeats on " + repeats.device().str() +
                                  "; both must be on one device.");
  // The one host sync: the output's size is the sum of the counts (PyTorch reads them too).
  const std::vector<std::int64_t> counts = repeats.to(DType::kInt64).to_host<std::int64_t>();
  if (counts.empty()) {  // PyTorch: [0] repeats select nothing (and need x.size(dim) == 0)
    const Tensor src = dim ? detail::at_least_1d(x) : x.reshape({-1});
    const int d = dim ? wrap_dim(*dim, x.dim(), op) : 0;
    if (src.shape()[d] != 0)
      throw InvalidArgument(op,
                            "repeat_interleave: repeats must have the same size as input "
                            "along dim, but got repeats.size(0) = 0 and input.size(" +
                                std::to_string(d) + ") = " + std::to_string(src.shape()[d]) + ".");
    return src.clone();
  }
  return interleave(x, counts, dim);
}

}  // namespace nbx::ops
