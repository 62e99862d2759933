// The elementwise op table for CUDA/HIP: one `switch` over the op codes of
// core/elementwise_op_list.inc, written once per compute category (float/double, int64).
// Kernels call apply_op with the op either as a run-time value (the generic kernel: one
// kernel serves all ops) or as a template constant (fast paths: the switch folds away).
// Semantics follow the host reference, backends/host/host_elementwise.cpp (PyTorch's).
#pragma once

#include <cmath>
#include <type_traits>

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_values.cuh"
#include "kernels/gpu/gpu_binary_math.cuh"
#include "kernels/gpu/gpu_special_math.cuh"

namespace nbx::gpu {

// What an op needs beyond its operands: attributes in the compute type, and for integer
// computations the width and kind of the compute dtype (shifts and bitwise_not depend on it).
template <typename C>
struct OpContext {
  C attr[3];
  int bits;       // storage width of the compute dtype: 8 (bool too), 16, 32, 64
  bool is_bool;   // bitwise_not is logical on bool
  int out_dtype;  // nextafter steps one ulp of it
  int in_dtype;   // the first tensor input's: isclose rounds its steps to a 16-bit one
};

template <typename C>
NBX_GPU_HOST_DEVICE OpContext<C> make_op_context(const abi::ElementwiseParams& p) {
  OpContext<C> k;
  for (int i = 0; i < 3; ++i) k.attr[i] = scalar_as<C>(p.attrs[i]);
  switch (p.compute_dtype) {
    case kBool:
    case kInt8:
    case kUInt8:
      k.bits = 8;
      break;
    case kInt16:
    case kFloat16:
    case kBFloat16:
      k.bits = 16;
      break;
    case kInt32:
    case kFloat32:
      k.bits = 32;
      break;
    default:
      k.bits = 64;
      break;
  }
  k.is_bool = p.compute_dtype == kBool;
  k.out_dtype = p.out.dtype;
  k.in_dtype = p.in[0].is_scalar ? p.in[1].dtype : p.in[0].dtype;
  return k;
}

template <typename C>
NBX_GPU_INLINE bool is_nan(C x) {
  return x != x;
}
// max/min that propagate NaN (fmax/fmin drop it).
template <typename C>
NBX_GPU_INLINE C nan_max(C a, C b) {
  return (is_nan(a) || is_nan(b)) ? a + b : (a > b ? a : b);
}
template <typename C>
NBX_GPU_INLINE C nan_min(C a, C b) {
  return (is_nan(a) || is_nan(b)) ? a + b : (a < b ? a : b);
}

// Floating-point ops (C = float or double). Math functions resolve to the float or double
// overload by argument type, on CUDA and HIP alike.
template <typename C>
NBX_GPU_INLINE C apply_float_op(int op, C a, C b, C c, const OpContext<C>& k) {
  using abi::ElementwiseOp;
  const C zero = C(0), one = C(1), half = C(0.5);
  switch (op) {
    case abi::kOp_copy:
      return a;
    case abi::kOp_neg:
      return -a;
    case abi::kOp_abs:
      return fabs(a);
    case abi::kOp_exp:
      return exp(a);
    case abi::kOp_exp2:
      return exp2(a);
    case abi::kOp_log:
      return log(a);
    case abi::kOp_log2:
      return log2(a);
    case abi::kOp_sqrt:
      return sqrt(a);
    case abi::kOp_rsqrt:
      return one / sqrt(a);
    case abi::kOp_reciprocal:
      return one / a;
    case abi::kOp_sin:
      return sin(a);
    case abi::kOp_cos:
      return cos(a);
    case abi::kOp_tan:
      return tan(a);
    case abi::kOp_tanh:
      return tanh(a);
    case abi::kOp_sigmoid:
      return one / (one + exp(-a));
    case abi::kOp_erf:
      return erf(a);
    case abi::kOp_relu:
      return is_nan(a) ? a : (a > zero ? a : zero);
    case abi::kOp_silu:
      return a / (one + exp(-a));
    case abi::kOp_gelu_erf:
      return half * a * (one + erf(a * C(0.70710678118654752440)));
    case abi::kOp_gelu_tanh: {
      const C inner = C(0.79788456080286535588) * (a + C(0.044715) * a * a * a);
      return half * a * (one + tanh(inner));
    }
    case abi::kOp_mish:
      return a * tanh(log1p(exp(a)));
    case abi::kOp_softplus: {
      const C bx = a * k.attr[0];
      return bx > k.attr[1] ? a : log1p(exp(bx)) / k.attr[0];
    }
    case abi::kOp_leaky_relu:
      return a > zero ? a : a * k.attr[0];
    case abi::kOp_elu:
      return a > zero ? a : k.attr[0] * expm1(a);
    case abi::kOp_selu: {
      const C alpha = C(1.6732632423543772848170429916717);
      const C scale = C(1.0507009873554804934193349852946);
      return scale * (a > zero ? a : alpha * expm1(a));
    }
    case abi::kOp_celu:
      return a > zero ? a : k.attr[0] * expm1(a / k.attr[0]);
    case abi::kOp_hardsigmoid:
      return nan_min(nan_max(a + C(3), zero), C(6)) / C(6);
    case abi::kOp_hardswish:
      return a * (nan_min(nan_max(a + C(3), zero), C(6)) / C(6));
    case abi::kOp_floor:
      return floor(a);
    case abi::kOp_ceil:
      return ceil(a);
    case abi::kOp_round:
      return rint(a);  // the default rounding mode: half to even
    case abi::kOp_trunc:
      return trunc(a);
    case abi::kOp_isnan:
      return is_nan(a) ? one : zero;
    case abi::kOp_isinf:
      return isinf(a) ? one : zero;
    case abi::kOp_isfinite:
      return isfinite(a) ? one : zero;
    case abi::kOp_nan_to_num:
      if (is_nan(a)) return k.attr[0];
      if (isinf(a)) return a > zero ? k.attr[1] : k.attr[2];
      return a;
    case abi::kOp_logical_not:
      return a == zero ? one : zero;
    case abi::kOp_log1p:
      return log1p(a);
    case abi::kOp_expm1:
      return expm1(a);
    case abi::kOp_log10:
      return log10(a);
    case abi::kOp_sign:
    case abi::kOp_sgn:  // NaN gives 0, as PyTorch's (0 < x) - (x < 0)
      return a > zero ? one : (a < zero ? -one : zero);
    case abi::kOp_signbit:
      return signbit(a) ? one : zero;
    case abi::kOp_asin:
      return asin(a);
    case abi::kOp_acos:
      return acos(a);
    case abi::kOp_atan:
      return atan(a);
    case abi::kOp_sinh:
      return sinh(a);
    case abi::kOp_cosh:
      return cosh(a);
    case abi::kOp_asinh:
      return asinh(a);
    case abi::kOp_acosh:
      return acosh(a);
    case abi::kOp_atanh:
      return atanh(a);
    case abi::kOp_erfc:
      return erfc(a);
    case abi::kOp_erfinv:
      return erf_inv(a);
    case abi::kOp_lgamma:
      return lgamma(a);
    case abi::kOp_digamma:
      return digamma_of(a);
    case abi::kOp_square:
      return a * a;
    case abi::kOp_frac:
      return a - trunc(a);
    case abi::kOp_deg2rad:
      return a * C(0.017453292519943295769);
    case abi::kOp_rad2deg:
      return a * C(57.295779513082320877);
    case abi::kOp_logit:
      return logit_of(a, k.attr[0], k.attr[1], k.attr[2] != zero);
    case abi::kOp_sinc:
      return sinc_of(a);
    case abi::kOp_isposinf:
      return (isinf(a) && a > zero) ? one : zero;
    case abi::kOp_isneginf:
      return (isinf(a) && a < zero) ? one : zero;
    case abi::kOp_log_sigmoid:  // min(x, 0) - log1p(e^-|x|): e^-x overflows for x << 0
      return (a < zero ? a : zero) - log1p(exp(-fabs(a)));
    case abi::kOp_threshold:  // attrs in x's dtype (a NaN x compares false and stays)
      return a <= k.attr[0] ? k.attr[1] : a;
    case abi::kOp_add:
      return a + k.attr[0] * b;
    case abi::kOp_sub:
      return a - k.attr[0] * b;
    case abi::kOp_mul:
      return a * b;
    case abi::kOp_div:
      return a / b;
    case abi::kOp_floor_divide: {
      // PyTorch's div_floor for floats: floor of the exact quotient via fmod, so that
      // 5.0 // 0.1 gives 49 (as Python does), not floor(5.0 / 0.1) = 50.
      if (b == zero) return a / b;
      const C mod = fmod(a, b);
      C div = (a - mod) / b;
      if (mod != zero && ((b < zero) != (mod < zero))) div -= one;
      if (div == zero) return copysign(zero, a / b);
      C fl = floor(div);
      if (div - fl > half) fl += one;
      return fl;
    }
    case abi::kOp_remainder: {
      C mod = fmod(a, b);
      if (mod != zero && ((b < zero) != (mod < zero))) mod += b;
      return mod;
    }
    case abi::kOp_pow:
      return pow(a, b);
    case abi::kOp_maximum:
      return nan_max(a, b);
    case abi::kOp_minimum:
      return nan_min(a, b);
    case abi::kOp_atan2:
      return atan2(a, b);
    case abi::kOp_logical_and:
      return (a != zero && b != zero) ? one : zero;
    case abi::kOp_logical_or:
      return (a != zero || b != zero) ? one : zero;
    case abi::kOp_logical_xor:
      return ((a != zero) != (b != zero)) ? one : zero;
    case abi::kOp_eq:
      return a == b ? one : zero;
    case abi::kOp_ne:
      return a != b ? one : zero;
    case abi::kOp_lt:
      return a < b ? one : zero;
    case abi::kOp_le:
      return a <= b ? one : zero;
    case abi::kOp_gt:
      return a > b ? one : zero;
    case abi::kOp_ge:
      return a >= b ? one : zero;
    case abi::kOp_fmod:
      return fmod(a, b);
    case abi::kOp_hypot:
      return hypot_scaled(a, b);
    case abi::kOp_copysign:
      return copysign(a, b);
    case abi::kOp_logaddexp:  // PyTorch's form; equal infinities would give inf - inf
      if (isinf(a) && a == b) return a;
      return (a > b ? a : b) + log1p(exp(-fabs(a - b)));
    case abi::kOp_logaddexp2:
      if (isinf(a) && a == b) return a;
      return (a > b ? a : b) + log1p(exp2(-fabs(a - b))) * C(1.44269504088896340736);
    case abi::kOp_xlogy:
      if (is_nan(b)) return b;
      return a == zero ? zero : a * log(b);
    case abi::kOp_nextafter:
      return nextafter_in<C>(a, b, k.out_dtype);
    case abi::kOp_float_power:
      return pow(a, b);
    case abi::kOp_isclose:
      return isclose_in<C>(a, b, k.attr[0], k.attr[1], k.attr[2] != zero, k.in_dtype) ? one : zero;
    case abi::kOp_where:
      return a != zero ? b : c;
    // The gated products (glu.hpp): a and b are the two halves of one input. The gelu
    // forms avoid 1 + erf and 1 + tanh, which cancel for a < 0 (the host's gate_of says why).
    case abi::kOp_sigmoid_mul:
      return a * (one / (one + exp(-b)));
    case abi::kOp_silu_mul:
      return a / (one + exp(-a)) * b;
    case abi::kOp_gelu_erf_mul:
      return half * a * erfc(-a * C(0.70710678118654752440)) * b;
    case abi::kOp_gelu_tanh_mul: {
      const C u = C(0.79788456080286535588) * (a + C(0.044715) * a * a * a);
      return a / (one + exp(C(-2) * u)) * b;
    }
    case abi::kOp_clamp:
      return nan_min(nan_max(a, b), c);
    case abi::kOp_lerp: {
      // In double whatever C is: end - start overflows float32 for bfloat16/float32 inputs
      // near their largest values, where the host reference (float64) does not.
      const double da = a, db = b, dc = c;
      return C(fabs(dc) < 0.5 ? da + dc * (db - da) : db - (db - da) * (1.0 - dc));
    }
    case abi::kOp_addcmul:
      return a + k.attr[0] * b * c;
    case abi::kOp_addcdiv:
      return a + k.attr[0] * b / c;
    default:  // bitwise ops have no float form; the launcher refuses them before launch
      return a;
  }
}

// Integer ops in int64, with the compute dtype's width where results depend on it.
// `div_by_zero` is set (never cleared) when floor_divide/remainder/fmod meet a zero divisor.
NBX_GPU_INLINE i64 apply_int_op(int op, i64 a, i64 b, i64 c, const OpContext<i64>& k,
                                bool& div_by_zero) {
  using u64 = unsigned long long;
  switch (op) {
    case abi::kOp_copy:
      return a;
    case abi::kOp_neg:
      return i64(u64(0) - u64(a));
    case abi::kOp_abs:
      return a < 0 ? i64(u64(0) - u64(a)) : a;
    case abi::kOp_floor:
    case abi::kOp_ceil:
    case abi::kOp_round:
    case abi::kOp_trunc:
      return a;
    case abi::kOp_relu:
      return a > 0 ? a : 0;
    case abi::kOp_isnan:
    case abi::kOp_isinf:
      return 0;
    case abi::kOp_isfinite:
      return 1;
    case abi::kOp_nan_to_num:
      return a;
    case abi::kOp_logical_not:
      return a == 0;
    case abi::kOp_bitwise_not:
      return k.is_bool ? i64(a == 0) : ~a;
    case abi::kOp_sign:
    case abi::kOp_sgn:
      return (a > 0) - (a < 0);
    case abi::kOp_signbit:
      return a < 0;
    case abi::kOp_square:
      return i64(u64(a) * u64(a));
    case abi::kOp_isposinf:
    case abi::kOp_isneginf:
      return 0;
    case abi::kOp_threshold:  // attrs already wrapped to the dtype's width
      return a <= k.attr[0] ? k.attr[1] : a;
    case abi::kOp_add:
      return i64(u64(a) + u64(k.attr[0]) * u64(b));
    case abi::kOp_sub:
      return i64(u64(a) - u64(k.attr[0]) * u64(b));
    case abi::kOp_mul:
      return i64(u64(a) * u64(b));
    case abi::kOp_floor_divide: {
      if (b == 0) {
        div_by_zero = true;
        return 0;
      }
      if (b == -1) return i64(u64(0) - u64(a));  // INT64_MIN / -1 wraps instead of trapping
      i64 q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
      return q;
    }
    case abi::kOp_remainder: {
      if (b == 0) {
        div_by_zero = true;
        return 0;
      }
      if (b == -1) return 0;
      i64 r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    case abi::kOp_pow: {
      if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b & 1) ? -1 : 1;
        return 0;
      }
      u64 result = 1, base = u64(a);
      for (i64 e = b; e > 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return i64(result);
    }
    case abi::kOp_maximum:
      return a > b ? a : b;
    case abi::kOp_minimum:
      return a < b ? a : b;
    case abi::kOp_bitwise_and:
      return a & b;
    case abi::kOp_bitwise_or:
      return a | b;
    case abi::kOp_bitwise_xor:
      return a ^ b;
    case abi::kOp_bitwise_left_shift:
      // Shift counts outside [0, width) give 0, as PyTorch does.
      if (b < 0 || b >= k.bits) return 0;
      return i64(u64(a) << b);
    case abi::kOp_bitwise_right_shift:
      // Out-of-range counts keep only the sign; a is sign- or zero-extended from its width,
      // so one rule serves signed and unsigned types.
      if (b < 0 || b >= k.bits) return a < 0 ? -1 : 0;
      return a >> b;
    case abi::kOp_logical_and:
      return (a != 0) && (b != 0);
    case abi::kOp_logical_or:
      return (a != 0) || (b != 0);
    case abi::kOp_logical_xor:
      return (a != 0) != (b != 0);
    case abi::kOp_eq:
      return a == b;
    case abi::kOp_ne:
      return a != b;
    case abi::kOp_lt:
      return a < b;
    case abi::kOp_le:
      return a <= b;
    case abi::kOp_gt:
      return a > b;
    case abi::kOp_ge:
      return a >= b;
    case abi::kOp_fmod:  // C's %: the dividend's sign
      if (b == 0) {
        div_by_zero = true;
        return 0;
      }
      return b == -1 ? 0 : a % b;  // INT64_MIN % -1 traps
    case abi::kOp_where:
      return a != 0 ? b : c;
    case abi::kOp_clamp:
      return (a > b ? a : b) < c ? (a > b ? a : b) : c;
    case abi::kOp_addcmul:
      return i64(u64(a) + u64(k.attr[0]) * u64(b) * u64(c));
    default: {
      // Transcendental and true-division ops on an integer compute dtype: the wrapper widens
      // these to a float compute dtype; computing in double here keeps the answer honest.
      OpContext<double> kd{{double(k.attr[0]), double(k.attr[1]), double(k.attr[2])},
                           64,
                           false,
                           k.out_dtype,
                           k.in_dtype};
      return from_compute<i64>(apply_float_op<double>(op, double(a), double(b), double(c), kd));
    }
  }
}

template <typename C>
NBX_GPU_INLINE C apply_op(int op, C a, C b, C c, const OpContext<C>& k, bool& div_by_zero) {
  if constexpr (IsFloatCompute<C>::value) {
    return apply_float_op<C>(op, a, b, c, k);
  } else {
    return apply_int_op(op, a, b, c, k, div_by_zero);
  }
}

// True for ops whose integer form can fault; kernels skip fault bookkeeping otherwise.
__host__ __device__ constexpr bool op_can_fault(int op) {
  return op == abi::kOp_floor_divide || op == abi::kOp_remainder || op == abi::kOp_fmod;
}

}  // namespace nbx::gpu
