// Seeded input values: ordinary numbers of mixed magnitude, the values ops treat specially,
// and each dtype's extremes.
#include "tests/conformance/conformance_values.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/half.hpp"

namespace nbx::conformance {
namespace {

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct IntRange {
  std::int64_t lo, hi;
};
IntRange int_range(DType t) {
  switch (t) {
    case DType::kBool:
      return {0, 1};
    case DType::kInt8:
      return {INT8_MIN, INT8_MAX};
    case DType::kUInt8:
      return {0, UINT8_MAX};
    case DType::kInt16:
      return {INT16_MIN, INT16_MAX};
    case DType::kInt32:
      return {INT32_MIN, INT32_MAX};
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

double largest_finite(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 65504.0;
    case DType::kBFloat16:
      return 3.3895313892515355e38;
    case DType::kFloat32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

double smallest_normal(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 6.103515625e-05;
    case DType::kFloat64:
      return std::numeric_limits<double>::min();
    default:
      return std::numeric_limits<float>::min();  // float32 and bfloat16 share the exponent
  }
}

// Rounds to the dtype and back, so a value is exactly what the tensor will hold.
double round_to(DType t, double v) {
  switch (t) {
    case DType::kFloat16:
      return half_bits_to_double(double_to_half_bits(v));
    case DType::kBFloat16:
      return bf16_bits_to_double(double_to_bf16_bits(v));
    case DType::kFloat32:
      return static_cast<float>(v);
    default:
      return v;
  }
}

// The domains of issue 11's unary ops, where their hard regions are. Exponents stay inside
// the dtype's normal range (no subnormals are drawn, as for every kind).
double draw_special_domain(Rng& rng, DType t, ValueKind kind) {
  const double sign = rng.below(2) ? -1.0 : 1.0;
  const std::int64_t pick = rng.below(100);
  const int min_exp = t == DType::kFloat16 ? -14 : -30;
  if (pick < 10) {
    const double specials[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 1.0, -1.0, 0.5, -0.5};
    return specials[rng.below(std::size(specials))];
  }
  if (kind == ValueKind::kUnitInterval) {
    if (pick < 35) return sign * (1.0 - std::ldexp(1.0, -int(rng.range(1, 30))));
    if (pick < 42) return sign * (1.0 + std::ldexp(1.0, -int(rng.range(1, 10))));
    if (pick < 55) return sign * std::ldexp(1.0 + rng.uniform(), int(rng.range(min_exp, -1)));
    return rng.uniform() * 2 - 1;
  }
  if (pick < 30) return double(rng.range(-6, 6)) + sign * std::ldexp(1.0, -int(rng.range(1, 30)));
  if (pick < 40) return sign * double(rng.range(0, 12)) * 0.5;
  const int max_exp = t == DType::kFloat16 ? 15 : 30;
  return sign * std::ldexp(1.0 + rng.uniform(), int(rng.range(min_exp, max_exp)));
}

double draw_float(Rng& rng, DType t, ValueKind kind) {
  const double sign = rng.below(2) ? -1.0 : 1.0;
  const std::int64_t pick = rng.below(100);
  if (kind == ValueKind::kExponent) {
    if (pick < 10)
      return std::array<double, 5>{0.0, -0.0, NAN, INFINITY, -INFINITY}[std::size_t(rng.below(5))];
    if (pick < 50) return double(rng.range(-5, 5));  // integral: odd/even and sign rules
    return (rng.uniform() * 10 - 5);
  }
  if (kind == ValueKind::kWideMagnitude || kind == ValueKind::kUnitInterval)
    return draw_special_domain(rng, t, kind);
  if (kind == ValueKind::kWeight) {
    if (pick < 10) return std::array<double, 4>{0.0, 1.0, 0.5, NAN}[std::size_t(rng.below(4))];
    return rng.uniform() * 2 - 0.5;
  }
  if (pick < 15) {
    const double specials[] = {0.0,
                               -0.0,
                               NAN,
                               INFINITY,
                               -INFINITY,
                               1.0,
                               -1.0,
                               largest_finite(t),
                               -largest_finite(t),
                               smallest_normal(t)};
    return specials[rng.below(std::size(specials))];
  }
  // Exact halves and small integers: rounding ties, floor/ceil edges, integral pow.
  if (pick < 30) return sign * double(rng.range(0, 12)) * 0.5;
  return sign * std::ldexp(1.0 + rng.uniform(), int(rng.range(-8, 8)));
}

std::int64_t draw_int(Rng& rng, DType t, ValueKind kind) {
  const IntRange r = int_range(t);
  if (t == DType::kBool || kind == ValueKind::kCondition) return rng.below(2);
  const int bits = static_cast<int>(dtype_size(t)) * 8;
  switch (kind) {
    case ValueKind::kExponent:
      return rng.range(std::max<std::int64_t>(r.lo, -2), 10);
    case ValueKind::kShiftAmount:
      return rng.below(10) == 0 ? rng.range(std::max<std::int64_t>(r.lo, -1), bits + 1)
                                : rng.range(0, bits - 1);
    default:
      break;
  }
  const std::int64_t pick = rng.below(100);
  std::int64_t v;
  if (pick < 20) {
    const std::int64_t extremes[] = {r.lo, r.hi, r.lo + 1, r.hi - 1, 0, 1, -1};
    v = extremes[rng.below(std::size(extremes))];
  } else if (pick < 45) {
    const auto u = rng.next();  // the full range, uniformly
    v = t == DType::kInt64 ? static_cast<std::int64_t>(u)
                           : r.lo + static_cast<std::int64_t>(u % std::uint64_t(r.hi - r.lo + 1));
  } else {
    v = rng.range(-40, 40);
  }
  v = std::clamp(v, r.lo, r.hi);
  if (kind == ValueKind::kDivisor && v == 0) v = 1 + rng.below(3);
  return v;
}

template <class T>
void put(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

void encode(std::byte* p, DType t, double f, std::int64_t i) {
  switch (t) {
    case DType::kBool:
      return put<std::uint8_t>(p, i != 0);
    case DType::kInt8:
      return put(p, static_cast<std::int8_t>(i));
    case DType::kUInt8:
      return put(p, static_cast<std::uint8_t>(i));
    case DType::kInt16:
      return put(p, static_cast<std::int16_t>(i));
    case DType::kInt32:
      return put(p, static_cast<std::int32_t>(i));
    case DType::kInt64:
      return put(p, i);
    case DType::kFloat16:
      return put(p, double_to_half_bits(f));
    case DType::kBFloat16:
      return put(p, double_to_bf16_bits(f));
    case DType::kFloat32:
      return put(p, static_cast<float>(f));
    case DType::kFloat64:
      return put(p, f);
  }
}

}  // namespace

Rng Rng::for_case(std::uint64_t seed, std::string_view op, DType dtype, int extra, int case_index) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the op name
  for (char c : op) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return Rng(mix(seed ^ mix(h ^ mix(std::uint64_t(dtype) * 64 + std::uint64_t(extra + 1) * 4096 +
                                    std::uint64_t(case_index)))));
}

std::uint64_t Rng::next() {
  state_ += 0x9e3779b97f4a7c15ull;
  return mix(state_);
}
double Rng::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}
std::int64_t Rng::below(std::int64_t n) {
  return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n));
}
std::int64_t Rng::range(std::int64_t lo, std::int64_t hi) {
  return lo + below(hi - lo + 1);
}

std::vector<std::byte> draw_values(Rng& rng, DType dtype, ValueKind kind, std::int64_t count) {
  const DType t = kind == ValueKind::kCondition ? DType::kBool : dtype;
  std::vector<std::byte> out(static_cast<std::size_t>(count) * dtype_size(t));
  for (std::int64_t k = 0; k < count; ++k) {
    std::byte* p = out.data() + k * std::int64_t(dtype_size(t));
    if (is_floating(t)) {
      encode(p, t, draw_float(rng, t, kind), 0);
    } else {
      encode(p, t, 0, draw_int(rng, t, kind));
    }
  }
  if (kind == ValueKind::kDivisorWithZero && count > 0 && !is_floating(t))
    for (std::int64_t k = 0; k < count; k += 7) encode(out.data() + k * dtype_size(t), t, 0, 0);
  return out;
}

Scalar draw_scalar(Rng& rng, DType dtype, ValueKind kind) {
  if (dtype == DType::kBool) return Scalar(rng.below(2) == 1);
  if (is_floating(dtype)) return Scalar(round_to(dtype, draw_float(rng, dtype, kind)));
  // A negative integer exponent with integer tensors is refused by pow (as in PyTorch).
  if (kind == ValueKind::kExponent) return Scalar(rng.range(0, 10));
  return Scalar(
      draw_int(rng, dtype, kind == ValueKind::kDivisorWithZero ? ValueKind::kDivisor : kind));
}

}  // namespace nbx::conformance
