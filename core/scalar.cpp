#include "core/scalar.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/errors.hpp"

namespace nbx {
namespace {

// [lowest, max] of an integer dtype, and of float16/bfloat16/float32 (float64 holds all).
struct Range {
  double lowest;
  double max;
};

Range range_of(DType t) {
  switch (t) {
    case DType::kInt8:
      return {-128.0, 127.0};
    case DType::kUInt8:
      return {0.0, 255.0};
    case DType::kInt16:
      return {-32768.0, 32767.0};
    case DType::kInt32:
      return {-2147483648.0, 2147483647.0};
    case DType::kFloat16:
      return {-65504.0, 65504.0};
    case DType::kBFloat16:
      return {-3.3895313892515355e38, 3.3895313892515355e38};
    case DType::kFloat32:
      return {-static_cast<double>(std::numeric_limits<float>::max()),
              static_cast<double>(std::numeric_limits<float>::max())};
    default:
      return {-std::numeric_limits<double>::max(), std::numeric_limits<double>::max()};
  }
}

}  // namespace

std::string Scalar::str() const {
  switch (kind_) {
    case Kind::kBool:
      return i_ ? "true" : "false";
    case Kind::kInt:
      return std::to_string(i_);
    case Kind::kFloat: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", f_);
      return buf;
    }
  }
  return "?";
}

bool fits_without_overflow(const Scalar& s, DType dtype) {
  if (dtype == DType::kBool || s.kind() == Scalar::Kind::kBool) return true;
  if (s.kind() == Scalar::Kind::kInt) {
    const std::int64_t i = s.to_int();
    if (dtype == DType::kInt64 || dtype == DType::kFloat64) return true;
    // PyTorch lets a negative integer wrap into an unsigned type ("a - b" as "a + 255 * b").
    if (dtype == DType::kUInt8) return i >= -255 && i <= 255;
    const Range r = range_of(dtype);
    return static_cast<double>(i) >= r.lowest && static_cast<double>(i) <= r.max;
  }
  const double f = s.to_double();
  if (is_floating(dtype)) {
    if (std::isnan(f) || std::isinf(f) || dtype == DType::kFloat64) return true;
    const Range r = range_of(dtype);
    return f >= r.lowest && f <= r.max;
  }
  if (!std::isfinite(f)) return false;
  // int64: PyTorch compares with 2^63 - 1 rounded to double (2^63) and converts 2^63 itself,
  // which is undefined behaviour; it is refused here.
  if (dtype == DType::kInt64) return f >= -9223372036854775808.0 && f < 9223372036854775808.0;
  const Range r = range_of(dtype);
  return f >= r.lowest && f <= r.max;
}

void require_fits(std::string_view op, const Scalar& s, DType dtype) {
  if (fits_without_overflow(s, dtype)) return;
  const std::string name(op);
  throw InvalidArgument(name, name + ": the value " + s.str() + " cannot be converted to " +
                                  std::string(dtype_name(dtype)) + " without overflow.");
}

}  // namespace nbx
