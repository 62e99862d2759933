// Compensated addition (Knuth's TwoSum), shared by the reduce, norm and softmax families:
// the rounding error of each addition is carried in `comp`, so a float32 sum of n terms
// keeps float32 accuracy instead of losing ~log2(n) bits. Row reductions are memory-bound,
// so the extra additions are free. Once the sum is ±inf or NaN its rounding error means
// nothing (inf - inf = NaN would poison it): compensation stops and the total is the sum,
// so a row holding +inf sums to +inf, as the host reference does.
#pragma once

#include "kernels/gpu/gpu_portability.cuh"

namespace nbx::gpu {

template <typename C>
NBX_GPU_INLINE void two_sum_add(C& sum, C& comp, C x, C x_comp) {
  const C s = sum + x;
  const C bb = s - sum;
  if (isfinite(s)) comp += x_comp + ((sum - (s - bb)) + (x - bb));
  sum = s;
}

template <typename C>
NBX_GPU_INLINE C compensated_total(C sum, C comp) {
  return isfinite(sum) ? sum + comp : sum;
}

}  // namespace nbx::gpu
