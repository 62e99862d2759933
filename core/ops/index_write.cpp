// scatter, scatter_add, scatter_reduce, index_add, index_copy and index_fill
// (index_write.hpp): PyTorch's checks and shapes, then the scatter family's launch through
// self's strides (index_write_plan.cpp). The out-of-place forms write a clone.
#include <limits>
#include <string>

#include "core/errors.hpp"
#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/index_write.hpp"
#include "core/ops/index_write_detail.hpp"
#include "core/ops/inplace_write.hpp"

namespace nbx::ops {
namespace {

using detail::ScatterForm;

void require_defined(const char* op, std::initializer_list<const Tensor*> tensors) {
  const Tensor* first = nullptr;
  for (const Tensor* t : tensors) {
    if (!t->defined()) throw InvalidArgument(op, std::string(op) + ": a tensor is undefined.");
    if (first && t->device() != first->device())
      throw InvalidArgument(op, std::string(op) + ": tensors are on " + first->device().str() +
                                    " and " + t->device().str() + "; all must be on one device.");
    first = t;
  }
}

void require_index_dtype(const char* op, const Tensor& index) {
  if (index.dtype() != DType::kInt32 && index.dtype() != DType::kInt64)
    throw InvalidArgument(op, std::string(op) + ": the index must be int32 or int64, got " +
                                  std::string(dtype_name(index.dtype())) + ".");
}

void require_same_dtype(const char* op, const Tensor& self, const Tensor& other, const char* what) {
  if (self.dtype() != other.dtype())
    throw InvalidArgument(op, std::string(op) + ": self (" + std::string(dtype_name(self.dtype())) +
                                  ") and " + what + " (" + std::string(dtype_name(other.dtype())) +
                                  ") must have the same dtype.");
}

// An operand sharing self's storage is read from a copy, so the result is the out-of-place
// op's whatever the overlap.
Tensor apart_from(const Tensor& self, const Tensor& t) {
  return t.storage() == self.storage() ? t.clone() : t;
}

Tensor at_least_1d(const Tensor& t) {
  return t.dim() == 0 ? t.reshape({1}) : t;
}

// A one-element tensor of self's dtype read by every iteration element (all strides 0).
Tensor scalar_source(const char* op, const Tensor& self, Scalar value) {
  (void)op;
  return Tensor::full({1}, value, self.dtype(), self.device());
}

// scatter's dim form: index has self's rank (0-d counting as 1-d); src is a tensor of at
// least index's size in every dim, or a one-element scalar source.
void scatter_along(const char* op, abi::ScatterOp code, abi::ScatterReduce reduce,
                   const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                   bool scalar) {
  require_index_dtype(op, index);
  const Tensor s = at_least_1d(self), idx = at_least_1d(index);
  const Tensor from = scalar ? src : at_least_1d(src);
  if (idx.dim() != s.dim())
    throw InvalidArgument(op, std::string(op) + ": the index has " + std::to_string(index.dim()) +
                                  " dims and self " + std::to_string(self.dim()) +
                                  "; they must match.");
  if (!scalar && from.dim() != s.dim())
    throw InvalidArgument(op, std::string(op) + ": src has " + std::to_string(src.dim()) +
                                  " dims and self " + std::to_string(self.dim()) +
                                  "; they must match.");
  const int d = wrap_dim(dim, s.dim(), op);
  if (idx.numel() > 0)
    for (int k = 0; k < s.dim(); ++k) {
      if (k != d && idx.shape()[k] > s.shape()[k])
        throw InvalidArgument(op, std::string(op) + ": the index " + to_string(index.shape()) +
                                      " is larger than self " + to_string(self.shape()) +
                                      " in dim " + std::to_string(k) + " (only dim " +
                                      std::to_string(d) + " may differ).");
      if (!scalar && idx.shape()[k] > from.shape()[k])
        throw InvalidArgument(op, std::string(op) + ": the index " + to_string(index.shape()) +
                                      " is larger than src " + to_string(src.shape()) + " in dim " +
                                      std::to_string(k) + ".");
    }
  ScatterForm f;
  f.sizes = idx.shape();
  f.out_strides = detail::strides_of(s);
  f.out_strides[d] = 0;
  f.index_scale = s.strides()[d];
  f.bound = s.shape()[d];
  f.src_strides =
      scalar ? std::vector<std::int64_t>(f.sizes.size(), 0)
             : std::vector<std::int64_t>(from.strides().begin(), from.strides().begin() + s.dim());
  f.index_strides = detail::strides_of(idx);
  f.index_positions = detail::row_major_positions(idx.shape());
  detail::run_scatter(code, reduce, s, apart_from(self, from), apart_from(self, idx), f);
}

abi::ScatterReduce legacy_reduce(const char* op, std::optional<std::string_view> reduce) {
  if (!reduce) return abi::kScatterAssign;
  if (*reduce == "add") return abi::kScatterAdd;
  if (*reduce == "multiply") return abi::kScatterMul;
  throw InvalidArgument(op, std::string(op) +
                                ": reduce argument must be either add or multiply, "
                                "got \"" +
                                std::string(*reduce) + "\".");
}

void require_writable(const char* form, const Tensor& self) {
  detail::require_no_internal_overlap(form, self);
}

// The value every written destination starts from when include_self is false.
Scalar identity_of(std::string_view reduce, DType t) {
  if (reduce == "prod") return Scalar(1);
  if (reduce == "sum" || reduce == "mean") return Scalar(0);
  const bool max = reduce == "amax";
  if (t == DType::kBool) return Scalar(!max);
  if (is_floating(t))
    return Scalar(max ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity());
  switch (t) {
    case DType::kInt8:
      return Scalar(max ? -128 : 127);
    case DType::kUInt8:
      return Scalar(max ? 0 : 255);
    case DType::kInt16:
      return Scalar(max ? -32768 : 32767);
    case DType::kInt32:
      return Scalar(max ? std::numeric_limits<std::int32_t>::min()
                        : std::numeric_limits<std::int32_t>::max());
    default:
      return Scalar(max ? std::numeric_limits<std::int64_t>::min()
                        : std::numeric_limits<std::int64_t>::max());
  }
}

// index_add/index_copy's form: index a vector (or 0-d), source self's shape with
// index.numel() along dim.
void index_along(const char* op, abi::ScatterOp code, abi::ScatterReduce reduce, const Tensor& self,
                 std::int64_t dim, const Tensor& index, const Tensor& source) {
  require_index_dtype(op, index);
  if (index.dim() > 1)
    throw InvalidArgument(op, std::string(op) + ": the index must be a vector or 0-d, got " +
                                  to_string(index.shape()) + ".");
  require_same_dtype(op, self, source, "source");
  const Tensor s = at_least_1d(self), src = at_least_1d(source);
  const int d = wrap_dim(dim, s.dim(), op);
  bool slices_match = src.dim() == s.dim();
  for (int k = 0; slices_match && k < s.dim(); ++k)
    slices_match = k == d || src.shape()[k] == s.shape()[k];
  if (!slices_match)
    throw InvalidArgument(op, std::string(op) + ": source " + to_string(source.shape()) +
                                  " and self " + to_string(self.shape()) +
                                  " must have the same slice shapes (every dim but " +
                                  std::to_string(d) + ").");
  if (src.shape()[d] != index.numel())
    throw InvalidArgument(
        op, std::string(op) + ": the number of indices (" + std::to_string(index.numel()) +
                ") should be equal to source.size(dim) (" + std::to_string(src.shape()[d]) + ").");
  if (src.numel() == 0 && index.numel() > 0) {
    // No element is written, but PyTorch still checks every index against self's dim: a
    // keys pass over the index alone (its faults are the op's).
    ScatterForm k;
    k.sizes = {index.numel()};
    k.out_strides = {0}, k.src_strides = {0};
    k.index_strides = {index.dim() == 1 ? index.strides()[0] : 0};
    k.index_positions = {1};
    k.bound = s.shape()[d];
    detail::run_scatter_keys(code, Tensor::empty({index.numel()}, DType::kInt64, self.device()),
                             index, k, false);
    return;
  }
  ScatterForm f;
  f.sizes = src.shape();
  f.out_strides = detail::strides_of(s);
  f.out_strides[d] = 0;
  f.index_scale = s.strides()[d];
  f.bound = s.shape()[d];
  f.src_strides = detail::strides_of(src);
  f.index_strides.assign(f.sizes.size(), 0);
  f.index_strides[d] = index.dim() == 1 ? index.strides()[0] : 0;
  f.index_positions.assign(f.sizes.size(), 0);
  f.index_positions[d] = 1;
  detail::run_scatter(code, reduce, s, apart_from(self, src), apart_from(self, index), f);
}

}  // namespace

Tensor scatter_(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                std::optional<std::string_view> reduce) {
  require_defined("scatter_", {&self, &index, &src});
  require_writable("scatter_", self);
  require_same_dtype("scatter_", self, src, "src");
  scatter_along("scatter_", abi::kScatter_scatter, legacy_reduce("scatter_", reduce), self, dim,
                index, src, false);
  return self;
}

Tensor scatter_(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value,
                std::optional<std::string_view> reduce) {
  require_defined("scatter_", {&self, &index});
  require_writable("scatter_", self);
  scatter_along("scatter_", abi::kScatter_scatter, legacy_reduce("scatter_", reduce), self, dim,
                index, scalar_source("scatter_", self, value), true);
  return self;
}

Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
               std::optional<std::string_view> reduce) {
  require_defined("scatter", {&self, &index, &src});
  return scatter_(self.clone(), dim, index, src, reduce);
}

Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value,
               std::optional<std::string_view> reduce) {
  require_defined("scatter", {&self, &index});
  return scatter_(self.clone(), dim, index, value, reduce);
}

Tensor scatter_add_(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  require_defined("scatter_add_", {&self, &index, &src});
  require_writable("scatter_add_", self);
  require_same_dtype("scatter_add_", self, src, "src");
  scatter_along("scatter_add_", abi::kScatter_scatter_add, abi::kScatterAdd, self, dim, index, src,
                false);
  return self;
}

Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  require_defined("scatter_add", {&self, &index, &src});
  return scatter_add_(self.clone(), dim, index, src);
}

Tensor scatter_reduce_(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                       std::string_view reduce, bool include_self) {
  const char* op = "scatter_reduce_";
  require_defined(op, {&self, &index, &src});
  require_writable(op, self);
  require_same_dtype(op, self, src, "src");
  abi::ScatterReduce r;
  if (reduce == "sum" || reduce == "mean")
    r = abi::kScatterAdd;
  else if (reduce == "prod")
    r = abi::kScatterMul;
  else if (reduce == "amax")
    r = abi::kScatterMax;
  else if (reduce == "amin")
    r = abi::kScatterMin;
  else
    throw InvalidArgument(op, std::string(op) +
                                  ": reduce argument must be either sum, prod, mean, amax or "
                                  "amin, got \"" +
                                  std::string(reduce) + "\".");
  if (reduce == "mean" && self.dtype() == DType::kBool)
    throw InvalidArgument(
        op, std::string(op) + ": reduce \"mean\" is not implemented for bool (as PyTorch).");
  // PyTorch's two steps: the written destinations start from the identity, then fold.
  if (!include_self)
    scatter_along(op, abi::kScatter_scatter_reduce, abi::kScatterAssign, self, dim, index,
                  scalar_source(op, self, identity_of(reduce, self.dtype())), true);
  scatter_along(op, abi::kScatter_scatter_reduce, r, self, dim, index, src, false);
  if (reduce == "mean") {
    const Tensor count = include_self ? Tensor::ones(self.shape(), DType::kInt64, self.device())
                                      : Tensor::zeros(self.shape(), DType::kInt64, self.device());
    scatter_along(op, abi::kScatter_scatter_reduce, abi::kScatterAdd, count, dim, index,
                  scalar_source(op, count, Scalar(1)), true);
    const Tensor divisor = ops::clamp_min(count, 1);
    const Tensor mean = is_floating(self.dtype()) ? ops::div(self, divisor.to(self.dtype()))
                                                  : ops::floor_divide(self, divisor);
    self.copy_(mean);
  }
  return self;
}

Tensor scatter_reduce(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self) {
  require_defined("scatter_reduce", {&self, &index, &src});
  return scatter_reduce_(self.clone(), dim, index, src, reduce, include_self);
}

Tensor index_add_(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source,
                  Scalar alpha) {
  const char* op = "index_add_";
  require_defined(op, {&self, &index, &source});
  require_writable(op, self);
  require_same_dtype(op, self, source, "source");
  if (!is_floating(self.dtype()) && alpha.is_floating())
    throw InvalidArgument(op, std::string(op) + ": alpha " + alpha.str() +
                                  " must be an integer for an integral self (" +
                                  std::string(dtype_name(self.dtype())) + ").");
  const bool scaled =
      alpha.kind() == Scalar::Kind::kBool ? !alpha.to_bool() : alpha.to_double() != 1.0;
  const Tensor src = scaled ? ops::mul(source, alpha).to(self.dtype()) : source;
  index_along(op, abi::kScatter_index_add, abi::kScatterAdd, self, dim, index, src);
  return self;
}

Tensor index_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha) {
  require_defined("index_add", {&self, &index, &source});
  return index_add_(self.clone(), dim, index, source, alpha);
}

Tensor index_copy_(const Tensor& self, std::int64_t dim, const Tensor& index,
                   const Tensor& source) {
  const char* op = "index_copy_";
  require_defined(op, {&self, &index, &source});
  require_writable(op, self);
  index_along(op, abi::kScatter_index_copy, abi::kScatterAssign, self, dim, index, source);
  return self;
}

Tensor index_copy(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source) {
  require_defined("index_copy", {&self, &index, &source});
  return index_copy_(self.clone(), dim, index, source);
}

Tensor index_fill_(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value) {
  const char* op = "index_fill_";
  require_defined(op, {&self, &index});
  require_writable(op, self);
  require_index_dtype(op, index);
  if (index.dim() > 1)
    throw InvalidArgument(op, std::string(op) + ": the index must be a vector or 0-d, got " +
                                  to_string(index.shape()) + ".");
  const Tensor s = at_least_1d(self);
  const int d = wrap_dim(dim, s.dim(), op);
  ScatterForm f;
  f.sizes = s.shape();
  f.sizes[d] = index.numel();
  f.out_strides = detail::strides_of(s);
  f.out_strides[d] = 0;
  f.index_scale = s.strides()[d];
  f.bound = s.shape()[d];
  f.wrap_negative = true;  // PyTorch's index_fill counts negative indices from the end
  f.src_strides.assign(f.sizes.size(), 0);
  f.index_strides.assign(f.sizes.size(), 0);
  f.index_strides[d] = index.dim() == 1 ? index.strides()[0] : 0;
  f.index_positions.assign(f.sizes.size(), 0);
  f.index_positions[d] = 1;
  detail::run_scatter(abi::kScatter_index_fill, abi::kScatterAssign, s,
                      scalar_source(op, self, value), apart_from(self, index), f,
                      true /* every write of one destination is the same value */);
  return self;
}

Tensor index_fill(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value) {
  require_defined("index_fill", {&self, &index});
  return index_fill_(self.clone(), dim, index, value);
}

}  // namespace nbx::ops
