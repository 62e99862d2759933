// The one tolerance table of the conformance suite: per output dtype, then per-op
// adjustments with the reason for each. Keep allowances honest and small: every entry says
// why the host reference (float64 math, one rounding) and a GPU (float32 math for float32,
// float16 and bfloat16 results) may legitimately differ by that much.
#include <algorithm>
#include <array>
#include <cmath>
#include <span>

#include "tests/conformance/conformance_compare.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

// PyTorch's assert_close defaults. float32's rtol is ~5.5-11 ulp, so a float32 kernel
// within a few ulp of the correctly rounded value passes without a per-op entry.
Tolerance dtype_tolerance(DType t) {
  switch (t) {
    case DType::kFloat16:
      return {1e-3, 1e-5, 0, false, ""};
    case DType::kBFloat16:
      return {1.6e-2, 1e-5, 0, false, ""};
    case DType::kFloat32:
      return {1.3e-6, 1e-5, 0, false, ""};
    case DType::kFloat64:
      return {1e-7, 1e-7, 0, false, ""};
    default:
      return {};  // integer and bool results are exact
  }
}

double smallest_normal(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 6.103515625e-05;
    case DType::kFloat64:
      return 2.2250738585072014e-308;
    default:
      return 1.1754943508222875e-38;  // float32, bfloat16
  }
}

// Float results that are exact by definition: a selection among inputs, a sign change, a
// rounding to an integral value, or a constant. Any difference here is a bug, never
// float32-vs-float64 arithmetic.
constexpr std::array<std::string_view, 14> kExactOps = {
    "neg",     "abs",     "relu",  "floor",       "ceil",  "round",      "trunc",
    "maximum", "minimum", "where", "masked_fill", "clamp", "nan_to_num", "threshold",
};

struct UlpAllowance {
  std::string_view op;
  DType dtype;
  int ulps;
  std::string_view why;
};

// Per-op allowances beyond the dtype's rtol, in ulps of the output dtype. None is needed
// today: float32's rtol already holds ~5-11 ulp, and on llvmpipe (2026-11-30) every
// float32 transcendental, pow included (computed as exp2(b*log2|a|), whose log2 error
// |b*log2 a| <= 45 amplifies for the inputs drawn), stayed inside it wherever its result
// was right at all. The failures seen were wrong answers (sin of 3.4e38 = -inf, tan off
// by 7e-6 relative from an inexact argument reduction), which an allowance must not hide.
// An entry needs the op, the dtype, the ulps and the reason, e.g.
//   {"pow", DType::kFloat32, 16, "exp2(b*log2|a|): log2's error is scaled by |b*log2 a|"}.
constexpr std::span<const UlpAllowance> kUlpAllowances{};

// Ops whose results every backend computes to a few ulps relative, down to the smallest
// result (issue 11 defect 8): the dtype's atol would hide a wrong small result (vulkan:0 had
// softplus(-10) 4e-4 off, mish(-16) 6%, erf(0.05) 20 ulp, all below float32's atol 1e-5),
// so these drop it, keeping the ulps for subnormal results. float64 holds ~1e-15 here, so
// its rtol is 1e-13. mish keeps the dtype's smallest normal as atol: for x below -87
// (float32) e^x is subnormal, in PyTorch's float32 formula too, and x e^x scales its
// rounding by |x| <= 104 (mish(-101.8) is 6% off in float32 math on llvmpipe). gelu keeps
// an atol: 1 + erf(x / sqrt 2) cancels for x < 0, in the host's formula and PyTorch's
// alike, leaving |x|/2 times erf's error near 1, while 1 + erf is not 0 (|x| < 5.5 in
// float32: 2 ulps of 1 give 3.3e-7; |x| < 8.4 in float64: ~8 epsilon give 7.5e-15).
// Measured on host and llvmpipe (2026-12-02), with tests/unit/test_vk_accuracy.cpp's sweeps.
struct Tightening {
  std::string_view op;
  DType dtype;
  Tolerance tolerance;
};
constexpr std::string_view kRelativeWhy =
    "accurate to a few ulps relative: no atol above the subnormal range";
constexpr std::string_view kMishWhy = "x e^x below e^x's normal range: smallest normal as atol";
constexpr std::string_view kGeluWhy = "1 + erf cancels for x < 0: atol of |x|/2 x erf's ulps at 1";
constexpr std::array<Tightening, 12> kTightenings = {{
    {"softplus", DType::kFloat32, {1.3e-6, 0, 4, false, kRelativeWhy}},
    {"mish", DType::kFloat32, {1.3e-6, 1.2e-38, 4, false, kMishWhy}},
    {"erf", DType::kFloat32, {1.3e-6, 0, 4, false, kRelativeWhy}},
    {"log", DType::kFloat32, {1.3e-6, 0, 4, false, kRelativeWhy}},
    {"log2", DType::kFloat32, {1.3e-6, 0, 4, false, kRelativeWhy}},
    {"gelu", DType::kFloat32, {1.3e-6, 4e-7, 0, false, kGeluWhy}},
    {"softplus", DType::kFloat64, {1e-13, 0, 4, false, kRelativeWhy}},
    {"mish", DType::kFloat64, {1e-13, 2.3e-308, 4, false, kMishWhy}},
    {"erf", DType::kFloat64, {1e-13, 0, 4, false, kRelativeWhy}},
    {"log", DType::kFloat64, {1e-13, 0, 4, false, kRelativeWhy}},
    {"log2", DType::kFloat64, {1e-13, 0, 4, false, kRelativeWhy}},
    {"gelu", DType::kFloat64, {1e-13, 1e-14, 0, false, kGeluWhy}},
}};

// Issue 11's unary ops. sign, sgn, frac and square are exact by definition (a selection, an
// exact subtraction, one rounding of x * x). The rest hold a few ulps relative wherever their
// result is not near one of their zeros, so they drop the atol like the ops above; lgamma
// and digamma keep one, as each crosses zero between the grid points the series and the
// recurrence meet (lgamma at 1, 2 and below -2, digamma at 1.46 and between the poles),
// where only an absolute bound is meaningful: 2 ulps of 1 (float32) and 1e-14 (float64);
// float32 digamma 4 ulps of 2, the size of the recurrence's terms that cancel at its zero
// (vulkan:0, 2026-12-02: 3.1e-7 at 1.516).
struct Issue11Tolerance {
  std::string_view op;
  Tolerance f32, f64;
};
constexpr Tolerance kExact = {0, 0, 0, true, "exact by definition"};
constexpr Tolerance kRelative32 = {1.3e-6, 0, 4, false, kRelativeWhy};
constexpr Tolerance kRelative64 = {1e-13, 0, 4, false, kRelativeWhy};
constexpr std::string_view kGammaWhy = "crosses zero: an absolute bound near its zeros";
constexpr Tolerance kGamma32 = {1.3e-6, 2.4e-7, 0, false, kGammaWhy};
constexpr Tolerance kGamma64 = {1e-13, 1e-14, 0, false, kGammaWhy};
constexpr Tolerance kDigamma32 = {1.3e-6, 4.8e-7, 0, false, kGammaWhy};
constexpr Issue11Tolerance kIssue11Tolerances[] = {
    {"sign", kExact, kExact},
    {"sgn", kExact, kExact},
    {"frac", kExact, kExact},
    {"square", kExact, kExact},
    {"log1p", kRelative32, kRelative64},
    {"expm1", kRelative32, kRelative64},
    {"log10", kRelative32, kRelative64},
    {"asin", kRelative32, kRelative64},
    {"acos", kRelative32, kRelative64},
    {"atan", kRelative32, kRelative64},
    {"sinh", kRelative32, kRelative64},
    {"cosh", kRelative32, kRelative64},
    {"asinh", kRelative32, kRelative64},
    {"acosh", kRelative32, kRelative64},
    {"atanh", kRelative32, kRelative64},
    {"erfc", kRelative32, kRelative64},
    {"erfinv", kRelative32, kRelative64},
    {"deg2rad", kRelative32, kRelative64},
    {"rad2deg", kRelative32, kRelative64},
    {"logit", kRelative32, kRelative64},
    {"sinc", kRelative32, kRelative64},
    {"lgamma", kGamma32, kGamma64},
    {"digamma", kDigamma32, kGamma64},
    // Binary (B): fmod's result is representable, copysign and nextafter are bit operations,
    // clamp_min/max selections; hypot (no cancellation) and xlogy (log is relative-accurate
    // near 1) hold a few ulps. float_power's float64 exp(b log a) carries |b log a| <= 710
    // times float64's epsilon: 1e-12.
    {"fmod", kExact, kExact},
    {"copysign", kExact, kExact},
    {"nextafter", kExact, kExact},
    {"clamp_min", kExact, kExact},
    {"clamp_max", kExact, kExact},
    {"hypot", kRelative32, kRelative64},
    {"xlogy", kRelative32, kRelative64},
    {"float_power", kRelative32, {1e-12, 0, 4, false, "exp(b log a): |b log a| <= 710 epsilons"}},
    // Issue 13: log_sigmoid is min(x, 0) - log1p(e^-|x|), two terms of one sign: no
    // cancellation, a few ulps relative down to its smallest results (-e^-x for large x).
    {"log_sigmoid", kRelative32, kRelative64},
};

}  // namespace

Tolerance tolerance_for(std::string_view op, DType out) {
  Tolerance t = dtype_tolerance(out);
  if (!is_floating(out)) return t;
  for (std::string_view e : kExactOps)
    if (e == op) return {0, 0, 0, true, "exact by definition"};
  for (const Tightening& e : kTightenings)
    if (e.op == op && e.dtype == out) t = e.tolerance;
  for (const Issue11Tolerance& e : kIssue11Tolerances) {
    if (e.op != op) continue;
    if (e.f32.exact) return e.f32;
    if (out == DType::kFloat32) t = e.f32;
    if (out == DType::kFloat64) t = e.f64;
  }
  // A result below the dtype's smallest normal may come out as 0 where a driver flushes
  // subnormals (NVIDIA's Vulkan driver offers no DenormPreserve: softplus(-45.48) = 0, not
  // 1.6e-40); tests/unit/test_vk_accuracy.cpp holds subnormal results on the devices that
  // keep them.
  t.atol = std::max(t.atol, smallest_normal(out));
  for (const UlpAllowance& a : kUlpAllowances)
    if (a.op == op && a.dtype == out) {
      t.ulps = a.ulps;
      t.why = a.why;
    }
  return t;
}

}  // namespace nbx::conformance

namespace nbx::conformance {

// The other families (reductions, scans, softmax, norms, matmul): `exact` ops (extrema,
// selections, triangles) and non-float results compare exactly. A float result that sums
// k terms gets the dtype's rtol and atol above scaled by sqrt(k): the host accumulates in
// float64 and rounds once, a GPU adds float32 partials in another order (a tree, split-k),
// whose rounding errors, of random sign, grow like sqrt(k) ulps of the partial sums. The
// suite's inputs are bounded by 2 in magnitude, so atol * sqrt(k) is an absolute bound
// against sum|x| / k ~ 1 where a sum cancels to near zero. Measured on the host only so
// far (the device runs will tell whether sqrt(k) holds; widen per op with a reason if not).
Tolerance accumulated_tolerance(bool exact, DType out, std::int64_t k) {
  Tolerance t = dtype_tolerance(out);
  if (!is_floating(out)) return t;
  if (exact) return {0, 0, 0, true, "exact by definition"};
  const double scale = std::sqrt(static_cast<double>(std::max<std::int64_t>(k, 1)));
  t.rtol *= scale;
  t.atol *= scale;
  if (k > 1) t.why = "accumulated over k terms: rtol and atol scaled by sqrt(k)";
  return t;
}

// Long rows (10^5-term scans, 128k-element softmax rows, products whose k crosses tiles):
// reductions, scans, softmax, norms and products accumulate float16 and bfloat16 in float32
// by contract (core/ops/*.hpp), so √k growth is the accumulator's, not the output dtype's;
// the output dtype adds its one final rounding. Scaling bfloat16's rtol by √(10^5) ≈ 316
// instead would pass any value. Sums of positive terms (softmax) do not cancel: no atol
// (an output near 1/k would match anything within it), and 2 ulps for float16 subnormals;
// their log (log_softmax) turns the sum's relative error into an absolute one.
Tolerance growth_tolerance(Growth growth, DType out, std::int64_t k) {
  Tolerance t = dtype_tolerance(out);
  if (!is_floating(out)) return t;
  const Tolerance acc = dtype_tolerance(out == DType::kFloat64 ? out : DType::kFloat32);
  const double scale = std::sqrt(static_cast<double>(std::max<std::int64_t>(k, 1)));
  if (growth == Growth::kWideLog) {
    t.atol += acc.rtol * scale;
    t.why = "the log of a sum of k positive terms: atol + acc. rtol x sqrt(k)";
    return t;
  }
  t.rtol += acc.rtol * scale;
  if (growth == Growth::kWidePositive) {
    t.atol = 0;
    t.ulps = 2;
    t.why = "a sum of k positive terms accumulated in float32 or wider: rtol + acc. rtol x sqrt(k)";
  } else {
    t.atol = std::max(t.atol, acc.atol * scale);
    t.why = "k signed terms accumulated in float32 or wider: rtol + acc. rtol x sqrt(k)";
  }
  return t;
}

Tolerance with_rounded_intermediate(Tolerance t, DType out) {
  if (!is_floating(out) || t.exact) return t;
  const int mantissa = out == DType::kFloat16    ? 11
                       : out == DType::kBFloat16 ? 8
                       : out == DType::kFloat32  ? 24
                                                 : 53;
  t.atol = std::max(t.atol, 2 * std::ldexp(1.0, -mantissa));
  t.why =
      "accumulated over k terms, and an intermediate rounded to the dtype: atol at least 2 "
      "units of roundoff";
  return t;
}

}  // namespace nbx::conformance
