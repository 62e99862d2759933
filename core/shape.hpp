// Shapes and strides (up to kMaxDims dimensions), broadcasting and contiguity.
// Strides are in elements, not bytes, and may be 0 (broadcast) but never negative.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>

namespace nbx {

inline constexpr int kMaxDims = 8;

// A small fixed-capacity list of dimension sizes or strides. Value type; cheap to copy.
class Dims {
 public:
  Dims() = default;
  Dims(std::initializer_list<std::int64_t> values);  // throws InvalidArgument past kMaxDims
  explicit Dims(std::span<const std::int64_t> values);

  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::int64_t operator[](int i) const { return values_[static_cast<std::size_t>(i)]; }
  std::int64_t& operator[](int i) { return values_[static_cast<std::size_t>(i)]; }
  void push_back(std::int64_t v);  // throws InvalidArgument past kMaxDims
  void insert(int pos, std::int64_t v);
  void erase(int pos);
  const std::int64_t* begin() const { return values_.data(); }
  const std::int64_t* end() const { return values_.data() + size_; }
  std::span<const std::int64_t> span() const { return {values_.data(), std::size_t(size_)}; }

  friend bool operator==(const Dims& a, const Dims& b);

 private:
  std::array<std::int64_t, kMaxDims> values_{};
  int size_ = 0;
};

using Shape = Dims;
using Strides = Dims;

// "[2, 3, 4]"
std::string to_string(const Dims& d);
// Product of sizes; 1 for a 0-d shape, 0 when any size is 0. Every tensor's shape passed
// checked_numel when the tensor was made, so this product does not wrap for one.
std::int64_t numel(const Shape& s);
// The product of sizes, or nullopt when a size is negative or it passes 2^63 - 1 (a size of
// 0 anywhere makes it 0, whatever the others).
std::optional<std::int64_t> checked_numel(const Shape& s);
Strides contiguous_strides(const Shape& s);
// True when the view walks memory in row-major order without gaps. Size-1 dims may carry
// any stride; a zero-size view is contiguous.
bool is_contiguous(const Shape& s, const Strides& st);
// NumPy/PyTorch broadcasting. Throws InvalidArgument naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");
// Strides that read a tensor of shape `from` (strides `st`) as shape `to` (stride 0 on
// broadcast dims). `to` must be a broadcast of `from`; throws InvalidArgument otherwise.
Strides broadcast_strides(const Shape& from, const Strides& st, const Shape& to,
                          const char* op = "expand");
// Wraps a possibly negative dim into [0, ndim). Throws InvalidArgument naming `op`.
int wrap_dim(std::int64_t dim, int ndim, const char* op);

// How far a strided view reaches, in elements from the start of its memory: from `offset` to
// offset + Σ (size - 1) · stride, computed without overflow. The one computation behind every
// check of a view against its memory — the Tensor constructor, launch validation
// (core/families), the Vulkan launchers' 32-bit limits — so none can wrap on its own (strides
// of 2^62 wrapped a launcher's bounds check into garbage results; an offset near 2^62 wrapped
// (last + 1) · itemsize below a buffer's end). Value type, no exceptions: each caller words
// its own error.
class ViewExtent {
 public:
  enum class Fault { kNone, kNegativeOffset, kNegativeSize, kNegativeStride, kOverflow };

  explicit ViewExtent(std::int64_t offset) : offset_(offset), last_(offset) {}
  ViewExtent(std::int64_t offset, const Shape& shape, const Strides& strides);
  // Adds one dim; the first fault found is kept.
  ViewExtent& dim(std::int64_t size, std::int64_t stride);
  ViewExtent& dims(int n, const std::int64_t* sizes, const std::int64_t* strides);

  // Negative offsets, sizes and strides are faults even in an empty view (PyTorch's
  // as_strided refuses negative strides too); overflow only where an element is touched.
  Fault fault() const;
  bool ok() const { return fault() == Fault::kNone; }
  // What the fault is, as a phrase: "a negative stride (-3) in dim 1", "" for none.
  std::string fault_text() const;
  bool empty() const { return empty_; }  // a size is 0: no element is ever touched
  std::int64_t offset() const { return offset_; }
  // The furthest element; meaningful when ok() and !empty().
  std::int64_t last() const { return last_; }
  // Whether every element lies within `bytes` bytes of `itemsize`-byte elements, compared in
  // elements so that (last + 1) · itemsize cannot wrap. An empty view fits any memory, a
  // faulty one none.
  bool fits(std::uint64_t bytes, std::size_t itemsize) const;
  // The bytes from element 0 to the end of the last element, (last + 1) · itemsize; 0 for an
  // empty view; nullopt for a faulty one or one reaching past 2^63 bytes.
  std::optional<std::int64_t> end_bytes(std::size_t itemsize) const;

 private:
  std::int64_t offset_;
  std::int64_t last_;
  int dims_ = 0;
  bool empty_ = false;
  bool overflow_ = false;
  Fault negative_ = Fault::kNone;  // the first negative offset, size or stride
  int negative_dim_ = -1;
  std::int64_t negative_value_ = 0;
};

}  // namespace nbx
