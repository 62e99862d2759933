// A host scalar: a bool, an integer or a floating number, as a Python number would be.
// It is "weak" in type promotion (an int scalar with a float16 tensor stays float16).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/dtype.hpp"

namespace nbx {

// nbx's float → integer rule (PyTorch leaves it undefined), for the host reference's stores
// (backends/host/host_values.cpp) and Scalar::to_int, as CUDA's saturating conversion gives it:
// truncate toward zero, NaN → 0, saturate out of range. The plain C++ conversion is undefined
// there (UBSan: a NaN or ±inf fill value, 2026-12-07).
template <class I>
I saturating_cast(double v) {
  if (std::isnan(v)) return 0;
  const double t = std::trunc(v);
  if (t <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (t >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(t);
}

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
  // Integer value; a floating scalar by saturating_cast (toward zero, NaN → 0, saturated).
  std::int64_t to_int() const {
    return kind_ == Kind::kFloat ? saturating_cast<std::int64_t>(f_) : i_;
  }
  bool to_bool() const { return kind_ == Kind::kFloat ? f_ != 0 : i_ != 0; }
  std::string str() const;

 private:
  Kind kind_;
  std::int64_t i_;
  double f_;
};

// Whether `s` converts to `dtype` without overflow, by PyTorch's rule for the values that
// fill a tensor (c10::checked_convert: fill, full, masked_fill, linspace's ends). Anything
// converts to bool and a bool to anything. An integer must lie in the dtype's range, except
// that uint8 also takes -255 … -1 (they wrap: 255 … 1); float16 holds at most 65504 in
// magnitude. A floating value must lie in [lowest, max] of the dtype (so -0.5 does not fit
// uint8, 127.5 does not fit int8, 65519 does not fit float16); NaN and ±inf fit only
// floating dtypes.
bool fits_without_overflow(const Scalar& s, DType dtype);

// Throws InvalidArgument naming `op` when `s` does not fit `dtype`: "fill: the value 193
// cannot be converted to int8 without overflow."
void require_fits(std::string_view op, const Scalar& s, DType dtype);

}  // namespace nbx
