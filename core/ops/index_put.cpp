// index_put, masked_scatter, masked_select, nonzero, argwhere, one_hot and bincount
// (index_write.hpp): advanced indexing and the compacting ops, on the scatter family
// (index_write_plan.cpp) and compositions of elementwise, scan and gather launches. The
// compactions read one count to the host, as PyTorch's do.
#include <algorithm>
#include <string>
#include <utility>

#include "core/errors.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/index.hpp"
#include "core/ops/index_write.hpp"
#include "core/ops/index_write_detail.hpp"
#include "core/ops/inplace_write.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/scan.hpp"
#include "core/ops/shape.hpp"

namespace nbx::ops {
namespace {

using detail::ScatterForm;

std::string dtype_text(DType t) {
  return std::string(dtype_name(t));
}

// The coordinates of x's non-zero elements, one int64 vector per dim, row-major order.
std::vector<Tensor> nonzero_coordinates(const char* op, const Tensor& x) {
  if (!x.defined()) throw InvalidArgument(op, std::string(op) + ": the tensor is undefined.");
  detail::require_dtype_support(op, DType::kInt64, x.device());  // the count and coordinates
  const Tensor mask = ops::ne(x, 0);
  const std::int64_t count = detail::count_true(mask);
  if (x.dim() == 0) return {};
  const Tensor linear =
      Tensor::arange(0, x.numel(), 1, DType::kInt64, x.device()).reshape(x.shape());
  const Tensor flat = detail::compact(op, abi::kScatter_nonzero, linear, mask, count);
  std::vector<Tensor> coords;
  std::int64_t stride = x.numel();
  for (int k = 0; k < x.dim(); ++k) {
    const std::int64_t size = x.shape()[k];
    stride = size == 0 ? 0 : stride / size;
    coords.push_back(stride == 0 ? Tensor::zeros({count}, DType::kInt64, x.device())
                                 : ops::remainder(ops::floor_divide(flat, stride), size));
  }
  return coords;
}

struct PickedIndex {
  int dim;
  Tensor index;
};

// The index tensors of an advanced-indexing tuple, each with the dim it indexes; a bool or
// uint8 mask stands for its nonzero() coordinates over the dims it covers.
std::vector<PickedIndex> picked_indices(const char* op, const Tensor& self,
                                        const std::vector<Tensor>& indices) {
  std::vector<PickedIndex> picked;
  int pos = 0;
  for (std::size_t j = 0; j < indices.size(); ++j) {
    const Tensor& t = indices[j];
    if (!t.defined()) {
      ++pos;
      continue;
    }
    if (t.device() != self.device())
      throw InvalidArgument(op, std::string(op) + ": index " + std::to_string(j) + " is on " +
                                    t.device().str() + " and self on " + self.device().str() +
                                    "; both must be on one device.");
    if (t.dtype() == DType::kBool || t.dtype() == DType::kUInt8) {
      if (t.dim() == 0)
        throw InvalidArgument(op, std::string(op) +
                                      ": a 0-d mask index is not supported; "
                                      "index with a 1-d mask or none.");
      bool fits = pos + t.dim() <= self.dim();
      for (int k = 0; fits && k < t.dim(); ++k) fits = t.shape()[k] == self.shape()[pos + k];
      if (!fits)
        throw InvalidArgument(op, std::string(op) + ": the shape of the mask " +
                                      to_string(t.shape()) + " at index " + std::to_string(j) +
                                      " does not match the shape of the indexed tensor " +
                                      to_string(self.shape()) + ".");
      std::vector<Tensor> coords = nonzero_coordinates(op, t);
      for (int k = 0; k < t.dim(); ++k) picked.push_back({pos + k, coords[std::size_t(k)]});
      pos += t.dim();
      continue;
    }
    if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)
      throw InvalidArgument(op, std::string(op) +
                                    ": tensors used as indices must be long, int, byte or bool "
                                    "tensors, got " +
                                    dtype_text(t.dtype()) + ".");
    picked.push_back({pos, t});
    ++pos;
  }
  if (pos > self.dim())
    throw InvalidArgument(op, std::string(op) + ": too many indices for a tensor of dimension " +
                                  std::to_string(self.dim()) + " (got " + std::to_string(pos) +
                                  ").");
  return picked;
}

}  // namespace

Tensor index_put_(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                  bool accumulate) {
  const char* op = "index_put_";
  if (!self.defined() || !values.defined())
    throw InvalidArgument(op, std::string(op) + ": a tensor is undefined.");
  if (values.device() != self.device())
    throw InvalidArgument(op, std::string(op) + ": values are on " + values.device().str() +
                                  " and self on " + self.device().str() + ".");
  if (values.dtype() != self.dtype())
    throw InvalidArgument(op, std::string(op) +
                                  ": index put requires the source and destination dtypes "
                                  "match, got " +
                                  dtype_text(self.dtype()) + " for the destination and " +
                                  dtype_text(values.dtype()) + " for the source.");
  detail::require_no_internal_overlap(op, self);
  // PyTorch (2.x) sends a put of one value through a single mask to masked_fill_, which takes
  // only bool masks: a uint8 mask there is refused as PyTorch refuses it.
  int defined = 0;
  bool byte_mask = false;
  for (const Tensor& t : indices)
    if (t.defined()) ++defined, byte_mask = t.dtype() == DType::kUInt8;
  if (!accumulate && values.numel() == 1 && defined == 1 && byte_mask)
    throw InvalidArgument(op, std::string(op) +
                                  ": masked_fill_ only supports boolean masks, but got mask "
                                  "with dtype unsigned char (PyTorch puts one value through a "
                                  "single mask with masked_fill_; index with a bool mask).");
  const std::vector<PickedIndex> picked = picked_indices(op, self, indices);
  if (picked.empty()) {  // self[...] = values
    self.copy_(accumulate ? ops::add(self, values) : values);
    return self;
  }
  Shape b = picked[0].index.shape();
  for (const PickedIndex& p : picked) b = broadcast_shapes(b, p.index.shape(), op);
  bool adjacent = true;
  for (std::size_t j = 1; j < picked.size(); ++j)
    adjacent = adjacent && picked[j].dim == picked[j - 1].dim + 1;
  // The indexing result's dims: each either a dim of the broadcast indices (-1 - k) or one of
  // self's dims left whole; the broadcast dims go where the indexed dims were when those are
  // adjacent, first otherwise (PyTorch's rule).
  std::vector<int> dims;
  const int first = picked.front().dim;
  const auto push_b = [&] {
    for (int k = 0; k < b.size(); ++k) dims.push_back(-1 - k);
  };
  if (!adjacent) push_b();
  for (int d = 0; d < self.dim(); ++d) {
    const bool indexed =
        std::any_of(picked.begin(), picked.end(), [&](const PickedIndex& p) { return p.dim == d; });
    if (indexed) {
      if (adjacent && d == first) push_b();
      continue;
    }
    dims.push_back(d);
  }
  Shape result;
  for (int d : dims) result.push_back(d < 0 ? b[-1 - d] : self.shape()[d]);
  if (broadcast_shapes(values.shape(), result, op) != result)
    throw InvalidArgument(op, std::string(op) + ": shape mismatch: value tensor of shape " +
                                  to_string(values.shape()) +
                                  " cannot be broadcast to indexing result of shape " +
                                  to_string(result) + ".");
  const Tensor src =
      values.storage() == self.storage() ? values.clone().expand(result) : values.expand(result);
  const Strides b_positions = contiguous_strides(b);
  ScatterForm f;
  f.sizes = result;
  for (int d : dims) {
    f.out_strides.push_back(d < 0 ? 0 : self.strides()[d]);
    f.index_positions.push_back(d < 0 ? b_positions[-1 - d] : 0);
  }
  f.src_strides = detail::strides_of(src);
  const abi::ScatterReduce reduce = accumulate ? abi::kScatterAdd : abi::kScatterAssign;
  // The index over the broadcast dims (strides per result dim, 0 along self's whole dims).
  const auto index_strides_of = [&](const Tensor& over_b) {
    std::vector<std::int64_t> s;
    for (int d : dims) s.push_back(d < 0 ? over_b.strides()[-1 - d] : 0);
    return s;
  };
  if (picked.size() == 1) {
    const PickedIndex& p = picked[0];
    const Tensor index = p.index.storage() == self.storage() ? p.index.clone() : p.index;
    const Tensor over_b = index.expand(b);
    f.index_strides = index_strides_of(over_b);
    f.bound = self.shape()[p.dim];
    f.index_scale = self.strides()[p.dim];
    f.wrap_negative = true;
    detail::run_scatter(abi::kScatter_index_put, reduce, self, src, over_b, f);
    return self;
  }
  // Several index tensors: each one's checked offset added into one key per broadcast
  // element (the keys pass), then the write reads the keys as offsets.
  const Tensor keys = Tensor::empty(b, DType::kInt64, self.device());
  std::int64_t span = 1;
  for (std::size_t j = 0; j < picked.size(); ++j) {
    const PickedIndex& p = picked[j];
    const Tensor over_b = p.index.expand(b);
    ScatterForm k;
    k.sizes = b;
    k.out_strides.assign(b.size(), 0);
    k.src_strides.assign(b.size(), 0);
    k.index_strides = detail::strides_of(over_b);
    k.index_positions = detail::strides_of(keys);
    k.bound = self.shape()[p.dim];
    k.index_scale = self.strides()[p.dim];
    k.wrap_negative = true;
    if (b.empty()) {  // 0-d indices: one key
      k.sizes = {1};
      k.out_strides = k.src_strides = k.index_strides = {0};
      k.index_positions = {0};
    }
    detail::run_scatter_keys(abi::kScatter_index_put, b.empty() ? keys.reshape({1}) : keys, over_b,
                             k, j > 0);
    span += std::max<std::int64_t>(self.shape()[p.dim] - 1, 0) * self.strides()[p.dim];
  }
  f.index_strides = index_strides_of(keys);
  f.bound = span;
  f.index_scale = 1;
  detail::run_scatter(abi::kScatter_index_put, reduce, self, src, keys, f);
  return self;
}

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate) {
  if (!self.defined()) throw InvalidArgument("index_put", "index_put: self is undefined.");
  return index_put_(self.clone(), indices, values, accumulate);
}

Tensor masked_scatter_(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const char* op = "masked_scatter_";
  if (!self.defined() || !mask.defined() || !source.defined())
    throw InvalidArgument(op, std::string(op) + ": a tensor is undefined.");
  if (mask.device() != self.device() || source.device() != self.device())
    throw InvalidArgument(op, std::string(op) + ": self, mask and source must be on one device.");
  if (mask.dtype() != DType::kBool)
    throw InvalidArgument(op, std::string(op) + ": only boolean masks are supported, got " +
                                  dtype_text(mask.dtype()) + ".");
  if (source.dtype() != self.dtype())
    throw InvalidArgument(op, std::string(op) + ": self (" + dtype_text(self.dtype()) +
                                  ") and source (" + dtype_text(source.dtype()) +
                                  ") must have the same dtype.");
  detail::require_no_internal_overlap(op, self);
  if (broadcast_shapes(mask.shape(), self.shape(), op) != self.shape())
    throw InvalidArgument(op, std::string(op) + ": the mask " + to_string(mask.shape()) +
                                  " does not broadcast to self " + to_string(self.shape()) + ".");
  const Tensor m = mask.expand(self.shape());
  const std::int64_t count = detail::count_true(m);
  if (count > source.numel())
    throw InvalidArgument(op, std::string(op) +
                                  ": expected source to have at least as many elements as ones "
                                  "in mask (" +
                                  std::to_string(count) + "), got " +
                                  std::to_string(source.numel()) + ".");
  if (count == 0) return self;
  // Element e of self takes source element (true elements before e) where the mask holds.
  const Tensor flat_mask = m.reshape({-1});
  const Tensor position =
      ops::where(flat_mask, ops::sub(ops::cumsum(flat_mask, 0, DType::kInt64), 1), Scalar(0));
  const Tensor picked = ops::take(source.reshape({-1}), position).reshape(self.shape());
  self.copy_(ops::where(m, picked, self));
  return self;
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const char* op = "masked_scatter";
  if (!self.defined() || !mask.defined())
    throw InvalidArgument(op, std::string(op) + ": a tensor is undefined.");
  const Shape shape = broadcast_shapes(self.shape(), mask.shape(), op);
  return masked_scatter_(self.expand(shape).clone(), mask, source);
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  const char* op = "masked_select";
  if (!self.defined() || !mask.defined())
    throw InvalidArgument(op, std::string(op) + ": a tensor is undefined.");
  if (mask.device() != self.device())
    throw InvalidArgument(op, std::string(op) + ": self and mask must be on one device.");
  if (mask.dtype() != DType::kBool)
    throw InvalidArgument(op, std::string(op) + ": only boolean masks are supported, got " +
                                  dtype_text(mask.dtype()) + ".");
  detail::require_dtype_support(op, DType::kInt64, self.device());  // the count and positions
  const Shape shape = broadcast_shapes(self.shape(), mask.shape(), op);
  const Tensor m = mask.expand(shape);
  return detail::compact(op, abi::kScatter_masked_select, self.expand(shape), m,
                         detail::count_true(m));
}

Tensor nonzero(const Tensor& x) {
  std::vector<Tensor> coords = nonzero_coordinates("nonzero", x);
  if (x.dim() == 0)
    return Tensor::empty({ops::ne(x, 0).item().to_bool() ? 1 : 0, 0}, DType::kInt64, x.device());
  return ops::stack(coords, 1);
}

std::vector<Tensor> nonzero_tuple(const Tensor& x) {
  std::vector<Tensor> coords = nonzero_coordinates("nonzero", x);
  if (x.dim() == 0)  // PyTorch treats a 0-d tensor as 1-d here
    return {Tensor::zeros({ops::ne(x, 0).item().to_bool() ? 1 : 0}, DType::kInt64, x.device())};
  return coords;
}

Tensor argwhere(const Tensor& x) {
  return nonzero(x);
}

Tensor one_hot(const Tensor& x, std::int64_t num_classes) {
  const char* op = "one_hot";
  if (!x.defined()) throw InvalidArgument(op, "one_hot: the tensor is undefined.");
  if (x.dtype() != DType::kInt64 && x.dtype() != DType::kInt32)
    throw InvalidArgument(op, "one_hot is only applicable to index tensors (int64 or int32), got " +
                                  dtype_text(x.dtype()) + ".");
  if (num_classes < -1)
    throw InvalidArgument(op, "one_hot: num_classes should be -1 or non-negative, got " +
                                  std::to_string(num_classes) + ".");
  if (num_classes == -1) {
    if (x.numel() == 0)
      throw InvalidArgument(op,
                            "one_hot: can not infer the number of classes from an empty "
                            "tensor.");
    num_classes = std::max<std::int64_t>(ops::amax(x).item().to_int() + 1, 0);
  }
  Shape shape = x.shape();
  shape.push_back(num_classes);
  const Tensor out = Tensor::zeros(shape, DType::kInt64, x.device());
  ScatterForm f;
  f.sizes = x.shape();
  f.out_strides.assign(out.strides().begin(), out.strides().end() - 1);
  f.index_scale = 1;
  f.bound = num_classes;
  f.src_strides.assign(f.sizes.size(), 0);
  f.index_strides = detail::strides_of(x);
  f.index_positions = detail::row_major_positions(x.shape());
  detail::run_scatter(abi::kScatter_one_hot, abi::kScatterAssign, out,
                      Tensor::full({1}, 1, DType::kInt64, x.device()), x, f, true);
  return out;
}

Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights, std::int64_t minlength) {
  const char* op = "bincount";
  if (!x.defined()) throw InvalidArgument(op, "bincount: the tensor is undefined.");
  if (x.dim() != 1 || !is_integral(x.dtype(), false))
    throw InvalidArgument(op, "bincount only supports 1-d non-negative integral inputs, got " +
                                  dtype_text(x.dtype()) + " " + to_string(x.shape()) + ".");
  if (minlength < 0)
    throw InvalidArgument(
        op, "bincount: minlength should be >= 0, got " + std::to_string(minlength) + ".");
  const bool weighted = weights && weights->defined();
  if (weighted && (weights->dim() != 1 || weights->shape()[0] != x.shape()[0] ||
                   weights->device() != x.device()))
    throw InvalidArgument(op,
                          "bincount: weights should be 1-d and have the same length as "
                          "input, on its device.");
  const DType out_dtype = !weighted                             ? DType::kInt64
                          : weights->dtype() == DType::kFloat32 ? DType::kFloat32
                                                                : DType::kFloat64;
  // PyTorch: an empty input gives int64 zeros of minlength, whatever the weights.
  detail::require_dtype_support(op, DType::kInt64, x.device());
  if (x.numel() == 0) return Tensor::zeros({minlength}, DType::kInt64, x.device());
  detail::require_dtype_support(op, out_dtype, x.device());
  const Tensor range = ops::stack({ops::amin(x).to(DType::kInt64), ops::amax(x).to(DType::kInt64)});
  const std::vector<std::int64_t> lo_hi = range.to_host<std::int64_t>();  // the one host read
  if (lo_hi[0] < 0)
    throw InvalidArgument(op,
                          "bincount only supports 1-d non-negative integral inputs, got the "
                          "value " +
                              std::to_string(lo_hi[0]) + ".");
  const std::int64_t bins = std::max(lo_hi[1] + 1, minlength);
  const Tensor out = Tensor::zeros({bins}, out_dtype, x.device());
  const Tensor index =
      x.dtype() == DType::kInt32 || x.dtype() == DType::kInt64 ? x : x.to(DType::kInt64);
  const Tensor src =
      weighted ? weights->to(out_dtype) : Tensor::full({1}, 1, out_dtype, x.device());
  ScatterForm f;
  f.sizes = x.shape();
  f.out_strides = {0};
  f.index_scale = 1;
  f.bound = bins;
  f.src_strides = {weighted ? src.strides()[0] : 0};
  f.index_strides = detail::strides_of(index);
  f.index_positions = {1};
  detail::run_scatter(abi::kScatter_bincount, abi::kScatterAdd, out, src, index, f);
  return out;
}

}  // namespace nbx::ops
