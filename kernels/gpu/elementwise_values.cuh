// Element storage types and the conversions between storage and compute types, shared by
// every GPU kernel family. Compute types are float, double and int64 (`long long`): every
// narrower integer computes in int64 and wraps when stored, which gives the same bits as
// computing in the narrow type (two's complement arithmetic is a ring homomorphism).
//
// Conversion rules (they match the host reference): float → integer truncates toward zero,
// NaN → 0, out-of-range saturates; integer → narrower integer wraps; anything → bool is
// "!= 0" (NaN is true); float → float16/bfloat16 rounds to nearest even.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/kernel_abi.hpp"
#include "kernels/gpu/gpu_portability.cuh"

namespace nbx::gpu {

// nbx::DType values (core/dtype.hpp; part of the ABI, so repeated here for device code).
enum DTypeCode : int {
  kBool = 0,
  kInt8 = 1,
  kUInt8 = 2,
  kInt16 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kFloat16 = 6,
  kBFloat16 = 7,
  kFloat32 = 8,
  kFloat64 = 9,
};

using i64 = long long;

template <typename T>
struct IsFloatCompute {
  static constexpr bool value = false;
};
template <>
struct IsFloatCompute<float> {
  static constexpr bool value = true;
};
template <>
struct IsFloatCompute<double> {
  static constexpr bool value = true;
};

// ---- storage → compute
template <typename C, typename T>
NBX_GPU_INLINE C to_compute(T v) {
  return static_cast<C>(v);
}
template <>
NBX_GPU_INLINE float to_compute<float, half_t>(half_t v) {
  return to_float(v);
}
template <>
NBX_GPU_INLINE float to_compute<float, bfloat16_t>(bfloat16_t v) {
  return to_float(v);
}
template <>
NBX_GPU_INLINE double to_compute<double, half_t>(half_t v) {
  return to_float(v);
}
template <>
NBX_GPU_INLINE double to_compute<double, bfloat16_t>(bfloat16_t v) {
  return to_float(v);
}
template <>
NBX_GPU_INLINE i64 to_compute<i64, half_t>(half_t v) {
  return static_cast<i64>(to_float(v));
}
template <>
NBX_GPU_INLINE i64 to_compute<i64, bfloat16_t>(bfloat16_t v) {
  return static_cast<i64>(to_float(v));
}
template <>
NBX_GPU_INLINE float to_compute<float, bool>(bool v) {
  return v ? 1.0f : 0.0f;
}

// ---- compute → storage
// Float to integer: truncate, NaN → 0, saturate to [lo, hi].
template <typename I>
NBX_GPU_INLINE I saturate_to_int(double x, double lo, double hi, I ilo, I ihi) {
  if (x != x) return I(0);
  if (x <= lo) return ilo;
  if (x >= hi) return ihi;
  return static_cast<I>(x);
}

template <typename T, typename C>
NBX_GPU_INLINE T from_compute(C v) {
  if constexpr (std::is_unsigned_v<T> && IsFloatCompute<C>::value) {  // uint8
    return saturate_to_int<T>(double(v), 0.0, 255.0, T(0), T(255));
  } else if constexpr (IsFloatCompute<C>::value && !IsFloatCompute<T>::value) {
    if constexpr (sizeof(T) == 1) {
      return saturate_to_int<T>(double(v), -128.0, 127.0, T(-128), T(127));
    } else if constexpr (sizeof(T) == 2) {
      return saturate_to_int<T>(double(v), -32768.0, 32767.0, T(-32768), T(32767));
    } else if constexpr (sizeof(T) == 4) {
      return saturate_to_int<T>(double(v), -2147483648.0, 2147483647.0, T(-2147483647 - 1),
                                T(2147483647));
    } else {
      // 2^63 is the first double past int64's range; -2^63 is exactly int64's minimum.
      return saturate_to_int<T>(double(v), -9223372036854775808.0, 9223372036854775808.0,
                                T(-9223372036854775807LL - 1), T(9223372036854775807LL));
    }
  } else {
    return static_cast<T>(v);  // integer → integer wraps (two's complement)
  }
}
template <>
NBX_GPU_INLINE bool from_compute<bool, float>(float v) {
  return v != 0.0f;
}
template <>
NBX_GPU_INLINE bool from_compute<bool, double>(double v) {
  return v != 0.0;
}
template <>
NBX_GPU_INLINE bool from_compute<bool, i64>(i64 v) {
  return v != 0;
}
template <>
NBX_GPU_INLINE half_t from_compute<half_t, float>(float v) {
  return half_from_float(v);
}
template <>
NBX_GPU_INLINE bfloat16_t from_compute<bfloat16_t, float>(float v) {
  return bfloat16_from_float(v);
}
// double → float rounding to odd: truncate, then set the last bit when inexact. Float has
// more than two bits beyond either 16-bit format, so rounding this float to nearest even
// gives the correctly rounded 16-bit value: one rounding from double, as the host does.
NBX_GPU_INLINE float float_round_to_odd(double d) {
  float f = static_cast<float>(d);
  if (fabs(static_cast<double>(f)) > fabs(d)) f = nextafterf(f, 0.0f);
  if (static_cast<double>(f) != d && d == d) f = __int_as_float(__float_as_int(f) | 1);
  return f;
}
template <>
NBX_GPU_INLINE half_t from_compute<half_t, double>(double v) {
  return half_from_float(float_round_to_odd(v));
}
template <>
NBX_GPU_INLINE bfloat16_t from_compute<bfloat16_t, double>(double v) {
  return bfloat16_from_float(float_round_to_odd(v));
}
// int64 → 16-bit float through double: exact up to 2^53, far beyond float16's range.
template <>
NBX_GPU_INLINE half_t from_compute<half_t, i64>(i64 v) {
  return half_from_float(float_round_to_odd(static_cast<double>(v)));
}
template <>
NBX_GPU_INLINE bfloat16_t from_compute<bfloat16_t, i64>(i64 v) {
  return bfloat16_from_float(float_round_to_odd(static_cast<double>(v)));
}

// ---- runtime dtype dispatch (the generic path: one kernel serves every dtype combination)
template <typename C>
NBX_GPU_INLINE C load_as(const void* base, int dtype, i64 index) {
  switch (dtype) {
    case kBool:
      return static_cast<const std::uint8_t*>(base)[index] != 0 ? C(1) : C(0);
    case kInt8:
      return to_compute<C>(static_cast<const std::int8_t*>(base)[index]);
    case kUInt8:
      return to_compute<C>(static_cast<const std::uint8_t*>(base)[index]);
    case kInt16:
      return to_compute<C>(static_cast<const std::int16_t*>(base)[index]);
    case kInt32:
      return to_compute<C>(static_cast<const std::int32_t*>(base)[index]);
    case kInt64:
      return to_compute<C>(static_cast<const i64*>(base)[index]);
    case kFloat16:
      return to_compute<C>(static_cast<const half_t*>(base)[index]);
    case kBFloat16:
      return to_compute<C>(static_cast<const bfloat16_t*>(base)[index]);
    case kFloat32:
      return to_compute<C>(static_cast<const float*>(base)[index]);
    default:
      return to_compute<C>(static_cast<const double*>(base)[index]);
  }
}

template <typename C>
NBX_GPU_INLINE void store_as(void* base, int dtype, i64 index, C v) {
  switch (dtype) {
    case kBool:
      static_cast<std::uint8_t*>(base)[index] = from_compute<bool>(v) ? 1 : 0;
      break;
    case kInt8:
      static_cast<std::int8_t*>(base)[index] = from_compute<std::int8_t>(v);
      break;
    case kUInt8:
      static_cast<std::uint8_t*>(base)[index] = from_compute<std::uint8_t>(v);
      break;
    case kInt16:
      static_cast<std::int16_t*>(base)[index] = from_compute<std::int16_t>(v);
      break;
    case kInt32:
      static_cast<std::int32_t*>(base)[index] = from_compute<std::int32_t>(v);
      break;
    case kInt64:
      static_cast<i64*>(base)[index] = from_compute<i64>(v);
      break;
    case kFloat16:
      static_cast<half_t*>(base)[index] = from_compute<half_t>(v);
      break;
    case kBFloat16:
      static_cast<bfloat16_t*>(base)[index] = from_compute<bfloat16_t>(v);
      break;
    case kFloat32:
      static_cast<float*>(base)[index] = from_compute<float>(v);
      break;
    default:
      static_cast<double*>(base)[index] = from_compute<double>(v);
      break;
  }
}

// A scalar in the compute type: integer computations read the exact int64 field.
template <typename C>
NBX_GPU_HOST_DEVICE C scalar_as(const abi::ScalarValue& s) {
  if constexpr (IsFloatCompute<C>::value) {
    return static_cast<C>(s.f);
  } else {
    return static_cast<C>(s.i);
  }
}
// A scalar operand: as scalar_as, and a bool computation sees only true or false.
template <typename C>
NBX_GPU_HOST_DEVICE C scalar_operand(const abi::ScalarValue& s, int compute_dtype) {
  const C v = scalar_as<C>(s);
  if constexpr (!IsFloatCompute<C>::value) {
    if (compute_dtype == kBool) return v != 0 ? C(1) : C(0);
  }
  return v;
}

}  // namespace nbx::gpu
