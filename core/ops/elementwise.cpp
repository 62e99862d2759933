// The elementwise wrappers: promotion, domain checks, capability-driven widening, then the
// launch layer. The only place elementwise decisions are made.
#include "core/ops/elementwise.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/half.hpp"
#include "core/ops/elementwise_call.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/elementwise_rules.hpp"
#include "core/ops/inplace_destination.hpp"
#include "core/ops/reduce.hpp"

namespace nbx::ops {
namespace {

using detail::Domain;
using detail::ElementwiseLaunch;
using detail::LaunchInput;
using detail::OpRule;
using detail::ResultKind;

// A tensor as type promotion sees it: a 0-d tensor is weaker than a dimensioned one.
PromotionOperand tensor_operand(const Tensor& t) {
  return {t.dtype(), t.dim() ? OperandKind::kTensor : OperandKind::kZeroDimTensor};
}

std::string dtype_str(DType t) {
  return std::string(dtype_name(t));
}

// The device an op runs on: the one of its non-host tensors, else the host.
Device device_of(std::span<const TensorOrScalar* const> operands) {
  for (const TensorOrScalar* o : operands)
    if (o && o->is_tensor() && !o->tensor().device().is_host()) return o->tensor().device();
  return host_device();
}

// A 0-d host tensor next to device tensors is read as a host scalar (its value is already
// on the host: no device synchronisation), as PyTorch does with CPU scalar tensors.
bool is_host_scalar_tensor(const TensorOrScalar& o, const Device& device) {
  return o.is_tensor() && o.tensor().dim() == 0 && o.tensor().device().is_host() &&
         !device.is_host();
}

Scalar as_scalar(const TensorOrScalar& o) {
  return o.is_tensor() ? o.tensor().item() : o.scalar();
}

// Largest |value| of an integer operand, measured exactly on its device: the extremes by
// two reductions in the operand's own dtype (abs would wrap at the type's minimum), then
// their magnitudes on the host. One pair of reductions and scalar reads per integer
// division on a device without fp64 (a rare op).
double max_abs_integer(const Tensor& t) {
  if (t.numel() == 0) return 0;
  if (!t.device().context().backend_device().offers(KernelFamily::kReduce)) {
    // A backend without the reduce family yet: read the operand on the host instead. The
    // division itself still runs on the device; only the exactness check moves.
    double m = 0;
    for (std::int64_t v : t.to(host_device()).to(DType::kInt64).to_host<std::int64_t>())
      m = std::max(m, std::fabs(static_cast<double>(v)));
    return m;
  }
  const double hi = static_cast<double>(amax(t).item().to_int());
  const double lo = static_cast<double>(amin(t).item().to_int());
  return std::max(std::fabs(hi), std::fabs(lo));
}

// Integer true division without fp64 widens through float32, exact only below 2^24: larger
// magnitudes are refused by name rather than silently rounded.
void check_exact_through_float32(const Device& device, std::span<const LaunchInput> inputs,
                                 DType input_dtype) {
  constexpr double kExactLimit = 16777216.0;  // 2^24
  double m = 0;
  for (const LaunchInput& in : inputs)
    m = std::max(m, in.tensor.defined() ? max_abs_integer(in.tensor)
                                        : std::fabs(static_cast<double>(in.scalar.i)));
  if (m < kExactLimit) return;
  char value[32];
  std::snprintf(value, sizeof value, "%.0f", m);
  const Capabilities& caps = device.capabilities();
  throw Unsupported("div", device.str(), "fp64",
                    "div on " + device.display_name() + ": " + dtype_str(input_dtype) +
                        " operands up to " + value +
                        " cannot be widened exactly through float32 (exact below 2^24), and "
                        "the device has no fp64 (" +
                        caps.fp64.source + "); refused.");
}

// A host scalar is converted to the dtype the op computes in first, as PyTorch does: an
// integer wraps (uint8 + (-1) adds 255, so `int8 < 1000` compares with -24), and a float
// meeting float32/float16/bfloat16 tensors is rounded to float32 (their math type), so a
// float32 device and the float64 host reference see the same value.
abi::ScalarValue scalar_for_compute(const Scalar& s, DType compute) {
  abi::ScalarValue v = detail::scalar_value(s);
  if (is_floating(compute)) {
    if (compute != DType::kFloat64) v.f = static_cast<double>(static_cast<float>(v.f));
    return v;
  }
  if (s.is_floating()) return v;
  const auto u = static_cast<std::uint64_t>(v.i);
  switch (compute) {
    case DType::kBool:
      v.i = v.i != 0;
      break;
    case DType::kInt8:
      v.i = static_cast<std::int8_t>(static_cast<std::uint8_t>(u));
      break;
    case DType::kUInt8:
      v.i = static_cast<std::uint8_t>(u);
      break;
    case DType::kInt16:
      v.i = static_cast<std::int16_t>(static_cast<std::uint16_t>(u));
      break;
    case DType::kInt32:
      v.i = static_cast<std::int32_t>(static_cast<std::uint32_t>(u));
      break;
    default:
      break;
  }
  v.f = static_cast<double>(v.i);
  return v;
}

struct OpCall {
  abi::ElementwiseOp op;
  std::vector<const TensorOrScalar*> operands;
  std::array<abi::ScalarValue, 3> attrs{};
  // where/masked_fill: operand 0 is a bool condition, outside promotion.
  bool leading_condition = false;
  // masked_fill: the result keeps this operand's dtype.
  std::optional<DType> forced_common;
};

Tensor run(const OpCall& call, std::string_view name_override = {}) {
  const OpRule& rule = detail::rule_for(call.op);
  const std::string name(name_override.empty() ? rule.name : name_override);
  const Device device = device_of(call.operands);
  const std::size_t first = call.leading_condition ? 1 : 0;

  std::vector<PromotionOperand> promo;
  bool any_tensor = false;
  for (std::size_t k = 0; k < call.operands.size(); ++k) {
    const TensorOrScalar& o = *call.operands[k];
    if (o.is_tensor()) {
      if (!o.tensor().defined())
        throw InvalidArgument(name,
                              name + ": operand " + std::to_string(k) + " is an undefined tensor.");
      any_tensor = true;
    }
    if (k < first) continue;
    if (o.is_tensor() && !is_host_scalar_tensor(o, device))
      promo.push_back(tensor_operand(o.tensor()));
    else if (o.is_tensor())
      promo.push_back({o.tensor().dtype(), OperandKind::kZeroDimTensor});
    else
      promo.push_back({o.scalar().promotion_dtype(), OperandKind::kScalar});
  }
  if (!any_tensor)
    throw InvalidArgument(name, name + " needs at least one tensor operand; all were scalars.");
  const detail::ElementwiseTypes types =
      detail::plan_elementwise_types(rule, promo, call.forced_common, device.capabilities(),
                                     device.str(), device.display_name(), name);
  const bool integer_division = types.integer_division;
  const DType input_dtype = types.input_dtype;

  ElementwiseLaunch launch;
  launch.op_name = name;
  launch.op = call.op;
  launch.out_dtype = types.out_dtype;
  launch.compute_dtype = types.compute_dtype;
  launch.attrs = call.attrs;
  for (std::size_t k = 0; k < call.operands.size(); ++k) {
    const TensorOrScalar& o = *call.operands[k];
    LaunchInput in;
    if (k < first) {
      if (!o.is_tensor() || o.tensor().dtype() != DType::kBool)
        throw InvalidArgument(
            name, name + ": the condition/mask must be a bool tensor, not " +
                      (o.is_tensor() ? dtype_str(o.tensor().dtype()) : "a scalar") + ".");
      in.tensor = o.tensor();
    } else if (o.is_tensor() && !is_host_scalar_tensor(o, device)) {
      in.tensor = o.tensor().to(input_dtype);
    } else {
      const Scalar s = as_scalar(o);
      in.scalar = integer_division ? detail::scalar_value(s) : scalar_for_compute(s, input_dtype);
    }
    launch.inputs.push_back(std::move(in));
  }
  if (types.widened_through_float32)
    check_exact_through_float32(device, launch.inputs, input_dtype);
  // An in-place (add_) or out= (add_out) form of this op: write into its tensor.
  if (const detail::OutputView* out = detail::claim_destination(name))
    return detail::launch_elementwise(device, launch, *out);
  return detail::launch_elementwise(device, launch);
}

Tensor unary(abi::ElementwiseOp op, const Tensor& x, std::array<abi::ScalarValue, 3> attrs = {}) {
  const TensorOrScalar a(x);
  return run({op, {&a}, attrs});
}

Tensor binary(abi::ElementwiseOp op, const TensorOrScalar& a, const TensorOrScalar& b,
              std::array<abi::ScalarValue, 3> attrs = {}) {
  return run({op, {&a, &b}, attrs});
}

abi::ScalarValue f(double v) {
  return {v, static_cast<std::int64_t>(0)};
}

// add/sub's alpha, PyTorch's alpha_check: a floating alpha needs a floating result, a bool
// alpha a bool one (both operands bool).
std::array<abi::ScalarValue, 3> alpha_attrs(const char* op, const TensorOrScalar& a,
                                            const TensorOrScalar& b, const Scalar& alpha) {
  const auto is_int = [](const TensorOrScalar& o) {
    return o.is_tensor() ? !is_floating(o.tensor().dtype()) : !o.scalar().is_floating();
  };
  const auto is_bool = [](const TensorOrScalar& o) {
    return o.is_tensor() ? o.tensor().dtype() == DType::kBool
                         : o.scalar().kind() == Scalar::Kind::kBool;
  };
  if (alpha.is_floating() && is_int(a) && is_int(b))
    throw InvalidArgument(op, std::string(op) +
                                  ": for integer operands alpha must be an integer, not " +
                                  alpha.str() + ".");
  if (alpha.kind() == Scalar::Kind::kBool && !(is_bool(a) && is_bool(b)))
    throw InvalidArgument(op, std::string(op) +
                                  ": a bool alpha is only supported for bool results (both "
                                  "operands bool), as PyTorch.");
  return {detail::scalar_value(alpha)};
}

}  // namespace

#define NBX_UNARY(fn)               \
  Tensor fn(const Tensor& x) {      \
    return unary(abi::kOp_##fn, x); \
  }
NBX_UNARY(neg)
NBX_UNARY(abs)
NBX_UNARY(exp)
NBX_UNARY(exp2)
NBX_UNARY(log)
NBX_UNARY(log2)
NBX_UNARY(sqrt)
NBX_UNARY(rsqrt)
NBX_UNARY(reciprocal)
NBX_UNARY(sin)
NBX_UNARY(cos)
NBX_UNARY(tan)
NBX_UNARY(tanh)
NBX_UNARY(sigmoid)
NBX_UNARY(erf)
NBX_UNARY(relu)
NBX_UNARY(silu)
NBX_UNARY(mish)
NBX_UNARY(selu)
NBX_UNARY(hardsigmoid)
NBX_UNARY(hardswish)
NBX_UNARY(floor)
NBX_UNARY(ceil)
NBX_UNARY(round)
NBX_UNARY(trunc)
NBX_UNARY(isnan)
NBX_UNARY(isinf)
NBX_UNARY(isfinite)
NBX_UNARY(logical_not)
NBX_UNARY(bitwise_not)
NBX_UNARY(log1p)
NBX_UNARY(expm1)
NBX_UNARY(log10)
NBX_UNARY(sign)
NBX_UNARY(sgn)
NBX_UNARY(signbit)
NBX_UNARY(asin)
NBX_UNARY(acos)
NBX_UNARY(atan)
NBX_UNARY(sinh)
NBX_UNARY(cosh)
NBX_UNARY(asinh)
NBX_UNARY(acosh)
NBX_UNARY(atanh)
NBX_UNARY(erfc)
NBX_UNARY(erfinv)
NBX_UNARY(lgamma)
NBX_UNARY(digamma)
NBX_UNARY(frac)
NBX_UNARY(deg2rad)
NBX_UNARY(rad2deg)
NBX_UNARY(sinc)
NBX_UNARY(isposinf)
NBX_UNARY(isneginf)
NBX_UNARY(log_sigmoid)
#undef NBX_UNARY

Tensor square(const Tensor& x) {
  // PyTorch's square is pow(x, 2): a bool tensor meets the integer 2 and promotes to int64.
  const bool promote = x.defined() && x.dtype() == DType::kBool;
  return unary(abi::kOp_square, promote ? x.to(DType::kInt64) : x);
}

Tensor logit(const Tensor& x, std::optional<double> eps) {
  // The bounds in the dtype the kernel computes in, as PyTorch forms them (1 - eps in
  // float32 for float32 inputs), so every backend clamps to the same two values.
  const bool wide = x.defined() && x.dtype() == DType::kFloat64;
  const auto in_compute = [&](double v) { return wide ? v : static_cast<double>(float(v)); };
  const bool clamps = eps && *eps >= 0;
  const double lo = clamps ? in_compute(*eps) : 0;
  const double hi = clamps ? in_compute(1.0 - lo) : 0;
  return unary(abi::kOp_logit, x, {f(lo), f(hi), f(clamps ? 1.0 : 0.0)});
}

Tensor gelu(const Tensor& x, GeluApproximation approximate) {
  return unary(approximate == GeluApproximation::kTanh ? abi::kOp_gelu_tanh : abi::kOp_gelu_erf, x);
}
Tensor softplus(const Tensor& x, double beta, double threshold) {
  return unary(abi::kOp_softplus, x, {f(beta), f(threshold)});
}
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return unary(abi::kOp_leaky_relu, x, {f(negative_slope)});
}
Tensor elu(const Tensor& x, double alpha) {
  return unary(abi::kOp_elu, x, {f(alpha)});
}
Tensor celu(const Tensor& x, double alpha) {
  if (alpha == 0) throw InvalidArgument("celu", "celu: alpha must not be 0 (it divides by alpha).");
  return unary(abi::kOp_celu, x, {f(alpha)});
}

namespace {

// A scalar as a tensor of `dtype` holds it (after require_fits), in both representations:
// PyTorch's Scalar::to<T> truncates a float toward zero for integers, wraps uint8's negative
// integers, and builds float16/bfloat16 from the float32 value (two roundings, as c10::Half).
abi::ScalarValue value_in_dtype(const Scalar& s, DType dtype) {
  if (is_floating(dtype)) {
    double v = s.to_double();
    if (dtype != DType::kFloat64) v = static_cast<float>(v);
    if (dtype == DType::kFloat16) v = half_bits_to_double(double_to_half_bits(v));
    if (dtype == DType::kBFloat16) v = bf16_bits_to_double(double_to_bf16_bits(v));
    return f(v);
  }
  std::int64_t i = s.to_int();  // a float truncates toward zero
  const auto u = static_cast<std::uint64_t>(i);
  switch (dtype) {
    case DType::kInt8:
      i = static_cast<std::int8_t>(static_cast<std::uint8_t>(u));
      break;
    case DType::kUInt8:
      i = static_cast<std::uint8_t>(u);
      break;
    case DType::kInt16:
      i = static_cast<std::int16_t>(static_cast<std::uint16_t>(u));
      break;
    case DType::kInt32:
      i = static_cast<std::int32_t>(static_cast<std::uint32_t>(u));
      break;
    default:
      break;
  }
  return {static_cast<double>(i), i};
}

}  // namespace

Tensor threshold(const Tensor& x, Scalar threshold, Scalar value) {
  // Compared and stored in x's dtype, so every backend sees the two values PyTorch does
  // (threshold(float32 0.1, 0.1, v) replaces: 0.1 is float32's 0.1 there). A bool x is
  // refused by the dtype rule below, before any conversion matters.
  if (x.defined() && x.dtype() != DType::kBool) {
    require_fits("threshold", threshold, x.dtype());
    require_fits("threshold", value, x.dtype());
    return unary(abi::kOp_threshold, x,
                 {value_in_dtype(threshold, x.dtype()), value_in_dtype(value, x.dtype())});
  }
  return unary(abi::kOp_threshold, x);
}

Tensor nan_to_num(const Tensor& x, double nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  double largest = 0;
  switch (x.dtype()) {
    case DType::kFloat16:
      largest = 65504.0;
      break;
    case DType::kBFloat16:
      largest = 3.3895313892515355e38;
      break;
    case DType::kFloat32:
      largest = std::numeric_limits<float>::max();
      break;
    default:
      largest = std::numeric_limits<double>::max();
      break;
  }
  return unary(abi::kOp_nan_to_num, x,
               {f(nan), f(posinf.value_or(largest)), f(neginf.value_or(-largest))});
}

Tensor add(const TensorOrScalar& a, const TensorOrScalar& b, Scalar alpha) {
  return binary(abi::kOp_add, a, b, alpha_attrs("add", a, b, alpha));
}
Tensor sub(const TensorOrScalar& a, const TensorOrScalar& b, Scalar alpha) {
  // PyTorch's sub_check, before promotion: a bool operand (a bool scalar counts, as PyTorch
  // wraps it into a bool tensor) is refused even when the other one would promote it
  // (bool - int, float - true), where the domain check alone saw int64 or float.
  const auto is_bool = [](const TensorOrScalar& o) {
    return o.is_tensor() ? o.tensor().defined() && o.tensor().dtype() == DType::kBool
                         : o.scalar().kind() == Scalar::Kind::kBool;
  };
  if (is_bool(a) && is_bool(b))
    throw InvalidArgument("sub",
                          "sub: subtraction, the `-` operator, with two bool tensors is not "
                          "supported; use the `^` or logical_xor() operator instead.");
  if (is_bool(a) || is_bool(b))
    throw InvalidArgument("sub",
                          "sub: subtraction, the `-` operator, with a bool tensor is not "
                          "supported; if you are trying to invert a mask, use the `~` or "
                          "logical_not() operator instead.");
  return binary(abi::kOp_sub, a, b, alpha_attrs("sub", a, b, alpha));
}

Tensor pow(const TensorOrScalar& a, const TensorOrScalar& b) {
  if (a.is_tensor() && !b.is_tensor() && !is_floating(a.tensor().dtype()) &&
      !b.scalar().is_floating() && b.scalar().to_int() < 0)
    throw InvalidArgument("pow", "pow: integers to negative integer powers are not allowed (" +
                                     dtype_str(a.tensor().dtype()) + " base, exponent " +
                                     b.scalar().str() + ").");
  return binary(abi::kOp_pow, a, b);
}

#define NBX_BINARY(fn)                                          \
  Tensor fn(const TensorOrScalar& a, const TensorOrScalar& b) { \
    return binary(abi::kOp_##fn, a, b);                         \
  }
NBX_BINARY(mul)
NBX_BINARY(div)
NBX_BINARY(floor_divide)
NBX_BINARY(remainder)
NBX_BINARY(maximum)
NBX_BINARY(minimum)
NBX_BINARY(atan2)
NBX_BINARY(bitwise_and)
NBX_BINARY(bitwise_or)
NBX_BINARY(bitwise_xor)
NBX_BINARY(bitwise_left_shift)
NBX_BINARY(bitwise_right_shift)
NBX_BINARY(logical_and)
NBX_BINARY(logical_or)
NBX_BINARY(logical_xor)
NBX_BINARY(eq)
NBX_BINARY(ne)
NBX_BINARY(lt)
NBX_BINARY(le)
NBX_BINARY(gt)
NBX_BINARY(ge)
NBX_BINARY(fmod)
NBX_BINARY(hypot)
NBX_BINARY(copysign)
NBX_BINARY(logaddexp)
NBX_BINARY(logaddexp2)
NBX_BINARY(xlogy)
NBX_BINARY(nextafter)
NBX_BINARY(float_power)
#undef NBX_BINARY

Tensor where(const Tensor& condition, const TensorOrScalar& a, const TensorOrScalar& b) {
  const TensorOrScalar c(condition);
  OpCall call{abi::kOp_where, {&c, &a, &b}};
  call.leading_condition = true;
  return run(call);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const TensorOrScalar& value) {
  if (value.is_tensor() && value.tensor().dim() != 0)
    throw InvalidArgument("masked_fill",
                          "masked_fill: the value must be a scalar or a 0-d tensor, "
                          "not a tensor of shape " +
                              to_string(value.tensor().shape()) + ".");
  const Shape out = broadcast_shapes(x.shape(), mask.shape(), "masked_fill");
  if (!(out == x.shape()))
    throw InvalidArgument("masked_fill",
                          "masked_fill: the mask of shape " + to_string(mask.shape()) +
                              " must broadcast to the tensor's shape " + to_string(x.shape()) +
                              ", not grow it to " + to_string(out) + ".");
  // PyTorch refuses a value that overflows x's dtype (NaN into int64, 200 into int8) even
  // where the mask is all false. A 0-d tensor value on a device is read for the check (one
  // synchronisation, as PyTorch's value.item() on CUDA).
  if (!value.is_tensor())
    require_fits("masked_fill", value.scalar(), x.dtype());
  else if (value.tensor().defined())
    require_fits("masked_fill", value.tensor().item(), x.dtype());
  const TensorOrScalar m(mask), xs(x);
  const TensorOrScalar v = value.is_tensor() ? TensorOrScalar(value.tensor().to(x.dtype())) : value;
  OpCall call{abi::kOp_where, {&m, &v, &xs}};
  call.leading_condition = true;
  call.forced_common = x.dtype();
  return run(call, "masked_fill");
}

namespace {

// clamp, clamp_min and clamp_max: one body, its errors named after the op called.
Tensor clamp_named(std::string_view name, const Tensor& x, const std::optional<TensorOrScalar>& min,
                   const std::optional<TensorOrScalar>& max) {
  if (!min && !max)
    throw InvalidArgument("clamp", "clamp: at least one of min and max must be given.");
  // One tensor bound: PyTorch's clamp is maximum(x, min) / minimum(x, max), which promote
  // the two tensors alone and take bool (clamp(bool, max=bool tensor) is bool).
  if (!min != !max && (min ? *min : *max).is_tensor()) {
    const TensorOrScalar xs(x);
    return run({min ? abi::kOp_maximum : abi::kOp_minimum, {&xs, min ? &*min : &*max}}, name);
  }
  // Otherwise an absent bound is the widest value of the dtype the given operands promote
  // to, forced as the common dtype so that it does not join the promotion (an int64 bound
  // made clamp(bool, max=true) int64); a bool common dtype is refused, as PyTorch's
  // clamp kernels have no bool.
  std::vector<PromotionOperand> promo{tensor_operand(x)};
  for (const auto* b : {&min, &max}) {
    if (!*b) continue;
    const TensorOrScalar& o = **b;
    promo.push_back(o.is_tensor()
                        ? tensor_operand(o.tensor())
                        : PromotionOperand{o.scalar().promotion_dtype(), OperandKind::kScalar});
  }
  const DType t = result_type(promo);
  auto widest = [&](bool upper) -> TensorOrScalar {
    if (is_floating(t)) return Scalar(upper ? INFINITY : -INFINITY);
    switch (t) {
      case DType::kInt8:
        return Scalar(upper ? INT8_MAX : INT8_MIN);
      case DType::kUInt8:
        return Scalar(upper ? UINT8_MAX : 0);
      case DType::kInt16:
        return Scalar(upper ? INT16_MAX : INT16_MIN);
      case DType::kInt32:
        return Scalar(upper ? INT32_MAX : INT32_MIN);
      default:
        return Scalar(upper ? INT64_MAX : INT64_MIN);
    }
  };
  // A scalar bound converts to that dtype with PyTorch's overflow check (clamp(int8, -200)
  // is refused: "value cannot be converted to type int8_t without overflow").
  for (const auto* b : {&min, &max})
    if (*b && !(*b)->is_tensor()) require_fits(name, (*b)->scalar(), t);
  const TensorOrScalar xs(x);
  const TensorOrScalar lo = min ? *min : widest(false);
  const TensorOrScalar hi = max ? *max : widest(true);
  OpCall call{abi::kOp_clamp, {&xs, &lo, &hi}};
  call.forced_common = t;
  return run(call, name);
}
}  // namespace

Tensor clamp(const Tensor& x, const std::optional<TensorOrScalar>& min,
             const std::optional<TensorOrScalar>& max) {
  return clamp_named("clamp", x, min, max);
}

Tensor clamp_min(const Tensor& x, const TensorOrScalar& min) {
  return clamp_named("clamp_min", x, min, std::nullopt);
}
Tensor clamp_max(const Tensor& x, const TensorOrScalar& max) {
  return clamp_named("clamp_max", x, std::nullopt, max);
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  if (!a.defined() || !b.defined())
    throw InvalidArgument("isclose", "isclose: both operands must be defined tensors.");
  if (a.dtype() != b.dtype())
    throw InvalidArgument("isclose",
                          "isclose: the operands must share one dtype, as PyTorch "
                          "requires (a is " +
                              dtype_str(a.dtype()) + ", b " + dtype_str(b.dtype()) +
                              "); cast one first.");
  for (const auto& [what, v] : {std::pair{"rtol", rtol}, std::pair{"atol", atol}})
    if (!(v >= 0))
      throw InvalidArgument("isclose", std::string("isclose: ") + what +
                                           " must be greater than or equal to zero, but got " +
                                           std::to_string(v) + ".");
  const TensorOrScalar x(a), y(b);
  // PyTorch's zero-tolerance shortcut is plain equality; the kernel compares integers through
  // float32, which would call 2^24 and 2^24 + 1 equal.
  if (rtol == 0 && atol == 0 && !is_floating(a.dtype()))
    return run({abi::kOp_eq, {&x, &y}}, "isclose");
  return run({abi::kOp_isclose, {&x, &y}, {f(rtol), f(atol), f(equal_nan ? 1.0 : 0.0)}});
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan)).item().to_bool();
}

Tensor lerp(const Tensor& start, const Tensor& end, const TensorOrScalar& weight) {
  // PyTorch's lerp does not promote: start, end and a tensor weight share one floating dtype.
  const DType t = start.defined() ? start.dtype() : DType::kFloat32;
  if (!is_floating(t))
    throw InvalidArgument("lerp", "lerp is not defined for " + dtype_str(t) +
                                      " operands (it takes floating dtypes).");
  const bool same =
      end.defined() && end.dtype() == t && (!weight.is_tensor() || weight.tensor().dtype() == t);
  if (!same)
    throw InvalidArgument(
        "lerp",
        "lerp: start, end and a tensor weight must share one dtype (start is " + dtype_str(t) +
            ", end " + (end.defined() ? dtype_str(end.dtype()) : "undefined") +
            (weight.is_tensor() ? ", weight " + dtype_str(weight.tensor().dtype()) : "") + ").");
  const TensorOrScalar s(start), e(end);
  return run({abi::kOp_lerp, {&s, &e, &weight}});
}

Tensor addcmul(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value) {
  const TensorOrScalar a(x), b(t1), c(t2);
  // PyTorch converts value to the computation's dtype with its overflow check (-0.25 does
  // not fit uint8).
  if (x.defined() && t1.defined() && t2.defined()) {
    const PromotionOperand promo[] = {tensor_operand(x), tensor_operand(t1), tensor_operand(t2)};
    require_fits("addcmul", value, result_type(promo));
  }
  return run({abi::kOp_addcmul, {&a, &b, &c}, {detail::scalar_value(value)}});
}

Tensor addcdiv(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value) {
  const TensorOrScalar a(x), b(t1), c(t2);
  return run({abi::kOp_addcdiv, {&a, &b, &c}, {detail::scalar_value(value)}});
}

Tensor detail::run_binary_op(abi::ElementwiseOp op, const Tensor& a, const Tensor& b,
                             std::string_view name) {
  const TensorOrScalar x(a), y(b);
  return run({op, {&x, &y}}, name);
}

std::vector<std::string> elementwise_op_names() {
  std::vector<std::string> names;
  // The gated products take one fused input, not operands of one shape: the conformance
  // suite gives them cases of their own (tests/conformance/conformance_cases_glu.cpp).
  for (const OpRule& r : detail::all_rules())
    if (r.op != abi::kOp_copy && !detail::takes_fused_halves(r.op)) names.emplace_back(r.name);
  names.emplace_back("masked_fill");
  names.emplace_back("cast");
  for (const char* composite : {"allclose", "clamp_min", "clamp_max"})
    names.emplace_back(composite);
  return names;
}

}  // namespace nbx::ops
