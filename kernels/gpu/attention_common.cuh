// Shared by the "attention" kernel family's CUDA/HIP sources (kernel ABI: abi::AttentionParams;
// the host backend holds the reference): element conversions, the operand addressing, and the
// variants' launchers, each in a translation unit of its own so the build's cores share them.
#pragma once

#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu::attention {

NBX_GPU_INLINE float to_f32(half_t v) {
  return to_float(v);
}
NBX_GPU_INLINE float to_f32(bfloat16_t v) {
  return to_float(v);
}
NBX_GPU_INLINE float to_f32(float v) {
  return v;
}
template <typename T>
NBX_GPU_INLINE T from_f32(float v);
template <>
NBX_GPU_INLINE half_t from_f32<half_t>(float v) {
  return half_from_float(v);
}
template <>
NBX_GPU_INLINE bfloat16_t from_f32<bfloat16_t>(float v) {
  return bfloat16_from_float(v);
}
template <>
NBX_GPU_INLINE float from_f32<float>(float v) {
  return v;
}

// Element (b, h, row, 0) of a [batch, heads, rows, dim] operand.
NBX_GPU_HOST_DEVICE i64 row_base(i64 offset, const std::int64_t* strides, i64 b, i64 h, i64 row) {
  return offset + b * strides[0] + h * strides[1] + row * strides[2];
}

// Keys [0, seen) take part in query row `row`: all kv_len, or causally up to row + shift.
NBX_GPU_HOST_DEVICE i64 keys_seen(const abi::AttentionParams& p, i64 row) {
  if (!p.causal) return p.kv_len;
  const i64 s = row + p.causal_shift + 1;
  return s < 0 ? 0 : s > p.kv_len ? p.kv_len : s;
}

// Lets `kernel` take `bytes` of dynamic shared memory (beyond the 48 KiB default: an opt-in on
// NVIDIA from Volta on, a no-op within the 64 KiB of AMD's LDS).
template <typename Kernel>
inline Error allow_dynamic_shared(Kernel kernel, int bytes) {
#if NBX_GPU_HIP
  return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                             hipFuncAttributeMaxDynamicSharedMemorySize, bytes);
#else
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
#endif
}

// log2(e): the kernels' softmax runs on exp2 of scores pre-multiplied by scale * log2(e).
inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

// Calls launch(T{}) with T the element type of an FMA variant's dtype code (float16,
// bfloat16, else float32: the variants' contracts admit no other).
template <typename Launch>
Error with_dtype(int dtype, Launch&& launch) {
  switch (dtype) {
    case kFloat16:
      return launch(half_t{});
    case kBFloat16:
      return launch(bfloat16_t{});
    default:
      return launch(float{});
  }
}

// The variants' launchers (the launch validated, its variant served): each returns the
// launch error of its last kernel.
Error launch_flash_mma(const abi::AttentionParams& p, const GpuLaunch& l);
Error launch_flash(const abi::AttentionParams& p, const GpuLaunch& l);
Error launch_split_kv(const abi::AttentionParams& p, const GpuLaunch& l);

}  // namespace nbx::gpu::attention
