// A host scalar: a bool, an integer or a floating number, as a Python number would be.
// It is "weak" in type promotion (an int scalar with a float16 tensor stays float16).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/dtype.hpp"

namespace nbx {

class Scalar {
 public:
  enum class Kind { kBool, kInt, kFloat };

  Scalar() : kind_(Kind::kInt), i_(0), f_(0) {}
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T v) {  // NOLINT(google-explicit-constructor): scalars convert like numbers do
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::kBool;
      i_ = v;
      f_ = v;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::kInt;
      i_ = static_cast<std::int64_t>(v);
      f_ = static_cast<double>(v);
    } else {
      kind_ = Kind::kFloat;
      f_ = static_cast<double>(v);
      i_ = 0;
    }
  }

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::kFloat; }
  // The dtype this scalar stands for in promotion: bool, int64 or float64 (weak).
  DType promotion_dtype() const {
    return kind_ == Kind::kBool ? DType::kBool
                                : (kind_ == Kind::kInt ? DType::kInt64 : DType::kFloat64);
  }
  double to_double() const { return f_; }
  // Integer value; a floating scalar truncates toward zero.
  std::int64_t to_int() const { return kind_ == Kind::kFloat ? static_cast<std::int64_t>(f_) : i_; }
  bool to_bool() const { return kind_ == Kind::kFloat ? f_ != 0 : i_ != 0; }
  std::string str() const;

 private:
  Kind kind_;
  std::int64_t i_;
  double f_;
};

}  // namespace nbx
