#include "core/half.hpp"

#include <cmath>

namespace nbx {
namespace {

// A 16-bit binary float with `mant_bits` fraction bits and 15 - mant_bits exponent bits.
struct Format16 {
  int mant_bits;
  int exp_bits() const { return 15 - mant_bits; }
  int bias() const { return (1 << (exp_bits() - 1)) - 1; }
  int max_biased() const { return (1 << exp_bits()) - 1; }
};

constexpr Format16 kHalf{10};
constexpr Format16 kBf16{7};

double decode(std::uint16_t bits, Format16 f) {
  const bool neg = bits & 0x8000;
  const int e = (bits >> f.mant_bits) & f.max_biased();
  const int m = bits & ((1 << f.mant_bits) - 1);
  double v;
  if (e == f.max_biased()) {
    v = m ? NAN : INFINITY;
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias() - f.mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(m | (1 << f.mant_bits)), e - f.bias() - f.mant_bits);
  }
  return neg ? -v : v;
}

std::uint16_t encode(double x, Format16 f) {
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const std::uint16_t inf = static_cast<std::uint16_t>(f.max_biased() << f.mant_bits);
  if (std::isnan(x)) return static_cast<std::uint16_t>(sign | inf | (1 << (f.mant_bits - 1)));
  const double a = std::fabs(x);
  if (std::isinf(a)) return sign | inf;
  const int min_normal_exp = 1 - f.bias();
  if (a < std::ldexp(1.0, min_normal_exp)) {
    // Subnormal: an integer count of the smallest quantum. nearbyint rounds ties to even;
    // a count of 2^mant_bits is exactly the smallest normal, which encodes the same way.
    const double q = std::nearbyint(std::ldexp(a, f.mant_bits - min_normal_exp));
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(q));
  }
  int e;
  const double m = std::frexp(a, &e);                         // a = m * 2^e, m in [0.5, 1)
  double q = std::nearbyint(std::ldexp(m, f.mant_bits + 1));  // in [2^mant, 2^(mant+1)]
  int exp = e - 1;
  if (q == std::ldexp(1.0, f.mant_bits + 1)) {
    q = std::ldexp(1.0, f.mant_bits);
    ++exp;
  }
  const int biased = exp + f.bias();
  if (biased >= f.max_biased()) return sign | inf;
  const int frac = static_cast<int>(q) - (1 << f.mant_bits);
  return static_cast<std::uint16_t>(sign | (biased << f.mant_bits) | frac);
}

}  // namespace

double half_bits_to_double(std::uint16_t bits) {
  return decode(bits, kHalf);
}
double bf16_bits_to_double(std::uint16_t bits) {
  return decode(bits, kBf16);
}
std::uint16_t double_to_half_bits(double x) {
  return encode(x, kHalf);
}
std::uint16_t double_to_bf16_bits(double x) {
  return encode(x, kBf16);
}

}  // namespace nbx
