// The op table and the input layouts. Calls go through the public API only, exactly as a
// user would write them.
#include "tests/conformance/conformance_cases.hpp"

#include <string>

namespace nbx::conformance {
namespace {

using K = ValueKind;
using ops::TensorOrScalar;

const Tensor& t(Operands a, int k) {
  return a[static_cast<std::size_t>(k)].tensor();
}

#define NBX_UNARY_SPEC(op_name, expr)                                             \
  OpSpec {                                                                        \
#op_name, 1, {K::kGeneral}, false, false, false, [](Operands a, DType, DType) { \
      const Tensor& x = t(a, 0);                                                        \
      return expr;                                                                      \
    } \
  }
// clang-format off
#define NBX_UNARY_KIND_SPEC(op_name, kind, expr) \
  OpSpec{#op_name, 1, {kind}, false, false, false, \
         [](Operands a, DType, DType) { const Tensor& x = t(a, 0); return expr; }}
// clang-format on
#define NBX_BINARY_SPEC(op_name, kind1, integer_division)                  \
  OpSpec {                                                                 \
#op_name, 2,                                                           \
        {K::kGeneral, kind1 }, true, false, integer_division,              \
         [](Operands a, DType, DType) { return ops::op_name(a[0], a[1]); } \
  }

// Non-default attributes where an op has them, so the attribute path is exercised too.
// Unformatted: past ~100 entries clang-format re-indents the whole table.
// clang-format off
const OpSpec kSpecs[] = {
    NBX_UNARY_SPEC(neg, ops::neg(x)),
    NBX_UNARY_SPEC(abs, ops::abs(x)),
    NBX_UNARY_SPEC(exp, ops::exp(x)),
    NBX_UNARY_SPEC(exp2, ops::exp2(x)),
    NBX_UNARY_SPEC(log, ops::log(x)),
    NBX_UNARY_SPEC(log2, ops::log2(x)),
    NBX_UNARY_SPEC(sqrt, ops::sqrt(x)),
    NBX_UNARY_SPEC(rsqrt, ops::rsqrt(x)),
    NBX_UNARY_SPEC(reciprocal, ops::reciprocal(x)),
    NBX_UNARY_SPEC(sin, ops::sin(x)),
    NBX_UNARY_SPEC(cos, ops::cos(x)),
    NBX_UNARY_SPEC(tan, ops::tan(x)),
    NBX_UNARY_SPEC(tanh, ops::tanh(x)),
    NBX_UNARY_SPEC(sigmoid, ops::sigmoid(x)),
    NBX_UNARY_SPEC(erf, ops::erf(x)),
    NBX_UNARY_SPEC(relu, ops::relu(x)),
    NBX_UNARY_SPEC(silu, ops::silu(x)),
    NBX_UNARY_SPEC(gelu, ops::gelu(x)),
    NBX_UNARY_SPEC(gelu_tanh, ops::gelu(x, ops::GeluApproximation::kTanh)),
    NBX_UNARY_SPEC(mish, ops::mish(x)),
    NBX_UNARY_SPEC(softplus, ops::softplus(x, 2.0, 10.0)),
    NBX_UNARY_SPEC(leaky_relu, ops::leaky_relu(x, 0.2)),
    NBX_UNARY_SPEC(elu, ops::elu(x, 0.7)),
    NBX_UNARY_SPEC(selu, ops::selu(x)),
    NBX_UNARY_SPEC(celu, ops::celu(x, 1.3)),
    NBX_UNARY_SPEC(hardsigmoid, ops::hardsigmoid(x)),
    NBX_UNARY_SPEC(hardswish, ops::hardswish(x)),
    NBX_UNARY_SPEC(floor, ops::floor(x)),
    NBX_UNARY_SPEC(ceil, ops::ceil(x)),
    NBX_UNARY_SPEC(round, ops::round(x)),
    NBX_UNARY_SPEC(trunc, ops::trunc(x)),
    NBX_UNARY_SPEC(isnan, ops::isnan(x)),
    NBX_UNARY_SPEC(isinf, ops::isinf(x)),
    NBX_UNARY_SPEC(isfinite, ops::isfinite(x)),
    NBX_UNARY_SPEC(nan_to_num, ops::nan_to_num(x)),
    NBX_UNARY_SPEC(logical_not, ops::logical_not(x)),
    NBX_UNARY_SPEC(bitwise_not, ops::bitwise_not(x)),
    // Issue 11's unary ops, each on the values where it is hard to get right.
    NBX_UNARY_KIND_SPEC(log1p, K::kWideMagnitude, ops::log1p(x)),
    NBX_UNARY_KIND_SPEC(expm1, K::kWideMagnitude, ops::expm1(x)),
    NBX_UNARY_SPEC(log10, ops::log10(x)),
    NBX_UNARY_SPEC(sign, ops::sign(x)),
    NBX_UNARY_SPEC(sgn, ops::sgn(x)),
    NBX_UNARY_SPEC(signbit, ops::signbit(x)),
    NBX_UNARY_KIND_SPEC(asin, K::kUnitInterval, ops::asin(x)),
    NBX_UNARY_KIND_SPEC(acos, K::kUnitInterval, ops::acos(x)),
    NBX_UNARY_KIND_SPEC(atan, K::kWideMagnitude, ops::atan(x)),
    NBX_UNARY_KIND_SPEC(sinh, K::kWideMagnitude, ops::sinh(x)),
    NBX_UNARY_KIND_SPEC(cosh, K::kWideMagnitude, ops::cosh(x)),
    NBX_UNARY_KIND_SPEC(asinh, K::kWideMagnitude, ops::asinh(x)),
    NBX_UNARY_KIND_SPEC(acosh, K::kWideMagnitude, ops::acosh(x)),
    NBX_UNARY_KIND_SPEC(atanh, K::kUnitInterval, ops::atanh(x)),
    NBX_UNARY_KIND_SPEC(erfc, K::kWideMagnitude, ops::erfc(x)),
    NBX_UNARY_KIND_SPEC(erfinv, K::kUnitInterval, ops::erfinv(x)),
    NBX_UNARY_KIND_SPEC(lgamma, K::kWideMagnitude, ops::lgamma(x)),
    NBX_UNARY_KIND_SPEC(digamma, K::kWideMagnitude, ops::digamma(x)),
    NBX_UNARY_SPEC(square, ops::square(x)),
    NBX_UNARY_SPEC(frac, ops::frac(x)),
    NBX_UNARY_SPEC(deg2rad, ops::deg2rad(x)),
    NBX_UNARY_SPEC(rad2deg, ops::rad2deg(x)),
    NBX_UNARY_KIND_SPEC(logit, K::kUnitInterval, ops::logit(x, 1e-3)),
    NBX_UNARY_KIND_SPEC(sinc, K::kWideMagnitude, ops::sinc(x)),
    NBX_UNARY_SPEC(isposinf, ops::isposinf(x)),
    NBX_UNARY_SPEC(isneginf, ops::isneginf(x)),
    // Issue 13: log_sigmoid where e^-x overflows; threshold between the drawn values, its
    // value negative (uint8 wraps -3 to 253, as PyTorch) and 0.1 rounded to each float dtype.
    NBX_UNARY_KIND_SPEC(log_sigmoid, K::kWideMagnitude, ops::log_sigmoid(x)),
    {"threshold", 1, {K::kGeneral}, false, false, false,
     [](Operands a, DType d, DType) {
       return is_floating(d) ? ops::threshold(t(a, 0), 0.1, -2.5) : ops::threshold(t(a, 0), 1, -3);
     }},
    NBX_BINARY_SPEC(add, K::kGeneral, false),
    NBX_BINARY_SPEC(sub, K::kGeneral, false),
    NBX_BINARY_SPEC(mul, K::kGeneral, false),
    NBX_BINARY_SPEC(div, K::kGeneral, false),
    NBX_BINARY_SPEC(floor_divide, K::kDivisor, true),
    NBX_BINARY_SPEC(remainder, K::kDivisor, true),
    NBX_BINARY_SPEC(pow, K::kExponent, false),
    NBX_BINARY_SPEC(maximum, K::kGeneral, false),
    NBX_BINARY_SPEC(minimum, K::kGeneral, false),
    NBX_BINARY_SPEC(atan2, K::kGeneral, false),
    NBX_BINARY_SPEC(bitwise_and, K::kGeneral, false),
    NBX_BINARY_SPEC(bitwise_or, K::kGeneral, false),
    NBX_BINARY_SPEC(bitwise_xor, K::kGeneral, false),
    NBX_BINARY_SPEC(bitwise_left_shift, K::kShiftAmount, false),
    NBX_BINARY_SPEC(bitwise_right_shift, K::kShiftAmount, false),
    NBX_BINARY_SPEC(logical_and, K::kGeneral, false),
    NBX_BINARY_SPEC(logical_or, K::kGeneral, false),
    NBX_BINARY_SPEC(logical_xor, K::kGeneral, false),
    NBX_BINARY_SPEC(eq, K::kGeneral, false),
    NBX_BINARY_SPEC(ne, K::kGeneral, false),
    NBX_BINARY_SPEC(lt, K::kGeneral, false),
    NBX_BINARY_SPEC(le, K::kGeneral, false),
    NBX_BINARY_SPEC(gt, K::kGeneral, false),
    NBX_BINARY_SPEC(ge, K::kGeneral, false),
    NBX_BINARY_SPEC(fmod, K::kDivisor, true),
    NBX_BINARY_SPEC(hypot, K::kGeneral, false),
    NBX_BINARY_SPEC(copysign, K::kGeneral, false),
    NBX_BINARY_SPEC(logaddexp, K::kGeneral, false),
    NBX_BINARY_SPEC(logaddexp2, K::kGeneral, false),
    NBX_BINARY_SPEC(xlogy, K::kGeneral, false),
    NBX_BINARY_SPEC(nextafter, K::kGeneral, false),
    NBX_BINARY_SPEC(float_power, K::kExponent, false),
    // Tolerances wide enough that the drawn values fall on both sides of them.
    {"isclose",
     2,
     {K::kGeneral, K::kGeneral},
     false,
     false,
     false,
     [](Operands a, DType, DType) { return ops::isclose(t(a, 0), t(a, 1), 0.25, 0.5, true); }},
    {"allclose",
     2,
     {K::kGeneral, K::kGeneral},
     false,
     false,
     false,
     [](Operands a, DType, DType) {
       const Tensor& x = t(a, 0);
       const std::vector<bool> v{ops::allclose(x, t(a, 1), 0.25, 0.5, true),
                                 ops::allclose(x, x), ops::allclose(x, x, 0, 0, true)};
       return Tensor::from_host(v, {3});
     }},
    // Tensor bounds (maximum/minimum, bool included); a host-scalar bound runs clamp's cell,
    // and bool has no scalar-bound kernel (PyTorch), which a cell cannot mix with the rest.
    {"clamp_min",
     2,
     {K::kGeneral, K::kGeneral},
     false,
     false,
     false,
     [](Operands a, DType, DType) { return ops::clamp_min(t(a, 0), a[1]); }},
    {"clamp_max",
     2,
     {K::kGeneral, K::kGeneral},
     false,
     false,
     false,
     [](Operands a, DType, DType) { return ops::clamp_max(t(a, 0), a[1]); }},
    {"where",
     3,
     {K::kCondition, K::kGeneral, K::kGeneral},
     true,
     false,
     false,
     [](Operands a, DType, DType) { return ops::where(t(a, 0), a[1], a[2]); }},
    {"clamp",
     3,
     {K::kGeneral, K::kGeneral, K::kGeneral},
     true,
     false,
     false,
     [](Operands a, DType, DType) {
       return ops::clamp(t(a, 0), std::optional<TensorOrScalar>(a[1]),
                         std::optional<TensorOrScalar>(a[2]));
     }},
    {"lerp",
     3,
     {K::kGeneral, K::kGeneral, K::kWeight},
     true,
     false,
     false,
     [](Operands a, DType, DType) { return ops::lerp(t(a, 0), t(a, 1), a[2]); }},
    {"addcmul",
     3,
     {K::kGeneral, K::kGeneral, K::kGeneral},
     false,
     false,
     false,
     [](Operands a, DType d, DType) {
       return ops::addcmul(t(a, 0), t(a, 1), t(a, 2), is_floating(d) ? Scalar(0.5) : Scalar(3));
     }},
    {"addcdiv",
     3,
     {K::kGeneral, K::kGeneral, K::kGeneral},
     false,
     false,
     false,
     [](Operands a, DType, DType) { return ops::addcdiv(t(a, 0), t(a, 1), t(a, 2), 0.5); }},
    {"masked_fill",
     3,
     {K::kGeneral, K::kCondition, K::kGeneral},
     false,
     true,
     false,
     [](Operands a, DType, DType) { return ops::masked_fill(t(a, 0), t(a, 1), a[2]); }},
    {"cast",
     1,
     {K::kGeneral},
     false,
     false,
     false,
     [](Operands a, DType, DType to) { return ops::cast(t(a, 0), to); }},
};
// clang-format on
#undef NBX_UNARY_SPEC
#undef NBX_UNARY_KIND_SPEC
#undef NBX_BINARY_SPEC

enum class View { kNone, kTranspose, kSlice, kExpand };

struct OperandPlan {
  Shape base;
  View view = View::kNone;
  bool scalar = false;
};

std::vector<OperandPlan> plan(const OpSpec& op, Layout layout) {
  std::vector<OperandPlan> p(static_cast<std::size_t>(op.arity));
  for (int k = 0; k < op.arity; ++k) {
    OperandPlan& o = p[static_cast<std::size_t>(k)];
    switch (layout) {
      case Layout::kDivisionByZero:
        o.base = {64};
        break;
      case Layout::kContiguous:
        o.base = {257};
        break;
      case Layout::kZeroDim:
        break;
      case Layout::kZeroSize:
        o.base = {3, 0};
        break;
      case Layout::kBroadcast: {
        const Shape shapes[3] = {{5, 1, 7}, {3, 1}, {1, 7}};
        o.base = shapes[k % 3];
        if (op.arity == 1) o = {{1, 7}, View::kExpand};
        if (op.value_is_scalar && k == 0) o.base = {5, 3, 7};  // the mask may not grow x
        break;
      }
      case Layout::kTransposed:
        o = k == 1 ? OperandPlan{{13, 9}} : OperandPlan{{9, 13}, View::kTranspose};
        break;
      case Layout::kSliced:
        o = {{6, 40}, View::kSlice};
        break;
      case Layout::kZeroDimOperand:
        if (k != 1) o.base = {33};
        break;
      case Layout::kHostScalar:
        o.base = {129};
        o.scalar = k == op.arity - 1;
        break;
    }
    if (op.value_is_scalar && k == op.arity - 1) o = {{}, View::kNone, true};
  }
  // masked_fill's value as a device-resident 0-d tensor: the one layout that tries it.
  if (op.value_is_scalar && layout == Layout::kZeroDimOperand) p.back().scalar = false;
  return p;
}

Tensor apply_view(const Tensor& x, View v) {
  switch (v) {
    case View::kTranspose:
      return x.transpose(0, 1);
    case View::kSlice:
      return x.slice(0, 1, 6, 2).slice(1, 2, 38, 3);
    case View::kExpand:
      return x.expand({6, 7});
    default:
      return x;
  }
}

}  // namespace

std::span<const OpSpec> op_specs() {
  return kSpecs;
}

const OpSpec* find_op_spec(std::string_view name) {
  for (const OpSpec& s : kSpecs)
    if (s.name == name) return &s;
  return nullptr;
}

std::string_view layout_name(Layout layout) {
  switch (layout) {
    case Layout::kDivisionByZero:
      return "division-by-zero";
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kZeroDim:
      return "0-d";
    case Layout::kZeroSize:
      return "0-size";
    case Layout::kBroadcast:
      return "broadcast";
    case Layout::kTransposed:
      return "transposed";
    case Layout::kSliced:
      return "sliced";
    case Layout::kZeroDimOperand:
      return "0-d-operand";
    case Layout::kHostScalar:
      return "host-scalar";
  }
  return "?";
}

std::vector<Layout> layouts_for(const OpSpec& op, DType dtype, bool quick) {
  std::vector<Layout> out;
  if (op.integer_division && is_integral(dtype, false)) out.push_back(Layout::kDivisionByZero);
  for (Layout l : {Layout::kContiguous, Layout::kZeroDim, Layout::kZeroSize}) out.push_back(l);
  if (quick && dtype != DType::kFloat32 && dtype != DType::kInt32) return out;
  for (Layout l : {Layout::kBroadcast, Layout::kTransposed, Layout::kSliced}) out.push_back(l);
  if (op.arity >= 2) out.push_back(Layout::kZeroDimOperand);
  if (op.scalar_last) out.push_back(Layout::kHostScalar);
  return out;
}

CaseInputs make_inputs(const OpSpec& op, DType dtype, Layout layout, Rng& rng,
                       const Device& device) {
  CaseInputs in;
  const std::vector<OperandPlan> p = plan(op, layout);
  for (int k = 0; k < op.arity; ++k) {
    const OperandPlan& o = p[static_cast<std::size_t>(k)];
    ValueKind kind = op.kinds[k];
    if (layout == Layout::kDivisionByZero && kind == ValueKind::kDivisor)
      kind = ValueKind::kDivisorWithZero;
    if (o.scalar) {
      const Scalar s = draw_scalar(rng, dtype, kind);
      in.reference.emplace_back(s);
      in.device.emplace_back(s);
      continue;
    }
    const DType t = kind == ValueKind::kCondition ? DType::kBool : dtype;
    const std::vector<std::byte> bytes = draw_values(rng, dtype, kind, numel(o.base));
    const Tensor host = Tensor::from_host(bytes.data(), o.base, t);
    in.reference.emplace_back(apply_view(host, o.view).contiguous());
    in.device.emplace_back(apply_view(
        device.is_host() ? host : Tensor::from_host(bytes.data(), o.base, t, device), o.view));
  }
  return in;
}

}  // namespace nbx::conformance
