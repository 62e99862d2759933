// Float32 transcendental functions for the Vulkan kernels.
//
// Why not the GLSL built-ins: Vulkan only bounds exp/exp2 to 3 + 2|x| ULP, sin/cos to an
// absolute 2^-11 on [-pi, pi], atan to 4096 ULP, and leaves log/pow of negatives and
// division by zero loose; drivers differ (llvmpipe vs NVIDIA). The conformance tolerance
// for float32 is rtol 1.3e-6, so these are written out with range reduction and short
// polynomials that hold it on every driver. `precise` keeps drivers from re-associating
// the Cody-Waite reductions, whose exactness depends on evaluation order.


// exp(r) for |r| <= 0.35: Taylor to degree 7 (truncation error < 6e-9).
float nbx_exp_poly(float r) {
  return 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 +
         r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
}

// 2^n * p without forming 2^n first (2^128 is not a float; the product may be).
float nbx_scale(float p, int n) {
  int h = n / 2;
  return ldexp(ldexp(p, h), n - h);
}

float nbx_exp(float x) {
  if (isnan(x)) return x;
  if (x > 88.7228394) return kInf;
  if (x < -103.972084) return 0.0;
  precise float n = roundEven(x * 1.44269504088896341);
  // ln2 split so that n * kLn2Hi is exact for |n| < 2^9.
  precise float r = (x - n * 0.693145751953125) - n * 1.428606765330187045e-06;
  return nbx_scale(nbx_exp_poly(r), int(n));
}

float nbx_exp2(float x) {
  if (isnan(x)) return x;
  if (x >= 128.0) return kInf;
  if (x < -150.0) return 0.0;
  float n = roundEven(x);
  precise float r = (x - n) * 0.693147180559945309;
  return nbx_scale(nbx_exp_poly(r), int(n));
}

float nbx_expm1(float x) {
  // Below |x| < 0.35 the polynomial minus its leading 1 keeps the relative precision.
  if (abs(x) < 0.35) {
    return x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 +
           x * (1.0 / 720.0 + x * (1.0 / 5040.0)))))));
  }
  return nbx_exp(x) - 1.0;
}

// x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)): returns log1p(f) (fdlibm's e_logf form,
// f - (f^2/2 - s (f^2/2 + R)) with s = f / (2 + f); about 1 ULP) and sets e. A subnormal x is
// scaled by 2^24 first: GLSL leaves frexp/log of subnormals undefined and llvmpipe's log(3e-39)
// was -87.80, not -88.70.
float nbx_log_reduce(float x, out float e) {
  float bias = 0.0;
  if (x < 1.17549435e-38) {
    x *= 16777216.0;
    bias = 24.0;
  }
  int ei;
  float m = frexp(x, ei);
  if (m < 0.707106781) {
    m *= 2.0;
    ei -= 1;
  }
  e = float(ei) - bias;
  precise float f = m - 1.0;
  float s = f / (2.0 + f), z = s * s;
  // 2 atanh(s) - 2s = s R: the series of R, truncated after z^5 (|s| <= 0.172: 2e-10 of R).
  float r = z * (0.666666667 + z * (0.4 + z * (0.285714286 + z * (0.222222222 +
            z * 0.181818182))));
  float hfsq = 0.5 * f * f;
  precise float lm = f - (hfsq - s * (hfsq + r));
  return lm;
}

float nbx_log(float x) {
  if (isnan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return -kInf;
  if (isinf(x)) return x;
  float e;
  float lm = nbx_log_reduce(x, e);
  // ln2 split so that e * kLn2Hi is exact for |e| < 2^9 (e >= -149 - 24 here).
  precise float v = e * 0.693145751953125 + (e * 1.428606765330187045e-06 + lm);
  return v;
}

float nbx_log2(float x) {
  if (isnan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return -kInf;
  if (isinf(x)) return x;
  float e;
  float lm = nbx_log_reduce(x, e);
  precise float v = e + lm * 1.44269504088896341;
  return v;
}

float nbx_log1p(float x) {
  if (x == -1.0) return -kInf;
  if (x < -1.0 || isnan(x)) return kNaN;
  // Kahan: log1p(x) = log(u) * x / (u - 1) with u = 1 + x recovers the bits lost forming u;
  // it needs a log that is accurate relative to itself near 1, which GLSL's log is not
  // (Vulkan bounds it only to 2^-21 absolute there: softplus(-10) was 4e-4 off).
  precise float u = 1.0 + x;
  if (u == 1.0) return x;
  if (isinf(u)) return u;
  precise float d = u - 1.0;
  return nbx_log(u) * (x / d);
}

// sin and cos of r, |r| <= pi/4 (Taylor, error < 2e-9).
float nbx_sin_poly(float r) {
  float z = r * r;
  return r + r * z * (-1.0 / 6.0 + z * (1.0 / 120.0 + z * (-1.0 / 5040.0 + z * (1.0 / 362880.0))));
}
float nbx_cos_poly(float r) {
  float z = r * r;
  return 1.0 + z * (-0.5 + z * (1.0 / 24.0 + z * (-1.0 / 720.0 + z * (1.0 / 40320.0 +
         z * (-1.0 / 3628800.0)))));
}

// 32 bits of a 128-bit number N (w0 least significant) starting at bit p (p >= -31).
uint nbx_bits32(uvec4 n, int p) {
  if (p < 0) return n.x << uint(-p);
  int w = p >> 5, b = p & 31;
  uint lo = n[w], hi = w < 3 ? n[w + 1] : 0u;
  return b == 0 ? lo : (lo >> uint(b)) | (hi << uint(32 - b));
}

// Payne-Hanek: x * 2/pi with the bits of 2/pi that matter for x's exponent, in integers.
float nbx_reduce_large(float x, out int q) {
  const uint kTwoOverPi[7] = uint[7](0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u,
                                     0xDB629599u, 0x3C439041u, 0xFE5163ABu);
  uint ux = floatBitsToUint(x);
  int e = int((ux >> 23) & 0xffu) - 150;  // x = m * 2^e, m a 24-bit integer
  uint m = (ux & 0x7fffffu) | 0x800000u;
  int k0 = e >= 34 ? (e - 2) / 32 : 0;    // earlier words only add multiples of 4
  uint h0, l0, h1, l1, h2, l2, c1, c2;
  umulExtended(m, kTwoOverPi[k0], h0, l0);
  umulExtended(m, kTwoOverPi[k0 + 1], h1, l1);
  umulExtended(m, kTwoOverPi[k0 + 2], h2, l2);
  uvec4 n;
  n.x = l2;
  n.y = uaddCarry(h2, l1, c1);
  uint t = uaddCarry(h1, l0, c2);
  uint c3;
  n.z = uaddCarry(t, c1, c3);
  n.w = h0 + c2 + c3;
  int point = 32 * (k0 + 3) - e;  // the binary point of n
  uint quarter = nbx_bits32(n, point) & 3u;
  uint fhi = nbx_bits32(n, point - 32), flo = nbx_bits32(n, point - 64);
  float sgn = 1.0;
  if ((fhi & 0x80000000u) != 0u) {  // fraction >= 1/2: round up, keep 1 - fraction
    quarter += 1u;
    sgn = -1.0;
    uint borrow;
    flo = usubBorrow(0u, flo, borrow);
    fhi = 0u - fhi - borrow;
  }
  float frac = float(fhi) * 2.3283064365386963e-10 + float(flo) * 5.421010862427522e-20;
  float r = sgn * frac * 1.5707963267948966;
  q = int(quarter & 3u);
  if (x < 0.0) {
    r = -r;
    q = (4 - q) & 3;
  }
  return r;
}

// x = q * pi/2 + r: a three-part Cody-Waite split of pi/2 for |x| < 1024, Payne-Hanek
// beyond. Drivers may re-associate the split despite `precise` (llvmpipe folds the last two
// constants, an error of |q| * 1.5e-11), harmless only while |q| stays small.
float nbx_reduce_half_pi(float x, out int q) {
  if (abs(x) >= 1024.0) return nbx_reduce_large(x, q);
  precise float k = roundEven(x * 0.636619772367581343);
  precise float r = ((x - k * 1.5703125) - k * 4.837512969970703125e-4) - k * 7.549789948768648e-8;
  q = int(k);
  return r;
}

float nbx_sin(float x) {
  if (isnan(x) || isinf(x)) return kNaN;
  int q;
  float r = nbx_reduce_half_pi(x, q);
  float v = (q & 1) == 0 ? nbx_sin_poly(r) : nbx_cos_poly(r);
  return (q & 2) == 0 ? v : -v;
}

float nbx_cos(float x) {
  if (isnan(x) || isinf(x)) return kNaN;
  int q;
  float r = nbx_reduce_half_pi(x, q);
  float v = (q & 1) == 0 ? nbx_cos_poly(r) : -nbx_sin_poly(r);
  return (q & 2) == 0 ? v : -v;
}

float nbx_tan(float x) {
  if (isnan(x) || isinf(x)) return kNaN;
  int q;
  float r = nbx_reduce_half_pi(x, q);
  float s = nbx_sin_poly(r), c = nbx_cos_poly(r);
  return (q & 1) == 0 ? s / c : -c / s;
}

float nbx_tanh(float x) {
  if (isnan(x)) return x;
  float a = abs(x);
  if (a > 9.1) return sign(x);
  // Small |x| through expm1 keeps the relative precision that 1 - 2/(e^2x + 1) loses.
  float e = nbx_expm1(2.0 * a);
  return sign(x) * (e / (e + 2.0));
}

// atan of a in [0, inf) (Cephes atanf reduction; about 2 ULP).
float nbx_atan_pos(float a) {
  float base = 0.0;
  if (a > 2.414213562373095) {
    base = 1.5707963267948966;
    a = -1.0 / a;
  } else if (a > 0.4142135623730950) {
    base = 0.7853981633974483;
    a = (a - 1.0) / (a + 1.0);
  }
  float z = a * a;
  float p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z -
             3.33329491539e-1) * z * a + a;
  return base + p;
}

float nbx_atan2(float y, float x) {
  if (isnan(x) || isnan(y)) return kNaN;
  const float pi = 3.14159265358979323846;
  bool neg_x = x < 0.0 || (x == 0.0 && floatBitsToUint(x) != 0u);  // -0 counts as negative
  if (y == 0.0) {
    float base = neg_x ? pi : 0.0;
    return floatBitsToUint(y) == 0u ? base : -base;
  }
  if (isinf(x) && isinf(y)) {
    float v = x > 0.0 ? 0.25 * pi : 0.75 * pi;
    return y > 0.0 ? v : -v;
  }
  if (x == 0.0 || isinf(y)) return y > 0.0 ? 0.5 * pi : -0.5 * pi;
  if (isinf(x)) return (x > 0.0 ? 0.0 : pi) * sign(y);
  float a = nbx_atan_pos(abs(y / x));
  if (x < 0.0) a = pi - a;
  return y < 0.0 ? -a : a;
}

// erf: two minimax polynomials (N. Juffa's erff, max error 0.99 ULP each): odd in x below
// |x| = 0.9277, 1 - exp(p(|x|)) above, where erf is within 0.19 of 1 so exp's error shrinks.
// The Numerical Recipes erfc used before was ~20 ULP near 0.05.
float nbx_erf(float x) {
  if (isnan(x)) return x;
  float t = abs(x), s = x * x, r;
  if (t > 0.927734375) {
    if (t > 10.0) return sign(x);
    r = fma(-1.72853470e-5, t, 3.83197126e-4);
    float u = fma(-3.88396438e-3, t, 2.42546219e-2);
    r = fma(r, s, u);
    r = fma(r, t, -1.06777877e-1);
    r = fma(r, t, -6.34846687e-1);
    r = fma(r, t, -1.28717512e-1);
    r = fma(r, t, -t);
    r = 1.0 - nbx_exp(r);
    return x < 0.0 ? -r : r;
  }
  r = -5.96761703e-4;
  r = fma(r, s, 4.99119423e-3);
  r = fma(r, s, -2.67681349e-2);
  r = fma(r, s, 1.12819925e-1);
  r = fma(r, s, -3.76125336e-1);
  r = fma(r, s, 1.28379166e-1);
  return fma(r, x, x);  // keeps the sign of zero
}

// pow with C99/PyTorch special cases; |a|^b = 2^(b log2|a|).
float nbx_pow(float a, float b) {
  if (b == 0.0 || a == 1.0) return 1.0;
  if (isnan(a) || isnan(b)) return kNaN;
  bool b_int = trunc(b) == b;
  bool b_odd = b_int && abs(b) < 16777216.0 && (int(abs(b)) & 1) == 1;
  if (a == 0.0) {
    if (b < 0.0) return b_odd ? (floatBitsToUint(a) != 0u ? -kInf : kInf) : kInf;
    return b_odd ? a : 0.0;
  }
  if (isinf(b)) {
    float m = abs(a);
    if (m == 1.0) return 1.0;
    return (m > 1.0) == (b > 0.0) ? kInf : 0.0;
  }
  if (isinf(a)) {
    if (a > 0.0) return b > 0.0 ? kInf : 0.0;
    float m = b > 0.0 ? kInf : 0.0;
    return b_odd ? -m : m;
  }
  if (a < 0.0 && !b_int) return kNaN;
#if NBX_F64
  double y = double(b) * nbx_log2_d(double(abs(a)));
  double md = nbx_exp_d(y * 0.69314718055994531LF);
  float m = md >= 3.4028235677973366e38LF ? kInf : float(md);
#else
  // Without float64 the exponent carries float32's 24 bits: results beyond ~2^8 lose digits.
  float m = nbx_exp2(b * log2(abs(a)));
#endif
  return (a < 0.0 && b_odd) ? -m : m;
}
