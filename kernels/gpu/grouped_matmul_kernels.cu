// The "grouped_matmul" kernel family for CUDA and HIP (kernel ABI: abi::GroupedMatmulParams;
// the host backend holds the reference): every group's rows of a times its b, all groups in
// one launch, the group offsets read on the device (grouped_matmul_groups.cuh: the schedule
// and the offsets' fault). Two variants:
//  - tiled (CUDA, HIP; float16, bfloat16, float32): 64 x 64 output tiles, k steps of 16
//    staged in shared memory as float, a 4 x 4 block of outputs per thread, FMA in float32;
//    every operand read through its strides (b as [E, N, K] or [E, K, N]);
//  - mma (CUDA sm_80+; float16, bfloat16 with k-contiguous a and b): grouped_matmul_mma.cuh.
#include <string>

#include "core/errors.hpp"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"
#include "kernels/gpu/grouped_matmul_groups.cuh"
#include "kernels/gpu/vendor_launch.hpp"
#if !NBX_GPU_HIP
#include "kernels/gpu/grouped_matmul_mma.cuh"
#endif

namespace nbx::gpu {
namespace {

constexpr int kTiledThreads = 256;  // a 16 x 16 thread grid
constexpr int kTiledTM = 64, kTiledTN = 64, kTiledTK = 16;

template <typename T>
NBX_GPU_INLINE float widen_to_float(T v) {
  return to_compute<float, T>(v);
}
template <typename T>
NBX_GPU_INLINE T narrow_from_float(float v) {
  if constexpr (std::is_same_v<T, bfloat16_t>)
    return bfloat16_from_float(v);
  else if constexpr (std::is_same_v<T, half_t>)
    return half_from_float(v);
  else
    return v;
}

template <typename T, typename Index>
__global__ void __launch_bounds__(kTiledThreads)
    grouped_tiled_kernel(const NBX_GPU_GRID_CONSTANT abi::GroupedMatmulParams p, T* out, const T* a,
                         const T* b, const Index* offsets, abi::FaultRecord* fault, i64 m_slots,
                         i64 n_tiles) {
  __shared__ float as[kTiledTK][kTiledTM];
  __shared__ float bs[kTiledTK][kTiledTN];
  __shared__ GroupTile tile;
  i64 m_slot, n_tile;
  grouped_tile_of(blockIdx.x, m_slots, n_tiles, m_slot, n_tile);
  find_group_tile<Index>(p, offsets, m_slot, kTiledTM, &tile, fault);
  if (tile.bad || tile.group < 0 || n_tile * kTiledTN >= p.n) return;

  const int tid = static_cast<int>(threadIdx.x);
  const int ty = tid / 16, tx = tid % 16;
  const i64 row0 = tile.row0, row_end = tile.row_end, col0 = n_tile * kTiledTN;
  const i64 b_base = p.b_offset + i64(tile.group) * p.b_group_stride;
  // Threads walk whichever dim of an operand has unit stride, so reads coalesce.
  const bool a_k_fast = p.a_col_stride == 1, b_k_fast = p.b_k_stride == 1;
  float acc[4][4] = {};
  for (i64 k0 = 0; k0 < p.k; k0 += kTiledTK) {
    for (int e = tid; e < kTiledTM * kTiledTK; e += kTiledThreads) {
      const int r = a_k_fast ? e / kTiledTK : e % kTiledTM;
      const int kk = a_k_fast ? e % kTiledTK : e / kTiledTM;
      const i64 gr = row0 + r, gk = k0 + kk;
      as[kk][r] = gr < row_end && gk < p.k
                      ? widen_to_float(a[p.a_offset + gr * p.a_row_stride + gk * p.a_col_stride])
                      : 0.0f;
      const int c = b_k_fast ? e / kTiledTK : e % kTiledTN;
      const int kb = b_k_fast ? e % kTiledTK : e / kTiledTN;
      const i64 gn = col0 + c, gkb = k0 + kb;
      bs[kb][c] = gn < p.n && gkb < p.k
                      ? widen_to_float(b[b_base + gn * p.b_n_stride + gkb * p.b_k_stride])
                      : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTiledTK; ++kk) {
      float av[4], bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = as[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) bv[j] = bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const i64 row = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
      if (row < row_end && col < p.n)
        out[p.out_offset + row * p.out_row_stride + col * p.out_col_stride] =
            narrow_from_float<T>(acc[i][j]);
    }
}

// One block per (m slot, n tile); with no columns, one n tile still checks the offsets.
struct GroupedGrid {
  i64 m_slots, n_tiles;
  unsigned blocks;
};
GroupedGrid grouped_grid(const abi::GroupedMatmulParams& p, int tm, int tn) {
  const i64 m_slots = grouped_m_slots(p, tm);
  const i64 n_tiles = p.n > 0 ? (p.n + tn - 1) / tn : 1;
  if (m_slots * n_tiles > 0x7fffffffLL)
    throw InvalidArgument("grouped_matmul", "grouped_matmul launch: more than 2^31 - 1 tiles (" +
                                                std::to_string(m_slots) + " row slots x " +
                                                std::to_string(n_tiles) + " column tiles).");
  return {m_slots, n_tiles, unsigned(m_slots * n_tiles)};
}

template <typename T, typename Index>
void launch_tiled(const abi::GroupedMatmulParams& p, const GpuLaunch& l) {
  const GroupedGrid g = grouped_grid(p, kTiledTM, kTiledTN);
  grouped_tiled_kernel<T, Index><<<g.blocks, kTiledThreads, 0, static_cast<Stream>(l.stream)>>>(
      p, static_cast<T*>(l.buffers[0].address), static_cast<const T*>(l.buffers[1].address),
      static_cast<const T*>(l.buffers[2].address), static_cast<const Index*>(l.buffers[3].address),
      l.fault, g.m_slots, g.n_tiles);
}

#if !NBX_GPU_HIP
template <typename T, typename Index, int Stages>
Error launch_mma_stages(const abi::GroupedMatmulParams& p, const GpuLaunch& l) {
  const GroupedGrid g = grouped_grid(p, kMmaTM, kMmaTN);
  const int smem = int(abi::grouped_mma_shared_bytes(Stages));
  auto* kernel = &grouped_mma_kernel<T, Index, Stages>;
  // Above 48 KiB only by opting in; the plan checked the device's opt-in limit.
  const Error e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != kSuccess) return e;
  kernel<<<g.blocks, kMmaThreads, size_t(smem), static_cast<Stream>(l.stream)>>>(
      p, static_cast<T*>(l.buffers[0].address), static_cast<const T*>(l.buffers[1].address),
      static_cast<const T*>(l.buffers[2].address), static_cast<const Index*>(l.buffers[3].address),
      l.fault, g.m_slots, g.n_tiles);
  return last_launch_error();
}

template <typename T, typename Index>
Error launch_mma(const abi::GroupedMatmulParams& p, const GpuLaunch& l) {
  return p.num_stages == 4 ? launch_mma_stages<T, Index, 4>(p, l)
                           : launch_mma_stages<T, Index, 3>(p, l);
}
#endif

template <typename Index>
ElementwiseLaunchResult launch_index(const abi::GroupedMatmulParams& p, const GpuLaunch& l) {
  ElementwiseLaunchResult r;
  r.call = "grouped_matmul launch";
  r.path = ElementwisePath::kTiled;
  if (p.variant == abi::kGroupedMatmulMma) {
#if !NBX_GPU_HIP
    // The family's variant_refusal admitted only float16 and bfloat16 here.
    r.error = int(p.dtype == kBFloat16 ? launch_mma<bfloat16_t, Index>(p, l)
                                       : launch_mma<half_t, Index>(p, l));
    return r;
#else
    throw Internal("grouped_matmul launch: the mma variant reached HIP, which does not offer it.");
#endif
  }
  switch (p.dtype) {
    case kFloat16:
      launch_tiled<half_t, Index>(p, l);
      break;
    case kBFloat16:
      launch_tiled<bfloat16_t, Index>(p, l);
      break;
    default:
      launch_tiled<float, Index>(p, l);
      break;
  }
  r.error = int(last_launch_error());
  return r;
}

}  // namespace

ElementwiseLaunchResult launch_family(const abi::GroupedMatmulParams& p, const GpuLaunch& l) {
  if (p.variant == abi::kGroupedMatmulBlas) return launch_grouped_matmul_vendor(p, l);
  return p.offsets_dtype == kInt64 ? launch_index<long long>(p, l) : launch_index<int>(p, l);
}

#if NBX_GPU_HIP
// The HIP module has no vendor BLAS (matmul_kernels.cu): the variant is never offered there.
ElementwiseLaunchResult launch_grouped_matmul_vendor(const abi::GroupedMatmulParams&,
                                                     const GpuLaunch& l) {
  throw Unsupported(
      "grouped_matmul", *l.device_name, "grouped_matmul.blas",
      "grouped_matmul on " + *l.device_name + ": the HIP backend has no vendor BLAS; refused.");
}
#endif

}  // namespace nbx::gpu
