// The attention family's flash_mma variant for CUDA sm_80+ (FlashAttention-2's schedule on
// mma.sync m16n8k16, float32 accumulators; written from the papers, not from its code).
//
// A block takes block_rows (64 or 128) query rows of one (batch, head): each warp owns 16
// rows. The Q tile is copied to shared memory once (and, up to head_dim 128, into registers
// as A fragments); the keys are walked in tiles of 64: K and V tiles come by cp.async, V's
// copy overlapping S = Q K^T and the next K's overlapping O += P V. The online softmax runs on
// the S accumulators in registers (exp2 of scores pre-scaled by scale * log2 e), and P is
// repacked from the accumulator layout straight into A fragments of the P V product: the
// m16n8 C layout of two adjacent key tiles is the m16k16 A layout. Shared-memory rows are
// padded by 8 elements, so ldmatrix's eight row addresses fall on distinct banks.
// Rows past q_len and keys past kv_len load as zeros (cp.async's zero fill); keys outside a
// row's causal window score -inf; a row no key reaches writes zeros.
#include "kernels/gpu/attention_common.cuh"

#if !NBX_GPU_HIP

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define NBX_ATTENTION_MMA 1
#else
#define NBX_ATTENTION_MMA 0
#endif

namespace nbx::gpu::attention {
namespace {

inline constexpr int kKeys = 64;

NBX_GPU_INLINE unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

#if NBX_ATTENTION_MMA
// 16 bytes from global to shared memory, asynchronously; zeros where !valid.
NBX_GPU_INLINE void copy16_async(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)),
               "l"(src), "r"(valid ? 16 : 0));
}
NBX_GPU_INLINE void async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
NBX_GPU_INLINE void async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::);
}
NBX_GPU_INLINE void load_matrix_x4(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}
NBX_GPU_INLINE void load_matrix_x4_trans(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}
template <typename T>
NBX_GPU_INLINE void mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  if constexpr (std::is_same_v<T, bfloat16_t>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}
// Two floats as the 16-bit pair of an A fragment register (lo: the lower column).
template <typename T>
NBX_GPU_INLINE unsigned pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, bfloat16_t>) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&v);
  } else {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&v);
  }
}
NBX_GPU_INLINE float exp2_approx(float x) {  // 2^x; -inf gives 0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Rows [row0, row0 + rows) of a [batch, heads, rows, dim] operand (dim stride 1, 16-byte
// rows: the variant's contract) into shared rows of Dp + 8 elements; zeros past row_count
// and past dim.
template <typename T, int Dp, int Threads>
NBX_GPU_INLINE void load_rows(T* dst, const T* src, i64 offset, const std::int64_t* strides, i64 b,
                              i64 h, i64 row0, int rows, i64 row_count, i64 dim) {
  constexpr int kChunks = Dp / 8;
  for (int c = threadIdx.x; c < rows * kChunks; c += Threads) {
    const int r = c / kChunks, chunk = c % kChunks;
    const i64 row = row0 + r;
    const bool valid = row < row_count && chunk * 8 < dim;
    const T* from = valid ? src + row_base(offset, strides, b, h, row) + chunk * 8 : src;
    copy16_async(dst + r * (Dp + 8) + chunk * 8, from, valid);
  }
}
#endif

template <typename T, int Dp, int Warps>
__global__ void __launch_bounds__(Warps * 32)
    flash_mma_kernel(const NBX_GPU_GRID_CONSTANT abi::AttentionParams p, T* out, const T* q,
                     const T* k, const T* v) {
#if NBX_ATTENTION_MMA
  constexpr int kRows = Warps * 16, kStride = Dp + 8, kThreads = Warps * 32;
  constexpr bool kQInRegisters = Dp <= 128;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* const sq = reinterpret_cast<T*>(shared_bytes);
  T* const sk = sq + kRows * kStride;
  T* const sv = sk + kKeys * kStride;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const float scale_log2 = float(p.scale) * kLog2e;
  const i64 tiles = (p.q_len + kRows - 1) / kRows;
  const i64 group = p.q_heads / p.kv_heads;

  for (i64 bh = blockIdx.x; bh < p.batch * p.q_heads; bh += gridDim.x) {
    const i64 b = bh / p.q_heads, h = bh % p.q_heads, hk = h / group;
    for (i64 t_index = blockIdx.y; t_index < tiles; t_index += gridDim.y) {
      const i64 r0 = (tiles - 1 - t_index) * kRows;  // the longest causal rows first
      const i64 last = (r0 + kRows < p.q_len ? r0 + kRows : p.q_len) - 1;
      const int key_tiles = int((keys_seen(p, last) + kKeys - 1) / kKeys);
      load_rows<T, Dp, kThreads>(sq, q, p.q_offset, p.q_strides, b, h, r0, kRows, p.q_len,
                                 p.head_dim);
      if (key_tiles > 0)
        load_rows<T, Dp, kThreads>(sk, k, p.k_offset, p.k_strides, b, hk, 0, kKeys, p.kv_len,
                                   p.head_dim);
      async_commit();
      async_wait_all();
      __syncthreads();

      const T* const q_warp = sq + (warp * 16 + lane % 16) * kStride + (lane / 16) * 8;
      unsigned qf[kQInRegisters ? Dp / 16 : 1][4];
      if constexpr (kQInRegisters) {
#pragma unroll
        for (int kk = 0; kk < Dp / 16; ++kk) load_matrix_x4(qf[kk], q_warp + kk * 16);
      }
      float o[Dp / 8][4];
#pragma unroll
      for (int n = 0; n < Dp / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
      float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
      const i64 warp_row = r0 + warp * 16;
      const i64 rows[2] = {warp_row + lane / 4, warp_row + lane / 4 + 8};

      for (int t = 0; t < key_tiles; ++t) {
        const i64 k0 = i64(t) * kKeys;
        load_rows<T, Dp, kThreads>(sv, v, p.v_offset, p.v_strides, b, hk, k0, kKeys, p.kv_len,
                                   p.value_dim);
        async_commit();

        // S = Q K^T for the warp's 16 rows and the tile's 64 keys.
        float s[kKeys / 8][4];
#pragma unroll
        for (int n = 0; n < kKeys / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < Dp / 16; ++kk) {
          unsigned a[4];
          if constexpr (kQInRegisters) {
            a[0] = qf[kk][0], a[1] = qf[kk][1], a[2] = qf[kk][2], a[3] = qf[kk][3];
          } else {
            load_matrix_x4(a, q_warp + kk * 16);
          }
#pragma unroll
          for (int nn = 0; nn < kKeys / 16; ++nn) {
            unsigned bk[4];
            load_matrix_x4(bk, sk + (nn * 16 + (lane / 16) * 8 + lane % 8) * kStride + kk * 16 +
                                   ((lane / 8) % 2) * 8);
            mma<T>(s[2 * nn], a, bk[0], bk[1]);
            mma<T>(s[2 * nn + 1], a, bk[2], bk[3]);
          }
        }
        // Keys past kv_len or outside a row's causal window: -inf (only tiles that reach them).
        if (k0 + kKeys > p.kv_len || (p.causal && k0 + kKeys - 1 > warp_row + p.causal_shift)) {
#pragma unroll
          for (int n = 0; n < kKeys / 8; ++n)
#pragma unroll
            for (int c = 0; c < 4; ++c) {
              const i64 key = k0 + n * 8 + 2 * (lane % 4) + (c & 1);
              if (key >= keys_seen(p, rows[c / 2])) s[n][c] = -INFINITY;
            }
        }
        // The online softmax of each of the thread's two rows (a quad of lanes shares a row).
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          float mx = -INFINITY;
#pragma unroll
          for (int n = 0; n < kKeys / 8; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * r], s[n][2 * r + 1]));
          mx = fmaxf(mx, warp_shuffle_xor(mx, 1));
          mx = fmaxf(mx, warp_shuffle_xor(mx, 2));
          const float m_new = fmaxf(m[r], mx * scale_log2);
          const float m_use = m_new == -INFINITY ? 0.f : m_new;
          const float alpha = exp2_approx(m[r] - m_use);
          m[r] = m_new;
          float sum = 0.f;
#pragma unroll
          for (int n = 0; n < kKeys / 8; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const float pe = exp2_approx(s[n][2 * r + e] * scale_log2 - m_use);
              s[n][2 * r + e] = pe;
              sum += pe;
            }
          l[r] = l[r] * alpha + sum;
#pragma unroll
          for (int n = 0; n < Dp / 8; ++n) o[n][2 * r] *= alpha, o[n][2 * r + 1] *= alpha;
        }
        async_wait_all();  // V is in; every warp is done with K
        __syncthreads();
        if (t + 1 < key_tiles) {
          load_rows<T, Dp, kThreads>(sk, k, p.k_offset, p.k_strides, b, hk, k0 + kKeys, kKeys,
                                     p.kv_len, p.head_dim);
          async_commit();
        }
        // O += P V: two key tiles of the S accumulators are one A fragment.
#pragma unroll
        for (int kk = 0; kk < kKeys / 16; ++kk) {
          const unsigned a[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]),
                                 pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                                 pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                 pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
          for (int dd = 0; dd < Dp / 16; ++dd) {
            unsigned bv[4];
            load_matrix_x4_trans(bv, sv + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * kStride +
                                         dd * 16 + (lane / 16) * 8);
            mma<T>(o[2 * dd], a, bv[0], bv[1]);
            mma<T>(o[2 * dd + 1], a, bv[2], bv[3]);
          }
        }
        async_wait_all();  // the next K is in; every warp is done with V
        __syncthreads();
      }

      // out = O / l (zeros for a row no key reached), rounded once.
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        l[r] += warp_shuffle_xor(l[r], 1);
        l[r] += warp_shuffle_xor(l[r], 2);
        if (rows[r] >= p.q_len) continue;
        const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
        T* const dst = out + row_base(p.out_offset, p.out_strides, b, h, rows[r]);
#pragma unroll
        for (int n = 0; n < Dp / 8; ++n) {
          const int d = n * 8 + 2 * (lane % 4);
          if (d < p.value_dim) {
            dst[d * p.out_strides[3]] = from_f32<T>(o[n][2 * r] * inv);
            dst[(d + 1) * p.out_strides[3]] = from_f32<T>(o[n][2 * r + 1] * inv);
          }
        }
      }
      __syncthreads();  // the next tile's copies overwrite Q and K
    }
  }
#endif
}

template <typename T, int Dp, int Warps>
Error launch_tile(const abi::AttentionParams& p, const GpuLaunch& l) {
  constexpr int kRows = Warps * 16;
  const int shared = (kRows + 2 * kKeys) * (Dp + 8) * int(sizeof(T));
  auto* kernel = &flash_mma_kernel<T, Dp, Warps>;
  if (const Error e = allow_dynamic_shared(kernel, shared); e != kSuccess) return e;
  const i64 heads = p.batch * p.q_heads, tiles = (p.q_len + kRows - 1) / kRows;
  const dim3 grid(unsigned(heads < (i64(1) << 30) ? heads : i64(1) << 30),
                  unsigned(tiles < 65535 ? tiles : 65535));
  kernel<<<grid, Warps * 32, shared, static_cast<Stream>(l.stream)>>>(
      p, static_cast<T*>(l.buffers[0].address), static_cast<const T*>(l.buffers[1].address),
      static_cast<const T*>(l.buffers[2].address), static_cast<const T*>(l.buffers[3].address));
  return last_launch_error();
}

template <typename T>
Error launch_dtype(const abi::AttentionParams& p, const GpuLaunch& l) {
  const bool wide = p.block_rows == 128;  // 8 warps; head_dim <= 128 (the variant's contract)
  if (p.head_dim <= 64) return wide ? launch_tile<T, 64, 8>(p, l) : launch_tile<T, 64, 4>(p, l);
  if (p.head_dim <= 96) return wide ? launch_tile<T, 96, 8>(p, l) : launch_tile<T, 96, 4>(p, l);
  if (p.head_dim <= 128) return wide ? launch_tile<T, 128, 8>(p, l) : launch_tile<T, 128, 4>(p, l);
  return launch_tile<T, 256, 4>(p, l);
}

}  // namespace

Error launch_flash_mma(const abi::AttentionParams& p, const GpuLaunch& l) {
  return p.dtype == kBFloat16 ? launch_dtype<bfloat16_t>(p, l) : launch_dtype<half_t>(p, l);
}

}  // namespace nbx::gpu::attention

#endif  // !NBX_GPU_HIP
