// The attention family's flash_mma variant for CUDA sm_80+ (FlashAttention-2's schedule on
// mma.sync m16n8k16, float32 accumulators; written from the papers, not from its code).
//
// A block of four warps takes block_rows (64 or 128) query rows of one (batch, head): each warp
// owns RowTiles m16 tiles of them (block_rows 128: two, 32 rows a warp; 64: one), so every K
// or V fragment ldmatrix brings feeds 2 x RowTiles mmas. The Q tile is copied to shared memory
// once (and, where Dp x RowTiles <= 128, into registers as A fragments); the keys are walked in
// tiles of 64 that come by cp.async in key_stages buffers: with two, tile t + 1's copies are
// issued right after the block's one barrier of tile t and land under its math; with one (a
// device whose opt-in shared memory cannot hold two: sm_80 and sm_86 at head dim 256), a
// second barrier a tile and no overlap. The online softmax runs on the S accumulators in registers
// (exp2 of scores pre-scaled by scale * log2 e), and P is repacked from the accumulator layout
// straight into A fragments of the P V product: the m16n8 C layout of two adjacent key tiles is
// the m16k16 A layout. A warp whose rows see no key of a tile (the causal diagonal of a block)
// skips the tile's math. Shared-memory rows are padded by 8 elements, so ldmatrix's eight row
// addresses fall on distinct banks. Rows past q_len and keys past kv_len load as zeros
// (cp.async's zero fill); keys outside a row's causal window score -inf; a row no key reaches
// writes zeros.
#include <cstdint>
#include <cstdlib>
#include <string_view>

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
inline constexpr float kRescaleSlack = 8.f;  // log2 units: O is rescaled once a max grows 2^8

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

// A 64-bit value the compiler cannot hoist out of a loop: keeps the loaders' per-pass
// addresses from being precomputed into registers the accumulators need.
NBX_GPU_INLINE i64 unhoisted(i64 x) {
  i64 y;
  asm volatile("mov.b64 %0, %1;\n" : "=l"(y) : "l"(x));
  return y;
}

// Rows [row0, row0 + Rows) of one head (`head` is its row 0, rows `row_stride` apart) into
// shared rows of Dp + 8 elements, zeros past row_count and past dim. Where the block's
// threads cover whole rows (Dp 64, 128) a thread keeps one chunk column and walks its rows
// with one pointer; otherwise (Dp 96) a loop over the chunks.
template <typename T, int Dp, int Rows, int Threads>
NBX_GPU_INLINE void load_head_rows(T* dst, const T* head, i64 row_stride, i64 row0, i64 row_count,
                                   i64 dim) {
  constexpr int kChunks = Dp / 8;
  static_assert(Rows * kChunks % Threads == 0, "whole passes of the block's threads");
  if constexpr (Threads % kChunks == 0) {
    constexpr int kPassRows = Threads / kChunks;
    const int r = threadIdx.x / kChunks, chunk = threadIdx.x % kChunks;
    const bool dim_ok = chunk * 8 < dim;
    const i64 step = unhoisted(kPassRows * row_stride);
    const T* from = head + (row0 + r) * row_stride + chunk * 8;
    T* const to = dst + r * (Dp + 8) + chunk * 8;
    if (dim_ok && row0 + Rows <= row_count) {
#pragma unroll
      for (int j = 0; j < Rows / kPassRows; ++j, from += step)
        copy16_async(to + j * kPassRows * (Dp + 8), from, true);
    } else {
#pragma unroll
      for (int j = 0; j < Rows / kPassRows; ++j, from += step) {
        const bool valid = dim_ok && row0 + r + j * kPassRows < row_count;
        copy16_async(to + j * kPassRows * (Dp + 8), valid ? from : head, valid);
      }
    }
  } else {
#pragma unroll 1  // unrolled, the hoisted addresses cost the accumulators registers
    for (int j = 0; j < Rows * kChunks / Threads; ++j) {
      const int c = threadIdx.x + j * Threads, r = c / kChunks, chunk = c % kChunks;
      const bool valid = row0 + r < row_count && chunk * 8 < dim;
      const T* from = valid ? head + (row0 + r) * row_stride + chunk * 8 : head;
      copy16_async(dst + r * (Dp + 8) + chunk * 8, from, valid);
    }
  }
}
#endif

// Measured on an H100 (2026-12-07, bf16 b4 h32 s4096 d128, block_rows 128, two stages):
// causal 1.74 ms (317 TFLOP/s), full 3.47 ms; the first schedule of this file (eight warps of
// 16 rows, one K/V buffer each) took 3.09 and 5.83 ms. Registers (ptxas, sm_90): 167–218 with
// 16 rows a warp, 247–255 with 32 (a few bytes spilled at Dp 96 and 128): at Dp 96/128 with two
// row tiles the Q fragments are reloaded from shared memory every k step instead of held.
// Fragment layouts (PTX ISA, mma.m16n8k16, g = lane / 4, c = lane % 4): A a0 = (row g, cols
// 2c, 2c+1), a1 = (g + 8, 2c..), a2 = (g, 2c + 8..), a3 = (g + 8, 2c + 8..); B b0 = (k 2c, 2c+1,
// col g), b1 = (k 2c + 8.., g); C c0, c1 = (row g, cols 2c, 2c+1), c2, c3 = (g + 8, 2c..).
// ldmatrix.x4: lanes 8j..8j+7 address the rows of matrix j; register j of a lane holds row
// lane / 4, elements 2 (lane % 4) and +1 of matrix j (.trans: column lane / 4, rows 2 (lane %
// 4) and +1).
template <typename T, int Dp, int RowTiles, int Stages>
__global__ void __launch_bounds__(128, 1)
    flash_mma_kernel(const NBX_GPU_GRID_CONSTANT abi::AttentionParams p, T* out, const T* q,
                     const T* k, const T* v, bool eager_rescale) {
#if NBX_ATTENTION_MMA
  constexpr int kWarps = 4, kThreads = kWarps * 32, kWarpRows = 16 * RowTiles;
  constexpr int kRows = kWarps * kWarpRows, kStride = Dp + 8, kTile = kKeys * kStride;
  constexpr bool kQInRegisters = Dp * RowTiles <= 128;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* const sq = reinterpret_cast<T*>(shared_bytes);
  T* const sk = sq + kRows * kStride;  // Stages buffers of K, then Stages of V
  T* const sv = sk + Stages * kTile;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const float scale_log2 = float(p.scale) * kLog2e;
  const i64 tiles = (p.q_len + kRows - 1) / kRows;
  const i64 group = p.q_heads / p.kv_heads;

  for (i64 bh = blockIdx.x; bh < p.batch * p.q_heads; bh += gridDim.x) {
    const i64 b = bh / p.q_heads, h = bh % p.q_heads, hk = h / group;
    const T* const k_head = k + row_base(p.k_offset, p.k_strides, b, hk, 0);
    const T* const v_head = v + row_base(p.v_offset, p.v_strides, b, hk, 0);
    for (i64 t_index = blockIdx.y; t_index < tiles; t_index += gridDim.y) {
      const i64 r0 = (tiles - 1 - t_index) * kRows;  // the longest causal rows first
      const i64 last = (r0 + kRows < p.q_len ? r0 + kRows : p.q_len) - 1;
      const int key_tiles = int((keys_seen(p, last) + kKeys - 1) / kKeys);
      load_head_rows<T, Dp, kRows, kThreads>(sq, q + row_base(p.q_offset, p.q_strides, b, h, 0),
                                             p.q_strides[2], r0, p.q_len, p.head_dim);
      if (key_tiles > 0) {
        load_head_rows<T, Dp, kKeys, kThreads>(sk, k_head, p.k_strides[2], 0, p.kv_len, p.head_dim);
        load_head_rows<T, Dp, kKeys, kThreads>(sv, v_head, p.v_strides[2], 0, p.kv_len,
                                               p.value_dim);
      }
      async_commit();
      async_wait_all();
      __syncthreads();

      // Key counts fit an int (key_tiles does). warp_tiles: the tiles any of the warp's rows sees
      // (the rest are skipped whole); masked_from: the first tile some row of the warp does not see
      // whole.
      const i64 warp_row = r0 + warp * kWarpRows;
      const i64 warp_last =
          warp_row + kWarpRows - 1 < p.q_len ? warp_row + kWarpRows - 1 : p.q_len - 1;
      const int warp_tiles =
          warp_row >= p.q_len ? 0 : int((keys_seen(p, warp_last) + kKeys - 1) / kKeys);
      const int masked_from = int(keys_seen(p, warp_row) / kKeys);
      const T* const q_warp = sq + (warp * kWarpRows + lane % 16) * kStride + (lane / 16) * 8;
      unsigned qf[kQInRegisters ? RowTiles : 1][kQInRegisters ? Dp / 16 : 1][4];
      if constexpr (kQInRegisters) {
#pragma unroll
        for (int i = 0; i < RowTiles; ++i)
#pragma unroll
          for (int kk = 0; kk < Dp / 16; ++kk)
            load_matrix_x4(qf[i][kk], q_warp + i * 16 * kStride + kk * 16);
      }
      float o[RowTiles][Dp / 8][4];
#pragma unroll
      for (int i = 0; i < RowTiles; ++i)
#pragma unroll
        for (int n = 0; n < Dp / 8; ++n) o[i][n][0] = o[i][n][1] = o[i][n][2] = o[i][n][3] = 0.f;
      float m[RowTiles][2], l[RowTiles][2];
#pragma unroll
      for (int i = 0; i < RowTiles; ++i) m[i][0] = m[i][1] = -INFINITY, l[i][0] = l[i][1] = 0.f;

      for (int t = 0; t < key_tiles; ++t) {
        if (t > 0) {
          if constexpr (Stages == 1) {
            __syncthreads();  // every warp is done with tile t - 1, whose buffer tile t takes
            load_head_rows<T, Dp, kKeys, kThreads>(sk, k_head, p.k_strides[2], i64(t) * kKeys,
                                                   p.kv_len, p.head_dim);
            load_head_rows<T, Dp, kKeys, kThreads>(sv, v_head, p.v_strides[2], i64(t) * kKeys,
                                                   p.kv_len, p.value_dim);
            async_commit();
          }
          // Tile t is in (each thread waited for its own copies; the barrier publishes them);
          // with two stages every warp is also done with tile t - 1, whose buffer the next
          // copies overwrite.
          async_wait_all();
          __syncthreads();
        }
        if (Stages == 2 && t + 1 < key_tiles) {
          const int next = (t + 1) & 1;
          load_head_rows<T, Dp, kKeys, kThreads>(sk + next * kTile, k_head, p.k_strides[2],
                                                 i64(t + 1) * kKeys, p.kv_len, p.head_dim);
          load_head_rows<T, Dp, kKeys, kThreads>(sv + next * kTile, v_head, p.v_strides[2],
                                                 i64(t + 1) * kKeys, p.kv_len, p.value_dim);
          async_commit();
        }
        if (t >= warp_tiles) continue;  // all of the warp's rows score -inf here: no change
        const T* const sk_t = sk + (Stages == 2 ? t & 1 : 0) * kTile;
        const T* const sv_t = sv + (Stages == 2 ? t & 1 : 0) * kTile;

        // S = Q K^T for the warp's rows and the tile's 64 keys. K fragment (lanes 8j..8j+7
        // address matrix j): matrices 0, 1 = keys nn*16 + 0..7 at dims kk*16 + 0..7 / 8..15
        // (b0, b1 of key tile 2 nn), matrices 2, 3 = keys nn*16 + 8..15 (key tile 2 nn + 1).
        float s[RowTiles][kKeys / 8][4];
#pragma unroll
        for (int i = 0; i < RowTiles; ++i)
#pragma unroll
          for (int n = 0; n < kKeys / 8; ++n)
            s[i][n][0] = s[i][n][1] = s[i][n][2] = s[i][n][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < Dp / 16; ++kk) {
          unsigned a[RowTiles][4];
#pragma unroll
          for (int i = 0; i < RowTiles; ++i) {
            if constexpr (kQInRegisters) {
#pragma unroll
              for (int e = 0; e < 4; ++e) a[i][e] = qf[i][kk][e];
            } else {
              load_matrix_x4(a[i], q_warp + i * 16 * kStride + kk * 16);
            }
          }
#pragma unroll
          for (int nn = 0; nn < kKeys / 16; ++nn) {
            unsigned bk[4];
            load_matrix_x4(bk, sk_t + (nn * 16 + (lane / 16) * 8 + lane % 8) * kStride + kk * 16 +
                                   ((lane / 8) % 2) * 8);
#pragma unroll
            for (int i = 0; i < RowTiles; ++i) {
              mma<T>(s[i][2 * nn], a[i], bk[0], bk[1]);
              mma<T>(s[i][2 * nn + 1], a[i], bk[2], bk[3]);
            }
          }
        }
        // Keys past kv_len or outside a row's causal window: -inf (only tiles that reach them).
        if (t >= masked_from) {
#pragma unroll
          for (int i = 0; i < RowTiles; ++i)
#pragma unroll
            for (int r = 0; r < 2; ++r) {
              const i64 seen = keys_seen(p, warp_row + i * 16 + r * 8 + lane / 4) - i64(t) * kKeys;
              const int limit = int(seen < 0 ? 0 : seen > kKeys ? kKeys : seen);
#pragma unroll
              for (int n = 0; n < kKeys / 8; ++n)
#pragma unroll
                for (int e = 0; e < 2; ++e)
                  if (n * 8 + 2 * (lane % 4) + e >= limit) s[i][n][2 * r + e] = -INFINITY;
            }
        }
        // The online softmax of each of the thread's rows (a quad of lanes shares a row); l
        // holds the thread's partial sums, reduced over the quad once at the end. The running
        // max m moves only when some row of the warp sees a score past it by more than
        // kRescaleSlack (2^8 in the exponent): otherwise the tile's probabilities are taken
        // against the stale max (at most 2^8, exact in float32 and in P's half type) and O and
        // l skip their rescale — the quotient O / l is the same. eager_rescale moves it every
        // tile (the default until NBX_FLASH_MMA_RESCALE=lazy is seen correct on a GPU).
        float mx[RowTiles][2];
        bool grow = eager_rescale;
#pragma unroll
        for (int i = 0; i < RowTiles; ++i)
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            float x = -INFINITY;
#pragma unroll
            for (int n = 0; n < kKeys / 8; ++n)
              x = fmaxf(x, fmaxf(s[i][n][2 * r], s[i][n][2 * r + 1]));
            x = fmaxf(x, warp_shuffle_xor(x, 1));
            x = fmaxf(x, warp_shuffle_xor(x, 2));
            mx[i][r] = x * scale_log2;
            grow = grow || mx[i][r] > m[i][r] + kRescaleSlack;
          }
        grow = __any_sync(0xffffffffu, grow);
        float alpha[RowTiles][2];
#pragma unroll
        for (int i = 0; i < RowTiles; ++i)
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            const float m_new = grow ? fmaxf(m[i][r], mx[i][r]) : m[i][r];
            const float m_use = m_new == -INFINITY ? 0.f : m_new;
            alpha[i][r] = grow ? exp2_approx(m[i][r] - m_use) : 1.f;
            m[i][r] = m_new;
            float sum = 0.f;
#pragma unroll
            for (int n = 0; n < kKeys / 8; ++n)
#pragma unroll
              for (int e = 0; e < 2; ++e) {
                const float pe = exp2_approx(s[i][n][2 * r + e] * scale_log2 - m_use);
                s[i][n][2 * r + e] = pe;
                sum += pe;
              }
            l[i][r] = l[i][r] * alpha[i][r] + sum;
          }
        if (grow) {
#pragma unroll
          for (int i = 0; i < RowTiles; ++i)
#pragma unroll
            for (int n = 0; n < Dp / 8; ++n) {
              o[i][n][0] *= alpha[i][0], o[i][n][1] *= alpha[i][0];
              o[i][n][2] *= alpha[i][1], o[i][n][3] *= alpha[i][1];
            }
        }
        // O += P V: the C fragments of key tiles 2 kk and 2 kk + 1 are the A fragment of key
        // step kk. V fragment (.trans): matrices 0, 1 = keys kk*16 + 0..7 / 8..15 at dims
        // dd*16 + 0..7 (b0, b1 of dim tile 2 dd), matrices 2, 3 = dims dd*16 + 8..15.
#pragma unroll
        for (int kk = 0; kk < kKeys / 16; ++kk) {
          unsigned a[RowTiles][4];
#pragma unroll
          for (int i = 0; i < RowTiles; ++i) {
            a[i][0] = pack2<T>(s[i][2 * kk][0], s[i][2 * kk][1]);
            a[i][1] = pack2<T>(s[i][2 * kk][2], s[i][2 * kk][3]);
            a[i][2] = pack2<T>(s[i][2 * kk + 1][0], s[i][2 * kk + 1][1]);
            a[i][3] = pack2<T>(s[i][2 * kk + 1][2], s[i][2 * kk + 1][3]);
          }
#pragma unroll
          for (int dd = 0; dd < Dp / 16; ++dd) {
            unsigned bv[4];
            load_matrix_x4_trans(bv, sv_t + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * kStride +
                                         dd * 16 + (lane / 16) * 8);
#pragma unroll
            for (int i = 0; i < RowTiles; ++i) {
              mma<T>(o[i][2 * dd], a[i], bv[0], bv[1]);
              mma<T>(o[i][2 * dd + 1], a[i], bv[2], bv[3]);
            }
          }
        }
      }

      // out = O / l (zeros for a row no key reached), rounded once; pairs of columns go as
      // one 4-byte store where the output's rows are contiguous and aligned.
#pragma unroll
      for (int i = 0; i < RowTiles; ++i)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          float sum = l[i][r];
          sum += warp_shuffle_xor(sum, 1);
          sum += warp_shuffle_xor(sum, 2);
          const i64 row = warp_row + i * 16 + r * 8 + lane / 4;
          if (row >= p.q_len) continue;
          const float inv = sum > 0.f ? 1.f / sum : 0.f;
          T* const dst = out + row_base(p.out_offset, p.out_strides, b, h, row);
          const bool pairs =
              p.out_strides[3] == 1 && reinterpret_cast<std::uintptr_t>(dst) % 4 == 0;
#pragma unroll
          for (int n = 0; n < Dp / 8; ++n) {
            const int d = n * 8 + 2 * (lane % 4);
            if (d + 1 < p.value_dim && pairs) {
              *reinterpret_cast<unsigned*>(dst + d) =
                  pack2<T>(o[i][n][2 * r] * inv, o[i][n][2 * r + 1] * inv);
            } else if (d < p.value_dim) {
              dst[d * p.out_strides[3]] = from_f32<T>(o[i][n][2 * r] * inv);
              if (d + 1 < p.value_dim)
                dst[(d + 1) * p.out_strides[3]] = from_f32<T>(o[i][n][2 * r + 1] * inv);
            }
          }
        }
      __syncthreads();  // the next tile's copies overwrite Q and the stages
    }
  }
#endif
}

// NBX_FLASH_MMA_RESCALE=lazy rescales O only when a row's max grows past kRescaleSlack; the
// default (eager, the form measured correct on an H100) rescales it at every key tile, until
// the lazy form's checks on a GPU have run. Read once per process.
bool eager_rescale_requested() {
  static const bool eager = [] {
    const char* s = std::getenv("NBX_FLASH_MMA_RESCALE");
    return s == nullptr || std::string_view(s) != "lazy";
  }();
  return eager;
}

template <typename T, int Dp, int RowTiles, int Stages>
Error launch_tile(const abi::AttentionParams& p, const GpuLaunch& l) {
  constexpr int kRows = 4 * 16 * RowTiles;
  const int shared = (kRows + 2 * Stages * kKeys) * (Dp + 8) * int(sizeof(T));
  auto* kernel = &flash_mma_kernel<T, Dp, RowTiles, Stages>;
  if (const Error e = allow_dynamic_shared(kernel, shared); e != kSuccess) return e;
  const i64 heads = p.batch * p.q_heads, tiles = (p.q_len + kRows - 1) / kRows;
  const dim3 grid(unsigned(heads < (i64(1) << 30) ? heads : i64(1) << 30),
                  unsigned(tiles < 65535 ? tiles : 65535));
  kernel<<<grid, 128, shared, static_cast<Stream>(l.stream)>>>(
      p, static_cast<T*>(l.buffers[0].address), static_cast<const T*>(l.buffers[1].address),
      static_cast<const T*>(l.buffers[2].address), static_cast<const T*>(l.buffers[3].address),
      eager_rescale_requested());
  return last_launch_error();
}

// The plan's tile (core/ops/attention_path.cpp sizes it for the device's opt-in shared
// memory): block_rows 128 or 64 (64 above head dim 128), key_stages 2 or 1.
template <typename T, int Dp>
Error launch_dim(const abi::AttentionParams& p, const GpuLaunch& l) {
  const bool two = p.key_stages == 2;
  if constexpr (Dp == 256) {
    return two ? launch_tile<T, Dp, 1, 2>(p, l) : launch_tile<T, Dp, 1, 1>(p, l);
  } else {
    if (p.block_rows == 128)
      return two ? launch_tile<T, Dp, 2, 2>(p, l) : launch_tile<T, Dp, 2, 1>(p, l);
    return two ? launch_tile<T, Dp, 1, 2>(p, l) : launch_tile<T, Dp, 1, 1>(p, l);
  }
}

template <typename T>
Error launch_dtype(const abi::AttentionParams& p, const GpuLaunch& l) {
  if (p.head_dim <= 64) return launch_dim<T, 64>(p, l);
  if (p.head_dim <= 96) return launch_dim<T, 96>(p, l);
  if (p.head_dim <= 128) return launch_dim<T, 128>(p, l);
  return launch_dim<T, 256>(p, l);
}

}  // namespace

Error launch_flash_mma(const abi::AttentionParams& p, const GpuLaunch& l) {
  return p.dtype == kBFloat16 ? launch_dtype<bfloat16_t>(p, l) : launch_dtype<half_t>(p, l);
}

}  // namespace nbx::gpu::attention

#endif  // !NBX_GPU_HIP
