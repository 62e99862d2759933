// The "grouped_matmul" family's mma variant (CUDA sm_80+ only; included by
// grouped_matmul_kernels.cu outside HIP): every group's rows times its weights in one launch,
// on the tensor cores through mma.sync m16n8k16 (bf16 or f16 in, float32 accumulators).
//
// Design (after CUTLASS's sm80 multistage GEMM and the grouped schedule of vLLM's fused_moe
// Triton kernel; written here, not copied): a 256-thread block computes a 128 x 256 output
// tile of one group, eight warps of 64 x 64 (2 x 4). The wide tile reads 25% fewer operand
// bytes from L2 per product than 128 x 128 (85 against 64 multiply-adds per element loaded;
// by estimate, 128 x 128 tiles at 500 TFLOP/s would read ~7.8 TB/s from L2, near what an
// H100/H200 L2 delivers); vLLM's tuned fused_moe takes the same tile on the H200 at Mixtral's
// shapes. Not yet measured (written without a GPU, 2026-12-06): bench/run_h200_moe.sh times
// it at Mixtral's shapes beside PyTorch. k advances 32 at a time through `Stages` shared
// memory stages filled by cp.async (16-byte chunks, zero-filled past the group's rows, n and
// k), so Stages - 1 tiles are in flight while one is multiplied. Stage rows are 64 bytes (32
// elements, four chunks); chunk c of row r sits at c ^ ((r >> 1) & 3), so the eight rows an
// ldmatrix reads fall in eight different 16-byte bank groups. a is read as [rows, K] and b
// as [N, K] (PyTorch Linear weights) — both k-contiguous, which the family's variant_refusal
// guarantees — so both operands load with plain (non-transposed) ldmatrix.x4. The epilogue
// rounds each accumulator pair once to the dtype and stores it as one 32-bit word.
#pragma once

#include "kernels/gpu/grouped_matmul_groups.cuh"

namespace nbx::gpu {

inline constexpr int kMmaThreads = 256;
inline constexpr int kMmaTM = abi::kGroupedMmaTileM;
inline constexpr int kMmaTN = abi::kGroupedMmaTileN;
inline constexpr int kMmaTK = abi::kGroupedMmaTileK;
static_assert(kMmaTM == 128 && kMmaTN == 256 && kMmaTK == 32, "the warp layout below");

NBX_GPU_INLINE unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared; `bytes` 0 writes zeros and reads nothing.
NBX_GPU_INLINE void cp_async_16(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)),
               "l"(src), "r"(bytes));
}
NBX_GPU_INLINE void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int Pending>
NBX_GPU_INLINE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

NBX_GPU_INLINE void ldmatrix_x4(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}

template <typename T>
NBX_GPU_INLINE void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  if constexpr (std::is_same_v<T, bfloat16_t>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Element offset of chunk `chunk` (0..3) of row `row` in a stage tile of 32-element rows.
NBX_GPU_INLINE int swizzled(int row, int chunk) {
  return row * kMmaTK + ((chunk ^ ((row >> 1) & 3)) << 3);
}

template <typename T>
NBX_GPU_INLINE T narrow_to(float v) {
  if constexpr (std::is_same_v<T, bfloat16_t>)
    return bfloat16_from_float(v);
  else
    return half_from_float(v);
}

// Two results rounded once each, as one 32-bit word (the lower column in the low half).
template <typename T>
NBX_GPU_INLINE unsigned pack_pair(float lo, float hi) {
  const T l = narrow_to<T>(lo), h = narrow_to<T>(hi);
  unsigned short lb, hb;
  memcpy(&lb, &l, 2);
  memcpy(&hb, &h, 2);
  return unsigned(lb) | (unsigned(hb) << 16);
}

template <typename T, typename Index, int Stages>
__global__ void __launch_bounds__(kMmaThreads, 1)
    grouped_mma_kernel(const NBX_GPU_GRID_CONSTANT abi::GroupedMatmulParams p, T* out, const T* a,
                       const T* b, const Index* offsets, abi::FaultRecord* fault, i64 m_slots,
                       i64 n_tiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ float4 grouped_mma_smem[];
  __shared__ GroupTile tile;
  T* const smem = reinterpret_cast<T*>(grouped_mma_smem);
  constexpr int kStageElems = (kMmaTM + kMmaTN) * kMmaTK;

  i64 m_slot, n_tile;
  grouped_tile_of(blockIdx.x, m_slots, n_tiles, m_slot, n_tile);
  find_group_tile<Index>(p, offsets, m_slot, kMmaTM, &tile, fault);
  if (tile.bad || tile.group < 0 || n_tile * kMmaTN >= p.n) return;

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const i64 row0 = tile.row0, row_end = tile.row_end, col0 = n_tile * kMmaTN;
  const T* const a_rows = a + p.a_offset;
  const T* const b_rows = b + p.b_offset + i64(tile.group) * p.b_group_stride;
  const i64 k_tiles = (p.k + kMmaTK - 1) / kMmaTK;

  // A stage is 128 rows of a and 256 of b, four 16-byte chunks each: chunk c = tid + 256 i is
  // row c / 4, chunk c % 4 — two chunks of a and four of b per thread.
  auto load_stage = [&](int slot, i64 kt) {
    T* const as = smem + slot * kStageElems;
    T* const bs = as + kMmaTM * kMmaTK;
    const i64 k0 = kt * kMmaTK;
#pragma unroll
    for (int i = 0; i < kMmaTM * 4 / kMmaThreads; ++i) {
      const int c = tid + kMmaThreads * i;
      const int row = c >> 2, chunk = c & 3;
      const i64 gk = k0 + chunk * 8, ar = row0 + row;
      const bool in = ar < row_end && gk < p.k;
      cp_async_16(as + swizzled(row, chunk), in ? a_rows + ar * p.a_row_stride + gk : a_rows,
                  in ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < kMmaTN * 4 / kMmaThreads; ++i) {
      const int c = tid + kMmaThreads * i;
      const int row = c >> 2, chunk = c & 3;
      const i64 gk = k0 + chunk * 8, bn = col0 + row;
      const bool in = bn < p.n && gk < p.k;
      cp_async_16(bs + swizzled(row, chunk), in ? b_rows + bn * p.b_n_stride + gk : b_rows,
                  in ? 16 : 0);
    }
  };

  float acc[4][8][4];
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int ni = 0; ni < 8; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.0f;

#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    cp_async_commit();
  }

  const int warp_m = (warp >> 2) * 64, warp_n = (warp & 3) * 64;
  for (i64 kt = 0; kt < k_tiles; ++kt) {
    // Tile kt has landed once at most Stages - 2 groups are pending; the barrier also tells
    // every warp that the slot loaded next (multiplied in step kt - 1) is free.
    cp_async_wait<Stages - 2>();
    __syncthreads();
    const i64 next = kt + Stages - 1;
    if (next < k_tiles) load_stage(int(next % Stages), next);
    cp_async_commit();

    const T* const as = smem + int(kt % Stages) * kStageElems;
    const T* const bs = as + kMmaTM * kMmaTK;
#pragma unroll
    for (int ks = 0; ks < kMmaTK / 16; ++ks) {
      unsigned af[4][4], bf[4][4];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        const int row = warp_m + mi * 16 + (lane & 15);
        ldmatrix_x4(af[mi], as + swizzled(row, ks * 2 + (lane >> 4)));
      }
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) {
        const int n = warp_n + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
        ldmatrix_x4(bf[nj], bs + swizzled(n, ks * 2 + ((lane >> 3) & 1)));
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni)
          mma_16816<T>(acc[mi][ni], af[mi], bf[ni >> 1][(ni & 1) * 2],
                       bf[ni >> 1][(ni & 1) * 2 + 1]);
    }
  }
  cp_async_wait<0>();

  // Accumulator r of fragment (mi, ni): row g (+8 for r >= 2), columns 2t and 2t + 1.
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const i64 row = row0 + warp_m + mi * 16 + g + half * 8;
      if (row >= row_end) continue;
      T* const out_row = out + p.out_offset + row * p.out_row_stride;
#pragma unroll
      for (int ni = 0; ni < 8; ++ni) {
        const i64 col = col0 + warp_n + ni * 8 + 2 * t;
        const float lo = acc[mi][ni][half * 2], hi = acc[mi][ni][half * 2 + 1];
        if (col + 1 < p.n)
          *reinterpret_cast<unsigned*>(out_row + col) = pack_pair<T>(lo, hi);
        else if (col < p.n)
          out_row[col] = narrow_to<T>(lo);
      }
    }
#else
  // Built for an architecture without cp.async and bf16 mma: the plan never picks this
  // variant there (matrix unit, pipelining.max_num_stages, compute capability); reaching it
  // anyway is a launch error, never a silent empty result.
  __trap();
#endif
}

}  // namespace nbx::gpu
