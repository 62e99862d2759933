#include "backends/host/host_binary_math.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

#include "core/half.hpp"

namespace nbx::host {
namespace {

// One step of a sign-magnitude bit pattern toward y's, for any IEEE width: moving away from
// zero adds one to the magnitude, toward zero subtracts one.
template <class U>
U step_bits(U x, U y, U sign) {
  const U mx = x & U(~sign), my = y & U(~sign);
  if (x == y || (mx == 0 && my == 0)) return y;
  if (mx == 0) return U((y & sign) | 1u);
  const bool away = (x & sign) == (y & sign) && my > mx;
  return away ? U(x + 1u) : U(x - 1u);
}

double round_to_storage(DType storage, double v) {
  if (storage == DType::kFloat16) return half_bits_to_double(double_to_half_bits(v));
  if (storage == DType::kBFloat16) return bf16_bits_to_double(double_to_bf16_bits(v));
  return v;
}

template <class T>
bool isclose_steps(DType storage, T a, T b, T rtol, T atol, bool equal_nan) {
  if (a == b) return true;
  if (equal_nan && std::isnan(a) && std::isnan(b)) return true;
  if (rtol == 0 && atol == 0) return false;
  const auto r = [storage](T v) { return T(round_to_storage(storage, double(v))); };
  const T allowed = r(atol + std::fabs(r(rtol * b)));
  const T actual = std::fabs(r(a - b));
  return std::isfinite(actual) && actual <= allowed;
}

}  // namespace

double nextafter_in(DType t, double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return NAN;
  switch (t) {
    case DType::kFloat16:
      return half_bits_to_double(step_bits<std::uint16_t>(
          double_to_half_bits(x), double_to_half_bits(y), std::uint16_t(0x8000u)));
    case DType::kBFloat16:
      return bf16_bits_to_double(step_bits<std::uint16_t>(
          double_to_bf16_bits(x), double_to_bf16_bits(y), std::uint16_t(0x8000u)));
    case DType::kFloat32:
      return std::nextafter(static_cast<float>(x), static_cast<float>(y));
    default:
      return std::nextafter(x, y);
  }
}

bool isclose_in(DType compute, DType storage, double a, double b, double rtol, double atol,
                bool equal_nan) {
  if (compute == DType::kFloat64)
    return isclose_steps<double>(storage, a, b, rtol, atol, equal_nan);
  return isclose_steps<float>(storage, float(a), float(b), float(rtol), float(atol), equal_nan);
}

}  // namespace nbx::host
