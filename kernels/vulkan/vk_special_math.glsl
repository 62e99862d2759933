// Float32 functions of issue 11's unary ops (included by vk_elementwise_ops.glsl for the
// float32 class, after vk_math.glsl). Built from vk_math.glsl's exp/log/log1p/expm1/erf and
// its sin/cos polynomials, in float32 only (no float64 on the path), with the stable form
// of each: expm1/log1p near 0, the fdlibm forms of asinh/acosh/atanh, reflection and a
// series about 2 for lgamma, exact argument reduction for sin(pi x). `precise` keeps drivers
// from re-associating the exact steps (Dekker's split, x - 2 round(x / 2)).

const float kPiF = 3.14159265358979323846;
const float kLn2F = 0.693147180559945309;

// PyTorch's sign, (0 < x) - (x < 0): +0 for +-0 and NaN. In integers: llvmpipe folds a
// float select chain (even of constants written as bits) into its fsign, which gives -0.
float nbx_sign_of(float x) { return float(int(x > 0.0) - int(x < 0.0)); }

float nbx_log10(float x) {
  if (isnan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return -kInf;
  if (isinf(x)) return x;
  float e;
  float lm = nbx_log_reduce(x, e);
  precise float v = e * 0.301029995663981195 + lm * 0.434294481903251828;
  return v;
}

float nbx_atan(float x) {
  float v = nbx_atan_pos(abs(x));
  return sign_bit(x) ? -v : v;
}

// Cephes asinf: odd polynomial below 1/2, asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2)) above,
// where 1 - a is exact (about 2.5e-7 relative).
float nbx_asin(float x) {
  float a = abs(x);
  if (isnan(x) || a > 1.0) return kNaN;
  bool folded = a > 0.5;
  float z = folded ? 0.5 * (1.0 - a) : a * a;
  float s = folded ? sqrt(z) : a;
  float p = (((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z +
             7.4953002686e-2) * z + 1.6666752422e-1;
  float r = s + s * z * p;
  if (folded) r = 1.57079632679489662 - 2.0 * r;
  return sign_bit(x) ? -r : r;
}

// acos through asin of the half-angle near +-1, so acos(1 - d) keeps its relative precision.
float nbx_acos(float x) {
  if (isnan(x) || abs(x) > 1.0) return kNaN;
  if (x < -0.5) return kPiF - 2.0 * nbx_asin(sqrt(0.5 * (1.0 + x)));
  if (x > 0.5) return 2.0 * nbx_asin(sqrt(0.5 * (1.0 - x)));
  return 1.57079632679489662 - nbx_asin(x);
}

// Beyond |x| = 9, e^-|x| is below float32's precision of e^|x|: e^(|x|/2) squared, so
// sinh/cosh near 89 (e^89 overflows, sinh(89) does not) stay finite. `precise`: NVIDIA's
// driver re-associated (0.5 w) w into 0.5 (w w), which overflows (H200, 2026-12-02).
float nbx_exp_half_squared(float a) {
  float w = nbx_exp(0.5 * a);
  precise float half_w = 0.5 * w;
  precise float v = half_w * w;
  return v;
}

float nbx_sinh(float x) {
  if (isnan(x)) return x;
  float a = abs(x), v;
  if (a > 9.0) {
    v = nbx_exp_half_squared(a);
  } else {
    float t = nbx_expm1(a);  // (e^a - e^-a) / 2 = (t + t / (t + 1)) / 2, no cancellation
    v = 0.5 * (t + t / (t + 1.0));
  }
  return sign_bit(x) ? -v : v;
}

float nbx_cosh(float x) {
  if (isnan(x)) return x;
  float a = abs(x);
  if (a > 9.0) return nbx_exp_half_squared(a);
  float e = nbx_exp(a);
  return 0.5 * (e + 1.0 / e);
}

float nbx_asinh(float x) {
  if (isnan(x) || isinf(x)) return x;
  float a = abs(x), v;
  if (a > 4096.0) {
    v = nbx_log(a) + kLn2F;  // log(2a): 1 / (4 a^2) is below float32's precision
  } else if (a > 2.0) {
    v = nbx_log(2.0 * a + 1.0 / (sqrt(a * a + 1.0) + a));
  } else {
    float a2 = a * a;
    v = nbx_log1p(a + a2 / (1.0 + sqrt(1.0 + a2)));
  }
  return sign_bit(x) ? -v : v;
}

float nbx_acosh(float x) {
  if (isnan(x) || x < 1.0) return kNaN;
  if (isinf(x)) return x;
  if (x > 4096.0) return nbx_log(x) + kLn2F;
  if (x > 2.0) return nbx_log(2.0 * x - 1.0 / (x + sqrt(x * x - 1.0)));
  float t = x - 1.0;  // exact
  return nbx_log1p(t + sqrt(2.0 * t + t * t));
}

float nbx_atanh(float x) {
  float a = abs(x), v;
  if (isnan(x) || a > 1.0) return kNaN;
  if (a == 1.0) return sign_bit(x) ? -kInf : kInf;
  if (a < 0.5) {
    float t = a + a;
    v = 0.5 * nbx_log1p(t + t * a / (1.0 - a));
  } else {
    v = 0.5 * nbx_log1p((a + a) / (1.0 - a));  // 1 - a exact
  }
  return sign_bit(x) ? -v : v;
}

// e^(-x^2) with x^2 = h + l, h exact: x's high 12 significant bits (cut in its bits, which
// no driver can re-associate) squared exactly; l carries the rest with its own rounding
// only, so the rounding of x^2 (up to 50 ulp of the result at x = 10) does not reach it.
float nbx_exp_neg_sq(float x) {
  float hi = uintBitsToFloat(floatBitsToUint(x) & 0xfffff000u);
  float lo = x - hi;  // exact: the cut-off bits
  float l = (hi + hi) * lo + lo * lo;  // up to 2^-10 x^2: its own exp, not 1 - l
  return nbx_exp(-(hi * hi)) * nbx_exp(-l);
}

// erfc: 1 - erf below 1 (erf < 0.85: at most 5x cancellation); from 1, Legendre's continued
// fraction of Gamma(1/2, x^2), 30 levels (2e-9 relative at x = 1, fewer needed beyond):
// erfc(x) = e^-x^2 x / sqrt(pi) / (x^2 + 1/2 - 1(1/2) / (x^2 + 5/2 - 2(3/2) / (...))).
float nbx_erfc(float x) {
  if (isnan(x)) return x;
  if (x < 1.0) return 1.0 - nbx_erf(x);
  if (x > 10.1) return 0.0;  // below half the smallest subnormal
  float z = x * x, f = z + 60.5;
  for (int i = 30; i >= 1; --i) f = z + float(2 * i) - 1.5 - float(i) * (float(i) - 0.5) / f;
  return nbx_exp_neg_sq(x) * (x * 0.564189583547756287 / f);
}

// Giles' single-precision erfinv (GPU Computing Gems, 2011), then one Newton step on
// erf(y) = |x|, whose residual above 1/2 is (1 - |x|) - erfc(y): 1 - |x| is exact there.
float nbx_erfinv(float x) {
  float a = abs(x);
  if (isnan(x) || a > 1.0) return kNaN;
  if (a == 1.0) return sign_bit(x) ? -kInf : kInf;
  if (a == 0.0) return x;
  float w = -nbx_log((1.0 - a) * (1.0 + a)), p;
  if (w < 5.0) {
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
    w = sqrt(w) - 3.0;
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
  float y = p * a;
  float residual = a > 0.5 ? (1.0 - a) - nbx_erfc(y) : nbx_erf(y) - a;
  y -= residual / (1.12837916709551257 * nbx_exp(-y * y));
  return sign_bit(x) ? -y : y;
}

// sin(pi x): x - 2 floor(x/2 + 1/2) is exact (|x| < 2^23; above, x is an even or odd
// integer and sin(pi x) is 0), then folded to |r| <= 1/2 by sin(pi r) = sin(pi (+-1 - r)).
float nbx_sinpi(float x) {
  if (isnan(x) || isinf(x)) return kNaN;
  if (abs(x) >= 8388608.0) return 0.0;
  precise float r = x - 2.0 * floor(0.5 * x + 0.5);
  if (abs(r) > 0.5) r = (r > 0.0 ? 1.0 : -1.0) - r;
  float ar = abs(r);
  float v = ar <= 0.25 ? nbx_sin_poly(kPiF * ar) : nbx_cos_poly(kPiF * (0.5 - ar));
  return r < 0.0 ? -v : v;
}

// pi / tan(pi x) for a non-integer x (digamma's reflection), reduced exactly to |r| <= 1/2.
float nbx_pi_cot_pi(float x) {
  precise float r = abs(x) >= 8388608.0 ? 0.0 : x - floor(x + 0.5);
  float ar = abs(r), v;
  if (ar <= 0.25) {
    float t = kPiF * ar;
    v = nbx_cos_poly(t) / nbx_sin_poly(t);
  } else {
    float t = kPiF * (0.5 - ar);
    v = nbx_sin_poly(t) / nbx_cos_poly(t);
  }
  return kPiF * (r < 0.0 ? -v : v);
}

float nbx_sinc(float x) {
  if (x == 0.0) return 1.0;
  return nbx_div(nbx_sinpi(x), kPiF * x);  // pi x overflows to inf past 1e38: 0, as it is
}

float nbx_digamma(float x) {
  if (x == 0.0) return sign_bit(x) ? kInf : -kInf;
  if (isnan(x) || (isinf(x) && x > 0.0)) return x;
  float result = 0.0;
  if (x < 0.0) {
    if (x == floor(x)) return kNaN;  // the poles, -inf included
    result = -nbx_pi_cot_pi(x);      // psi(x) = psi(1 - x) - pi / tan(pi x)
    x = 1.0 - x;
  }
  for (int i = 0; i < 10 && x < 10.0; ++i) {
    result -= 1.0 / x;
    x += 1.0;
  }
  float z = 1.0 / (x * x);
  float series = z * (1.0 / 12.0 - z * (1.0 / 120.0 - z * (1.0 / 252.0)));
  return result + nbx_log(x) - 0.5 / x - series;
}

// lgamma(2 + t) for |t| <= 1/2: (1 - gamma) t + sum_k (-1)^k (zeta(k) - 1) t^k / k, whose
// terms fall by 4x or more; relative precision near the zero at t = 0.
float nbx_lgamma2(float t) {
  float p = -9.439488275268396e-6;
  p = p * t + 2.0507212775670692e-5;
  p = p * t - 4.49262367381331417e-5;
  p = p * t + 9.9457512781808534e-5;
  p = p * t - 2.2315475845357938e-4;
  p = p * t + 5.0966952474304242e-4;
  p = p * t - 1.1927539117032610e-3;
  p = p * t + 2.8905103307415233e-3;
  p = p * t - 7.3855510286739853e-3;
  p = p * t + 2.0580808427784548e-2;
  p = p * t - 6.7352301053198095e-2;
  p = p * t + 0.32246703342411322;
  return t * (0.42278433509846714 + t * p);
}

// lgamma of a finite x > 0: Stirling from 8; below, shifted onto [1.5, 2.5) with the shift's
// product or, near 1 and below 1/2, the exact t = x - 1 or t = x and log1p.
float nbx_lgamma_pos(float x) {
  if (x >= 8.0) {
    float r = 1.0 / x, z = r * r;
    float corr = r * (1.0 / 12.0 - z * (1.0 / 360.0 - z * (1.0 / 1260.0)));
    return (x - 0.5) * (nbx_log(x) - 1.0) + (0.918938533204672742 - 0.5) + corr;
  }
  if (x < 0.5) return nbx_lgamma2(x) - nbx_log(x) - nbx_log1p(x);
  if (x < 1.5) {
    float t = x - 1.0;
    return nbx_lgamma2(t) - nbx_log1p(t);
  }
  float prod = 1.0;
  for (int i = 0; i < 6 && x >= 2.5; ++i) {
    x -= 1.0;  // exact: x < 8
    prod *= x;
  }
  return nbx_log(prod) + nbx_lgamma2(x - 2.0);
}

// Below 0 by reflection, lgamma(x) = log(pi) - log|x| - log|sin(pi x)| - lgamma(-x), -x exact.
float nbx_lgamma(float x) {
  if (isnan(x)) return x;
  // Below the smallest normal, lgamma(x) = -log|x| to far below an ulp. First, so that a driver
  // flushing subnormals in some instructions and not others (NVIDIA's: x <= 0 held while
  // floor(x) was -1) cannot send a subnormal down the reflection to inf - inf = NaN.
  if (abs(x) < 1.17549435e-38) return -nbx_log(abs(x));
  if (isinf(x) || (x <= 0.0 && x == floor(x))) return kInf;
  if (x > 0.0) return nbx_lgamma_pos(x);
  return 1.14472988584940017 - nbx_log(-x) - nbx_log(abs(nbx_sinpi(x))) - nbx_lgamma_pos(-x);
}

float nbx_deg2rad(float x) { return x * 0.0174532925199432958; }
float nbx_rad2deg(float x) { return x * 57.2957795130823209; }

// The clamp skips NaN: NVIDIA's driver turns the selects into min/max, which drop NaN.
float nbx_logit(float x, float lo, float hi, bool clamp_x) {
  if (clamp_x && !isnan(x)) x = x < lo ? lo : (x > hi ? hi : x);
  // Near 1/2 through log1p: 2x - 1 and (from 1/2) 1 - x are exact.
  if (x >= 0.25 && x <= 0.75) return nbx_log1p(nbx_div(2.0 * x - 1.0, 1.0 - x));
  return nbx_log(nbx_div(x, 1.0 - x));
}
