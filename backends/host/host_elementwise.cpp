// The reference semantics of every elementwise op (PyTorch's), written once, plainly.
// Floats are computed in float64 and integers in int64 (wrapping like two's complement of
// the output width), then rounded once to the output dtype. GPU kernels must agree with
// this file within the conformance tolerances.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_binary_math.hpp"
#include "backends/host/host_special_math.hpp"
#include "backends/host/host_values.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/half.hpp"

namespace nbx::host {
namespace {

// Wrapping int64 arithmetic (signed overflow is undefined in C++; two's complement is meant).
std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

double nan_max(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
double nan_min(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

double floor_divide_float(double a, double b) {
  if (b == 0) return a / b;
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1;
  return floordiv;
}

double remainder_float(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}

std::int64_t int_pow(std::int64_t base, std::int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  std::int64_t result = 1;
  while (exp) {
    if (exp & 1) result = wrap_mul(result, base);
    exp >>= 1;
    base = wrap_mul(base, base);
  }
  return result;
}

// Shifts as PyTorch defines them for a `bits`-wide type: out-of-range left shifts give 0;
// out-of-range right shifts keep only the sign.
std::int64_t shift_left(std::int64_t a, std::int64_t b, int bits) {
  if (b < 0 || b >= bits) return 0;
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) << b);
}
std::int64_t shift_right(std::int64_t a, std::int64_t b, int bits, bool is_signed) {
  const int max_shift = bits - (is_signed ? 1 : 0);
  if (b < 0 || b >= max_shift) b = max_shift;
  return b >= 64 ? 0 : a >> b;  // a is already sign- or zero-extended from its width
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double softplus(double x, double beta, double threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
}
// PyTorch's log_sigmoid: min(x, 0) - log1p(e^-|x|), no overflow of e^-x for x << 0.
// std::min returns its first operand unless the second is smaller: a NaN x stays NaN.
double log_sigmoid(double x) {
  return std::min(x, 0.0) - std::log1p(std::exp(-std::fabs(x)));
}
// The gated products' activation (the factor that is not the other half as is), computed
// in T, the compute dtype: float for float32 and the half types, as PyTorch's opmath and every
// GPU backend compute it, double for float64. So where it underflows to 0 in float32 (e^-b
// past float32's range), an infinite other half gives NaN, as PyTorch's does, where float64
// would give the limit ±inf. sigmoid and silu are PyTorch's formulas; the gelu forms are
// rewritten to be accurate where PyTorch's 1 + erf and 1 + tanh cancel (x < 0): the product
// scales that error by the other half. 0.5 (1 + tanh u) = 1 / (1 + e^-2u).
template <class T>
T gate_of(std::int32_t op, T a, T b) {
  switch (op) {
    case abi::kOp_sigmoid_mul:
      return T(1) / (T(1) + std::exp(-b));
    case abi::kOp_silu_mul:
      return a / (T(1) + std::exp(-a));
    case abi::kOp_gelu_erf_mul:
      return T(0.5) * a * std::erfc(-a * T(M_SQRT1_2));
    default: {  // gelu_tanh_mul
      const T u = T(0.79788456080286535588) * (a + T(0.044715) * a * a * a);
      return a / (T(1) + std::exp(T(-2) * u));
    }
  }
}

// a * sigmoid(b), silu(a) * b, gelu(a) * b: the activation in the compute dtype, the product
// in float64, one rounding to the output dtype.
double gated_product(std::int32_t op, DType compute, double a, double b) {
  const double other = op == abi::kOp_sigmoid_mul ? a : b;
  if (compute == DType::kFloat64) return other * gate_of<double>(op, a, b);
  return other *
         static_cast<double>(gate_of<float>(op, static_cast<float>(a), static_cast<float>(b)));
}
double hardsigmoid(double x) {
  return nan_min(nan_max(x + 3.0, 0.0), 6.0) / 6.0;
}

struct FaultContext {
  std::int32_t op;
  std::int64_t position;
};

[[noreturn]] void integer_division_by_zero(const FaultContext& ctx) {
  const char* name = ctx.op == abi::kOp_floor_divide ? "floor_divide"
                     : ctx.op == abi::kOp_fmod       ? "fmod"
                                                     : "remainder";
  throw DeviceFault(name, "host", 0, 0, ctx.position,
                    std::string(name) + " on host: integer division by zero at position " +
                        std::to_string(ctx.position) + ".");
}

Value apply(const abi::ElementwiseParams& p, const Value* in, const FaultContext& fault) {
  const DType compute = static_cast<DType>(p.compute_dtype);
  const bool fl = is_floating(compute);
  const int bits = static_cast<int>(dtype_size(compute)) * 8;
  const double x = fl ? as_f(in[0]) : 0;
  const std::int64_t xi = fl ? 0 : as_i(in[0]);
  const abi::ScalarValue* attr = p.attrs;
  switch (p.op) {
    case abi::kOp_copy:
      return in[0];
    case abi::kOp_neg:
      return fl ? from_double(-x) : from_int(wrap_mul(xi, -1));
    case abi::kOp_abs:
      return fl ? from_double(std::fabs(x)) : from_int(xi < 0 ? wrap_mul(xi, -1) : xi);
    case abi::kOp_exp:
      return from_double(std::exp(x));
    case abi::kOp_exp2:
      return from_double(std::exp2(x));
    case abi::kOp_log:
      return from_double(std::log(x));
    case abi::kOp_log2:
      return from_double(std::log2(x));
    case abi::kOp_sqrt:
      return from_double(std::sqrt(x));
    case abi::kOp_rsqrt:
      return from_double(1.0 / std::sqrt(x));
    case abi::kOp_reciprocal:
      return from_double(1.0 / x);
    case abi::kOp_sin:
      return from_double(std::sin(x));
    case abi::kOp_cos:
      return from_double(std::cos(x));
    case abi::kOp_tan:
      return from_double(std::tan(x));
    case abi::kOp_tanh:
      return from_double(std::tanh(x));
    case abi::kOp_sigmoid:
      return from_double(sigmoid(x));
    case abi::kOp_erf:
      return from_double(std::erf(x));
    case abi::kOp_relu:
      return fl ? from_double(std::isnan(x) ? x : std::max(x, 0.0))
                : from_int(std::max<std::int64_t>(xi, 0));
    case abi::kOp_silu:
      return from_double(x * sigmoid(x));
    case abi::kOp_gelu_erf:
      return from_double(0.5 * x * (1.0 + std::erf(x * M_SQRT1_2)));
    case abi::kOp_gelu_tanh: {
      const double k = std::sqrt(2.0 / M_PI);
      return from_double(0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x))));
    }
    case abi::kOp_mish:
      return from_double(x * std::tanh(std::log1p(std::exp(x))));
    case abi::kOp_softplus:
      return from_double(softplus(x, attr[0].f, attr[1].f));
    case abi::kOp_leaky_relu:
      return from_double(x > 0 ? x : x * attr[0].f);
    case abi::kOp_elu:
      return from_double(x > 0 ? x : attr[0].f * std::expm1(x));
    case abi::kOp_selu: {
      constexpr double kAlpha = 1.6732632423543772848170429916717;
      constexpr double kScale = 1.0507009873554804934193349852946;
      return from_double(kScale * (x > 0 ? x : kAlpha * std::expm1(x)));
    }
    case abi::kOp_celu:
      return from_double(x > 0 ? x : attr[0].f * std::expm1(x / attr[0].f));
    case abi::kOp_hardsigmoid:
      return from_double(hardsigmoid(x));
    case abi::kOp_hardswish:
      return from_double(x * hardsigmoid(x));
    case abi::kOp_floor:
      return fl ? from_double(std::floor(x)) : in[0];
    case abi::kOp_ceil:
      return fl ? from_double(std::ceil(x)) : in[0];
    case abi::kOp_round:
      return fl ? from_double(std::nearbyint(x)) : in[0];
    case abi::kOp_trunc:
      return fl ? from_double(std::trunc(x)) : in[0];
    case abi::kOp_isnan:
      return from_int(fl && std::isnan(x));
    case abi::kOp_isinf:
      return from_int(fl && std::isinf(x));
    case abi::kOp_isfinite:
      return from_int(!fl || std::isfinite(x));
    case abi::kOp_nan_to_num:
      if (!fl) return in[0];
      return from_double(std::isnan(x)    ? attr[0].f
                         : x == INFINITY  ? attr[1].f
                         : x == -INFINITY ? attr[2].f
                                          : x);
    case abi::kOp_logical_not:
      return from_int(!truthy(in[0]));
    case abi::kOp_bitwise_not:
      return compute == DType::kBool ? from_int(xi == 0) : from_int(~xi);
    case abi::kOp_log1p:
      return from_double(std::log1p(x));
    case abi::kOp_expm1:
      return from_double(std::expm1(x));
    case abi::kOp_log10:
      return from_double(std::log10(x));
    case abi::kOp_sign:
    case abi::kOp_sgn:  // (0 < x) - (x < 0), as PyTorch: NaN and -0 give +0
      return fl ? from_double(double((0 < x) - (x < 0))) : from_int((0 < xi) - (xi < 0));
    case abi::kOp_signbit:
      return from_int(fl ? std::signbit(x) : xi < 0);
    case abi::kOp_asin:
      return from_double(std::asin(x));
    case abi::kOp_acos:
      return from_double(std::acos(x));
    case abi::kOp_atan:
      return from_double(std::atan(x));
    case abi::kOp_sinh:
      return from_double(std::sinh(x));
    case abi::kOp_cosh:
      return from_double(std::cosh(x));
    case abi::kOp_asinh:
      return from_double(std::asinh(x));
    case abi::kOp_acosh:
      return from_double(std::acosh(x));
    case abi::kOp_atanh:
      return from_double(std::atanh(x));
    case abi::kOp_erfc:
      return from_double(std::erfc(x));
    case abi::kOp_erfinv:
      return from_double(erfinv(x));
    case abi::kOp_lgamma:
      return from_double(std::lgamma(x));
    case abi::kOp_digamma:
      return from_double(digamma(x));
    case abi::kOp_square:
      return fl ? from_double(x * x) : from_int(wrap_mul(xi, xi));
    case abi::kOp_frac:
      return from_double(x - std::trunc(x));
    case abi::kOp_deg2rad:
      return from_double(x * (M_PI / 180.0));
    case abi::kOp_rad2deg:
      return from_double(x * (180.0 / M_PI));
    case abi::kOp_logit:
      return from_double(logit(x, attr[0].f, attr[1].f, attr[2].f != 0));
    case abi::kOp_sinc:
      return from_double(sinc(x));
    case abi::kOp_isposinf:
      return from_int(fl && x == INFINITY);
    case abi::kOp_isneginf:
      return from_int(fl && x == -INFINITY);
    case abi::kOp_log_sigmoid:
      return from_double(log_sigmoid(x));
    case abi::kOp_threshold:  // attrs already in x's dtype (core/ops/elementwise.cpp)
      if (fl) return from_double(x <= attr[0].f ? attr[1].f : x);
      return from_int(xi <= attr[0].i ? attr[1].i : xi);
    default:
      break;
  }
  // Binary and ternary ops.
  const double y = fl ? as_f(in[1]) : 0;
  const std::int64_t yi = fl ? 0 : as_i(in[1]);
  switch (p.op) {
    case abi::kOp_add:
      return fl ? from_double(x + attr[0].f * y) : from_int(wrap_add(xi, wrap_mul(attr[0].i, yi)));
    case abi::kOp_sub:
      return fl ? from_double(x - attr[0].f * y) : from_int(wrap_add(xi, wrap_mul(-attr[0].i, yi)));
    case abi::kOp_mul:
      return fl ? from_double(x * y) : from_int(wrap_mul(xi, yi));
    case abi::kOp_div:
      return from_double(as_f(in[0]) / as_f(in[1]));
    case abi::kOp_floor_divide:
      if (fl) return from_double(floor_divide_float(x, y));
      if (yi == 0) integer_division_by_zero(fault);
      if (yi == -1) return from_int(wrap_mul(xi, -1));  // INT64_MIN / -1 wraps
      return from_int((xi % yi != 0 && ((xi < 0) != (yi < 0))) ? xi / yi - 1 : xi / yi);
    case abi::kOp_remainder: {
      if (fl) return from_double(remainder_float(x, y));
      if (yi == 0) integer_division_by_zero(fault);
      if (yi == -1) return from_int(0);
      std::int64_t mod = xi % yi;
      if (mod != 0 && ((yi < 0) != (mod < 0))) mod += yi;
      return from_int(mod);
    }
    case abi::kOp_pow:
      return fl ? from_double(std::pow(x, y)) : from_int(int_pow(xi, yi));
    case abi::kOp_maximum:
      return fl ? from_double(nan_max(x, y)) : from_int(std::max(xi, yi));
    case abi::kOp_minimum:
      return fl ? from_double(nan_min(x, y)) : from_int(std::min(xi, yi));
    case abi::kOp_atan2:
      return from_double(std::atan2(x, y));
    case abi::kOp_bitwise_and:
      return from_int(xi & yi);
    case abi::kOp_bitwise_or:
      return from_int(xi | yi);
    case abi::kOp_bitwise_xor:
      return from_int(xi ^ yi);
    case abi::kOp_bitwise_left_shift:
      return from_int(shift_left(xi, yi, bits));
    case abi::kOp_bitwise_right_shift:
      return from_int(shift_right(xi, yi, bits, is_signed(compute)));
    case abi::kOp_logical_and:
      return from_int(truthy(in[0]) && truthy(in[1]));
    case abi::kOp_logical_or:
      return from_int(truthy(in[0]) || truthy(in[1]));
    case abi::kOp_logical_xor:
      return from_int(truthy(in[0]) != truthy(in[1]));
    case abi::kOp_eq:
      return from_int(fl ? x == y : xi == yi);
    case abi::kOp_ne:
      return from_int(fl ? x != y : xi != yi);
    case abi::kOp_lt:
      return from_int(fl ? x < y : xi < yi);
    case abi::kOp_le:
      return from_int(fl ? x <= y : xi <= yi);
    case abi::kOp_gt:
      return from_int(fl ? x > y : xi > yi);
    case abi::kOp_ge:
      return from_int(fl ? x >= y : xi >= yi);
    case abi::kOp_fmod:  // C's fmod: the dividend's sign
      if (fl) return from_double(std::fmod(x, y));
      if (yi == 0) integer_division_by_zero(fault);
      return from_int(yi == -1 ? 0 : xi % yi);  // INT64_MIN % -1 traps in C++
    case abi::kOp_hypot:
      return from_double(std::hypot(x, y));
    case abi::kOp_copysign:
      return from_double(std::copysign(x, y));
    case abi::kOp_logaddexp:  // PyTorch's form; equal infinities would give inf - inf
      if (std::isinf(x) && x == y) return from_double(x);
      return from_double(std::max(x, y) + std::log1p(std::exp(-std::fabs(x - y))));
    case abi::kOp_logaddexp2:
      if (std::isinf(x) && x == y) return from_double(x);
      return from_double(std::max(x, y) + std::log1p(std::exp2(-std::fabs(x - y))) / M_LN2);
    case abi::kOp_xlogy:
      if (std::isnan(y)) return from_double(NAN);
      return from_double(x == 0 ? 0.0 : x * std::log(y));
    case abi::kOp_nextafter:
      return from_double(nextafter_in(static_cast<DType>(p.out.dtype), x, y));
    case abi::kOp_float_power:
      return from_double(std::pow(x, y));
    case abi::kOp_isclose: {
      const abi::ElementwiseOperand& tensor_in = p.in[0].is_scalar ? p.in[1] : p.in[0];
      return from_int(isclose_in(compute, static_cast<DType>(tensor_in.dtype), x, y, attr[0].f,
                                 attr[1].f, attr[2].f != 0));
    }
    case abi::kOp_where:
      return truthy(in[0]) ? in[1] : in[2];
    case abi::kOp_sigmoid_mul:
    case abi::kOp_silu_mul:
    case abi::kOp_gelu_erf_mul:
    case abi::kOp_gelu_tanh_mul:
      return from_double(gated_product(p.op, compute, x, y));
    default:
      break;
  }
  const double z = fl ? as_f(in[2]) : 0;
  const std::int64_t zi = fl ? 0 : as_i(in[2]);
  switch (p.op) {
    case abi::kOp_clamp:
      return fl ? from_double(nan_min(nan_max(x, y), z)) : from_int(std::min(std::max(xi, yi), zi));
    case abi::kOp_lerp:
      return from_double(std::fabs(z) < 0.5 ? x + z * (y - x) : y - (y - x) * (1.0 - z));
    case abi::kOp_addcmul:
      return fl ? from_double(x + attr[0].f * y * z)
                : from_int(wrap_add(xi, wrap_mul(wrap_mul(attr[0].i, yi), zi)));
    case abi::kOp_addcdiv:
      return from_double(x + attr[0].f * y / z);
    default:
      break;
  }
  throw Internal("elementwise: the host has no implementation of op code " + std::to_string(p.op) +
                 ".");
}

Value load_operand(const abi::ElementwiseOperand& o, const std::byte* base, std::int64_t off,
                   DType compute) {
  if (!o.is_scalar) return load(base, static_cast<DType>(o.dtype), off);
  if (is_floating(compute)) return from_double(o.scalar.f);
  return from_int(compute == DType::kBool ? o.scalar.i != 0 : o.scalar.i);
}

}  // namespace

void run_family(const abi::ElementwiseParams& p, std::span<const KernelBuffer> buffers) {
  const int n_in = p.num_inputs;
  if (n_in < 1 || n_in > abi::kMaxElementwiseInputs || p.ndim < 0 || p.ndim > abi::kMaxDims ||
      static_cast<int>(buffers.size()) != 1 + n_in)
    throw InvalidArgument("elementwise", "elementwise: malformed launch (" + std::to_string(n_in) +
                                             " inputs, " + std::to_string(p.ndim) + " dims, " +
                                             std::to_string(buffers.size()) + " buffers).");
  const DType compute = static_cast<DType>(p.compute_dtype);
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const std::byte* in_base[abi::kMaxElementwiseInputs] = {};
  for (int k = 0; k < n_in; ++k)
    in_base[k] = static_cast<const std::byte*>(buffers[1 + k].memory.handle);

  // Walk the output index like an odometer, carrying every operand's offset along.
  std::int64_t idx[abi::kMaxDims] = {};
  std::int64_t off_out = p.out.offset;
  std::int64_t off_in[abi::kMaxElementwiseInputs];
  for (int k = 0; k < n_in; ++k) off_in[k] = p.in[k].offset;
  Value values[abi::kMaxElementwiseInputs];
  for (std::int64_t i = 0; i < p.numel; ++i) {
    for (int k = 0; k < n_in; ++k)
      values[k] = load_operand(p.in[k], in_base[k], off_in[k], compute);
    store(out, static_cast<DType>(p.out.dtype), off_out, apply(p, values, {p.op, i}));
    for (int d = p.ndim - 1; d >= 0; --d) {
      ++idx[d];
      off_out += p.out.strides[d];
      for (int k = 0; k < n_in; ++k) off_in[k] += p.in[k].strides[d];
      if (idx[d] < p.sizes[d]) break;
      off_out -= p.out.strides[d] * p.sizes[d];
      for (int k = 0; k < n_in; ++k) off_in[k] -= p.in[k].strides[d] * p.sizes[d];
      idx[d] = 0;
    }
  }
}

}  // namespace nbx::host
