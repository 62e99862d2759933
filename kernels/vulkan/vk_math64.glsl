// Float64 exp and log2 from +, *, / alone (GLSL has no float64 transcendental functions).
// Used where float32 arithmetic is too short: pow's b * log2|a| must carry ~30 bits for a
// float32 result within 1.3e-6, which float64 gives without double-float tricks.

double nbx_exp_d(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893384LF) return double(kInf);
  if (x < -745.2LF) return 0.0LF;
  double n = roundEven(x * 1.4426950408889634LF);
  // fdlibm's ln2 split: n * kLn2Hi is exact for |n| < 2^11.
  double r = (x - n * 6.93147180369123816490e-01LF) - n * 1.90821492927058770002e-10LF;
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

// log2 of a finite x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s),
// s = (m - 1) / (m + 1), |s| <= 0.172, series to s^17 (error below 1e-16).
double nbx_log2_d(double x) {
  int e;
  double m = frexp(x, e);
  if (m < 0.70710678118654752LF) {
    m *= 2.0LF;
    e -= 1;
  }
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
  return double(e) + 2.0LF * s * t * 1.4426950408889634LF;
}
