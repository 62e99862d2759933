// The shape ops' shared helpers (shape_detail.hpp).
#include "core/ops/shape_detail.hpp"

#include <algorithm>
#include <limits>

#include "core/errors.hpp"
#include "core/ops/index.hpp"

namespace nbx::ops::detail {

void require_defined_input(const char* op, const Tensor& x) {
  if (!x.defined()) throw InvalidArgument(op, std::string(op) + ": the input is undefined.");
}

std::string list_text(const std::vector<std::int64_t>& values) {
  std::string s = "[";
  for (std::size_t k = 0; k < values.size(); ++k) s += (k ? ", " : "") + std::to_string(values[k]);
  return s + "]";
}

Tensor select_along(const Tensor& x, int dim, const std::vector<std::int64_t>& index) {
  const bool narrow = std::all_of(index.begin(), index.end(), [](std::int64_t v) {
    return v <= std::numeric_limits<std::int32_t>::max();
  });
  const Shape shape{static_cast<std::int64_t>(index.size())};
  Tensor idx;
  if (narrow) {
    const std::vector<std::int32_t> small(index.begin(), index.end());
    idx = Tensor::from_host(small, shape, x.device());
  } else {
    idx = Tensor::from_host(index, shape, x.device());
  }
  return index_select(x, dim, idx);
}

Tensor at_least_1d(const Tensor& x) {
  return x.dim() == 0 ? x.reshape({1}) : x;
}

Shape cat_shape(const char* what, const std::vector<Shape>& shapes, std::int64_t dim) {
  const std::string op(what);
  if (shapes.empty()) throw InvalidArgument(op, op + ": expected a non-empty list of Tensors.");
  const auto skipped = [](const Shape& s) { return s.size() == 1 && s[0] == 0; };
  const Shape* first = nullptr;
  std::size_t first_at = 0;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    if (shapes[k].empty())
      throw InvalidArgument(op, op + ": zero-dimensional tensor (at position " + std::to_string(k) +
                                    ") cannot be concatenated.");
    if (!first && !skipped(shapes[k])) first = &shapes[k], first_at = k;
  }
  if (!first) return Shape{0};  // PyTorch: every input a legacy [0]; the result is one too
  const int d = wrap_dim(dim, first->size(), what);
  Shape out = *first;
  out[d] = 0;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    if (skipped(s)) continue;
    if (s.size() != first->size())
      throw InvalidArgument(op, op + ": Tensors must have same number of dimensions: got " +
                                    std::to_string(first->size()) + " and " +
                                    std::to_string(s.size()) + " (tensor number " +
                                    std::to_string(k) + ").");
    for (int i = 0; i < s.size(); ++i)
      if (i != d && s[i] != (*first)[i])
        throw InvalidArgument(op, op + ": Sizes of tensors must match except in dimension " +
                                      std::to_string(d) + ". Expected size " +
                                      std::to_string((*first)[i]) + " but got size " +
                                      std::to_string(s[i]) + " for tensor number " +
                                      std::to_string(k) + " in the list (dim " + std::to_string(i) +
                                      "; tensor " + std::to_string(first_at) + " set the sizes).");
    out[d] += s[d];
  }
  return out;
}

DType cat_dtype(const char* what, const std::vector<DType>& dtypes) {
  if (dtypes.empty())
    throw InvalidArgument(what, std::string(what) + ": expected a non-empty list of Tensors.");
  std::vector<PromotionOperand> operands;
  for (DType t : dtypes) operands.push_back({t, OperandKind::kTensor});
  return result_type(operands);
}

}  // namespace nbx::ops::detail
