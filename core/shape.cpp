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

}  // namespace nbx
