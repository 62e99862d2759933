// Elementwise ops, PyTorch semantics: type promotion with weak scalars, broadcasting read
// through strides, host scalars and device-resident 0-d tensors as scalars.
//
// Every op returns a new tensor on the device of its tensor operands. Throws
// InvalidArgument for a dtype the op does not define (naming op and dtype), for shapes that
// do not broadcast and for operands on different devices; Unsupported when the device
// lacks a capability the op needs (e.g. fp64 for float64 tensors); DeviceFault (at the
// next synchronisation on GPUs) for an integer division by zero.
#pragma once

#include <optional>
#include <variant>

#include "core/tensor.hpp"

namespace nbx::ops {

// An operand that may be a tensor or a host scalar.
class TensorOrScalar {
 public:
  TensorOrScalar(const Tensor& t) : v_(t) {}  // NOLINT(google-explicit-constructor)
  TensorOrScalar(Scalar s) : v_(s) {}         // NOLINT(google-explicit-constructor)
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorOrScalar(T v) : v_(Scalar(v)) {}  // NOLINT(google-explicit-constructor)

  bool is_tensor() const { return std::holds_alternative<Tensor>(v_); }
  const Tensor& tensor() const { return std::get<Tensor>(v_); }
  const Scalar& scalar() const { return std::get<Scalar>(v_); }

 private:
  std::variant<Tensor, Scalar> v_;
};

// ---- unary ----
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor silu(const Tensor& x);
enum class GeluApproximation { kNone, kTanh };
Tensor gelu(const Tensor& x, GeluApproximation approximate = GeluApproximation::kNone);
Tensor mish(const Tensor& x);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor selu(const Tensor& x);
Tensor celu(const Tensor& x, double alpha = 1.0);
Tensor hardsigmoid(const Tensor& x);
Tensor hardswish(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);  // half to even
Tensor trunc(const Tensor& x);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
// NaN → nan; +inf → posinf (default: the dtype's largest finite value); -inf → neginf.
Tensor nan_to_num(const Tensor& x, double nan = 0.0, std::optional<double> posinf = {},
                  std::optional<double> neginf = {});
Tensor logical_not(const Tensor& x);
Tensor bitwise_not(const Tensor& x);
// Issue 11's unary ops, PyTorch's semantics. Integer and bool inputs of the float ops become
// the default float dtype; sign/sgn/square keep integer dtypes (square of bool is int64, as
// PyTorch 2.x's pow(x, 2)); signbit/isposinf/isneginf return bool; frac takes floats only.
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor sign(const Tensor& x);  // NaN gives 0
Tensor sgn(const Tensor& x);   // sign, for real dtypes
Tensor signbit(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
Tensor erfc(const Tensor& x);
Tensor erfinv(const Tensor& x);
Tensor lgamma(const Tensor& x);
Tensor digamma(const Tensor& x);
Tensor square(const Tensor& x);
Tensor frac(const Tensor& x);
Tensor deg2rad(const Tensor& x);
Tensor rad2deg(const Tensor& x);
// log(x / (1 - x)); with eps (>= 0) x is clamped to [eps, 1 - eps] first, as PyTorch does
// (a negative eps clamps nothing). eps and 1 - eps are rounded to the dtype the op computes in.
Tensor logit(const Tensor& x, std::optional<double> eps = {});
Tensor sinc(const Tensor& x);  // sin(pi x) / (pi x), 1 at 0
Tensor isposinf(const Tensor& x);
Tensor isneginf(const Tensor& x);
// Issue 13. log_sigmoid: PyTorch's logsigmoid, min(x, 0) - log1p(exp(-|x|)) (no overflow or
// cancellation for any |x|); floating dtypes only. threshold: PyTorch's
// threshold(x, threshold, value), x <= threshold ? value : x (a NaN stays NaN); every dtype
// but bool, the result x's dtype. Both scalars are converted to x's dtype first, as PyTorch
// does (an integer dtype truncates 2.5 to 2 and wraps uint8's -1 to 255; float16 rounds), and
// one that overflows it is refused (InvalidArgument: threshold(int8, 2, 200), a 1e39 value
// for float32, NaN for an integer dtype).
Tensor log_sigmoid(const Tensor& x);
Tensor threshold(const Tensor& x, Scalar threshold, Scalar value);

// ---- binary (either side may be a host scalar) ----
Tensor add(const TensorOrScalar& a, const TensorOrScalar& b, Scalar alpha = 1);
Tensor sub(const TensorOrScalar& a, const TensorOrScalar& b, Scalar alpha = 1);
Tensor mul(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor div(const TensorOrScalar& a, const TensorOrScalar& b);  // true division
Tensor floor_divide(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor remainder(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor pow(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor maximum(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor minimum(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor atan2(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor bitwise_and(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor bitwise_or(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor bitwise_xor(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor bitwise_left_shift(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor bitwise_right_shift(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor logical_and(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor logical_or(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor logical_xor(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor eq(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor ne(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor lt(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor le(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor gt(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor ge(const TensorOrScalar& a, const TensorOrScalar& b);
// Issue 11's binary ops, PyTorch's semantics (scalars promote weakly, as above).
// fmod keeps the dividend's sign (integer zero divisors fault as remainder's do); copysign
// and xlogy return the default float for integer and bool operands; hypot, logaddexp,
// logaddexp2 and nextafter take floating dtypes only (nextafter steps one ulp of the result
// dtype, float16 and bfloat16 included, bit-exact).
Tensor fmod(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor hypot(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor copysign(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor logaddexp(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor logaddexp2(const TensorOrScalar& a, const TensorOrScalar& b);
Tensor xlogy(const TensorOrScalar& a, const TensorOrScalar& b);  // 0 where a == 0, unless b is NaN
Tensor nextafter(const TensorOrScalar& a, const TensorOrScalar& b);
// pow computed in and returned as float64 whatever the operands; Unsupported naming "fp64"
// on a device without it (never float32 instead).
Tensor float_power(const TensorOrScalar& a, const TensorOrScalar& b);
// |a - b| <= atol + rtol |b|, elementwise, as a bool tensor (PyTorch's isclose: a and b share
// one dtype; equal infinities and, with equal_nan, two NaNs are close; integers compare
// through the default float, 16-bit floats round each step to their dtype). Throws
// InvalidArgument for different dtypes or a negative rtol/atol.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);
// Whether isclose holds everywhere: one reduction on the device and one scalar read.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
// clamp with one bound (tensor or scalar, broadcasting): clamp's dtype rules and NaN
// propagation, errors named after these ops.
Tensor clamp_min(const Tensor& x, const TensorOrScalar& min);
Tensor clamp_max(const Tensor& x, const TensorOrScalar& max);

// ---- ternary ----
// condition must be bool.
Tensor where(const Tensor& condition, const TensorOrScalar& a, const TensorOrScalar& b);
// x where mask is false, value where it is true; the result keeps x's dtype.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const TensorOrScalar& value);
// At least one of min/max. NaN in x or in a bound propagates.
Tensor clamp(const Tensor& x, const std::optional<TensorOrScalar>& min,
             const std::optional<TensorOrScalar>& max);
Tensor lerp(const Tensor& start, const Tensor& end, const TensorOrScalar& weight);
Tensor addcmul(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value = 1);
Tensor addcdiv(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value = 1);

// ---- conversion and copies ----
// Conversion to any dtype. float→integer truncates toward zero; NaN gives 0 and values
// beyond the target's range saturate (PyTorch leaves both undefined; nbx defines them so
// every backend agrees). Narrowing integers wrap (two's complement), any → bool is x != 0.
Tensor cast(const Tensor& x, DType dtype);
// A contiguous copy of any strided view, on the same device.
Tensor copy(const Tensor& x);
// Copy between devices (through the host when neither side is the host's).
Tensor to_device(const Tensor& x, const Device& device);

// The elementwise op names this build knows, in table order (for the CLI and conformance).
std::vector<std::string> elementwise_op_names();

}  // namespace nbx::ops
