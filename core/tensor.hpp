// Tensor: shared storage + element offset + shape + strides + dtype. Views share storage;
// an op returns a new tensor and never writes into its inputs, except the in-place forms
// (copy_, fill_, zero_ here; ops::add_ … in core/ops/inplace.hpp) and the out= forms, whose
// writes every view of the storage sees. Zero-size and 0-d tensors are first-class. Not thread-safe
// per object; distinct tensors may be used from distinct threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/dtype.hpp"
#include "core/dtype_traits.hpp"
#include "core/errors.hpp"
#include "core/scalar.hpp"
#include "core/shape.hpp"
#include "core/storage.hpp"

struct DLManagedTensor;  // dlpack/dlpack.h

namespace nbx {

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false
  Tensor(std::shared_ptr<Storage> storage, std::int64_t offset, Shape shape, Strides strides,
         DType dtype);

  // ---- creation (all throw OutOfMemory, InvalidArgument for negative sizes) ----
  static Tensor empty(const Shape& shape, DType dtype, const Device& device = host_device());
  static Tensor zeros(const Shape& shape, DType dtype, const Device& device = host_device());
  static Tensor ones(const Shape& shape, DType dtype, const Device& device = host_device());
  static Tensor full(const Shape& shape, Scalar value, DType dtype,
                     const Device& device = host_device());
  // [start, end) by step, as torch.arange: the length is ceil((end - start) / step).
  static Tensor arange(Scalar start, Scalar end, Scalar step, DType dtype,
                       const Device& device = host_device());
  // Copies `data` (row-major, numel(shape) elements) into a new tensor.
  static Tensor from_host(const void* data, const Shape& shape, DType dtype,
                          const Device& device = host_device());
  template <class T>
  static Tensor from_host(std::span<const T> data, const Shape& shape,
                          const Device& device = host_device()) {
    check_host_count(data.size(), shape);
    return from_host(data.data(), shape, dtype_of<T>, device);
  }
  template <class T>
  static Tensor from_host(const std::vector<T>& data, const Shape& shape,
                          const Device& device = host_device()) {
    if constexpr (std::is_same_v<T, bool>) {
      const std::vector<std::uint8_t> bytes(data.begin(), data.end());
      check_host_count(bytes.size(), shape);
      return from_host(bytes.data(), shape, DType::kBool, device);
    } else {
      return from_host(std::span<const T>(data), shape, device);
    }
  }

  // ---- reading back ----
  // Row-major copy of the elements; T must be the tensor's element type (InvalidArgument
  // otherwise: convert with .to(dtype) first). Synchronises the device.
  template <class T>
  std::vector<T> to_host() const {
    check_host_type(dtype_of<T>);
    if constexpr (std::is_same_v<T, bool>) {
      // std::vector<bool> packs bits: read bytes, then convert.
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(numel()));
      copy_to_host(bytes.data());
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> out(static_cast<std::size_t>(numel()));
      copy_to_host(out.data());
      return out;
    }
  }
  // Copies numel() * itemsize bytes, row-major, into `dst`.
  void copy_to_host(void* dst) const;
  // The value of a one-element tensor. Throws InvalidArgument otherwise.
  Scalar item() const;

  // ---- properties ----
  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  std::int64_t size(std::int64_t dim) const;
  const Strides& strides() const { return strides_; }
  std::int64_t offset() const { return offset_; }
  int dim() const { return shape_.size(); }
  // The element count; throws InvalidArgument for an undefined tensor (it has no elements to
  // count: 1, the product of its empty shape, read as a scalar's).
  std::int64_t numel() const {
    require_defined("numel");
    return nbx::numel(shape_);
  }
  DType dtype() const { return dtype_; }
  std::size_t itemsize() const { return dtype_size(dtype_); }
  const Device& device() const;
  bool is_contiguous() const { return nbx::is_contiguous(shape_, strides_); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  std::string str()
      const;  // "Tensor(float32, [2, 3], cuda:0)"; the values: nbx::format (format.hpp)

  // ---- sharing (DLPack: core/dlpack.hpp) ----
  // A DLPack view of this tensor's memory, without a copy: data points at the first element
  // (byte_offset 0), strides in elements, bool as kDLBool. The caller owns the result and
  // calls its deleter once, which releases this storage. Synchronises the device first, so
  // the consumer sees every write issued before. Throws Unsupported (capability "dlpack")
  // for a Vulkan tensor: copy it to the host first.
  DLManagedTensor* to_dlpack() const;

  // ---- conversions (new storage unless nothing changes) ----
  Tensor to(DType dtype) const;           // returns *this when already that dtype
  Tensor to(const Device& device) const;  // returns *this when already there
  Tensor contiguous() const;              // returns *this when already contiguous
  Tensor clone() const;                   // always a fresh contiguous copy

  // ---- writing in place (PyTorch's; each returns a handle to *this: by value, so that
  // `auto& r = x.slice(…).copy_(src)` cannot dangle) ----
  // Copies `src` into this view (a slice, a transpose, any strides): src broadcasts to this
  // shape (never the other way), is cast to this dtype (as cast(): truncation toward zero,
  // saturation, wrapping) and may live on another device (cast where it is, or on the host,
  // then moved: between two non-host devices through the host). Throws InvalidArgument for
  // an expanded view ("more than one element of the written-to tensor refers to a single
  // memory location"), a src that does not broadcast, and a src partially overlapping this
  // view in memory (both dense); an interleaved strided src is copied first.
  Tensor copy_(const Tensor& src) const;
  // Every element of this view (expanded ones too) becomes `value`. Throws InvalidArgument
  // for a value the dtype cannot hold ("the value 193 cannot be converted to int8 …").
  Tensor fill_(Scalar value) const;
  Tensor zero_() const;  // fill_(0)

  // ---- views (share storage; throw InvalidArgument with the shapes in the message) ----
  Tensor view(const Shape& shape) const;     // one size may be -1
  Tensor reshape(const Shape& shape) const;  // a view when possible, else a copy
  Tensor expand(const Shape& shape) const;
  Tensor permute(std::span<const std::int64_t> dims) const;
  Tensor permute(std::initializer_list<std::int64_t> dims) const {
    return permute(std::span<const std::int64_t>(dims.begin(), dims.size()));
  }
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  // Elements [start, end) by step along dim; start/end clamp like Python slices.
  Tensor slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  Tensor squeeze() const;
  Tensor squeeze(std::int64_t dim) const;
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor flatten() const { return reshape({-1}); }

 private:
  static void check_host_count(std::size_t count, const Shape& shape);
  void check_host_type(DType requested) const;
  void require_defined(const char* op) const;

  std::shared_ptr<Storage> storage_;
  std::int64_t offset_ = 0;
  Shape shape_;
  Strides strides_;
  DType dtype_ = DType::kFloat32;
};

// Arithmetic operators: the same as nbx::ops::add/sub/mul/div (PyTorch promotion).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);

}  // namespace nbx
