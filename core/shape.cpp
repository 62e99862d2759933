#include "core/shape.hpp"

#include <algorithm>
#include <string>

#include "core/errors.hpp"

namespace nbx {

Dims::Dims(std::initializer_list<std::int64_t> values) {
  for (std::int64_t v : values) push_back(v);
}

Dims::Dims(std::span<const std::int64_t> values) {
  for (std::int64_t v : values) push_back(v);
}

void Dims::push_back(std::int64_t v) {
  if (size_ >= kMaxDims)
    throw InvalidArgument(
        "shape", "a shape or stride list has at most " + std::to_string(kMaxDims) + " dimensions.");
  values_[static_cast<std::size_t>(size_++)] = v;
}

void Dims::insert(int pos, std::int64_t v) {
  push_back(0);
  for (int i = size_ - 1; i > pos; --i) (*this)[i] = (*this)[i - 1];
  (*this)[pos] = v;
}

void Dims::erase(int pos) {
  for (int i = pos; i + 1 < size_; ++i) (*this)[i] = (*this)[i + 1];
  --size_;
}

bool operator==(const Dims& a, const Dims& b) {
  return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
}

std::string to_string(const Dims& d) {
  std::string s = "[";
  for (int i = 0; i < d.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(d[i]);
  }
  return s + "]";
}

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t v : s) n *= v;
  return n;
}

std::optional<std::int64_t> checked_numel(const Shape& s) {
  bool overflow = false, zero = false;
  std::int64_t n = 1;
  for (std::int64_t v : s) {
    if (v < 0) return std::nullopt;
    zero = zero || v == 0;
    overflow = overflow || __builtin_mul_overflow(n, v, &n);
  }
  if (zero) return 0;
  if (overflow) return std::nullopt;
  return n;
}

Strides contiguous_strides(const Shape& s) {
  Strides st;
  for (int i = 0; i < s.size(); ++i) st.push_back(0);
  std::int64_t step = 1;
  for (int i = s.size() - 1; i >= 0; --i) {
    st[i] = step;
    step *= std::max<std::int64_t>(s[i], 1);
  }
  return st;
}

bool is_contiguous(const Shape& s, const Strides& st) {
  if (numel(s) == 0) return true;
  std::int64_t expected = 1;
  for (int i = s.size() - 1; i >= 0; --i) {
    if (s[i] == 1) continue;
    if (st[i] != expected) return false;
    expected *= s[i];
  }
  return true;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const int n = std::max(a.size(), b.size());
  Shape out;
  for (int i = 0; i < n; ++i) {
    const int ia = i - (n - a.size()), ib = i - (n - b.size());
    const std::int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      throw InvalidArgument(op, std::string(op) + ": shapes " + to_string(a) + " and " +
                                    to_string(b) + " cannot be broadcast together (dimension " +
                                    std::to_string(i) + ": " + std::to_string(da) + " vs " +
                                    std::to_string(db) + ").");
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

Strides broadcast_strides(const Shape& from, const Strides& st, const Shape& to, const char* op) {
  if (from.size() > to.size())
    throw InvalidArgument(op, std::string(op) + ": a tensor of shape " + to_string(from) +
                                  " cannot be expanded to the smaller rank of " + to_string(to) +
                                  ".");
  Strides out;
  const int lead = to.size() - from.size();
  for (int i = 0; i < to.size(); ++i) {
    const int j = i - lead;
    if (j < 0) {
      out.push_back(0);
    } else if (from[j] == to[i]) {
      out.push_back(from[j] == 1 ? 0 : st[j]);
    } else if (from[j] == 1) {
      out.push_back(0);
    } else {
      throw InvalidArgument(op, std::string(op) + ": a tensor of shape " + to_string(from) +
                                    " cannot be expanded to " + to_string(to) + " (dimension " +
                                    std::to_string(i) + ": " + std::to_string(from[j]) + " vs " +
                                    std::to_string(to[i]) + ").");
    }
  }
  return out;
}

int wrap_dim(std::int64_t dim, int ndim, const char* op) {
  const int rank = std::max(ndim, 1);  // a 0-d tensor accepts dim 0 and -1, as in PyTorch
  if (dim < -rank || dim >= rank)
    throw InvalidArgument(op, std::string(op) + ": dimension " + std::to_string(dim) +
                                  " is out of range for a tensor of " + std::to_string(ndim) +
                                  " dimensions (expected [" + std::to_string(-rank) + ", " +
                                  std::to_string(rank - 1) + "]).");
  return static_cast<int>(dim < 0 ? dim + rank : dim);
}

ViewExtent::ViewExtent(std::int64_t offset, const Shape& shape, const Strides& strides)
    : ViewExtent(offset) {
  dims(std::min(shape.size(), strides.size()), shape.begin(), strides.begin());
}

ViewExtent& ViewExtent::dim(std::int64_t size, std::int64_t stride) {
  const int d = dims_++;
  if (negative_ == Fault::kNone && (size < 0 || stride < 0)) {
    negative_ = size < 0 ? Fault::kNegativeSize : Fault::kNegativeStride;
    negative_dim_ = d;
    negative_value_ = size < 0 ? size : stride;
  }
  if (size == 0) empty_ = true;
  if (size <= 0 || overflow_) return *this;
  std::int64_t step = 0;
  overflow_ = __builtin_mul_overflow(size - 1, stride, &step) ||
              __builtin_add_overflow(last_, step, &last_);
  return *this;
}

ViewExtent& ViewExtent::dims(int n, const std::int64_t* sizes, const std::int64_t* strides) {
  for (int d = 0; d < n; ++d) dim(sizes[d], strides[d]);
  return *this;
}

ViewExtent::Fault ViewExtent::fault() const {
  if (offset_ < 0) return Fault::kNegativeOffset;
  if (negative_ != Fault::kNone) return negative_;
  return overflow_ && !empty_ ? Fault::kOverflow : Fault::kNone;
}

std::string ViewExtent::fault_text() const {
  switch (fault()) {
    case Fault::kNone:
      return "";
    case Fault::kNegativeOffset:
      return "a negative offset (" + std::to_string(offset_) + ")";
    case Fault::kNegativeSize:
      return "a negative size (" + std::to_string(negative_value_) + ") in dim " +
             std::to_string(negative_dim_);
    case Fault::kNegativeStride:
      return "a negative stride (" + std::to_string(negative_value_) + ") in dim " +
             std::to_string(negative_dim_);
    case Fault::kOverflow:
      return "an offset and strides whose last element lies past 2^63";
  }
  return "";
}

bool ViewExtent::fits(std::uint64_t bytes, std::size_t itemsize) const {
  if (!ok()) return false;
  if (empty_) return true;
  return itemsize > 0 && std::uint64_t(last_) < bytes / itemsize;
}

std::optional<std::int64_t> ViewExtent::end_bytes(std::size_t itemsize) const {
  if (!ok()) return std::nullopt;
  if (empty_) return 0;
  std::int64_t bytes = 0;
  if (__builtin_add_overflow(last_, 1, &bytes) ||
      __builtin_mul_overflow(bytes, std::int64_t(itemsize), &bytes))
    return std::nullopt;
  return bytes;
}

}  // namespace nbx
