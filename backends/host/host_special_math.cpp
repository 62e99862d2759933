// Float64 special functions of the reference backend (see the header).
#include "backends/host/host_special_math.hpp"

#include <cmath>

namespace nbx::host {
namespace {

constexpr double kPi = 3.14159265358979323846;

// pi / tan(pi x): the reflection term of digamma, with tan's argument reduced exactly.
double pi_over_tan_pi(double x) {
  const double r = x - std::nearbyint(x);  // exact, |r| <= 1/2 (tan has period 1)
  return kPi / std::tan(kPi * r);
}

}  // namespace

double sin_pi(double x) {
  if (!std::isfinite(x)) return NAN;
  double r = std::remainder(x, 2.0);  // exact, in [-1, 1]
  // sin(pi r) = sin(pi (+-1 - r)); the difference is exact and at most 1/2 in magnitude, so
  // pi * r carries no absolute error larger than its own rounding.
  if (std::fabs(r) > 0.5) r = std::copysign(1.0, r) - r;
  return std::sin(kPi * r);
}

double sinc(double x) {
  if (x == 0) return 1;
  if (std::isinf(x)) return NAN;
  return sin_pi(x) / (kPi * x);
}

double digamma(double x) {
  if (x == 0) return std::copysign(INFINITY, -x);
  if (std::isnan(x) || x == INFINITY) return x;
  double result = 0;
  if (x < 0) {
    if (x == std::trunc(x)) return NAN;  // the poles, -inf included
    // psi(x) = psi(1 - x) - pi / tan(pi x).
    result = -pi_over_tan_pi(x);
    x = 1 - x;
  }
  // Up to x >= 10 by psi(x) = psi(x + 1) - 1/x, then the asymptotic series: its terms at
  // x = 10 fall below 1e-17 by the x^-14 one.
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  const double z = 1 / (x * x);
  // Bernoulli numbers B_2k / (2k): 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12.
  const double series =
      z * (1.0 / 12 -
           z * (1.0 / 120 -
                z * (1.0 / 252 -
                     z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))));
  return result + std::log(x) - 0.5 / x - series;
}

double erfinv(double x) {
  if (std::isnan(x) || std::fabs(x) > 1) return NAN;
  if (std::fabs(x) == 1) return std::copysign(INFINITY, x);
  if (x == 0) return x;
  const double a = std::fabs(x);
  // Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision.
  double w = -std::log((1 - a) * (1 + a)), p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double y = p * a;
  // Newton on erf(y) = a (quadratic: ~3e-7 -> ~1e-13 -> exact). Above 1/2 the residual
  // erf(y) - a is taken as (1 - a) - erfc(y): 1 - a is exact there and erfc keeps its
  // relative precision, where erf(y) near 1 has rounded away what the step needs.
  for (int step = 0; step < 3; ++step) {
    const double residual = a > 0.5 ? (1 - a) - std::erfc(y) : std::erf(y) - a;
    y -= residual / (1.1283791670955126 * std::exp(-y * y));  // erf'(y) = 2/sqrt(pi) e^-y^2
  }
  return std::copysign(y, x);
}

double logit(double x, double lo, double hi, bool clamp) {
  if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
  // 2x - 1 and, above 1/2, 1 - x are exact: the quotient carries one rounding.
  if (x >= 0.25 && x <= 0.75) return std::log1p((2 * x - 1) / (1 - x));
  return std::log(x / (1 - x));
}

}  // namespace nbx::host
