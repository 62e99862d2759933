#include "core/ops/elementwise_rules.hpp"

#include <string>

#include "core/errors.hpp"
#include "core/ops/elementwise_launch.hpp"

namespace nbx::ops::detail {
namespace {

using D = Domain;
using R = ResultKind;

constexpr OpRule kRules[] = {
    {"copy", abi::kOp_copy, 1, D::kAll, R::kPromoted},
    {"neg", abi::kOp_neg, 1, D::kNoBool, R::kPromoted},
    {"abs", abi::kOp_abs, 1, D::kNoBool, R::kPromoted},
    {"exp", abi::kOp_exp, 1, D::kAll, R::kFloatPromoted},
    {"exp2", abi::kOp_exp2, 1, D::kAll, R::kFloatPromoted},
    {"log", abi::kOp_log, 1, D::kAll, R::kFloatPromoted},
    {"log2", abi::kOp_log2, 1, D::kAll, R::kFloatPromoted},
    {"sqrt", abi::kOp_sqrt, 1, D::kAll, R::kFloatPromoted},
    {"rsqrt", abi::kOp_rsqrt, 1, D::kAll, R::kFloatPromoted},
    {"reciprocal", abi::kOp_reciprocal, 1, D::kAll, R::kFloatPromoted},
    {"sin", abi::kOp_sin, 1, D::kAll, R::kFloatPromoted},
    {"cos", abi::kOp_cos, 1, D::kAll, R::kFloatPromoted},
    {"tan", abi::kOp_tan, 1, D::kAll, R::kFloatPromoted},
    {"tanh", abi::kOp_tanh, 1, D::kAll, R::kFloatPromoted},
    {"sigmoid", abi::kOp_sigmoid, 1, D::kAll, R::kFloatPromoted},
    {"erf", abi::kOp_erf, 1, D::kAll, R::kFloatPromoted},
    {"relu", abi::kOp_relu, 1, D::kNoBool, R::kPromoted},
    {"silu", abi::kOp_silu, 1, D::kFloating, R::kPromoted},
    {"gelu", abi::kOp_gelu_erf, 1, D::kFloating, R::kPromoted},
    {"gelu_tanh", abi::kOp_gelu_tanh, 1, D::kFloating, R::kPromoted},
    {"mish", abi::kOp_mish, 1, D::kFloating, R::kPromoted},
    {"softplus", abi::kOp_softplus, 1, D::kFloating, R::kPromoted},
    {"leaky_relu", abi::kOp_leaky_relu, 1, D::kFloating, R::kPromoted},
    {"elu", abi::kOp_elu, 1, D::kFloating, R::kPromoted},
    {"selu", abi::kOp_selu, 1, D::kFloating, R::kPromoted},
    {"celu", abi::kOp_celu, 1, D::kFloating, R::kPromoted},
    {"hardsigmoid", abi::kOp_hardsigmoid, 1, D::kFloating, R::kPromoted},
    {"hardswish", abi::kOp_hardswish, 1, D::kFloating, R::kPromoted},
    {"floor", abi::kOp_floor, 1, D::kNoBool, R::kPromoted},
    {"ceil", abi::kOp_ceil, 1, D::kNoBool, R::kPromoted},
    {"round", abi::kOp_round, 1, D::kNoBool, R::kPromoted},
    {"trunc", abi::kOp_trunc, 1, D::kNoBool, R::kPromoted},
    {"isnan", abi::kOp_isnan, 1, D::kAll, R::kBool},
    {"isinf", abi::kOp_isinf, 1, D::kAll, R::kBool},
    {"isfinite", abi::kOp_isfinite, 1, D::kAll, R::kBool},
    {"nan_to_num", abi::kOp_nan_to_num, 1, D::kAll, R::kPromoted},
    {"logical_not", abi::kOp_logical_not, 1, D::kAll, R::kBool},
    {"bitwise_not", abi::kOp_bitwise_not, 1, D::kIntegralOrBool, R::kPromoted},
    // Unary (issue 11). square of bool is int64 (PyTorch's pow(x, 2)): the wrapper casts.
    {"log1p", abi::kOp_log1p, 1, D::kAll, R::kFloatPromoted},
    {"expm1", abi::kOp_expm1, 1, D::kAll, R::kFloatPromoted},
    {"log10", abi::kOp_log10, 1, D::kAll, R::kFloatPromoted},
    {"sign", abi::kOp_sign, 1, D::kAll, R::kPromoted},
    {"sgn", abi::kOp_sgn, 1, D::kAll, R::kPromoted},
    {"signbit", abi::kOp_signbit, 1, D::kAll, R::kBool},
    {"asin", abi::kOp_asin, 1, D::kAll, R::kFloatPromoted},
    {"acos", abi::kOp_acos, 1, D::kAll, R::kFloatPromoted},
    {"atan", abi::kOp_atan, 1, D::kAll, R::kFloatPromoted},
    {"sinh", abi::kOp_sinh, 1, D::kAll, R::kFloatPromoted},
    {"cosh", abi::kOp_cosh, 1, D::kAll, R::kFloatPromoted},
    {"asinh", abi::kOp_asinh, 1, D::kAll, R::kFloatPromoted},
    {"acosh", abi::kOp_acosh, 1, D::kAll, R::kFloatPromoted},
    {"atanh", abi::kOp_atanh, 1, D::kAll, R::kFloatPromoted},
    {"erfc", abi::kOp_erfc, 1, D::kAll, R::kFloatPromoted},
    {"erfinv", abi::kOp_erfinv, 1, D::kAll, R::kFloatPromoted},
    {"lgamma", abi::kOp_lgamma, 1, D::kAll, R::kFloatPromoted},
    {"digamma", abi::kOp_digamma, 1, D::kAll, R::kFloatPromoted},
    {"square", abi::kOp_square, 1, D::kAll, R::kPromoted},
    {"frac", abi::kOp_frac, 1, D::kFloating, R::kPromoted},
    {"deg2rad", abi::kOp_deg2rad, 1, D::kAll, R::kFloatPromoted},
    {"rad2deg", abi::kOp_rad2deg, 1, D::kAll, R::kFloatPromoted},
    {"logit", abi::kOp_logit, 1, D::kAll, R::kFloatPromoted},
    {"sinc", abi::kOp_sinc, 1, D::kAll, R::kFloatPromoted},
    {"isposinf", abi::kOp_isposinf, 1, D::kAll, R::kBool},
    {"isneginf", abi::kOp_isneginf, 1, D::kAll, R::kBool},
    {"add", abi::kOp_add, 2, D::kAll, R::kPromoted},
    {"sub", abi::kOp_sub, 2, D::kNoBool, R::kPromoted},
    {"mul", abi::kOp_mul, 2, D::kAll, R::kPromoted},
    {"div", abi::kOp_div, 2, D::kAll, R::kFloatPromoted},
    {"floor_divide", abi::kOp_floor_divide, 2, D::kNoBool, R::kPromoted},
    {"remainder", abi::kOp_remainder, 2, D::kNoBool, R::kPromoted},
    {"pow", abi::kOp_pow, 2, D::kNoBool, R::kPromoted},
    {"maximum", abi::kOp_maximum, 2, D::kAll, R::kPromoted},
    {"minimum", abi::kOp_minimum, 2, D::kAll, R::kPromoted},
    {"atan2", abi::kOp_atan2, 2, D::kAll, R::kFloatPromoted},
    {"bitwise_and", abi::kOp_bitwise_and, 2, D::kIntegralOrBool, R::kPromoted},
    {"bitwise_or", abi::kOp_bitwise_or, 2, D::kIntegralOrBool, R::kPromoted},
    {"bitwise_xor", abi::kOp_bitwise_xor, 2, D::kIntegralOrBool, R::kPromoted},
    {"bitwise_left_shift", abi::kOp_bitwise_left_shift, 2, D::kIntegral, R::kPromoted},
    {"bitwise_right_shift", abi::kOp_bitwise_right_shift, 2, D::kIntegral, R::kPromoted},
    {"logical_and", abi::kOp_logical_and, 2, D::kAll, R::kBool},
    {"logical_or", abi::kOp_logical_or, 2, D::kAll, R::kBool},
    {"logical_xor", abi::kOp_logical_xor, 2, D::kAll, R::kBool},
    {"eq", abi::kOp_eq, 2, D::kAll, R::kBool},
    {"ne", abi::kOp_ne, 2, D::kAll, R::kBool},
    {"lt", abi::kOp_lt, 2, D::kAll, R::kBool},
    {"le", abi::kOp_le, 2, D::kAll, R::kBool},
    {"gt", abi::kOp_gt, 2, D::kAll, R::kBool},
    {"ge", abi::kOp_ge, 2, D::kAll, R::kBool},
    // Binary (issue 11). hypot, logaddexp(2) and nextafter have no integer kernel in PyTorch.
    {"fmod", abi::kOp_fmod, 2, D::kNoBool, R::kPromoted},
    {"hypot", abi::kOp_hypot, 2, D::kFloating, R::kPromoted},
    {"copysign", abi::kOp_copysign, 2, D::kAll, R::kFloatPromoted},
    {"logaddexp", abi::kOp_logaddexp, 2, D::kFloating, R::kPromoted},
    {"logaddexp2", abi::kOp_logaddexp2, 2, D::kFloating, R::kPromoted},
    {"xlogy", abi::kOp_xlogy, 2, D::kAll, R::kFloatPromoted},
    {"nextafter", abi::kOp_nextafter, 2, D::kFloating, R::kPromoted},
    {"float_power", abi::kOp_float_power, 2, D::kAll, R::kFloat64},
    {"isclose", abi::kOp_isclose, 2, D::kAll, R::kBoolOfFloat},
    // Issue 13. PyTorch has no integer kernel for log_sigmoid and the GLU family, and none
    // for threshold on bool. The gated products are named after their public ops (glu.hpp):
    // each takes one fused input, whose halves are the table op's two operands.
    {"log_sigmoid", abi::kOp_log_sigmoid, 1, D::kFloating, R::kPromoted},
    {"threshold", abi::kOp_threshold, 1, D::kNoBool, R::kPromoted},
    {"glu", abi::kOp_sigmoid_mul, 2, D::kFloating, R::kPromoted},
    {"silu_and_mul", abi::kOp_silu_mul, 2, D::kFloating, R::kPromoted},
    {"gelu_and_mul", abi::kOp_gelu_erf_mul, 2, D::kFloating, R::kPromoted},
    {"gelu_tanh_and_mul", abi::kOp_gelu_tanh_mul, 2, D::kFloating, R::kPromoted},
    {"where", abi::kOp_where, 3, D::kAll, R::kPromoted},
    {"clamp", abi::kOp_clamp, 3, D::kNoBool, R::kPromoted},
    {"lerp", abi::kOp_lerp, 3, D::kFloating, R::kPromoted},
    {"addcmul", abi::kOp_addcmul, 3, D::kNoBool, R::kPromoted},
    {"addcdiv", abi::kOp_addcdiv, 3, D::kFloating, R::kPromoted},
};

bool in_domain(Domain d, DType t) {
  switch (d) {
    case Domain::kAll:
      return true;
    case Domain::kNoBool:
      return t != DType::kBool;
    case Domain::kIntegralOrBool:
      return is_integral(t, true);
    case Domain::kIntegral:
      return is_integral(t, false);
    case Domain::kFloating:
      return is_floating(t);
  }
  return false;
}

const char* domain_words(Domain d) {
  switch (d) {
    case Domain::kNoBool:
      return "numeric dtypes, not bool";
    case Domain::kIntegralOrBool:
      return "integer and bool dtypes";
    case Domain::kIntegral:
      return "integer dtypes";
    case Domain::kFloating:
      return "floating dtypes";
    default:
      return "every dtype";
  }
}

}  // namespace

const OpRule& rule_for(abi::ElementwiseOp op) {
  for (const OpRule& r : kRules)
    if (r.op == op) return r;
  throw Internal("elementwise op code " + std::to_string(static_cast<int>(op)) +
                 " has no dtype rule.");
}

std::span<const OpRule> all_rules() {
  return kRules;
}

const OpRule* rule_named(std::string_view name) {
  for (const OpRule& r : kRules)
    if (r.name == name) return &r;
  return nullptr;
}

bool takes_fused_halves(abi::ElementwiseOp op) {
  return op == abi::kOp_sigmoid_mul || op == abi::kOp_silu_mul || op == abi::kOp_gelu_erf_mul ||
         op == abi::kOp_gelu_tanh_mul;
}

ElementwiseTypes plan_elementwise_types(const OpRule& rule, std::span<const PromotionOperand> promo,
                                        std::optional<DType> forced_common,
                                        const Capabilities& caps, const std::string& device_id,
                                        const std::string& device_name, std::string_view name) {
  const std::string op(name);
  ElementwiseTypes t;
  t.common = forced_common ? *forced_common : result_type(promo);
  if (!in_domain(rule.domain, t.common))
    throw InvalidArgument(op, op + " is not defined for " + std::string(dtype_name(t.common)) +
                                  " operands (it takes " + domain_words(rule.domain) + ").");
  t.out_dtype = t.common;
  if (rule.result == ResultKind::kBool) t.out_dtype = DType::kBool;
  if (rule.result == ResultKind::kFloatPromoted && !is_floating(t.common))
    t.out_dtype = kDefaultFloat;
  t.integer_division = rule.op == abi::kOp_div && !is_floating(t.common);
  // Inputs are cast (a copy) to one dtype before the kernel; only integer division keeps
  // its integers and widens inside the kernel, where exactness is decided.
  t.input_dtype =
      (rule.result == ResultKind::kFloatPromoted && !t.integer_division) ? t.out_dtype : t.common;
  if (rule.result == ResultKind::kFloat64) t.out_dtype = t.input_dtype = DType::kFloat64;
  if (rule.result == ResultKind::kBoolOfFloat) {
    t.out_dtype = DType::kBool;
    t.input_dtype = is_floating(t.common) ? t.common : kDefaultFloat;
  }
  if (t.integer_division) {
    t.compute_dtype = caps.fp64.value ? DType::kFloat64 : DType::kFloat32;
    t.widened_through_float32 = !caps.fp64.value;
  } else {
    t.compute_dtype = is_half_type(t.input_dtype) ? DType::kFloat32 : t.input_dtype;
  }
  // Weak scalars are host values, not tensors: only tensor dtypes need the device.
  for (const PromotionOperand& p : promo)
    if (p.kind != OperandKind::kScalar)
      require_dtype_support(op, p.dtype, caps, device_id, device_name);
  for (DType d : {t.input_dtype, t.out_dtype, t.compute_dtype})
    require_dtype_support(op, d, caps, device_id, device_name);
  return t;
}

}  // namespace nbx::ops::detail
