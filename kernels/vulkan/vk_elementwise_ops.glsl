// The elementwise op table: one switch per compute class over the op code (a
// specialization constant, so the driver keeps a single case). Semantics follow the host
// reference (backends/host/host_elementwise.cpp), which follows PyTorch.

float attrF(int k) { return uintBitsToFloat(P.attrs[k].z); }
int attrI(int k) { return int(P.attrs[k].z); }

void nbx_fault_div_by_zero(uint pos) {
  if (atomicCompSwap(fault_rec.w[0], 0u, uint(kFaultIntegerDivisionByZero)) == 0u) {
    fault_rec.w[1] = uint(OP);
    fault_rec.w[2] = 0u;  // index: the divisor, 0
    fault_rec.w[3] = 0u;
    fault_rec.w[4] = 0u;  // bound: none
    fault_rec.w[5] = 0u;
    fault_rec.w[6] = pos;
    fault_rec.w[7] = 0u;
  }
}

// Generic helpers, overloaded for float and double.
#define NBX_FLOAT_HELPERS(T)                                                              \
  T nbx_copysign_inf(T x) { return (x < T(0) || (x == T(0) && sign_bit(x))) ? T(-kInf) : T(kInf); } \
  T maximum_nan(T a, T b) { return (isnan(a) || isnan(b)) ? T(kNaN) : max(a, b); }        \
  T minimum_nan(T a, T b) { return (isnan(a) || isnan(b)) ? T(kNaN) : min(a, b); }        \
  T nbx_div(T a, T b) {                                                                   \
    if (b == T(0)) {                                                                      \
      if (a == T(0) || isnan(a)) return T(kNaN);                                          \
      return (sign_bit(a) != sign_bit(b)) ? T(-kInf) : T(kInf);                           \
    }                                                                                     \
    if (abs(b) > T(8.5070591730234616e37)) return (a * T(0.25)) / (b * T(0.25));          \
    return a / b;                                                                         \
  }                                                                                       \
  T nbx_fmod(T a, T b) {                                                                  \
    if (isnan(a) || isnan(b) || isinf(a) || b == T(0)) return T(kNaN);                    \
    if (isinf(b) || abs(a) < abs(b)) return a;                                            \
    T r = nbx_fmod_finite(abs(a), abs(b));                                                \
    return sign_bit(a) ? -r : r;                                                          \
  }                                                                                       \
  T floor_divide_f(T a, T b) {                                                            \
    if (b == T(0)) return nbx_div(a, b);                                                  \
    T m = nbx_fmod(a, b);                                                                 \
    T d = nbx_div(a - m, b); /* NVIDIA's a * (1/b) flushes 1/b to 0 when |b| > 2^126 */    \
    if (m != T(0) && (b < T(0)) != (m < T(0))) d -= T(1);                                 \
    if (d == T(0)) return (sign_bit(a) != sign_bit(b)) ? -T(0) : T(0);                    \
    T fl = floor(d);                                                                      \
    if (d - fl > T(0.5)) fl += T(1);                                                      \
    return fl;                                                                            \
  }                                                                                       \
  T remainder_f(T a, T b) {                                                               \
    T m = nbx_fmod(a, b);                                                                 \
    if (m != T(0) && (b < T(0)) != (m < T(0))) m += b;                                    \
    return m;                                                                             \
  }

#if NBX_CLS_F
bool sign_bit(float x) { return (floatBitsToUint(x) >> 31) != 0u; }
// C fmod of finite a >= b > 0, exactly: long division of the integer mantissas, 7 bits at a
// time (the remainder stays below 2^24, so the shifted value fits 32 bits). Drivers need
// not fuse fma (llvmpipe does not), so a - trunc(a/b)*b would not be exact.
float nbx_fmod_finite(float a, float b) {
  uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
  int ea = int(ua >> 23), eb = int(ub >> 23);
  uint ma = ua & 0x7fffffu, mb = ub & 0x7fffffu;
  if (ea == 0) ea = 1; else ma |= 0x800000u;
  if (eb == 0) eb = 1; else mb |= 0x800000u;
  ma %= mb;
  for (int d = ea - eb; d > 0 && ma != 0u;) {
    int k = min(d, 7);
    ma = (ma << uint(k)) % mb;
    d -= k;
  }
  return ldexp(float(ma), eb - 150);
}
NBX_FLOAT_HELPERS(float)
#endif
#if NBX_CLS_D
bool sign_bit(double x) { return (unpackDouble2x32(x).y >> 31) != 0u; }
bool nbx_u64_ge(uvec2 a, uvec2 b) { return a.y > b.y || (a.y == b.y && a.x >= b.x); }
uvec2 nbx_u64_sub(uvec2 a, uvec2 b) {
  uint borrow;
  uint lo = usubBorrow(a.x, b.x, borrow);
  return uvec2(lo, a.y - b.y - borrow);
}
// As the float version, one bit per step on 53-bit mantissas held in two words (no int64
// needed): exact, and a few steps for operands of similar magnitude.
double nbx_fmod_finite(double a, double b) {
  uvec2 ua = unpackDouble2x32(a), ub = unpackDouble2x32(b);
  int ea = int(ua.y >> 20), eb = int(ub.y >> 20);
  uvec2 ma = uvec2(ua.x, ua.y & 0xfffffu), mb = uvec2(ub.x, ub.y & 0xfffffu);
  if (ea == 0) ea = 1; else ma.y |= 0x100000u;
  if (eb == 0) eb = 1; else mb.y |= 0x100000u;
  if (nbx_u64_ge(ma, mb)) ma = nbx_u64_sub(ma, mb);
  for (int d = ea - eb; d > 0; --d) {
    ma = uvec2(ma.x << 1, (ma.y << 1) | (ma.x >> 31));
    if (nbx_u64_ge(ma, mb)) ma = nbx_u64_sub(ma, mb);
  }
  return ldexp(double(ma.y) * 4294967296.0LF + double(ma.x), eb - 1075);
}
NBX_FLOAT_HELPERS(double)
#endif

// Issue 11's unary ops: their functions (overloaded float/double) and the cases both share.
#if NBX_CLS_F
#include "vk_special_math.glsl"
#endif
#if NBX_CLS_D
#include "vk_special_math64.glsl"
#endif
#define NBX_FLOAT_ISSUE11_CASES(T, A)                                                     \
  case OP_log1p: return nbx_log1p(a);                                                     \
  case OP_expm1: return nbx_expm1(a);                                                     \
  case OP_log10: return nbx_log10(a);                                                     \
  case OP_sign: case OP_sgn: return nbx_sign_of(a);                                     \
  case OP_signbit: return sign_bit(a) ? T(1) : T(0);                                      \
  case OP_asin: return nbx_asin(a);                                                       \
  case OP_acos: return nbx_acos(a);                                                       \
  case OP_atan: return nbx_atan(a);                                                       \
  case OP_sinh: return nbx_sinh(a);                                                       \
  case OP_cosh: return nbx_cosh(a);                                                       \
  case OP_asinh: return nbx_asinh(a);                                                     \
  case OP_acosh: return nbx_acosh(a);                                                     \
  case OP_atanh: return nbx_atanh(a);                                                     \
  case OP_erfc: return nbx_erfc(a);                                                       \
  case OP_erfinv: return nbx_erfinv(a);                                                   \
  case OP_lgamma: return nbx_lgamma(a);                                                   \
  case OP_digamma: return nbx_digamma(a);                                                 \
  case OP_square: return a * a;                                                           \
  case OP_frac: return a - trunc(a);                                                      \
  case OP_deg2rad: return nbx_deg2rad(a);                                                 \
  case OP_rad2deg: return nbx_rad2deg(a);                                                 \
  case OP_logit: return nbx_logit(a, A(0), A(1), A(2) != T(0));                           \
  case OP_sinc: return nbx_sinc(a);                                                       \
  case OP_isposinf: return (isinf(a) && a > T(0)) ? T(1) : T(0);                          \
  case OP_isneginf: return (isinf(a) && a < T(0)) ? T(1) : T(0);

// Cases shared by float32 and float64 (T) with attribute reader A.
#define NBX_FLOAT_COMMON_CASES(T, A)                                                      \
  case OP_copy: return a;                                                                 \
  case OP_neg: return -a;                                                                 \
  case OP_abs: return abs(a);                                                             \
  case OP_sqrt: return a < T(0) ? T(kNaN) : sqrt(a);                                      \
  case OP_rsqrt:                                                                          \
    if (a == T(0)) return nbx_copysign_inf(a);                                            \
    if (isinf(a) && a > T(0)) return T(0);                                                \
    return (a < T(0) || isnan(a)) ? T(kNaN) : T(1) / sqrt(a);                             \
  case OP_reciprocal: return nbx_div(T(1), a);                                            \
  case OP_relu: return isnan(a) ? a : (a > T(0) ? a : T(0));                              \
  case OP_leaky_relu: return a > T(0) ? a : a * A(0);                                     \
  case OP_hardsigmoid: return isnan(a) ? a : min(max(a + T(3), T(0)), T(6)) / T(6);       \
  case OP_hardswish: return isnan(a) ? a : a * (min(max(a + T(3), T(0)), T(6)) / T(6));   \
  case OP_floor: return floor(a);                                                         \
  case OP_ceil: return ceil(a);                                                           \
  case OP_round: { /* half to even from floor: llvmpipe's double roundEven (Mesa 22.3.6,  \
    Debian's 2026-12 update) took -5.5 to -5 */                                           \
    T r = floor(a);                                                                       \
    const T d = a - r; /* exact below 2^52 (2^23); 0 above, where a is an integer */      \
    if (d > T(0.5) || (d == T(0.5) && r - T(2) * floor(r * T(0.5)) != T(0))) r += T(1);   \
    return r == T(0) ? a * T(0) : r; /* keeps the sign of zero: round(-0.4) is -0 */      \
  }                                                                                       \
  case OP_trunc: return trunc(a);                                                         \
  case OP_isnan: return isnan(a) ? T(1) : T(0);                                           \
  case OP_isinf: return isinf(a) ? T(1) : T(0);                                           \
  case OP_isfinite: return (isnan(a) || isinf(a)) ? T(0) : T(1);                          \
  case OP_threshold: return a <= A(0) ? A(1) : a; /* attrs in x's dtype; NaN stays */   \
  case OP_nan_to_num:                                                                     \
    if (isnan(a)) return A(0);                                                            \
    if (isinf(a)) return a > T(0) ? A(1) : A(2);                                          \
    return a;                                                                             \
  case OP_logical_not: return a == T(0) ? T(1) : T(0);                                    \
  case OP_add: return a + A(0) * b;                                                       \
  case OP_sub: return a - A(0) * b;                                                       \
  case OP_mul: return a * b;                                                              \
  case OP_div: return nbx_div(a, b);                                                      \
  case OP_floor_divide: return floor_divide_f(a, b);                                      \
  case OP_remainder: return remainder_f(a, b);                                            \
  case OP_maximum: return maximum_nan(a, b);                                              \
  case OP_minimum: return minimum_nan(a, b);                                              \
  case OP_logical_and: return (a != T(0) && b != T(0)) ? T(1) : T(0);                     \
  case OP_logical_or: return (a != T(0) || b != T(0)) ? T(1) : T(0);                      \
  case OP_logical_xor: return ((a != T(0)) != (b != T(0))) ? T(1) : T(0);                 \
  case OP_eq: return a == b ? T(1) : T(0);                                                \
  case OP_ne: return !(a == b) ? T(1) : T(0);                                             \
  case OP_lt: return a < b ? T(1) : T(0);                                                 \
  case OP_le: return a <= b ? T(1) : T(0);                                                \
  case OP_gt: return a > b ? T(1) : T(0);                                                 \
  case OP_ge: return a >= b ? T(1) : T(0);                                                \
  case OP_fmod: return nbx_fmod(a, b);                                                    \
  case OP_hypot: return nbx_hypot(a, b);                                                  \
  case OP_copysign: return nbx_copysign(a, b);                                            \
  case OP_logaddexp: return nbx_logaddexp(a, b, false);                                   \
  case OP_logaddexp2: return nbx_logaddexp(a, b, true);                                   \
  case OP_xlogy: return isnan(b) ? b : (a == T(0) ? T(0) : a * nbx_log_of(b));            \
  case OP_nextafter: return nbx_nextafter(a, b);                                          \
  case OP_isclose: return nbx_isclose(a, b, A(0), A(1), A(2) != T(0)) ? T(1) : T(0);      \
  case OP_where: return a != T(0) ? b : c;                                                \
  case OP_clamp: return minimum_nan(maximum_nan(a, b), c);                                \
  case OP_lerp: return abs(c) < T(0.5) ? a + c * (b - a) : b - (b - a) * (T(1) - c);      \
  case OP_addcmul: return a + A(0) * b * c;                                               \
  case OP_addcdiv: return a + nbx_div(A(0) * b, c);

#if NBX_CLS_F
#if NBX_F64
// Where the device has float64, ops whose float32 intermediates can overflow while the host's
// float64 ones do not (a + alpha*b, lerp, addcmul, addcdiv near FLT_MAX) run in float64 and
// round once, like the host; the backend picks this build for them.
double attrFD(int k) { return packDouble2x32(P.attrs[k].xy); }
float nbx_d2f(double d) {
  return abs(d) >= 3.4028235677973366e38LF ? (d > 0.0LF ? kInf : -kInf) : float(d);
}
double nbx_div_wide(double a, double b) {
  if (b == 0.0LF) {
    if (a == 0.0LF || isnan(a)) return double(kNaN);
    return ((a < 0.0LF) != sign_bit(float(b))) ? double(-kInf) : double(kInf);
  }
  return a / b;
}
bool nbx_wide_op() {
  return OP == OP_add || OP == OP_sub || OP == OP_lerp || OP == OP_addcmul || OP == OP_addcdiv;
}
float opF_wide(float a, float b, float c) {
  switch (OP) {
    case OP_add:
      if (attrF(0) == 1.0) return a + b;
      return nbx_d2f(double(a) + attrFD(0) * double(b));
    case OP_sub:
      if (attrF(0) == 1.0) return a - b;
      return nbx_d2f(double(a) - attrFD(0) * double(b));
    case OP_lerp: {
      double s = double(a), e = double(b), w = double(c);
      return nbx_d2f(abs(w) < 0.5LF ? s + w * (e - s) : e - (e - s) * (1.0LF - w));
    }
    case OP_addcmul: return nbx_d2f(double(a) + attrFD(0) * double(b) * double(c));
    case OP_addcdiv: return nbx_d2f(double(a) + nbx_div_wide(attrFD(0) * double(b), double(c)));
    default: return kNaN;
  }
}
#endif

float nbx_sigmoid(float a) { return 1.0 / (1.0 + nbx_exp(-a)); }
// log1p(e^z) as max(z, 0) + log1p(e^-|z|), as nbx_softplus_d: softplus(-10) was 4e-4 off and
// mish(-16), which goes through it, 6%.
float nbx_softplus(float a, float beta, float threshold) {
  float z = a * beta;
  if (z > threshold) return a;
  if (isnan(z)) return z;
  return (max(z, 0.0) + nbx_log1p(nbx_exp(-abs(z)))) / beta;
}

// Issue 11's binary ops (float32; float16/bfloat16 compute here too). Bits, not arithmetic,
// wherever a driver that flushes subnormals would change the answer (copysign, nextafter,
// the 16-bit decode of isclose's roundings).
float nbx_log_of(float x) { return nbx_log(x); }
float nbx_copysign(float a, float b) {
  return uintBitsToFloat((floatBitsToUint(a) & 0x7fffffffu) | (floatBitsToUint(b) & 0x80000000u));
}
// A float16 pattern's value, subnormals by integer arithmetic (exact) rather than through
// unpackHalf2x16, which a driver may flush.
float nbx_f16_value(uint h) {
  float m = (h & 0x7c00u) == 0u ? float(h & 0x3ffu) * 5.9604644775390625e-8
                                : unpackHalf2x16(h & 0x7fffu).x;
  return (h & 0x8000u) != 0u ? -m : m;
}
// One step of a sign-magnitude pattern toward y's (float32, or 16 bits in the low half).
uint nbx_step_bits(uint x, uint y, uint sign) {
  uint mx = x & ~sign, my = y & ~sign;
  if (x == y || (mx == 0u && my == 0u)) return y;
  if (mx == 0u) return (y & sign) | 1u;
  bool away = (x & sign) == (y & sign) && my > mx;
  return away ? x + 1u : x - 1u;
}
// One ulp of the output dtype: float32 steps would be 2^13 (float16) or 2^16 (bfloat16)
// times too short.
float nbx_nextafter(float a, float b) {
  if (isnan(a) || isnan(b)) return kNaN;
  if (ODT == DT_FLOAT16)
    return nbx_f16_value(nbx_step_bits(nbx_f32_to_f16(a), nbx_f32_to_f16(b), 0x8000u));
  if (ODT == DT_BFLOAT16) {
    uint r = nbx_step_bits(floatBitsToUint(a) >> 16, floatBitsToUint(b) >> 16, 0x8000u);
    return uintBitsToFloat(r << 16);
  }
  return uintBitsToFloat(nbx_step_bits(floatBitsToUint(a), floatBitsToUint(b), 0x80000000u));
}
// m sqrt(1 + (n/m)^2) without the division: both scaled by the same power of two (exact) to
// put m in [1/2, 1), so the squares neither overflow nor underflow. hypot(inf, NaN) = inf.
float nbx_hypot(float a, float b) {
  if (isinf(a) || isinf(b)) return kInf;
  if (isnan(a) || isnan(b)) return kNaN;
  float m = max(abs(a), abs(b)), n = min(abs(a), abs(b));
  if (n == 0.0) return m;
  int lift = m < 1.17549435e-38 ? 24 : 0;  // frexp is undefined for subnormals
  m = ldexp(m, lift);
  n = ldexp(n, lift);
  int e;
  frexp(m, e);
  // nbx_scale: 2^±128 is no float, the scaled values are.
  float x = nbx_scale(m, -e), y = nbx_scale(n, -e);
  return nbx_scale(sqrt(x * x + y * y), e - lift);
}
// PyTorch's max + log1p(e^-|a - b|) (base 2: log2(1 + 2^-|a - b|)); equal infinities
// return themselves (inf - inf would be NaN), NaN propagates through the difference.
float nbx_logaddexp(float a, float b, bool base2) {
  if (isinf(a) && a == b) return a;
  float d = -abs(a - b);
  float t = base2 ? nbx_log1p(nbx_exp2(d)) * 1.44269504088896341 : nbx_log1p(nbx_exp(d));
  return max(a, b) + t;
}
// PyTorch's isclose step by step, each step rounded to a 16-bit input dtype as PyTorch's
// float16/bfloat16 ops round every result.
float nbx_round_to_input(float v) {
  int dt = (SCALAR_MASK & 1) != 0 ? IDT1 : IDT0;
  if (dt == DT_FLOAT16) return nbx_f16_value(nbx_f32_to_f16(v));
  if (dt == DT_BFLOAT16) return uintBitsToFloat(nbx_f32_to_bf16(v) << 16);
  return v;
}
bool nbx_isclose(float a, float b, float rtol, float atol, bool equal_nan) {
  if (a == b || (equal_nan && isnan(a) && isnan(b))) return true;
  if (rtol == 0.0 && atol == 0.0) return false;
  float allowed = nbx_round_to_input(atol + abs(nbx_round_to_input(rtol * b)));
  float actual = abs(nbx_round_to_input(a - b));
  return !isinf(actual) && !isnan(actual) && actual <= allowed;
}

float opF(float a, float b, float c, uint pos) {
#if NBX_F64
  if (nbx_wide_op()) return opF_wide(a, b, c);
#endif
  switch (OP) {
    NBX_FLOAT_COMMON_CASES(float, attrF)
    NBX_FLOAT_ISSUE11_CASES(float, attrF)
    case OP_exp: return nbx_exp(a);
    case OP_exp2: return nbx_exp2(a);
    case OP_log: return nbx_log(a);
    case OP_log2: return nbx_log2(a);
    case OP_sin: return nbx_sin(a);
    case OP_cos: return nbx_cos(a);
    case OP_tan: return nbx_tan(a);
    case OP_tanh: return nbx_tanh(a);
    case OP_sigmoid: return nbx_sigmoid(a);
    case OP_erf: return nbx_erf(a);
    case OP_silu: return a * nbx_sigmoid(a);
    case OP_gelu_erf: return 0.5 * a * (1.0 + nbx_erf(a * 0.70710678118654752));
    case OP_gelu_tanh:
      return 0.5 * a * (1.0 + nbx_tanh(0.79788456080286536 * (a + 0.044715 * a * a * a)));
    case OP_mish: return a * nbx_tanh(nbx_softplus(a, 1.0, 20.0));
    case OP_softplus: return nbx_softplus(a, attrF(0), attrF(1));
    case OP_elu: return a > 0.0 ? a : attrF(0) * nbx_expm1(a);
    case OP_selu:
      return 1.0507009873554805 * (a > 0.0 ? a : 1.6732632423543772 * nbx_expm1(a));
    case OP_celu: return a > 0.0 ? a : attrF(0) * nbx_expm1(a / attrF(0));
    // min(x, 0) - log1p(e^-|x|); GLSL's min of a NaN may return either operand.
    case OP_log_sigmoid: return isnan(a) ? a : min(a, 0.0) - nbx_log1p(nbx_exp(-abs(a)));
    // The gated products (core/ops/glu.hpp): a and b are the two halves of one input; the
    // gelu forms avoid 1 + erf and 1 + tanh, which cancel for a < 0 (host_elementwise.cpp).
    case OP_sigmoid_mul: return a * nbx_sigmoid(b);
    case OP_silu_mul: return a / (1.0 + nbx_exp(-a)) * b;
    case OP_gelu_erf_mul: return 0.5 * a * nbx_erfc(-a * 0.70710678118654752) * b;
    case OP_gelu_tanh_mul:
      return a / (1.0 + nbx_exp(-1.5957691216057307 * (a + 0.044715 * a * a * a))) * b;
    case OP_pow: return nbx_pow(a, b);
    case OP_atan2: return nbx_atan2(a, b);
    default: return kNaN;
  }
}

#endif

#if NBX_CLS_D
double attrD(int k) { return packDouble2x32(P.attrs[k].xy); }
// Issue 11's binary ops in float64 (the float32 versions above say why each is so).
double nbx_log_of(double x) { return nbx_log_d(x); }
double nbx_copysign(double a, double b) {
  uvec2 ua = unpackDouble2x32(a), ub = unpackDouble2x32(b);
  return packDouble2x32(uvec2(ua.x, (ua.y & 0x7fffffffu) | (ub.y & 0x80000000u)));
}
double nbx_nextafter(double a, double b) {
  if (isnan(a) || isnan(b)) return double(kNaN);
  uvec2 x = unpackDouble2x32(a), y = unpackDouble2x32(b);
  uvec2 mx = uvec2(x.x, x.y & 0x7fffffffu), my = uvec2(y.x, y.y & 0x7fffffffu);
  if (x == y || (mx == uvec2(0u) && my == uvec2(0u))) return b;
  if (mx == uvec2(0u)) return packDouble2x32(uvec2(1u, y.y & 0x80000000u));
  uint c;
  if ((x.y >> 31) == (y.y >> 31) && nbx_u64_ge(my, mx)) {  // away from zero
    uint lo = uaddCarry(x.x, 1u, c);
    return packDouble2x32(uvec2(lo, x.y + c));
  }
  uint lo = usubBorrow(x.x, 1u, c);
  return packDouble2x32(uvec2(lo, x.y - c));
}
double nbx_hypot(double a, double b) {
  if (isinf(a) || isinf(b)) return double(kInf);
  if (isnan(a) || isnan(b)) return double(kNaN);
  double m = max(abs(a), abs(b)), n = min(abs(a), abs(b));
  if (n == 0.0LF) return m;
  int lift = m < 2.2250738585072014e-308LF ? 54 : 0;
  m = ldexp(m, lift);
  n = ldexp(n, lift);
  int e;
  frexp(m, e);
  int h = e / 2;  // in two steps, as nbx_scale: 2^±1024 is no double
  double x = ldexp(ldexp(m, -h), h - e), y = ldexp(ldexp(n, -h), h - e);
  double r = sqrt(x * x + y * y);
  return ldexp(ldexp(r, h), e - lift - h);
}
double nbx_logaddexp(double a, double b, bool base2) {
  if (isinf(a) && a == b) return a;
  double d = -abs(a - b);
  double t = base2 ? nbx_log1p_d(nbx_exp_d(d * 0.69314718055994531LF)) * 1.4426950408889634LF
                   : nbx_log1p_d(nbx_exp_d(d));
  return max(a, b) + t;
}
bool nbx_isclose(double a, double b, double rtol, double atol, bool equal_nan) {
  if (a == b || (equal_nan && isnan(a) && isnan(b))) return true;
  if (rtol == 0.0LF && atol == 0.0LF) return false;
  double actual = abs(a - b);
  return !isinf(actual) && !isnan(actual) && actual <= atol + abs(rtol * b);
}

// GLSL has no float64 exp/log/sin: vk_math64.glsl builds them from arithmetic.
double opD(double a, double b, double c, uint pos) {
  switch (OP) {
    NBX_FLOAT_COMMON_CASES(double, attrD)
    NBX_FLOAT_ISSUE11_CASES(double, attrD)
    case OP_exp: return nbx_exp_d(a);
    case OP_exp2: return nbx_exp_d(a * 0.69314718055994531LF);
    case OP_log: return nbx_log_d(a);
    case OP_log2: return isnan(a) || a < 0.0LF ? double(kNaN) : a == 0.0LF ? double(-kInf) : isinf(a) ? a : nbx_log2_d(a);
    case OP_tanh: return nbx_tanh_d(a);
    case OP_sigmoid: return nbx_sigmoid_d(a);
    case OP_erf: return nbx_erf_d(a);
    case OP_silu: return a * nbx_sigmoid_d(a);
    case OP_gelu_erf: return 0.5LF * a * (1.0LF + nbx_erf_d(a * 0.70710678118654752LF));
    case OP_gelu_tanh:
      return 0.5LF * a * (1.0LF + nbx_tanh_d(0.79788456080286536LF * (a + 0.044715LF * a * a * a)));
    case OP_mish: return a * nbx_tanh_d(nbx_softplus_d(a, 1.0LF, 20.0LF));
    case OP_softplus: return nbx_softplus_d(a, attrD(0), attrD(1));
    case OP_elu: return a > 0.0LF ? a : attrD(0) * nbx_expm1_d(a);
    case OP_selu:
      return 1.0507009873554804934LF * (a > 0.0LF ? a : 1.6732632423543772848LF * nbx_expm1_d(a));
    case OP_celu: return a > 0.0LF ? a : attrD(0) * nbx_expm1_d(a / attrD(0));
    case OP_log_sigmoid:
      return isnan(a) ? a : min(a, 0.0LF) - nbx_log1p_d(nbx_exp_d(-abs(a)));
    case OP_sigmoid_mul: return a * nbx_sigmoid_d(b);
    case OP_silu_mul: return a / (1.0LF + nbx_exp_d(-a)) * b;
    case OP_gelu_erf_mul: return 0.5LF * a * nbx_erfc(-a * 0.70710678118654752LF) * b;
    case OP_gelu_tanh_mul:
      return a / (1.0LF + nbx_exp_d(-1.5957691216057307LF * (a + 0.044715LF * a * a * a))) * b;
    case OP_sin: return nbx_sin_d(a);
    case OP_cos: return nbx_cos_d(a);
    case OP_tan: return nbx_tan_d(a);
    case OP_pow: return nbx_pow_d(a, b);
    case OP_atan2: return nbx_atan2_d(a, b);
    case OP_float_power: return nbx_pow_d(a, b);
    default: return double(kNaN);
  }
}
#endif

// Integer cases (T = int or int64_t, BITS its width).
#define NBX_INT_CASES(T, BITS, A)                                                          \
  case OP_copy: return a;                                                                  \
  case OP_neg: return -a;                                                                  \
  case OP_abs: return a < T(0) ? -a : a;                                                   \
  case OP_relu: return a > T(0) ? a : T(0);                                                \
  case OP_floor: case OP_ceil: case OP_round: case OP_trunc: case OP_nan_to_num: return a; \
  case OP_isnan: case OP_isinf: return T(0);                                               \
  case OP_isfinite: return T(1);                                                           \
  case OP_logical_not: return a == T(0) ? T(1) : T(0);                                     \
  case OP_bitwise_not: return CDT == DT_BOOL ? (a == T(0) ? T(1) : T(0)) : ~a;             \
  case OP_sign: case OP_sgn: return a > T(0) ? T(1) : (a < T(0) ? T(-1) : T(0));            \
  case OP_signbit: return a < T(0) ? T(1) : T(0);                                          \
  case OP_square: return a * a;                                                            \
  case OP_isposinf: case OP_isneginf: return T(0);                                         \
  case OP_threshold: return a <= A(0) ? A(1) : a;                                          \
  case OP_add: return a + A(0) * b;                                                        \
  case OP_sub: return a - A(0) * b;                                                        \
  case OP_mul: return a * b;                                                               \
  case OP_floor_divide: {                                                                  \
    if (b == T(0)) { nbx_fault_div_by_zero(pos); return T(0); }                            \
    if (b == T(-1)) return -a;                                                             \
    T q = a / b;                                                                           \
    if (q * b != a && ((a < T(0)) != (b < T(0)))) q -= T(1);                               \
    return q;                                                                              \
  }                                                                                        \
  case OP_remainder: {                                                                     \
    if (b == T(0)) { nbx_fault_div_by_zero(pos); return T(0); }                            \
    if (b == T(-1)) return T(0);                                                           \
    T r = a - (a / b) * b;                                                                 \
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;                                   \
    return r;                                                                              \
  }                                                                                        \
  case OP_pow: {                                                                           \
    if (b < T(0)) return a == T(1) ? T(1) : (a == T(-1) ? ((b & T(1)) != T(0) ? T(-1) : T(1)) : T(0)); \
    T r = T(1), base = a, e = b;                                                           \
    for (int it = 0; it < BITS && e != T(0); ++it) {                                       \
      if ((e & T(1)) != T(0)) r *= base;                                                   \
      base *= base;                                                                        \
      e >>= 1;                                                                             \
    }                                                                                      \
    return r;                                                                              \
  }                                                                                        \
  case OP_maximum: return max(a, b);                                                       \
  case OP_minimum: return min(a, b);                                                       \
  case OP_bitwise_and: return a & b;                                                       \
  case OP_bitwise_or: return a | b;                                                        \
  case OP_bitwise_xor: return a ^ b;                                                       \
  case OP_bitwise_left_shift: return (b < T(0) || b >= T(BITS)) ? T(0) : (a << b);         \
  case OP_bitwise_right_shift:                                                             \
    return (b < T(0) || b >= T(BITS)) ? (a < T(0) ? T(-1) : T(0)) : (a >> b);              \
  case OP_logical_and: return (a != T(0) && b != T(0)) ? T(1) : T(0);                      \
  case OP_logical_or: return (a != T(0) || b != T(0)) ? T(1) : T(0);                       \
  case OP_logical_xor: return ((a != T(0)) != (b != T(0))) ? T(1) : T(0);                  \
  case OP_eq: return a == b ? T(1) : T(0);                                                 \
  case OP_ne: return a != b ? T(1) : T(0);                                                 \
  case OP_lt: return a < b ? T(1) : T(0);                                                  \
  case OP_le: return a <= b ? T(1) : T(0);                                                 \
  case OP_gt: return a > b ? T(1) : T(0);                                                  \
  case OP_ge: return a >= b ? T(1) : T(0);                                                 \
  case OP_fmod: { /* C's %: the dividend's sign */                                         \
    if (b == T(0)) { nbx_fault_div_by_zero(pos); return T(0); }                            \
    return b == T(-1) ? T(0) : a - (a / b) * b;                                            \
  }                                                                                        \
  case OP_where: return a != T(0) ? b : c;                                                 \
  case OP_clamp: return min(max(a, b), c);                                                 \
  case OP_addcmul: return a + A(0) * b * c;

#if NBX_CLS_I
int opI(int a, int b, int c, uint pos) {
  switch (OP) {
    NBX_INT_CASES(int, 32, attrI)
    default: return 0;
  }
}

#endif

#if NBX_CLS_L
int64_t attrL(int k) { return int64_t(pack64(P.attrs[k].xy)); }
int64_t opL(int64_t a, int64_t b, int64_t c, uint pos) {
  switch (OP) {
    NBX_INT_CASES(int64_t, 64, attrL)
    default: return 0l;
  }
}
#endif
