#include "core/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/inplace_write.hpp"

namespace nbx {
namespace {

void check_sizes(const Shape& shape, const char* op) {
  for (std::int64_t s : shape)
    if (s < 0)
      throw InvalidArgument(
          op, std::string(op) + ": sizes must be non-negative, got " + to_string(shape) + ".");
}

// Fills in a -1 size from the element count; throws when the shape cannot hold `count`.
Shape infer_shape(const Shape& requested, std::int64_t count, const char* op) {
  const auto invalid = [&] {
    throw InvalidArgument(op, std::string(op) + ": shape " + to_string(requested) +
                                  " is invalid for " + std::to_string(count) + " elements.");
  };
  Shape out = requested;
  Shape known;  // the sizes given, multiplied overflow-checked ([2^40, 2^40, 0] wrapped)
  int infer = -1;
  for (int i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0)
        throw InvalidArgument(
            op, std::string(op) + ": only one size may be -1, got " + to_string(requested) + ".");
      infer = i;
    } else if (out[i] < 0) {
      throw InvalidArgument(op,
                            std::string(op) + ": invalid size in " + to_string(requested) + ".");
    } else {
      known.push_back(out[i]);
    }
  }
  const std::optional<std::int64_t> product = checked_numel(known);
  if (!product) invalid();
  if (infer >= 0) {
    if (*product == 0 || count % *product != 0) invalid();
    out[infer] = count / *product;
  } else if (*product != count) {
    invalid();
  }
  return out;
}

// Strides that view (shape, strides) as `target` without copying, or nullopt. PyTorch's
// computeStride: walk both shapes in chunks of dims that are contiguous with each other.
std::optional<Strides> view_strides(const Shape& shape, const Strides& strides,
                                    const Shape& target) {
  Strides out;
  for (int i = 0; i < target.size(); ++i) out.push_back(0);
  if (numel(shape) == 0) return contiguous_strides(target);
  // A 0-d tensor has no dims to walk: its one element views as any shape of ones ([1],
  // [1, 1]: a full reduction's keepdim result), as PyTorch's computeStride does.
  if (shape.size() == 0) {
    for (int i = 0; i < target.size(); ++i) out[i] = 1;
    return out;
  }
  int view_d = target.size() - 1;
  std::int64_t chunk_base_stride = strides.size() ? strides[strides.size() - 1] : 1;
  std::int64_t tensor_numel = 1, view_numel = 1;
  for (int tensor_d = shape.size() - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= shape[tensor_d];
    // A size-1 dim may carry a stride near 2^63 (it is never walked): products with it are
    // overflow-checked, and one that wraps is not a stride this walk can use.
    std::int64_t chunk_stride = 0;
    const bool chunk_wraps = __builtin_mul_overflow(tensor_numel, chunk_base_stride, &chunk_stride);
    if (tensor_d == 0 ||
        (shape[tensor_d - 1] != 1 && (chunk_wraps || strides[tensor_d - 1] != chunk_stride))) {
      while (view_d >= 0 && (view_numel < tensor_numel || target[view_d] == 1)) {
        if (__builtin_mul_overflow(view_numel, chunk_base_stride, &out[view_d]))
          return std::nullopt;
        view_numel *= target[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

// A view lies inside its storage: as many strides as sizes, sizes, strides and the offset
// non-negative (PyTorch's as_strided refuses negative strides too), and its last element —
// found without overflow (ViewExtent) — within the storage's bytes, not the allocator's larger
// block. Every view is made here (view, slice, expand, permute … too), so no backend reads
// or writes past a storage through one (a stride of 2^40 on a 6-float storage read host
// memory at random; strides of 2^62 wrapped a kernel's bounds check; an offset of 100 read
// the allocator's block past the storage).
void check_view(const Storage* storage, std::int64_t offset, const Shape& shape,
                const Strides& strides, DType dtype) {
  const auto refuse = [&](const std::string& why) {
    throw InvalidArgument("Tensor", "Tensor: a view of " + to_string(shape) + " with strides " +
                                        to_string(strides) + " at offset " +
                                        std::to_string(offset) + ": " + why + ".");
  };
  if (shape.size() != strides.size()) refuse("it needs as many strides as sizes");
  const ViewExtent extent(offset, shape, strides);
  using Fault = ViewExtent::Fault;
  const Fault fault = extent.fault();
  if (fault == Fault::kNegativeSize)
    refuse("sizes must be non-negative, got " + extent.fault_text());
  if (fault == Fault::kNegativeStride)
    refuse("negative strides are not supported, got " + extent.fault_text());
  if (fault == Fault::kNegativeOffset) refuse("the offset must be non-negative");
  if (fault == Fault::kOverflow) refuse("its last element lies past 2^63");
  // Expanded dims cost no memory, but numel() must not wrap (PyTorch refuses it too).
  if (!checked_numel(shape)) refuse("its sizes multiply past 2^63 - 1 elements");
  if (extent.empty()) return;  // no element is ever read
  if (storage == nullptr) refuse("it has no storage");
  const std::size_t item = dtype_size(dtype);
  if (!extent.fits(storage->bytes(), item))
    refuse("its last element (" + std::to_string(extent.last()) + ") lies past the storage's " +
           std::to_string(storage->bytes() / item) + " elements of " +
           std::string(dtype_name(dtype)));
}

}  // namespace

Tensor::Tensor(std::shared_ptr<Storage> storage, std::int64_t offset, Shape shape, Strides strides,
               DType dtype)
    : storage_(std::move(storage)),
      offset_(offset),
      shape_(shape),
      strides_(strides),
      dtype_(dtype) {
  check_view(storage_.get(), offset_, shape_, strides_, dtype_);
}

void Tensor::require_defined(const char* op) const {
  if (!defined())
    throw InvalidArgument(op, std::string(op) + ": the tensor is undefined (default-constructed).");
}

Tensor Tensor::empty(const Shape& shape, DType dtype, const Device& device) {
  check_sizes(shape, "empty");
  ops::detail::require_dtype_support("empty", dtype, device);
  // The byte count must not wrap: [2^62 + 1, 4] float32 wrapped to 16 bytes, and the op
  // that asked for it (softmax of an expanded view, matmul …) wrote 2^64 elements there.
  const std::int64_t n = checked_numel(shape).value_or(-1);
  if (n < 0 || n > std::numeric_limits<std::int64_t>::max() / std::int64_t(dtype_size(dtype)))
    throw InvalidArgument("empty", "empty: " + to_string(shape) + " elements of " +
                                       std::string(dtype_name(dtype)) +
                                       " would take more than 2^63 bytes (invalid size, "
                                       "possible overflow).");
  const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dtype);
  auto storage = std::make_shared<Storage>(device, bytes);
  return Tensor(std::move(storage), 0, shape, contiguous_strides(shape), dtype);
}

Tensor Tensor::full(const Shape& shape, Scalar value, DType dtype, const Device& device) {
  // Refused as "full", before the allocation would refuse it as "empty".
  ops::detail::require_dtype_support("full", dtype, device);
  // The copy kernel would wrap or saturate the value; PyTorch refuses it (even for 0 elements).
  require_fits("full", value, dtype);
  // One copy launch with a scalar input: no host buffer of numel elements.
  Tensor out = empty(shape, dtype, device);
  ops::detail::fill_into("full", out, value);
  return out;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, const Device& device) {
  return full(shape, 0, dtype, device);
}

Tensor Tensor::ones(const Shape& shape, DType dtype, const Device& device) {
  return full(shape, 1, dtype, device);
}

Tensor Tensor::arange(Scalar start, Scalar end, Scalar step, DType dtype, const Device& device) {
  return ops::arange(start, end, step, dtype, device);  // made on the device by the fill kernel
}

void Tensor::check_host_count(std::size_t count, const Shape& shape) {
  check_sizes(shape, "from_host");
  if (static_cast<std::int64_t>(count) != nbx::numel(shape))
    throw InvalidArgument("from_host", "from_host: " + std::to_string(count) +
                                           " values cannot fill a tensor of shape " +
                                           to_string(shape) + " (" +
                                           std::to_string(nbx::numel(shape)) + " elements).");
}

Tensor Tensor::from_host(const void* data, const Shape& shape, DType dtype, const Device& device) {
  check_sizes(shape, "from_host");
  Tensor host = empty(shape, dtype, host_device());
  const std::size_t bytes = static_cast<std::size_t>(host.numel()) * dtype_size(dtype);
  if (bytes) std::memcpy(host.storage()->memory().handle, data, bytes);
  return host.to(device);
}

void Tensor::check_host_type(DType requested) const {
  require_defined("to_host");
  if (requested != dtype_)
    throw InvalidArgument(
        "to_host", "to_host: the tensor holds " + std::string(dtype_name(dtype_)) + ", not " +
                       std::string(dtype_name(requested)) + "; convert it with .to(nbx::" +
                       std::string(dtype_name(requested)) + ") first.");
}

void Tensor::copy_to_host(void* dst) const {
  require_defined("to_host");
  const Tensor src = contiguous();
  const std::size_t bytes = static_cast<std::size_t>(src.numel()) * src.itemsize();
  if (bytes == 0) return;
  const std::size_t off = static_cast<std::size_t>(src.offset()) * src.itemsize();
  DeviceContext& ctx = src.device().context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().copy_to_host(dst, src.storage()->memory(), off, bytes);
}

Scalar Tensor::item() const {
  require_defined("item");
  if (numel() != 1)
    throw InvalidArgument("item", "item: the tensor has " + std::to_string(numel()) +
                                      " elements (shape " + to_string(shape_) +
                                      "); item() needs exactly one.");
  union {
    std::int64_t i;
    double d;
    std::byte raw[8];
  } v{};
  copy_to_host(v.raw);
  switch (dtype_) {
    case DType::kBool:
      return Scalar(v.raw[0] != std::byte{0});
    case DType::kInt8:
      return Scalar(static_cast<std::int8_t>(v.raw[0]));
    case DType::kUInt8:
      return Scalar(static_cast<std::uint8_t>(v.raw[0]));
    case DType::kInt16: {
      std::int16_t x;
      std::memcpy(&x, v.raw, 2);
      return Scalar(x);
    }
    case DType::kInt32: {
      std::int32_t x;
      std::memcpy(&x, v.raw, 4);
      return Scalar(x);
    }
    case DType::kInt64:
      return Scalar(v.i);
    case DType::kFloat16: {
      std::uint16_t b;
      std::memcpy(&b, v.raw, 2);
      return Scalar(half_bits_to_double(b));
    }
    case DType::kBFloat16: {
      std::uint16_t b;
      std::memcpy(&b, v.raw, 2);
      return Scalar(bf16_bits_to_double(b));
    }
    case DType::kFloat32: {
      float x;
      std::memcpy(&x, v.raw, 4);
      return Scalar(x);
    }
    case DType::kFloat64:
      return Scalar(v.d);
  }
  throw Internal("item: unknown dtype.");
}

std::int64_t Tensor::size(std::int64_t dim) const {
  require_defined("size");  // an undefined tensor's dim 0 read past its empty shape
  return shape_[wrap_dim(dim, this->dim(), "size")];
}

const Device& Tensor::device() const {
  require_defined("device");
  return storage_->device();
}

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  return "Tensor(" + std::string(dtype_name(dtype_)) + ", " + to_string(shape_) + ", " +
         device().str() + ")";
}

Tensor Tensor::to(DType dtype) const {
  require_defined("to");
  return dtype == dtype_ ? *this : ops::cast(*this, dtype);
}

Tensor Tensor::to(const Device& device) const {
  require_defined("to");
  return device == this->device() ? *this : ops::to_device(*this, device);
}

Tensor Tensor::contiguous() const {
  require_defined("contiguous");
  return is_contiguous() ? *this : ops::copy(*this);
}

Tensor Tensor::clone() const {
  require_defined("clone");
  return ops::copy(*this);
}

Tensor Tensor::copy_(const Tensor& src) const {
  require_defined("copy_");
  ops::detail::copy_into("copy_", *this, src);
  return *this;
}

Tensor Tensor::fill_(Scalar value) const {
  require_defined("fill_");
  ops::detail::fill_into("fill_", *this, value);
  return *this;
}

Tensor Tensor::zero_() const {
  require_defined("zero_");
  ops::detail::fill_into("zero_", *this, 0);
  return *this;
}

Tensor Tensor::view(const Shape& shape) const {
  require_defined("view");
  const Shape target = infer_shape(shape, numel(), "view");
  const auto st = view_strides(shape_, strides_, target);
  if (!st)
    throw InvalidArgument("view", "view: a tensor of shape " + to_string(shape_) +
                                      " with strides " + to_string(strides_) +
                                      " cannot be viewed as " + to_string(target) +
                                      " without a copy; use reshape().");
  return Tensor(storage_, offset_, target, *st, dtype_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  require_defined("reshape");
  const Shape target = infer_shape(shape, numel(), "reshape");
  if (const auto st = view_strides(shape_, strides_, target))
    return Tensor(storage_, offset_, target, *st, dtype_);
  return contiguous().view(target);
}

Tensor Tensor::expand(const Shape& shape) const {
  require_defined("expand");
  // -1 keeps the existing size, as in PyTorch.
  Shape target = shape;
  const int lead = target.size() - dim();
  for (int i = 0; i < target.size(); ++i)
    if (target[i] == -1) {
      if (i < lead)
        throw InvalidArgument("expand", "expand: -1 is not allowed for a new leading dimension (" +
                                            to_string(shape) + ").");
      target[i] = shape_[i - lead];
    }
  const Strides st = broadcast_strides(shape_, strides_, target, "expand");
  return Tensor(storage_, offset_, target, st, dtype_);
}

Tensor Tensor::permute(std::span<const std::int64_t> dims) const {
  require_defined("permute");
  if (static_cast<int>(dims.size()) != dim())
    throw InvalidArgument("permute", "permute: " + std::to_string(dims.size()) +
                                         " dims given for a tensor of shape " + to_string(shape_) +
                                         ".");
  Shape s;
  Strides st;
  bool seen[kMaxDims] = {};
  for (std::int64_t d : dims) {
    const int w = wrap_dim(d, dim(), "permute");
    if (seen[w])
      throw InvalidArgument("permute", "permute: dimension " + std::to_string(w) +
                                           " appears twice in the permutation.");
    seen[w] = true;
    s.push_back(shape_[w]);
    st.push_back(strides_[w]);
  }
  return Tensor(storage_, offset_, s, st, dtype_);
}

Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1) const {
  require_defined("transpose");
  if (dim() == 0) return *this;
  const int a = wrap_dim(dim0, dim(), "transpose"), b = wrap_dim(dim1, dim(), "transpose");
  Shape s = shape_;
  Strides st = strides_;
  std::swap(s[a], s[b]);
  std::swap(st[a], st[b]);
  return Tensor(storage_, offset_, s, st, dtype_);
}

Tensor Tensor::slice(std::int64_t d, std::int64_t start, std::int64_t end,
                     std::int64_t step) const {
  require_defined("slice");
  if (dim() == 0) throw InvalidArgument("slice", "slice: a 0-d tensor has no dimension to slice.");
  if (step <= 0)
    throw InvalidArgument("slice",
                          "slice: step must be positive, got " + std::to_string(step) + ".");
  const int w = wrap_dim(d, dim(), "slice");
  const std::int64_t n = shape_[w];
  auto clamp_index = [n](std::int64_t i) {
    return std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n);
  };
  const std::int64_t b = clamp_index(start), e = std::max(clamp_index(end), b);
  Shape s = shape_;
  Strides st = strides_;
  // Neither may wrap for a step near 2^63 (e - b + step - 1 did): such a slice keeps at most
  // one element, whose dim's stride is never walked.
  s[w] = e == b ? 0 : 1 + (e - b - 1) / step;
  if (__builtin_mul_overflow(strides_[w], step, &st[w])) st[w] = strides_[w];
  return Tensor(storage_, offset_ + b * strides_[w], s, st, dtype_);
}

Tensor Tensor::narrow(std::int64_t d, std::int64_t start, std::int64_t length) const {
  require_defined("narrow");
  if (dim() == 0)
    throw InvalidArgument("narrow", "narrow: a 0-d tensor has no dimension to narrow.");
  const int w = wrap_dim(d, dim(), "narrow");
  const std::int64_t n = shape_[w];
  const std::int64_t b = start < 0 ? start + n : start;
  if (b < 0 || b > n || length < 0 || length > n - b)  // b + length wrapped near 2^63
    throw InvalidArgument("narrow", "narrow: [" + std::to_string(start) + ", " +
                                        std::to_string(start) + " + " + std::to_string(length) +
                                        ") is out of range for dimension " + std::to_string(w) +
                                        " of size " + std::to_string(n) + ".");
  return slice(w, b, b + length);
}

Tensor Tensor::squeeze() const {
  require_defined("squeeze");
  Shape s;
  Strides st;
  for (int i = 0; i < dim(); ++i)
    if (shape_[i] != 1) s.push_back(shape_[i]), st.push_back(strides_[i]);
  return Tensor(storage_, offset_, s, st, dtype_);
}

Tensor Tensor::squeeze(std::int64_t d) const {
  require_defined("squeeze");
  if (dim() == 0) return *this;
  const int w = wrap_dim(d, dim(), "squeeze");
  if (shape_[w] != 1) return *this;  // PyTorch: squeezing a non-1 dim is a no-op
  Shape s = shape_;
  Strides st = strides_;
  s.erase(w);
  st.erase(w);
  return Tensor(storage_, offset_, s, st, dtype_);
}

Tensor Tensor::unsqueeze(std::int64_t d) const {
  require_defined("unsqueeze");
  const int w = wrap_dim(d, dim() + 1, "unsqueeze");
  Shape s = shape_;
  Strides st = strides_;
  const std::int64_t stride = w < dim() ? shape_[w] * strides_[w] : 1;
  s.insert(w, 1);
  st.insert(w, stride);
  return Tensor(storage_, offset_, s, st, dtype_);
}

Tensor operator+(const Tensor& a, const Tensor& b) {
  return ops::add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return ops::sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return ops::mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return ops::div(a, b);
}
Tensor operator+(const Tensor& a, Scalar b) {
  return ops::add(a, b);
}
Tensor operator-(const Tensor& a, Scalar b) {
  return ops::sub(a, b);
}
Tensor operator*(const Tensor& a, Scalar b) {
  return ops::mul(a, b);
}
Tensor operator/(const Tensor& a, Scalar b) {
  return ops::div(a, b);
}
Tensor operator+(Scalar a, const Tensor& b) {
  return ops::add(a, b);
}
Tensor operator-(Scalar a, const Tensor& b) {
  return ops::sub(a, b);
}
Tensor operator*(Scalar a, const Tensor& b) {
  return ops::mul(a, b);
}
Tensor operator/(Scalar a, const Tensor& b) {
  return ops::div(a, b);
}
Tensor operator-(const Tensor& a) {
  return ops::neg(a);
}

}  // namespace nbx
