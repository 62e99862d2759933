// Diagonals and windows (shape.hpp): diagonal and unfold are views made with the Tensor
// constructor (a diagonal steps by the sum of two strides, a window by step × the stride);
// diag_embed and narrow_copy copy into / out of such a view; trace sums one; the triangle
// indices are computed on the host and uploaded.
#include <algorithm>
#include <string>

#include "core/errors.hpp"
#include "core/ops/creation.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/shape_detail.hpp"

namespace nbx::ops {
namespace {

Tensor triangle_indices(const char* op, std::int64_t row, std::int64_t col, std::int64_t offset,
                        bool lower, const Device& device) {
  if (row < 0 || col < 0)
    throw InvalidArgument(op, std::string(op) + ": " + (row < 0 ? "row" : "col") +
                                  " must be non-negative, got" +
                                  std::to_string(row < 0 ? row : col) + ".");
  std::vector<std::int64_t> rows, cols;
  for (std::int64_t r = 0; r < row; ++r)
    for (std::int64_t c = 0; c < col; ++c)
      if (lower ? c - r <= offset : c - r >= offset) rows.push_back(r), cols.push_back(c);
  const auto n = static_cast<std::int64_t>(rows.size());
  rows.insert(rows.end(), cols.begin(), cols.end());
  return Tensor::from_host(rows, {2, n}, device);
}

}  // namespace

Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  detail::require_defined_input("diagonal", x);
  const int d1 = wrap_dim(dim1, x.dim(), "diagonal"), d2 = wrap_dim(dim2, x.dim(), "diagonal");
  if (d1 == d2)
    throw InvalidArgument("diagonal", "diagonal: diagonal dimensions cannot be identical " +
                                          std::to_string(dim1) + ", " + std::to_string(dim2) + ".");
  if (x.dim() < 2)
    throw InvalidArgument(
        "diagonal", "diagonal: the input needs 2 dims or more, got " + to_string(x.shape()) + ".");
  const std::int64_t s1 = x.shape()[d1], s2 = x.shape()[d2];
  const std::int64_t size = std::max<std::int64_t>(
      offset >= 0 ? std::min(s1, s2 - offset) : std::min(s1 + offset, s2), 0);
  std::int64_t start = x.offset();
  if (size > 0) start += offset >= 0 ? offset * x.strides()[d2] : -offset * x.strides()[d1];
  Shape shape;
  Strides strides;
  for (int i = 0; i < x.dim(); ++i)
    if (i != d1 && i != d2) shape.push_back(x.shape()[i]), strides.push_back(x.strides()[i]);
  shape.push_back(size);
  strides.push_back(x.strides()[d1] + x.strides()[d2]);
  return Tensor(x.storage(), start, shape, strides, x.dtype());
}

Tensor diag_embed(const Tensor& x, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  detail::require_defined_input("diag_embed", x);
  const int rank = x.dim() + 1;
  const int d1 = wrap_dim(dim1, rank, "diag_embed"), d2 = wrap_dim(dim2, rank, "diag_embed");
  if (d1 == d2)
    throw InvalidArgument("diag_embed", "diag_embed: diagonal dimensions cannot be identical " +
                                            std::to_string(dim1) + ", " + std::to_string(dim2) +
                                            ".");
  if (x.dim() == 0)
    throw InvalidArgument("diag_embed",
                          "diag_embed: the input needs at least 1 dim, got a 0-d "
                          "tensor.");
  const std::int64_t n = x.shape()[x.dim() - 1] + (offset < 0 ? -offset : offset);
  // The batch dims in order, the two new dims of n at d1 and d2 (the lower one first).
  Shape shape;
  for (int i = 0; i + 1 < x.dim(); ++i) shape.push_back(x.shape()[i]);
  shape.insert(std::min(d1, d2), n);
  shape.insert(std::max(d1, d2), n);
  const Tensor out = full(shape, 0, x.dtype(), x.device());
  // diagonal() of the result lists the batch dims, then the diagonal: x's own order.
  if (x.numel() > 0) diagonal(out, offset, d1, d2).copy_(x);
  return out;
}

Tensor trace(const Tensor& x) {
  detail::require_defined_input("trace", x);
  if (x.dim() != 2)
    throw InvalidArgument("trace", "trace: expected a matrix, but got tensor with dim " +
                                       std::to_string(x.dim()) + ".");
  return sum(diagonal(x, 0, 0, 1));
}

Tensor narrow_copy(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t length) {
  detail::require_defined_input("narrow_copy", x);
  return x.narrow(dim, start, length).clone();
}

Tensor unfold(const Tensor& x, std::int64_t dim, std::int64_t size, std::int64_t step) {
  detail::require_defined_input("unfold", x);
  const int d = wrap_dim(dim, x.dim(), "unfold");
  const std::int64_t n = x.dim() == 0 ? 1 : x.shape()[d];
  if (size > n)
    throw InvalidArgument("unfold", "unfold: maximum size for tensor at dimension " +
                                        std::to_string(d) + " is " + std::to_string(n) +
                                        " but size is " + std::to_string(size) + ".");
  if (size < 0)
    throw InvalidArgument("unfold",
                          "unfold: size is " + std::to_string(size) + " but must be >= 0.");
  if (step <= 0)
    throw InvalidArgument("unfold",
                          "unfold: step is " + std::to_string(step) + " but must be > 0.");
  Shape shape = x.shape();
  Strides strides = x.strides();
  if (x.dim() == 0) shape.push_back(1), strides.push_back(1);  // a 0-d input reads as [1]
  const std::int64_t stride = strides[d];
  shape[d] = (n - size) / step + 1;
  strides[d] = stride * step;
  shape.push_back(size);
  strides.push_back(stride);
  if (x.dim() == 0) shape.erase(0), strides.erase(0);  // PyTorch: [size], not [1, size]
  return Tensor(x.storage(), x.offset(), shape, strides, x.dtype());
}

Tensor tril_indices(std::int64_t row, std::int64_t col, std::int64_t offset, const Device& device) {
  return triangle_indices("tril_indices", row, col, offset, true, device);
}

Tensor triu_indices(std::int64_t row, std::int64_t col, std::int64_t offset, const Device& device) {
  return triangle_indices("triu_indices", row, col, offset, false, device);
}

}  // namespace nbx::ops
