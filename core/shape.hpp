// Shapes and strides (up to kMaxDims dimensions), broadcasting and contiguity.
// Strides are in elements, not bytes, and may be 0 (broadcast) but never negative.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
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
// Product of sizes; 1 for a 0-d shape, 0 when any size is 0.
std::int64_t numel(const Shape& s);
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

}  // namespace nbx
