// The one place that tells CUDA from HIP. Every kernel in kernels/gpu/ is written against the
// neutral names below and compiles unchanged with nvcc (CUDA) and hipcc (HIP/ROCm).
//
// Offers: the runtime header, stream/error types, warp (wavefront) size as a compile-time
// constant of the target, lane masks, shuffles, warp votes and reductions, 16-bit float
// types with float conversions, and atomics. Nothing here knows about nbxtensor's ops.
#pragma once

#include <cstdint>

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#define NBX_GPU_HIP 1
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#else
#define NBX_GPU_HIP 0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

#define NBX_GPU_INLINE __device__ __forceinline__
#define NBX_GPU_HOST_DEVICE __host__ __device__ __forceinline__

namespace nbx::gpu {

#if NBX_GPU_HIP
using Stream = hipStream_t;
using Error = hipError_t;
inline constexpr Error kSuccess = hipSuccess;
inline Error last_launch_error() {
  return hipGetLastError();
}
inline const char* error_name(Error e) {
  return hipGetErrorName(e);
}
inline const char* error_text(Error e) {
  return hipGetErrorString(e);
}
using half_t = __half;
using bfloat16_t = hip_bfloat16;
using LaneMask = unsigned long long;  // __ballot returns 64 bits on every AMD target
// Kernel arguments: 4 KiB is what every ROCm release accepts. AMD kernels read their
// arguments from memory, so a large argument needs no qualifier to be indexed in place.
inline constexpr int kMaxKernelParamBytes = 4096;
#define NBX_GPU_GRID_CONSTANT
#if defined(__AMDGCN_WAVEFRONT_SIZE)
// The compile target's wavefront: 64 on gfx9 (GCN/CDNA), 32 on gfx10+ (RDNA).
inline constexpr int kWarpSize = __AMDGCN_WAVEFRONT_SIZE;
#else
// Host pass of hipcc: only launch maths runs here, and it takes the size from the device.
inline constexpr int kWarpSize = 64;
#endif
#else
using Stream = cudaStream_t;
using Error = cudaError_t;
inline constexpr Error kSuccess = cudaSuccess;
inline Error last_launch_error() {
  return cudaGetLastError();
}
inline const char* error_name(Error e) {
  return cudaGetErrorName(e);
}
inline const char* error_text(Error e) {
  return cudaGetErrorString(e);
}
using half_t = __half;
using bfloat16_t = __nv_bfloat16;
using LaneMask = unsigned int;
// Kernel arguments: CUDA 12.1+ takes up to 32,764 bytes on Volta and newer (4 KiB before).
// __grid_constant__ lets a kernel index a large argument in place instead of copying it.
#if CUDART_VERSION >= 12010
inline constexpr int kMaxKernelParamBytes = 32764;
#else
inline constexpr int kMaxKernelParamBytes = 4096;
#endif
#define NBX_GPU_GRID_CONSTANT __grid_constant__
// Every NVIDIA architecture so far runs 32-thread warps (CUDA's `warpSize`, which is not a
// compile-time constant, always reads this).
inline constexpr int kWarpSize = 32;
#endif

// ---- 16-bit floats: storage types, converted to float for all math (round to nearest even).
NBX_GPU_INLINE float to_float(half_t v) {
  return __half2float(v);
}
// A NaN becomes the quiet NaN with its sign: the bits the host reference writes
// (core/half.cpp), so casts and copies agree bit for bit across backends (the runtimes'
// conversions give 0x7FFF whatever the sign).
NBX_GPU_INLINE unsigned short quiet_nan_bits(float v, unsigned exponent_and_quiet_bit) {
  return static_cast<unsigned short>(((__float_as_uint(v) >> 16) & 0x8000u) |
                                     exponent_and_quiet_bit);
}
NBX_GPU_INLINE half_t half_from_float(float v) {
  if (v != v) return __ushort_as_half(quiet_nan_bits(v, 0x7E00u));
  return __float2half_rn(v);
}
#if NBX_GPU_HIP
NBX_GPU_INLINE float to_float(bfloat16_t v) {
  return static_cast<float>(v);
}
NBX_GPU_INLINE bfloat16_t bfloat16_from_float(float v) {
  if (v != v) {
    bfloat16_t nan;
    nan.data = quiet_nan_bits(v, 0x7FC0u);
    return nan;
  }
  return bfloat16_t(v);
}
#else
NBX_GPU_INLINE float to_float(bfloat16_t v) {
  return __bfloat162float(v);
}
NBX_GPU_INLINE bfloat16_t bfloat16_from_float(float v) {
  if (v != v) return __ushort_as_bfloat16(quiet_nan_bits(v, 0x7FC0u));
  return __float2bfloat16_rn(v);
}
#endif

// ---- Lanes, votes, shuffles (all lanes of the warp participate).
NBX_GPU_INLINE int lane_id() {
  return static_cast<int>(threadIdx.x) % kWarpSize;
}

#if NBX_GPU_HIP
NBX_GPU_INLINE LaneMask warp_ballot(bool p) {
  return __ballot(p);
}
template <typename T>
NBX_GPU_INLINE T warp_shuffle(T v, int src) {
  return __shfl(v, src, kWarpSize);
}
template <typename T>
NBX_GPU_INLINE T warp_shuffle_xor(T v, int mask) {
  return __shfl_xor(v, mask, kWarpSize);
}
template <typename T>
NBX_GPU_INLINE T warp_shuffle_down(T v, unsigned delta) {
  return __shfl_down(v, delta, kWarpSize);
}
#else
inline constexpr LaneMask kFullLaneMask = 0xffffffffu;
NBX_GPU_INLINE LaneMask warp_ballot(bool p) {
  return __ballot_sync(kFullLaneMask, p);
}
template <typename T>
NBX_GPU_INLINE T warp_shuffle(T v, int src) {
  return __shfl_sync(kFullLaneMask, v, src);
}
template <typename T>
NBX_GPU_INLINE T warp_shuffle_xor(T v, int mask) {
  return __shfl_xor_sync(kFullLaneMask, v, mask);
}
template <typename T>
NBX_GPU_INLINE T warp_shuffle_down(T v, unsigned delta) {
  return __shfl_down_sync(kFullLaneMask, v, delta);
}
#endif

// Orders the shared-memory accesses of the warp's lanes before and after it (a wavefront
// runs in lockstep on AMD: only the compiler must not move accesses across it).
NBX_GPU_INLINE void warp_sync() {
#if NBX_GPU_HIP
  __builtin_amdgcn_wave_barrier();
#else
  __syncwarp();
#endif
}
// The lanes below this one, and the number of lanes in a mask.
NBX_GPU_INLINE LaneMask lanes_below() {
  return (LaneMask(1) << lane_id()) - 1;
}
NBX_GPU_INLINE int lane_count(LaneMask m) {
  if constexpr (sizeof(LaneMask) == 8) {
    return __popcll(static_cast<unsigned long long>(m));
  } else {
    return __popc(static_cast<unsigned>(m));
  }
}

// The lanes of `active` whose `digit` (below 256) equals this lane's: a ballot per digit bit
// (on the H200, NVIDIA's match instruction made the block sorts 15% slower than this).
NBX_GPU_INLINE LaneMask warp_peers_of_digit(unsigned digit, LaneMask active) {
  LaneMask peers = active;
#pragma unroll
  for (int b = 0; b < 8; ++b) {
    const bool bit = (digit >> b) & 1u;
    const LaneMask set = warp_ballot(bit);
    peers &= bit ? set : ~set;
  }
  return peers;
}

NBX_GPU_INLINE bool warp_any(bool p) {
  return warp_ballot(p) != 0;
}
// The lowest lane for which the ballot was true (the ballot must be non-zero).
NBX_GPU_INLINE int first_lane(LaneMask m) {
  if constexpr (sizeof(LaneMask) == 8) {
    return __ffsll(static_cast<long long>(m)) - 1;
  } else {
    return __ffs(static_cast<int>(m)) - 1;
  }
}

// Butterfly reductions: every lane ends with the result, for any kWarpSize.
template <typename T>
NBX_GPU_INLINE T warp_reduce_sum(T v) {
  for (int m = kWarpSize / 2; m > 0; m /= 2) v += warp_shuffle_xor(v, m);
  return v;
}
template <typename T>
NBX_GPU_INLINE T warp_reduce_max(T v) {
  for (int m = kWarpSize / 2; m > 0; m /= 2) {
    T o = warp_shuffle_xor(v, m);
    v = o > v ? o : v;
  }
  return v;
}

// ---- Atomics (device scope). HIP and CUDA share these names; kept here so kernels never
// call a vendor spelling directly.
NBX_GPU_INLINE int atomic_cas(int* p, int expected, int desired) {
  return atomicCAS(p, expected, desired);
}
NBX_GPU_INLINE unsigned long long atomic_add(unsigned long long* p, unsigned long long v) {
  return atomicAdd(p, v);
}
NBX_GPU_INLINE void memory_fence() {
  __threadfence_system();
}

}  // namespace nbx::gpu
