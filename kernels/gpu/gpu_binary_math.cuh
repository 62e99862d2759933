// The forms of issue 11's binary ops that are more than one CUDA/HIP math call, in C = float
// or double: hypot without overflow, nextafter in a 16-bit dtype's own bits, and the
// rounding of isclose's steps to a 16-bit dtype. Semantics of backends/host/host_binary_math.cpp.
#pragma once

#include <type_traits>

#include "kernels/gpu/elementwise_values.cuh"

namespace nbx::gpu {

// One step of a 16-bit sign-magnitude pattern toward y's (float16 and bfloat16 alike).
NBX_GPU_INLINE unsigned short step_bits16(unsigned short x, unsigned short y) {
  const unsigned mx = x & 0x7fffu, my = y & 0x7fffu;
  if (x == y || (mx == 0 && my == 0)) return y;
  if (mx == 0) return static_cast<unsigned short>((y & 0x8000u) | 1u);
  const bool away = (x & 0x8000u) == (y & 0x8000u) && my > mx;
  return static_cast<unsigned short>(away ? x + 1u : x - 1u);
}

// The next value of `dtype` (the output's) after a toward b: a 16-bit dtype computes in
// float, whose own nextafter would step 2^13 or 2^16 times too short.
template <typename C>
NBX_GPU_INLINE C nextafter_in(C a, C b, int dtype) {
  if (a != a || b != b) return a + b;
  if constexpr (std::is_same_v<C, float>) {
    if (dtype == kFloat16) {
      const unsigned short r =
          step_bits16(__half_as_ushort(half_from_float(a)), __half_as_ushort(half_from_float(b)));
      return to_float(__ushort_as_half(r));
    }
    if (dtype == kBFloat16) {
      const unsigned short r = step_bits16(static_cast<unsigned short>(__float_as_uint(a) >> 16),
                                           static_cast<unsigned short>(__float_as_uint(b) >> 16));
      return __uint_as_float(unsigned(r) << 16);
    }
  }
  return nextafter(a, b);
}

// v rounded to a 16-bit `dtype` and back (other dtypes: v), as PyTorch's float16/bfloat16
// ops round every intermediate result.
template <typename C>
NBX_GPU_INLINE C round_to_storage(C v, int dtype) {
  if constexpr (std::is_same_v<C, float>) {
    if (dtype == kFloat16) return to_float(half_from_float(v));
    if (dtype == kBFloat16) return to_float(bfloat16_from_float(v));
  }
  return v;
}

// PyTorch's isclose on values already in the compute type (integers cast to float first).
template <typename C>
NBX_GPU_INLINE bool isclose_in(C a, C b, C rtol, C atol, bool equal_nan, int dtype) {
  if (a == b || (equal_nan && a != a && b != b)) return true;
  if (rtol == C(0) && atol == C(0)) return false;
  const C allowed = round_to_storage<C>(atol + fabs(round_to_storage<C>(rtol * b, dtype)), dtype);
  const C actual = fabs(round_to_storage<C>(a - b, dtype));
  return isfinite(actual) && actual <= allowed;
}

// m sqrt(1 + (n/m)^2) without the division: both scaled by the same power of two (exact)
// to put m in [1/2, 1), so the squares neither overflow nor underflow. Our own rather than
// the math library's: CUDA 13's float64 hypot returned inf for hypot(DBL_MAX, 1) on the
// H200 (2026-12-02), and HIP runs this same source. hypot(inf, NaN) = inf.
template <typename C>
NBX_GPU_INLINE C hypot_scaled(C a, C b) {
  if (isinf(a) || isinf(b)) return C(INFINITY);
  if (a != a || b != b) return a + b;
  const C m = fmax(fabs(a), fabs(b)), n = fmin(fabs(a), fabs(b));
  if (n == C(0)) return m;
  int e;
  frexp(m, &e);  // exact for subnormals too
  const C x = scalbn(m, -e), y = scalbn(n, -e);
  return scalbn(sqrt(fma(x, x, y * y)), e);
}

}  // namespace nbx::gpu
