// Float64 special functions the C++ standard library lacks (digamma, erfinv, sin(pi x)),
// and the forms of logit and sinc the reference uses. Each is accurate to a few ulps of
// float64 where its result is not near a zero of the function, so the reference can judge
// float64 devices at rtol 1e-13. PyTorch's edge values (digamma(+-0), erfinv(+-1) …).
#pragma once

namespace nbx::host {

// sin(pi x) with the argument reduced exactly (x mod 2 is exact in floating point), so
// sin(pi n) is 0 and large |x| loses nothing; NaN for NaN and +-inf.
double sin_pi(double x);

// sin(pi x) / (pi x), 1 at 0.
double sinc(double x);

// psi(x) = d/dx ln Gamma(x): -inf at +0, +inf at -0, NaN at negative integers and -inf.
double digamma(double x);

// The inverse of erf on [-1, 1]: +-inf at +-1, NaN outside. Giles' single-precision
// approximation refined by Newton steps (on erfc above 0.5, where erf(y) rounds near 1).
double erfinv(double x);

// log(x / (1 - x)) after clamping x to [lo, hi] (PyTorch's order: below lo gives lo, above
// hi gives hi, NaN stays) when `clamp`. Near 1/2 through log1p, which keeps the relative
// precision log loses there.
double logit(double x, double lo, double hi, bool clamp);

}  // namespace nbx::host
