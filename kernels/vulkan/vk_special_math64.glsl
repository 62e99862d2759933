// Float64 functions of issue 11's unary ops (included by vk_elementwise_ops.glsl for the
// float64 class). GLSL has no float64 transcendental built-ins: these build on
// vk_math64.glsl's exp/log/log1p/expm1/erf/atan and sin/cos polynomials, with the forms of
// vk_special_math.glsl (same names, overloaded on double) and more terms. Every literal
// carries LF: a plain literal would be a float32 constant, rounded before widening.

const double kPiD = 3.14159265358979323846LF;
const double kLn2D = 0.693147180559945309417LF;

double nbx_log1p(double x) { return nbx_log1p_d(x); }
double nbx_expm1(double x) { return x == 0.0LF ? x : nbx_expm1_d(x); }  // keeps -0

double nbx_sign_of(double x) { return double(int(x > 0.0LF) - int(x < 0.0LF)); }  // as float32

double nbx_log10(double x) {
  if (isnan(x) || x < 0.0LF) return double(kNaN);
  if (x == 0.0LF) return double(-kInf);
  if (isinf(x)) return x;
  double e;
  double lm = nbx_log_reduce_d(x, e);
  return e * 0.301029995663981195214LF + lm * 0.434294481903251827651LF;
}

double nbx_atan(double x) {
  double v = nbx_atan_pos_d(abs(x));
  return nbx_signbit_d(x) ? -v : v;
}

// asin(a) = atan(a / sqrt((1 - a)(1 + a))): 1 - a is exact above 1/2, and atan of a large
// quotient is pi/2 - atan of its small reciprocal, so sqrt's rounding stays relative.
double nbx_asin(double x) {
  double a = abs(x);
  if (isnan(x) || a > 1.0LF) return double(kNaN);
  double v = a == 1.0LF ? 1.57079632679489661923LF
                        : nbx_atan_pos_d(a / sqrt((1.0LF - a) * (1.0LF + a)));
  return nbx_signbit_d(x) ? -v : v;
}

double nbx_acos(double x) {
  if (isnan(x) || abs(x) > 1.0LF) return double(kNaN);
  if (x < -0.5LF) return kPiD - 2.0LF * nbx_asin(sqrt(0.5LF * (1.0LF + x)));
  if (x > 0.5LF) return 2.0LF * nbx_asin(sqrt(0.5LF * (1.0LF - x)));
  return 1.57079632679489661923LF - nbx_asin(x);
}

// Beyond |x| = 19, e^-|x| is below float64's precision of e^|x| (see the float32 form).
double nbx_exp_half_squared(double a) {
  double w = nbx_exp_d(0.5LF * a);
  precise double half_w = 0.5LF * w;
  precise double v = half_w * w;
  return v;
}

double nbx_sinh(double x) {
  if (isnan(x)) return x;
  double a = abs(x), v;
  if (a > 19.0LF) {
    v = nbx_exp_half_squared(a);
  } else {
    double t = nbx_expm1_d(a);
    v = 0.5LF * (t + t / (t + 1.0LF));
  }
  return nbx_signbit_d(x) ? -v : v;
}

double nbx_cosh(double x) {
  if (isnan(x)) return x;
  double a = abs(x);
  if (a > 19.0LF) return nbx_exp_half_squared(a);
  double e = nbx_exp_d(a);
  return 0.5LF * (e + 1.0LF / e);
}

double nbx_asinh(double x) {
  if (isnan(x) || isinf(x)) return x;
  double a = abs(x), v;
  if (a > 268435456.0LF) {
    v = nbx_log_d(a) + kLn2D;
  } else if (a > 2.0LF) {
    v = nbx_log_d(2.0LF * a + 1.0LF / (sqrt(a * a + 1.0LF) + a));
  } else {
    double a2 = a * a;
    v = nbx_log1p_d(a + a2 / (1.0LF + sqrt(1.0LF + a2)));
  }
  return nbx_signbit_d(x) ? -v : v;
}

double nbx_acosh(double x) {
  if (isnan(x) || x < 1.0LF) return double(kNaN);
  if (isinf(x)) return x;
  if (x > 268435456.0LF) return nbx_log_d(x) + kLn2D;
  if (x > 2.0LF) return nbx_log_d(2.0LF * x - 1.0LF / (x + sqrt(x * x - 1.0LF)));
  double t = x - 1.0LF;
  return nbx_log1p_d(t + sqrt(2.0LF * t + t * t));
}

double nbx_atanh(double x) {
  double a = abs(x), v;
  if (isnan(x) || a > 1.0LF) return double(kNaN);
  if (a == 1.0LF) return nbx_signbit_d(x) ? double(-kInf) : double(kInf);
  if (a < 0.5LF) {
    double t = a + a;
    v = 0.5LF * nbx_log1p_d(t + t * a / (1.0LF - a));
  } else {
    v = 0.5LF * nbx_log1p_d((a + a) / (1.0LF - a));
  }
  return nbx_signbit_d(x) ? -v : v;
}

// erfc: 1 - erf below 1.5 (erf < 0.967: at most 30x cancellation of erf's ~1e-16);
// Legendre's continued fraction from 1.5, 60 levels (below 1e-16 there).
// e^(x^2) erfc(x) on [1/2, 3/2] as a Chebyshev series in t = 2x - 2 (degree 16, fitted at
// the Chebyshev nodes to mpmath's erfc at 40 digits: within 1 ulp in float64). There
// 1 - erf(x) would lose up to 4.5 bits to cancellation (erfc(1.42) = 0.045: 10 ulps).
const double kErfcxCheb[17] = double[](
    4.4779581068089899362e-1LF,
    -1.44371170945797456731e-1LF,
    2.05234801332785784207e-2LF,
    -2.64590684739046319594e-3LF,
    3.14882835712758368525e-4LF,
    -3.50174181630598195003e-5LF,
    3.67167356069712216565e-6LF,
    -3.65472259825430487831e-7LF,
    3.4721186358948524448e-8LF,
    -3.16211548301761691652e-9LF,
    2.77056354765117291298e-10LF,
    -2.34250314284408207104e-11LF,
    1.91617138243028540985e-12LF,
    -1.51983783972057579859e-13LF,
    1.17114722746373252108e-14LF,
    -8.78228860170480877556e-16LF,
    6.3871983483829703803e-17LF);

double nbx_erfcx_mid(double x) {
  double t = 2.0LF * x - 2.0LF, b1 = 0.0LF, b2 = 0.0LF;
  for (int j = 16; j >= 1; --j) {
    double b0 = 2.0LF * t * b1 - b2 + kErfcxCheb[j];
    b2 = b1;
    b1 = b0;
  }
  return t * b1 - b2 + kErfcxCheb[0];
}

double nbx_erfc(double x) {
  if (isnan(x)) return x;
  if (x < 0.5LF) return 1.0LF - nbx_erf_d(x);
  if (x < 1.5LF) return nbx_exp_neg_sq_d(x) * nbx_erfcx_mid(x);
  if (x > 27.3LF) return 0.0LF;  // below half the smallest subnormal
  double z = x * x, f = z + 120.5LF;
  for (int i = 60; i >= 1; --i) f = z + double(2 * i) - 1.5LF - double(i) * (double(i) - 0.5LF) / f;
  return nbx_exp_neg_sq_d(x) * (x * 0.564189583547756286948LF / f);
}

// Giles' single-precision erfinv as the start, then three Newton steps (quadratic: ~3e-7,
// 1e-13, exact), the residual above 1/2 taken on erfc as in the float32 form.
double nbx_erfinv(double x) {
  double a = abs(x);
  if (isnan(x) || a > 1.0LF) return double(kNaN);
  if (a == 1.0LF) return nbx_signbit_d(x) ? double(-kInf) : double(kInf);
  if (a == 0.0LF) return x;
  double w = -nbx_log_d((1.0LF - a) * (1.0LF + a)), p;
  if (w < 5.0LF) {
    w -= 2.5LF;
    p = 2.81022636e-08LF;
    p = 3.43273939e-07LF + p * w;
    p = -3.5233877e-06LF + p * w;
    p = -4.39150654e-06LF + p * w;
    p = 0.00021858087LF + p * w;
    p = -0.00125372503LF + p * w;
    p = -0.00417768164LF + p * w;
    p = 0.246640727LF + p * w;
    p = 1.50140941LF + p * w;
  } else {
    w = sqrt(w) - 3.0LF;
    p = -0.000200214257LF;
    p = 0.000100950558LF + p * w;
    p = 0.00134934322LF + p * w;
    p = -0.00367342844LF + p * w;
    p = 0.00573950773LF + p * w;
    p = -0.0076224613LF + p * w;
    p = 0.00943887047LF + p * w;
    p = 1.00167406LF + p * w;
    p = 2.83297682LF + p * w;
  }
  double y = p * a;
  for (int step = 0; step < 3; ++step) {
    double residual = a > 0.5LF ? (1.0LF - a) - nbx_erfc(y) : nbx_erf_d(y) - a;
    y -= residual / (1.12837916709551257390LF * nbx_exp_d(-y * y));
  }
  return nbx_signbit_d(x) ? -y : y;
}

// sin(pi x) and pi / tan(pi x), reduced exactly as in the float32 forms (|x| < 2^52).
double nbx_sinpi(double x) {
  if (isnan(x) || isinf(x)) return double(kNaN);
  if (abs(x) >= 4503599627370496.0LF) return 0.0LF;
  double r = x - 2.0LF * floor(0.5LF * x + 0.5LF);
  if (abs(r) > 0.5LF) r = (r > 0.0LF ? 1.0LF : -1.0LF) - r;
  double ar = abs(r);
  double v = ar <= 0.25LF ? nbx_sin_poly_d(kPiD * ar) : nbx_cos_poly_d(kPiD * (0.5LF - ar));
  return r < 0.0LF ? -v : v;
}

double nbx_pi_cot_pi(double x) {
  double r = abs(x) >= 4503599627370496.0LF ? 0.0LF : x - floor(x + 0.5LF);
  double ar = abs(r), v;
  if (ar <= 0.25LF) {
    double t = kPiD * ar;
    v = nbx_cos_poly_d(t) / nbx_sin_poly_d(t);
  } else {
    double t = kPiD * (0.5LF - ar);
    v = nbx_sin_poly_d(t) / nbx_cos_poly_d(t);
  }
  return kPiD * (r < 0.0LF ? -v : v);
}

double nbx_sinc(double x) {
  if (x == 0.0LF) return 1.0LF;
  return nbx_div(nbx_sinpi(x), kPiD * x);
}

double nbx_digamma(double x) {
  if (x == 0.0LF) return nbx_signbit_d(x) ? double(kInf) : double(-kInf);
  if (isnan(x) || (isinf(x) && x > 0.0LF)) return x;
  double result = 0.0LF;
  if (x < 0.0LF) {
    if (x == floor(x)) return double(kNaN);
    result = -nbx_pi_cot_pi(x);
    x = 1.0LF - x;
  }
  for (int i = 0; i < 10 && x < 10.0LF; ++i) {
    result -= 1.0LF / x;
    x += 1.0LF;
  }
  double z = 1.0LF / (x * x);
  double series = z * (1.0LF / 12.0LF - z * (1.0LF / 120.0LF - z * (1.0LF / 252.0LF -
                  z * (1.0LF / 240.0LF - z * (1.0LF / 132.0LF - z * (691.0LF / 32760.0LF -
                  z * (1.0LF / 12.0LF)))))));
  return result + nbx_log_d(x) - 0.5LF / x - series;
}

// lgamma(2 + t), |t| <= 1/2: the series of the float32 form to t^28 (terms below 1e-18).
double nbx_lgamma2(double t) {
  const double c[27] = double[27](
      0.32246703342411321824LF, -0.067352301053198095133LF, 0.020580808427784547879LF,
      -0.0073855510286739852663LF, 0.0028905103307415232858LF, -0.0011927539117032609771LF,
      0.00050966952474304242234LF, -0.00022315475845357937976LF, 0.000099457512781808533715LF,
      -0.0000449262367381331417LF, 0.000020507212775670691553LF, -9.439488275268395904e-6LF,
      4.3748667899074878042e-6LF, -2.0392157538013662368e-6LF, 9.5514121304074198329e-7LF,
      -4.4924691987645660433e-7LF, 2.1207184805554665869e-7LF, -1.0043224823968099609e-7LF,
      4.7698101693639805658e-8LF, -2.271109460894316491e-8LF, 1.0838659214896954091e-8LF,
      -5.1834750419700466551e-9LF, 2.4836745438024783172e-9LF, -1.1921401405860912074e-9LF,
      5.7313672416788620133e-10LF, -2.7595228851242331452e-10LF, 1.3304764374244489481e-10LF);
  double p = c[26];
  for (int k = 25; k >= 0; --k) p = p * t + c[k];
  return t * (0.42278433509846713939LF + t * p);
}

double nbx_lgamma_pos(double x) {
  if (x >= 10.0LF) {
    double r = 1.0LF / x, z = r * r;
    double corr = r * (1.0LF / 12.0LF - z * (1.0LF / 360.0LF - z * (1.0LF / 1260.0LF -
                  z * (1.0LF / 1680.0LF - z * (1.0LF / 1188.0LF - z * (691.0LF / 360360.0LF -
                  z * (1.0LF / 156.0LF - z * (3617.0LF / 122400.0LF))))))));
    return (x - 0.5LF) * (nbx_log_d(x) - 1.0LF) + (0.918938533204672741780LF - 0.5LF) + corr;
  }
  if (x < 0.5LF) return nbx_lgamma2(x) - nbx_log_d(x) - nbx_log1p_d(x);
  if (x < 1.5LF) {
    double t = x - 1.0LF;
    return nbx_lgamma2(t) - nbx_log1p_d(t);
  }
  double prod = 1.0LF;
  for (int i = 0; i < 8 && x >= 2.5LF; ++i) {
    x -= 1.0LF;
    prod *= x;
  }
  return nbx_log_d(prod) + nbx_lgamma2(x - 2.0LF);
}

double nbx_lgamma(double x) {
  if (isnan(x)) return x;
  // Below the smallest normal: -log|x| (as the float32 form; a flushing driver stays consistent).
  if (abs(x) < 2.2250738585072014e-308LF) return -nbx_log_d(abs(x));
  if (isinf(x) || (x <= 0.0LF && x == floor(x))) return double(kInf);
  if (x > 0.0LF) return nbx_lgamma_pos(x);
  return 1.14472988584940017414LF - nbx_log_d(-x) - nbx_log_d(abs(nbx_sinpi(x))) -
         nbx_lgamma_pos(-x);
}

double nbx_deg2rad(double x) { return x * 0.0174532925199432957692LF; }
double nbx_rad2deg(double x) { return x * 57.2957795130823208768LF; }

double nbx_logit(double x, double lo, double hi, bool clamp_x) {
  if (clamp_x && !isnan(x)) x = x < lo ? lo : (x > hi ? hi : x);
  if (x >= 0.25LF && x <= 0.75LF) return nbx_log1p_d(nbx_div(2.0LF * x - 1.0LF, 1.0LF - x));
  return nbx_log_d(nbx_div(x, 1.0LF - x));
}
