// Float64 exp and log2 from +, *, / alone (GLSL has no float64 transcendental functions).
// Used where float32 arithmetic is too short: pow's b * log2|a| must carry ~30 bits for a
// float32 result within 1.3e-6, which float64 gives without double-float tricks.

double nbx_exp_d(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893384LF) return double(kInf);
  if (x < -745.2LF) return 0.0LF;
  // `precise`: the split works only in the written order and unfused. Without it NVIDIA's
  // driver computed exp(-670) 2.2e-14 off relative (the error growing with |n|, as from
  // x - n * (hi + lo) re-associated); llvmpipe kept the order.
  precise double n = roundEven(x * 1.4426950408889634LF);
  // fdlibm's ln2 split: n * kLn2Hi is exact for |n| < 2^11.
  precise double r = (x - n * 6.93147180369123816490e-01LF) - n * 1.90821492927058770002e-10LF;
  // Taylor to degree 13 on |r| <= 0.347: truncation error below 5e-18.
  double p = 1.0LF / 6227020800.0LF;
  p = p * r + 1.0LF / 479001600.0LF;
  p = p * r + 1.0LF / 39916800.0LF;
  p = p * r + 1.0LF / 3628800.0LF;
  p = p * r + 1.0LF / 362880.0LF;
  p = p * r + 1.0LF / 40320.0LF;
  p = p * r + 1.0LF / 5040.0LF;
  p = p * r + 1.0LF / 720.0LF;
  p = p * r + 1.0LF / 120.0LF;
  p = p * r + 1.0LF / 24.0LF;
  p = p * r + 1.0LF / 6.0LF;
  p = p * r + 0.5LF;
  p = p * r + 1.0LF;
  p = p * r + 1.0LF;
  int k = int(n), h = k / 2;
  return ldexp(ldexp(p, h), k - h);
}

// ln m for a finite x > 0 = m 2^e, m in [sqrt(1/2), sqrt(2)): ln m = 2 atanh(s),
// s = (m - 1) / (m + 1), |s| <= 0.172, series to s^17 (error below 1e-16). A subnormal x is
// scaled by 2^54 first: frexp of a subnormal is undefined in GLSL (llvmpipe's log(1e-310)
// was -709.09, not -713.80).
double nbx_log_reduce_d(double x, out double e_out) {
  int bias = 0;
  if (x < 2.2250738585072014e-308LF) {
    x *= 18014398509481984.0LF;
    bias = 54;
  }
  int e;
  double m = frexp(x, e);
  if (m < 0.70710678118654752LF) {
    m *= 2.0LF;
    e -= 1;
  }
  e_out = double(e - bias);
  double s = (m - 1.0LF) / (m + 1.0LF), z = s * s;
  double t = 1.0LF / 17.0LF;
  t = t * z + 1.0LF / 15.0LF;
  t = t * z + 1.0LF / 13.0LF;
  t = t * z + 1.0LF / 11.0LF;
  t = t * z + 1.0LF / 9.0LF;
  t = t * z + 1.0LF / 7.0LF;
  t = t * z + 1.0LF / 5.0LF;
  t = t * z + 1.0LF / 3.0LF;
  t = t * z + 1.0LF;
  return 2.0LF * s * t;
}

// log2 of a finite x > 0.
double nbx_log2_d(double x) {
  double e;
  double lm = nbx_log_reduce_d(x, e);
  return e + lm * 1.4426950408889634LF;
}

// The float64 functions behind the float64 ops (tolerance rtol 1e-7: these hold ~1e-14).
#if NBX_CLS_D
bool nbx_signbit_d(double x) { return (unpackDouble2x32(x).y >> 31) != 0u; }

double nbx_expm1_d(double x) {
  if (abs(x) >= 0.35LF) return nbx_exp_d(x) - 1.0LF;
  double t = x, s = x;  // Taylor: below 0.35 the terms fall by 3x or more; 18 reach 1e-17
  for (int k = 2; k <= 18; ++k) {
    t *= x / double(k);
    s += t;
  }
  return s;
}

double nbx_log_d(double x) {
  if (isnan(x) || x < 0.0LF) return double(kNaN);
  if (x == 0.0LF) return double(-kInf);
  if (isinf(x)) return x;
  double e;
  double lm = nbx_log_reduce_d(x, e);
  // fdlibm's ln2 split: e * kLn2Hi is exact for |e| < 2^11.
  return e * 6.93147180369123816490e-01LF + (e * 1.90821492927058770002e-10LF + lm);
}

double nbx_log1p_d(double x) {
  if (x == -1.0LF) return double(-kInf);
  if (x < -1.0LF || isnan(x)) return double(kNaN);
  // Kahan's log(u) * x / (u - 1), u = 1 + x. `precise`: llvmpipe folded (1 + x) - 1 to x,
  // which returned log(u) itself (softplus(-36) = 2.2e-16, not 1.6e-16).
  precise double u = 1.0LF + x;
  if (u == 1.0LF) return x;
  if (isinf(u)) return u;
  precise double d = u - 1.0LF;
  return nbx_log_d(u) * (x / d);
}

double nbx_tanh_d(double x) {
  if (isnan(x)) return x;
  double a = abs(x);
  if (a > 19.1LF) return sign(x);
  double e = nbx_expm1_d(2.0LF * a);
  return sign(x) * (e / (e + 2.0LF));
}

// e^(-x^2) with x^2 split exactly into hi + lo, so the rounding of x^2 (up to 36 ulp of
// e^-36 at x = 6) does not reach the result. Dekker's product (Veltkamp's split into 26-bit
// halves), not fma: a GLSL fma need not round once, and llvmpipe's did not (erfc(24.76)
// was 16 ulps off); `precise` keeps every step in the written order.
double nbx_exp_neg_sq_d(double x) {
  precise double hi = x * x;
  if (hi > 746.0LF) return 0.0LF;  // e^-746 is below the subnormals (and c below overflows)
  precise double c = 134217729.0LF * x;  // 2^27 + 1
  precise double xh = c - (c - x);
  precise double xl = x - xh;
  precise double lo = ((xh * xh - hi) + 2.0LF * xh * xl) + xl * xl;
  return nbx_exp_d(-hi) * (1.0LF - lo);
}

// erf, about 1e-15 relative (checked against libm's erf in float64 over [0, 6.5] and down to
// 1e-300). Below 2: erf(a) = 2/sqrt(pi) e^(-a^2) sum 2^n a^(2n+1) / (2n+1)!!, whose terms are
// all positive, so nothing cancels. From 2: 1 - erfc(a), erfc from its continued fraction
// e^(-a^2) / sqrt(pi) / (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...)))) 60 levels deep
// (3e-16 of erfc at a = 2). The Numerical Recipes erfc used before was 2e-11 off at 2.6.
double nbx_erf_d(double x) {
  if (isnan(x)) return x;
  double a = abs(x), v;
  if (a > 6.0LF) return sign(x);
  if (a < 2.0LF) {
    double z = a * a, term = a, sum = a;
    for (int k = 1; k < 100 && term > 0.0LF; ++k) {
      term *= 2.0LF * z / double(2 * k + 1);
      sum += term;
      if (term < 1e-17LF * sum) break;
    }
    v = 1.1283791670955126LF * nbx_exp_neg_sq_d(a) * sum;
  } else {
    double f = a;
    for (int k = 60; k >= 1; --k) f = a + double(k) * 0.5LF / f;
    v = 1.0LF - nbx_exp_neg_sq_d(a) * 0.56418958354775629LF / f;
  }
  return nbx_signbit_d(x) ? -v : v;  // erf(-0) = -0 (the old one returned +0)
}

// atan on [0, inf): fold above 1 to pi/2 - atan(1/x), above tan(pi/12) shift by pi/6, then
// the Taylor series on |t| <= 0.268 (25th power: 2e-16).
double nbx_atan_pos_d(double x) {
  bool inv = x > 1.0LF;
  if (inv) x = 1.0LF / x;
  double base = 0.0LF;
  if (x > 0.26794919243112270LF) {
    base = 0.52359877559829887LF;
    x = (x * 1.7320508075688772LF - 1.0LF) / (x + 1.7320508075688772LF);
  }
  double z = x * x, p = 1.0LF / 25.0LF;
  for (int k = 11; k >= 0; --k) p = p * z * (-1.0LF) + 1.0LF / double(2 * k + 1);
  double r = base + x * p;
  return inv ? 1.5707963267948966LF - r : r;
}

double nbx_atan2_d(double y, double x) {
  if (isnan(x) || isnan(y)) return double(kNaN);
  const double pi = 3.14159265358979323846LF;
  bool neg_x = x < 0.0LF || (x == 0.0LF && nbx_signbit_d(x));
  if (y == 0.0LF) {
    double base = neg_x ? pi : 0.0LF;
    return nbx_signbit_d(y) ? -base : base;
  }
  if (isinf(x) && isinf(y)) {
    double v = x > 0.0LF ? 0.25LF * pi : 0.75LF * pi;
    return y > 0.0LF ? v : -v;
  }
  if (x == 0.0LF || isinf(y)) return y > 0.0LF ? 0.5LF * pi : -0.5LF * pi;
  if (isinf(x)) return (x > 0.0LF ? 0.0LF : pi) * sign(y);
  double a = nbx_atan_pos_d(abs(y / x));
  if (x < 0.0LF) a = pi - a;
  return y < 0.0LF ? -a : a;
}

double nbx_pow_d(double a, double b) {
  if (b == 0.0LF || a == 1.0LF) return 1.0LF;
  if (isnan(a) || isnan(b)) return double(kNaN);
  // Exact, and exp(log(a)) would round DBL_MAX up to inf on NVIDIA.
  if (b == 1.0LF) return a;
  bool b_int = trunc(b) == b;
  bool b_odd = b_int && abs(b) < 9007199254740992.0LF && mod(abs(b), 2.0LF) == 1.0LF;
  if (a == 0.0LF) {
    if (b < 0.0LF) return (b_odd && nbx_signbit_d(a)) ? double(-kInf) : double(kInf);
    return b_odd ? a : 0.0LF;
  }
  if (isinf(b)) {
    double m = abs(a);
    if (m == 1.0LF) return 1.0LF;
    return (m > 1.0LF) == (b > 0.0LF) ? double(kInf) : 0.0LF;
  }
  if (isinf(a)) {
    if (a > 0.0LF) return b > 0.0LF ? double(kInf) : 0.0LF;
    double m = b > 0.0LF ? double(kInf) : 0.0LF;
    return b_odd ? -m : m;
  }
  if (a < 0.0LF && !b_int) return double(kNaN);
  double m = nbx_exp_d(b * nbx_log2_d(abs(a)) * 0.69314718055994531LF);
  return (a < 0.0LF && b_odd) ? -m : m;
}

double nbx_sigmoid_d(double a) { return 1.0LF / (1.0LF + nbx_exp_d(-a)); }
// log1p(e^z) as max(z, 0) + log1p(e^-|z|): e^z cannot overflow and, for z << 0, the log1p
// of a tiny argument keeps its relative precision.
double nbx_softplus_d(double a, double beta, double threshold) {
  double z = a * beta;
  if (z > threshold) return a;
  if (isnan(z)) return z;
  return (max(z, 0.0LF) + nbx_log1p_d(nbx_exp_d(-abs(z)))) / beta;
}
// x = q pi/2 + r for float64: r directly below pi/4, Cody-Waite with fdlibm's three 33-bit
// pieces of pi/2 below 2^20 (k * piece exact), Payne-Hanek with six words of 2/pi beyond
// (the result keeps ~2^-100 of absolute precision, enough for the closest double to a
// multiple of pi/2).
uint nbx_word_at(uint w[8], int p) {  // 32 bits of the 256-bit number w starting at bit p
  int i = p >> 5, b = p & 31;
  uint lo = w[i], hi = i < 7 ? w[i + 1] : 0u;
  return b == 0 ? lo : (lo >> uint(b)) | (hi << uint(32 - b));
}

double nbx_reduce_half_pi_d(double x, out int q) {
  if (abs(x) <= 0.78539816339744831LF) {
    q = 0;
    return x;
  }
  if (abs(x) < 1048576.0LF) {
    double k = roundEven(x * 0.63661977236758134LF);
    q = int(k) & 3;
    return ((x - k * 1.57079632673412561417LF) - k * 6.07710050630396597660e-11LF) -
           k * 2.02226624871116645580e-21LF;
  }
  // 2/pi in 32-bit words, most significant first (enough for every double exponent).
  const uint kTwoOverPi[36] = uint[36](
      0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u,
      0x3C439041u, 0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au, 0x424DD2E0u,
      0x06492EEAu, 0x09D1921Cu, 0xFE1DEB1Cu, 0xB129A73Eu, 0xE88235F5u,
      0x2EBB4484u, 0xE99C7026u, 0xB45F7E41u, 0x3991D639u, 0x835339F4u,
      0x9C845F8Bu, 0xBDF9283Bu, 0x1FF897FFu, 0xDE05980Fu, 0xEF2F118Bu,
      0x5A0A6D1Fu, 0x6D367ECFu, 0x27CB09B7u, 0x4F463F66u, 0x9E5FEA2Du,
      0x7527BAC7u, 0xEBE5F17Bu, 0x3D0739F7u, 0x8A5292EAu, 0x6BFB5FB1u,
      0x1F8D5D08u);
  uvec2 u = unpackDouble2x32(x);
  int e = int((u.y >> 20) & 0x7ffu) - 1075;  // |x| = m 2^e, m a 53-bit integer
  uint ml = u.x, mh = (u.y & 0xfffffu) | 0x100000u;
  int k0 = e >= 34 ? (e - 2) / 32 : 0;  // earlier words add multiples of 4
  uint t[6];
  for (int i = 0; i < 6; ++i) t[i] = kTwoOverPi[k0 + 5 - i];  // least significant first
  uint w[8];
  for (int i = 0; i < 8; ++i) w[i] = 0u;
  uint carry = 0u, hi, lo, c1, c2;
  for (int i = 0; i < 6; ++i) {
    umulExtended(ml, t[i], hi, lo);
    w[i] = uaddCarry(lo, carry, c1);
    carry = hi + c1;
  }
  w[6] = carry;
  carry = 0u;
  for (int i = 0; i < 6; ++i) {
    umulExtended(mh, t[i], hi, lo);
    uint sum = uaddCarry(w[i + 1], lo, c1);
    w[i + 1] = uaddCarry(sum, carry, c2);
    carry = hi + c1 + c2;
  }
  w[7] += carry;
  int point = 32 * (k0 + 6) - e;
  uint quarter = nbx_word_at(w, point) & 3u;
  uint f1 = nbx_word_at(w, point - 32), f2 = nbx_word_at(w, point - 64);
  uint f3 = nbx_word_at(w, point - 96);
  double sgn = 1.0LF;
  if ((f1 & 0x80000000u) != 0u) {  // fraction >= 1/2: round the quadrant up
    quarter += 1u;
    sgn = -1.0LF;
    uint b3, b2;
    f3 = usubBorrow(0u, f3, b3);
    f2 = usubBorrow(0u, f2, b2);
    uint b2b;
    f2 = usubBorrow(f2, b3, b2b);
    f1 = 0u - f1 - b2 - b2b;
  }
  double frac = double(f1) * 2.3283064365386963e-10LF + double(f2) * 5.421010862427522e-20LF +
                double(f3) * 1.2621774483536189e-29LF;
  double r = sgn * frac * 1.5707963267948966LF;
  q = int(quarter & 3u);
  if (x < 0.0LF) {
    r = -r;
    q = (4 - q) & 3;
  }
  return r;
}

double nbx_sin_poly_d(double r) {  // |r| <= pi/4, Taylor to r^21
  double z = r * r, p = 1.0LF / 51090942171709440000.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 121645100408832000.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 355687428096000.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 1307674368000.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 6227020800.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 39916800.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 362880.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 5040.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 120.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 6.0LF;
  return r - r * z * p;
}

double nbx_cos_poly_d(double r) {  // |r| <= pi/4, Taylor to r^20
  double z = r * r, p = 1.0LF / 2432902008176640000.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 6402373705728000.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 20922789888000.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 87178291200.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 479001600.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 3628800.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 40320.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 720.0LF;
  p = p * z * (-1.0LF) + 1.0LF / 24.0LF;
  p = p * z * (-1.0LF) + 0.5LF;
  return 1.0LF - z * p;
}

double nbx_sin_d(double x) {
  if (isnan(x) || isinf(x)) return double(kNaN);
  int q;
  double r = nbx_reduce_half_pi_d(x, q);
  double v = (q & 1) == 0 ? nbx_sin_poly_d(r) : nbx_cos_poly_d(r);
  return (q & 2) == 0 ? v : -v;
}

double nbx_cos_d(double x) {
  if (isnan(x) || isinf(x)) return double(kNaN);
  int q;
  double r = nbx_reduce_half_pi_d(x, q);
  double v = (q & 1) == 0 ? nbx_cos_poly_d(r) : -nbx_sin_poly_d(r);
  return (q & 2) == 0 ? v : -v;
}

double nbx_tan_d(double x) {
  if (isnan(x) || isinf(x)) return double(kNaN);
  int q;
  double r = nbx_reduce_half_pi_d(x, q);
  double s = nbx_sin_poly_d(r), c = nbx_cos_poly_d(r);
  return (q & 1) == 0 ? s / c : -c / s;
}
#endif
