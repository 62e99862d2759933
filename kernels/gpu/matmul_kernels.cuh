// The "matmul" kernel family's own tiled kernel for CUDA and HIP (kernel ABI:
// abi::MatmulParams, semantics backends/host/host_matmul.cpp): out[b] = alpha * A[b] @ B[b]
// + beta * addend[b], every operand read through its strides (transposes, slices, broadcast
// batch dims with stride 0: no copies).
//
// One block of 256 threads computes a tile_m x tile_n output tile, walking k in tile_k steps
// through min(num_stages, 2) shared-memory buffers (the next k tile is loaded while the
// current one is multiplied; one barrier per step). Operands are staged in their storage
// type, so the footprint is exactly the wrapper's stages * (tile_m + tile_n) * tile_k *
// itemsize. Accumulation: float32 for float32/float16/bfloat16, float64 for float64, wrapping
// int64 for integers (exact, as PyTorch's CPU products). The epilogue applies alpha, beta
// and the addend in float64 (int64 for integers) and rounds once to the output dtype; with
// beta 0 the addend is not read, so NaN there does not propagate.
//
// Tensor cores: on CUDA sm_80+ float16/bfloat16 tiles run on WMMA 16x16x16 fragments
// (float32 accumulators), chosen at compile time per architecture inside the same kernel;
// HIP and older CUDA targets run the portable FMA loop. Both read the same shared-memory
// layout: A as [tile_k][tile_m] (WMMA col_major, ldm tile_m), B as [tile_k][tile_n].
//
// The kernel is a template over the operand type and the tile: 9 types x 6 tiles, each with
// its epilogue's dtype conversions unrolled over the thread's outputs, took nvcc minutes in
// one translation unit, so groups of operand types instantiate it in files of their own
// (launch_tiled below; matmul_kernels.cu dispatches) and the build's cores share them. Each
// kernel's code is the same wherever it is instantiated.
#pragma once

#include <string>

#include "core/errors.hpp"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/elementwise_values.cuh"
#include "kernels/gpu/family_launch.hpp"
#include "kernels/gpu/matmul_launch.hpp"

#if !NBX_GPU_HIP
#include <mma.h>
#endif

// Device pass of nvcc for sm_80 and newer: WMMA has bfloat16 fragments there.
#if !NBX_GPU_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define NBX_MATMUL_TENSOR_CORES 1
#else
#define NBX_MATMUL_TENSOR_CORES 0
#endif

namespace nbx::gpu {

// The tiled kernel for operands of type T at the block's tile (the block validated by
// launch_matmul); each type's is defined, by NBX_MATMUL_TILED_DEFINE, in the translation unit
// that instantiates its kernels: float32, float16 and bfloat16 in matmul_kernels.cu, the others
// in matmul_f64_i64_kernels.cu, matmul_i8_u8_kernels.cu and matmul_i16_i32_kernels.cu.
template <typename T>
ElementwiseLaunchResult launch_tiled(const abi::MatmulParams& p, const BoundBuffer* buffers,
                                     const MatmulDevice& device, Stream s);
#define NBX_MATMUL_TILED(T)                                                                       \
  template <>                                                                                     \
  ElementwiseLaunchResult launch_tiled<T>(const abi::MatmulParams& p, const BoundBuffer* buffers, \
                                          const MatmulDevice& device, Stream s)
#define NBX_MATMUL_TILED_DEFINE(T)                    \
  NBX_MATMUL_TILED(T) {                               \
    return run_tiled_shape<T>(p, buffers, device, s); \
  }
NBX_MATMUL_TILED(float);
NBX_MATMUL_TILED(half_t);
NBX_MATMUL_TILED(bfloat16_t);
NBX_MATMUL_TILED(double);
NBX_MATMUL_TILED(i64);
NBX_MATMUL_TILED(std::int8_t);
NBX_MATMUL_TILED(std::uint8_t);
NBX_MATMUL_TILED(std::int16_t);
NBX_MATMUL_TILED(std::int32_t);

namespace {

constexpr int kMatmulThreads = 256;  // a 16 x 16 thread grid; 8 warps (4 wavefronts on AMD)

template <typename T>
struct AccumulatorOf {
  using type = i64;  // integers: wrapping int64
};
template <>
struct AccumulatorOf<float> {
  using type = float;
};
template <>
struct AccumulatorOf<double> {
  using type = double;
};
template <>
struct AccumulatorOf<half_t> {
  using type = float;
};
template <>
struct AccumulatorOf<bfloat16_t> {
  using type = float;
};

template <typename T>
NBX_GPU_INLINE T zero_of() {
  if constexpr (std::is_same_v<T, half_t>) {
    return half_from_float(0.0f);
  } else if constexpr (std::is_same_v<T, bfloat16_t>) {
    return bfloat16_from_float(0.0f);
  } else {
    return T(0);
  }
}

template <typename C>
NBX_GPU_INLINE C multiply_add(C acc, C x, C y) {
  if constexpr (IsFloatCompute<C>::value) {
    return acc + x * y;
  } else {
    return C((unsigned long long)acc + (unsigned long long)x * (unsigned long long)y);
  }
}

// The element offset of batch entry `b` (row-major over the batch dims) of one operand.
NBX_GPU_HOST_DEVICE i64 batch_offset(const abi::MatmulParams& p, i64 b, i64 base,
                                     const std::int64_t* strides) {
  i64 off = base;
  for (int d = p.batch_ndim - 1; d >= 0; --d) {
    const i64 size = p.batch_sizes[d];
    off += (b % size) * strides[d];
    b /= size;
  }
  return off;
}

// alpha * acc + beta * addend, rounded once into the output.
template <typename C>
NBX_GPU_INLINE void write_result(const abi::MatmulParams& p, void* out, i64 out_base,
                                 const void* addend, i64 addend_base, bool use_addend, i64 row,
                                 i64 col, C acc) {
  const i64 o = out_base + row * p.out_row_stride + col * p.out_col_stride;
  const i64 c = addend_base + row * p.addend_row_stride + col * p.addend_col_stride;
  if constexpr (IsFloatCompute<C>::value) {
    double r = p.alpha * double(acc);
    if (use_addend) r += p.beta * load_as<double>(addend, p.addend_dtype, c);
    store_as<double>(out, p.out_dtype, o, r);
  } else {
    unsigned long long r = (unsigned long long)(i64)p.alpha * (unsigned long long)acc;
    if (use_addend)
      r += (unsigned long long)(i64)p.beta *
           (unsigned long long)load_as<i64>(addend, p.addend_dtype, c);
    store_as<i64>(out, p.out_dtype, o, i64(r));
  }
}

// Stages one k tile: A[row0.., k0..] into As[kk][r], B[k0.., col0..] into Bs[kk][c]. Threads
// walk whichever dim of an operand has unit stride, so global reads coalesce for row- and
// column-major operands alike; elements past m, n or k are zero.
template <typename T, int TM, int TN, int TK>
NBX_GPU_INLINE void load_tile(T* As, T* Bs, const T* a, const T* b, const abi::MatmulParams& p,
                              i64 row0, i64 col0, i64 k0) {
  const int tid = static_cast<int>(threadIdx.x);
  const bool a_k_fast = p.a_col_stride == 1;
  const bool b_n_fast = p.b_col_stride == 1;
#pragma unroll 4
  for (int e = tid; e < TM * TK; e += kMatmulThreads) {
    const int r = a_k_fast ? e / TK : e % TM;
    const int kk = a_k_fast ? e % TK : e / TM;
    const i64 gr = row0 + r, gk = k0 + kk;
    As[kk * TM + r] =
        gr < p.m && gk < p.k ? a[gr * p.a_row_stride + gk * p.a_col_stride] : zero_of<T>();
  }
#pragma unroll 4
  for (int e = tid; e < TK * TN; e += kMatmulThreads) {
    const int c = b_n_fast ? e % TN : e / TK;
    const int kk = b_n_fast ? e / TN : e % TK;
    const i64 gc = col0 + c, gk = k0 + kk;
    Bs[kk * TN + c] =
        gk < p.k && gc < p.n ? b[gk * p.b_row_stride + gc * p.b_col_stride] : zero_of<T>();
  }
}

template <typename T, int TM, int TN, int TK>
__global__ void __launch_bounds__(kMatmulThreads)
    matmul_tiled_kernel(const NBX_GPU_GRID_CONSTANT abi::MatmulParams p, void* out, const T* a,
                        const T* b, const void* addend, int stages, int smem_bytes, i64 tiles_n) {
  using C = typename AccumulatorOf<T>::type;
  // One untyped declaration for every instantiation (typed extern arrays would clash).
  extern __shared__ float4 matmul_smem[];
  T* const smem = reinterpret_cast<T*>(matmul_smem);
  const int tid = static_cast<int>(threadIdx.x);
  const i64 tile = blockIdx.x;
  const i64 row0 = (tile / tiles_n) * TM, col0 = (tile % tiles_n) * TN;
  const i64 k_tiles = (p.k + TK - 1) / TK;
  const bool use_addend = p.has_addend && p.beta != 0;
  constexpr int kStageElems = (TM + TN) * TK;
  (void)smem_bytes;

  for (i64 bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
    const T* const a_b = a + batch_offset(p, bz, p.a_offset, p.a_batch_strides);
    const T* const b_b = b + batch_offset(p, bz, p.b_offset, p.b_batch_strides);
    const i64 out_base = batch_offset(p, bz, p.out_offset, p.out_batch_strides);
    const i64 c_base =
        use_addend ? batch_offset(p, bz, p.addend_offset, p.addend_batch_strides) : 0;

#if NBX_MATMUL_TENSOR_CORES
    if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) {
      namespace wmma = nvcuda::wmma;
      constexpr int kFragN = TN / 16, kFrags = (TM / 16) * kFragN;
      constexpr int kPerWarp = (kFrags + 7) / 8;
      const int warp = tid / 32, lane = tid % 32;
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kPerWarp];
#pragma unroll
      for (int f = 0; f < kPerWarp; ++f) wmma::fill_fragment(acc[f], 0.0f);
      if (k_tiles > 0) load_tile<T, TM, TN, TK>(smem, smem + TK * TM, a_b, b_b, p, row0, col0, 0);
      __syncthreads();
      for (i64 t = 0; t < k_tiles; ++t) {
        const T* As = smem + (t % stages) * kStageElems;
        const T* Bs = As + TK * TM;
        if (stages > 1 && t + 1 < k_tiles) {
          T* next = smem + ((t + 1) % stages) * kStageElems;
          load_tile<T, TM, TN, TK>(next, next + TK * TM, a_b, b_b, p, row0, col0, (t + 1) * TK);
        }
#pragma unroll
        for (int ks = 0; ks < TK; ks += 16) {
#pragma unroll
          for (int f = 0; f < kPerWarp; ++f) {
            const int fi = warp + 8 * f;  // warp-uniform
            if (fi < kFrags) {
              wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::col_major> af;
              wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> bf;
              wmma::load_matrix_sync(af, As + ks * TM + (fi / kFragN) * 16, TM);
              wmma::load_matrix_sync(bf, Bs + ks * TN + (fi % kFragN) * 16, TN);
              wmma::mma_sync(acc[f], af, bf, acc[f]);
            }
          }
        }
        __syncthreads();
        if (stages == 1 && t + 1 < k_tiles) {
          load_tile<T, TM, TN, TK>(smem, smem + TK * TM, a_b, b_b, p, row0, col0, (t + 1) * TK);
          __syncthreads();
        }
      }
      // Epilogue: fragments go through 1 KiB float slots carved from the (now idle) staging
      // memory, as many warps at a time as slots fit (at least one: the smallest footprint
      // is 1 KiB), then each lane writes 8 of the 256 elements.
      float* const scratch = reinterpret_cast<float*>(matmul_smem);
      const int slots = min(8, smem_bytes / 1024);
      for (int f = 0; f < kPerWarp; ++f) {
        for (int round = 0; round * slots < 8; ++round) {
          const int fi = warp + 8 * f;
          if (warp / slots == round && fi < kFrags) {
            float* const mine = scratch + (warp % slots) * 256;
            wmma::store_matrix_sync(mine, acc[f], 16, wmma::mem_row_major);
            __syncwarp();
            for (int e = lane; e < 256; e += 32) {
              const i64 row = row0 + (fi / kFragN) * 16 + e / 16;
              const i64 col = col0 + (fi % kFragN) * 16 + e % 16;
              if (row < p.m && col < p.n)
                write_result<float>(p, out, out_base, addend, c_base, use_addend, row, col,
                                    mine[e]);
            }
            __syncwarp();
          }
          __syncthreads();
        }
      }
      continue;
    }
#endif
    // The portable FMA loop: thread (ty, tx) owns rows ty + 16 i and columns tx + 16 j.
    constexpr int RM = TM / 16, RN = TN / 16;
    const int ty = tid / 16, tx = tid % 16;
    C acc[RM][RN];
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
      for (int j = 0; j < RN; ++j) acc[i][j] = C(0);
    if (k_tiles > 0) load_tile<T, TM, TN, TK>(smem, smem + TK * TM, a_b, b_b, p, row0, col0, 0);
    __syncthreads();
    for (i64 t = 0; t < k_tiles; ++t) {
      const T* As = smem + (t % stages) * kStageElems;
      const T* Bs = As + TK * TM;
      if (stages > 1 && t + 1 < k_tiles) {
        T* next = smem + ((t + 1) % stages) * kStageElems;
        load_tile<T, TM, TN, TK>(next, next + TK * TM, a_b, b_b, p, row0, col0, (t + 1) * TK);
      }
#pragma unroll 4
      for (int kk = 0; kk < TK; ++kk) {
        C av[RM], bv[RN];
#pragma unroll
        for (int i = 0; i < RM; ++i) av[i] = to_compute<C>(As[kk * TM + ty + 16 * i]);
#pragma unroll
        for (int j = 0; j < RN; ++j) bv[j] = to_compute<C>(Bs[kk * TN + tx + 16 * j]);
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int j = 0; j < RN; ++j) acc[i][j] = multiply_add(acc[i][j], av[i], bv[j]);
      }
      __syncthreads();
      if (stages == 1 && t + 1 < k_tiles) {
        load_tile<T, TM, TN, TK>(smem, smem + TK * TM, a_b, b_b, p, row0, col0, (t + 1) * TK);
        __syncthreads();
      }
    }
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
      for (int j = 0; j < RN; ++j) {
        const i64 row = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
        if (row < p.m && col < p.n)
          write_result<C>(p, out, out_base, addend, c_base, use_addend, row, col, acc[i][j]);
      }
  }
}

[[noreturn]] void reject(const std::string& what) {
  throw InvalidArgument("matmul", "matmul launch: " + what + ".");
}

template <typename T, int TM, int TN, int TK>
ElementwiseLaunchResult run_tiled(const abi::MatmulParams& p, const BoundBuffer* buffers,
                                  const MatmulDevice& device, Stream s) {
  const int stages = p.num_stages >= 2 ? 2 : 1;
  const i64 smem = i64(stages) * (TM + TN) * TK * i64(sizeof(T));
  if (smem > device.shared_memory_per_block)
    throw Unsupported("matmul", device.name, "shared_memory.per_block",
                      "matmul on " + device.name + ": the " + std::to_string(TM) + "x" +
                          std::to_string(TN) + "x" + std::to_string(TK) + " tile in " +
                          std::to_string(stages) + " stages needs " + std::to_string(smem) +
                          " bytes of shared memory; the device has " +
                          std::to_string(device.shared_memory_per_block) + " per block; refused.");
  const i64 tiles_m = (p.m + TM - 1) / TM, tiles_n = (p.n + TN - 1) / TN;
  if (tiles_m * tiles_n > 0x7fffffffLL) reject("more than 2^31 - 1 output tiles");
  const dim3 grid(unsigned(tiles_m * tiles_n), 1, unsigned(p.batch < 65535 ? p.batch : 65535));
  const void* addend = p.has_addend ? buffers[3].address : nullptr;
  matmul_tiled_kernel<T, TM, TN, TK><<<grid, kMatmulThreads, size_t(smem), s>>>(
      p, buffers[0].address, static_cast<const T*>(buffers[1].address),
      static_cast<const T*>(buffers[2].address), addend, stages, int(smem), tiles_n);
  ElementwiseLaunchResult r;
  r.error = int(last_launch_error());
  r.call = "matmul launch";
  r.path = ElementwisePath::kTiled;
  return r;
}

template <typename T>
ElementwiseLaunchResult run_tiled_shape(const abi::MatmulParams& p, const BoundBuffer* buffers,
                                        const MatmulDevice& device, Stream s) {
  const int m = p.tile_m, n = p.tile_n, k = p.tile_k;
  if (m == 128 && n == 128 && k == 32) return run_tiled<T, 128, 128, 32>(p, buffers, device, s);
  if (m == 128 && n == 64 && k == 32) return run_tiled<T, 128, 64, 32>(p, buffers, device, s);
  if (m == 64 && n == 64 && k == 32) return run_tiled<T, 64, 64, 32>(p, buffers, device, s);
  if (m == 64 && n == 64 && k == 16) return run_tiled<T, 64, 64, 16>(p, buffers, device, s);
  if (m == 32 && n == 32 && k == 16) return run_tiled<T, 32, 32, 16>(p, buffers, device, s);
  if (m == 16 && n == 16 && k == 16) return run_tiled<T, 16, 16, 16>(p, buffers, device, s);
  reject("tile " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
         " is not one of the kernel's (128x128x32, 128x64x32, 64x64x32, 64x64x16, 32x32x16, "
         "16x16x16)");
}

}  // namespace
}  // namespace nbx::gpu
