#include "backends/host/host_values.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/errors.hpp"
#include "core/half.hpp"

namespace nbx::host {
namespace {

// The double nearest x toward zero, with its last bit set when inexact ("round to odd"):
// rounding that double again to a format of fewer than 52 fraction bits gives the correctly
// rounded result of x.
double round_to_odd_double(long double x) {
  double d = static_cast<double>(x);
  if (static_cast<long double>(d) == x) return d;
  if (std::fabs(static_cast<long double>(d)) > std::fabs(x)) d = std::nextafter(d, 0.0);
  std::uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  bits |= 1;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

}  // namespace

Value load(const std::byte* base, DType t, std::int64_t index) {
  const std::byte* p = base + index * static_cast<std::int64_t>(dtype_size(t));
  auto get = [p](auto tag) {
    decltype(tag) x;
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (t) {
    case DType::kBool:
      return from_int(get(std::uint8_t{}) != 0);
    case DType::kInt8:
      return from_int(get(std::int8_t{}));
    case DType::kUInt8:
      return from_int(get(std::uint8_t{}));
    case DType::kInt16:
      return from_int(get(std::int16_t{}));
    case DType::kInt32:
      return from_int(get(std::int32_t{}));
    case DType::kInt64:
      return from_int(get(std::int64_t{}));
    case DType::kFloat16:
      return from_double(half_bits_to_double(get(std::uint16_t{})));
    case DType::kBFloat16:
      return from_double(bf16_bits_to_double(get(std::uint16_t{})));
    case DType::kFloat32:
      return from_double(get(float{}));
    case DType::kFloat64:
      return from_double(get(double{}));
  }
  throw Internal("elementwise: unknown dtype in a load.");
}

void store(std::byte* base, DType t, std::int64_t index, const Value& v) {
  std::byte* p = base + index * static_cast<std::int64_t>(dtype_size(t));
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  if (t == DType::kBool) return put(static_cast<std::uint8_t>(truthy(v)));
  if (is_floating(t)) {
    // int64 → float goes through long double (64-bit mantissa): one rounding, not two.
    const long double x =
        v.is_float ? static_cast<long double>(v.f) : static_cast<long double>(v.i);
    // For the 16-bit formats the value passes through double, which is exact unless an
    // int64 exceeds 2^53; then round to odd keeps the final rounding correct.
    const double d = v.is_float ? v.f : round_to_odd_double(x);
    switch (t) {
      case DType::kFloat16:
        return put(double_to_half_bits(d));
      case DType::kBFloat16:
        return put(double_to_bf16_bits(d));
      case DType::kFloat32:
        return put(static_cast<float>(x));
      default:
        return put(static_cast<double>(x));
    }
  }
  if (v.is_float) {
    switch (t) {
      case DType::kInt8:
        return put(saturating_cast<std::int8_t>(v.f));
      case DType::kUInt8:
        return put(saturating_cast<std::uint8_t>(v.f));
      case DType::kInt16:
        return put(saturating_cast<std::int16_t>(v.f));
      case DType::kInt32:
        return put(saturating_cast<std::int32_t>(v.f));
      default:
        return put(saturating_cast<std::int64_t>(v.f));
    }
  }
  // Integer narrowing wraps: keep the low bits.
  const auto u = static_cast<std::uint64_t>(v.i);
  switch (t) {
    case DType::kInt8:
      return put(static_cast<std::int8_t>(static_cast<std::uint8_t>(u)));
    case DType::kUInt8:
      return put(static_cast<std::uint8_t>(u));
    case DType::kInt16:
      return put(static_cast<std::int16_t>(static_cast<std::uint16_t>(u)));
    case DType::kInt32:
      return put(static_cast<std::int32_t>(static_cast<std::uint32_t>(u)));
    default:
      return put(v.i);
  }
}

}  // namespace nbx::host
