// Special functions of the elementwise table that CUDA and HIP lack or name per type
// (digamma; erfinv and sin(pi x) as erfinvf/sinpif for float), in C = float or double.
// Semantics of backends/host/host_special_math.cpp (PyTorch's edge values).
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/gpu/elementwise_values.cuh"

namespace nbx::gpu {

template <typename C>
NBX_GPU_INLINE C sin_pi(C x) {
  if constexpr (std::is_same_v<C, float>)
    return sinpif(x);
  else
    return sinpi(x);
}
template <typename C>
NBX_GPU_INLINE C cos_pi(C x) {
  if constexpr (std::is_same_v<C, float>)
    return cospif(x);
  else
    return cospi(x);
}
template <typename C>
NBX_GPU_INLINE C erf_inv(C x) {
  if constexpr (std::is_same_v<C, float>)
    return erfinvf(x);
  else
    return erfinv(x);
}

// sin(pi x) / (pi x), 1 at 0; sinpi reduces the argument exactly, so sinc(n) is 0.
template <typename C>
NBX_GPU_INLINE C sinc_of(C x) {
  if (x == C(0)) return C(1);
  return sin_pi(x) / (C(3.14159265358979323846) * x);
}

// psi(x): reflection below 0 (pi cos(pi x) / sin(pi x), both reduced exactly), recurrence
// up to 10, then the asymptotic series (Bernoulli terms to x^-14 for double, x^-8 for float).
template <typename C>
NBX_GPU_INLINE C digamma_of(C x) {
  if (x == C(0)) return signbit(x) ? C(INFINITY) : C(-INFINITY);
  if (isnan(x) || (isinf(x) && x > C(0))) return x;
  C result = C(0);
  if (x < C(0)) {
    if (x == trunc(x)) return C(NAN);  // the poles, -inf included
    result = -C(3.14159265358979323846) * cos_pi(x) / sin_pi(x);
    x = C(1) - x;
  }
  while (x < C(10)) {
    result -= C(1) / x;
    x += C(1);
  }
  const C z = C(1) / (x * x);
  C series =
      std::is_same_v<C, float>
          ? z * (C(1.0 / 12) - z * (C(1.0 / 120) - z * C(1.0 / 252)))
          : z * (C(1.0 / 12) -
                 z * (C(1.0 / 120) -
                      z * (C(1.0 / 252) -
                           z * (C(1.0 / 240) -
                                z * (C(1.0 / 132) - z * (C(691.0 / 32760) - z * C(1.0 / 12)))))));
  return result + log(x) - C(0.5) / x - series;
}

// log(x / (1 - x)), x clamped to [lo, hi] first when `clamp` (PyTorch's order); near 1/2
// through log1p, where 2x - 1 and 1 - x are exact.
template <typename C>
NBX_GPU_INLINE C logit_of(C x, C lo, C hi, bool clamp) {
  if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
  if (x >= C(0.25) && x <= C(0.75)) return log1p((C(2) * x - C(1)) / (C(1) - x));
  return log(x / (C(1) - x));
}

}  // namespace nbx::gpu
