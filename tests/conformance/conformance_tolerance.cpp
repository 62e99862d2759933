// The one tolerance table of the conformance suite: per output dtype, then per-op
// adjustments with the reason for each. Keep allowances honest and small: every entry says
// why the host reference (float64 math, one rounding) and a GPU (float32 math for float32,
// float16 and bfloat16 results) may legitimately differ by that much.
#include <array>
#include <span>

#include "tests/conformance/conformance_compare.hpp"

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

// Float results that are exact by definition: a selection among inputs, a sign change, a
// rounding to an integral value, or a constant. Any difference here is a bug, never
// float32-vs-float64 arithmetic.
constexpr std::array<std::string_view, 13> kExactOps = {
    "neg",     "abs",     "relu",  "floor",       "ceil",  "round",      "trunc",
    "maximum", "minimum", "where", "masked_fill", "clamp", "nan_to_num",
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

}  // namespace

Tolerance tolerance_for(std::string_view op, DType out) {
  Tolerance t = dtype_tolerance(out);
  if (!is_floating(out)) return t;
  for (std::string_view e : kExactOps)
    if (e == op) return {0, 0, 0, true, "exact by definition"};
  for (const UlpAllowance& a : kUlpAllowances)
    if (a.op == op && a.dtype == out) {
      t.ulps = a.ulps;
      t.why = a.why;
    }
  return t;
}

}  // namespace nbx::conformance
