// The attention family's split_kv variant for CUDA and HIP (decode: a few query rows a kv
// head against a long kv cache). Memory-bound: the work is reading K and V once, so the keys
// are cut into `splits` chunks that spread over the device and every load is 16 bytes wide.
//
// Pass 1: a block per (batch, kv head, chunk, group of up to 8 of that head's query rows).
// Lanes in groups of LG (8, 16 or 32: 8 dims each cover head_dim and value_dim) take one key
// at a time, interleaved across the block's groups; a group's lanes hold their 8 dims of every
// row's q (pre-scaled by scale * log2 e), reduce each dot product by shuffles, keep an online
// softmax per row and accumulate their 8 value dims. The block's groups then meet in shared
// memory (their maxima, then their rescaled sums by shared atomics) and write the chunk's
// partial result to the workspace. Pass 2 weighs the chunks' partials by exp(max - overall
// max) and writes out. Workspace layout: abi::attention_workspace_words.
#include "kernels/gpu/attention_common.cuh"

namespace nbx::gpu::attention {
namespace {

inline constexpr int kThreads = 128;
inline constexpr int kMaxChunkRows = 8;

// 8 elements from `row` at dims d0 .. d0 + 7 as float32 (zeros past dim): one 16-byte load
// (two for float32) where the rows are contiguous and aligned (`wide`).
template <typename T>
NBX_GPU_INLINE void load8(float (&x)[8], const T* row, int d0, int dim, i64 dim_stride, bool wide) {
  if (wide && d0 + 8 <= dim) {
    if constexpr (sizeof(T) == 2) {
      const uint4 u = *reinterpret_cast<const uint4*>(row + d0);
      const T* e = reinterpret_cast<const T*>(&u);
#pragma unroll
      for (int i = 0; i < 8; ++i) x[i] = to_f32(e[i]);
    } else {
      const float4 a = *reinterpret_cast<const float4*>(row + d0);
      const float4 c = *reinterpret_cast<const float4*>(row + d0 + 4);
      x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = c.x, x[5] = c.y, x[6] = c.z;
      x[7] = c.w;
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) x[i] = d0 + i < dim ? to_f32(row[(d0 + i) * dim_stride]) : 0.f;
}

template <int LG>
NBX_GPU_INLINE float group_sum(float v) {  // over the LG lanes of an aligned group
#pragma unroll
  for (int m = LG / 2; m > 0; m /= 2) v += warp_shuffle_xor(v, m);
  return v;
}

template <typename T, int LG, int Rows>
__global__ void __launch_bounds__(kThreads)
    split_kernel(const NBX_GPU_GRID_CONSTANT abi::AttentionParams p, const T* q, const T* k,
                 const T* v, float* work, bool wide_q, bool wide_kv) {
  constexpr int kGroups = kThreads / LG;
  __shared__ float s_max[kGroups][Rows];
  __shared__ float s_final_max[Rows], s_sum[Rows];
  __shared__ float s_out[Rows][abi::kAttentionMaxDim];
  const int group = threadIdx.x / LG, sub = threadIdx.x % LG, d0 = sub * 8;
  const int dim = int(p.head_dim), vdim = int(p.value_dim);
  const i64 g_size = p.q_heads / p.kv_heads, all_rows = g_size * p.q_len;
  const float scale_log2 = float(p.scale) * kLog2e;
  const i64 split = blockIdx.y;
  const i64 key_begin = split * p.split_len;
  const i64 key_end = key_begin + p.split_len < p.kv_len ? key_begin + p.split_len : p.kv_len;

  for (i64 bk = blockIdx.x; bk < p.batch * p.kv_heads; bk += gridDim.x) {
    const i64 b = bk / p.kv_heads, hk = bk % p.kv_heads;
    const i64 first = i64(blockIdx.z) * Rows;  // the chunk's first row of this kv head
    // Row r of the chunk: query head hk * g_size + (first + r) / q_len, row (first + r) % q_len.
    float qr[Rows][8], o[Rows][8], m[Rows], l[Rows];
    i64 seen[Rows];
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const i64 rr = first + r;
      const bool live = rr < all_rows;
      const i64 h = hk * g_size + (live ? rr / p.q_len : 0), i = live ? rr % p.q_len : 0;
      load8(qr[r], q + row_base(p.q_offset, p.q_strides, b, h, i), d0, dim, p.q_strides[3], wide_q);
#pragma unroll
      for (int e = 0; e < 8; ++e) qr[r][e] *= scale_log2, o[r][e] = 0.f;
      m[r] = -INFINITY, l[r] = 0.f;
      seen[r] = live ? keys_seen(p, i) : 0;
    }
    // Every lane of a warp runs the same rounds (a warp holds several groups, and the
    // groups' shuffles take the whole warp): a group past the chunk's end loads nothing and
    // scores nothing that round.
    for (i64 base = key_begin; base < key_end; base += kGroups) {
      const i64 j = base + group;
      const bool live = j < key_end;
      float kx[8] = {}, vx[8] = {};
      if (live) {
        load8(kx, k + row_base(p.k_offset, p.k_strides, b, hk, j), d0, dim, p.k_strides[3],
              wide_kv);
        load8(vx, v + row_base(p.v_offset, p.v_strides, b, hk, j), d0, vdim, p.v_strides[3],
              wide_kv);
      }
#pragma unroll
      for (int r = 0; r < Rows; ++r) {
        float s = 0.f;
#pragma unroll
        for (int e = 0; e < 8; ++e) s += qr[r][e] * kx[e];
        s = group_sum<LG>(s);
        if (!live || j >= seen[r]) continue;  // uniform across the group
        const float m_new = fmaxf(m[r], s);
        const float alpha = exp2f(m[r] - m_new), pj = exp2f(s - m_new);
        m[r] = m_new;
        l[r] = l[r] * alpha + pj;
#pragma unroll
        for (int e = 0; e < 8; ++e) o[r][e] = o[r][e] * alpha + pj * vx[e];
      }
    }
    // The block's groups meet: the rows' overall max, then the rescaled sums.
    if (sub == 0)
      for (int r = 0; r < Rows; ++r) s_max[group][r] = m[r];
    for (int e = threadIdx.x; e < Rows * abi::kAttentionMaxDim; e += kThreads)
      s_out[e / abi::kAttentionMaxDim][e % abi::kAttentionMaxDim] = 0.f;
    if (threadIdx.x < Rows) s_sum[threadIdx.x] = 0.f;
    __syncthreads();
    if (threadIdx.x < Rows) {
      float mx = -INFINITY;
      for (int g = 0; g < kGroups; ++g) mx = fmaxf(mx, s_max[g][threadIdx.x]);
      s_final_max[threadIdx.x] = mx;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const float mx = s_final_max[r];
      const float w = mx == -INFINITY ? 0.f : exp2f(m[r] - mx);
      if (sub == 0) atomicAdd(&s_sum[r], l[r] * w);
#pragma unroll
      for (int e = 0; e < 8; ++e)
        if (d0 + e < vdim) atomicAdd(&s_out[r][d0 + e], o[r][e] * w);
    }
    __syncthreads();
    for (int e = threadIdx.x; e < Rows * (vdim + 2); e += kThreads) {
      const int r = e / (vdim + 2), c = e % (vdim + 2);
      const i64 rr = first + r;
      if (rr >= all_rows) continue;
      const i64 h = hk * g_size + rr / p.q_len, i = rr % p.q_len;
      const i64 at = (((split * p.batch + b) * p.q_heads + h) * p.q_len + i) * (p.value_dim + 2);
      // The max in natural-log units (the layout's; this kernel scores in base 2).
      work[at + c] = c < vdim ? s_out[r][c] : c == vdim ? s_final_max[r] * kLn2 : s_sum[r];
    }
    __syncthreads();  // the shared sums are reset for the next (batch, kv head)
  }
}

// Pass 2: a block per query row, a thread per value dim.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(const NBX_GPU_GRID_CONSTANT abi::AttentionParams p, const float* work, T* out) {
  const i64 rows = p.batch * p.q_heads * p.q_len, stride = p.value_dim + 2;
  const i64 per_split = rows * stride;
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* w = work + row * stride;
    float mx = -INFINITY;
    for (int s = 0; s < p.splits; ++s) mx = fmaxf(mx, w[s * per_split + p.value_dim]);
    float denom = 0.f;
    for (int s = 0; s < p.splits; ++s) {
      const float* ws = w + s * per_split;
      denom += mx == -INFINITY ? 0.f : expf(ws[p.value_dim] - mx) * ws[p.value_dim + 1];
    }
    const float inv = denom > 0.f ? 1.f / denom : 0.f;
    const i64 i = row % p.q_len, h = (row / p.q_len) % p.q_heads, b = row / (p.q_len * p.q_heads);
    T* const dst = out + row_base(p.out_offset, p.out_strides, b, h, i);
    for (int e = threadIdx.x; e < p.value_dim; e += kThreads) {
      float acc = 0.f;
      for (int s = 0; s < p.splits; ++s) {
        const float* ws = w + s * per_split;
        if (mx != -INFINITY) acc += expf(ws[p.value_dim] - mx) * ws[e];
      }
      dst[e * p.out_strides[3]] = from_f32<T>(acc * inv);
    }
  }
}

template <typename T, int LG, int Rows>
Error launch_rows(const abi::AttentionParams& p, const GpuLaunch& l) {
  const Stream st = static_cast<Stream>(l.stream);
  const i64 heads = p.batch * p.kv_heads;
  const i64 chunks = (p.q_heads / p.kv_heads * p.q_len + Rows - 1) / Rows;
  const bool wide_q = abi::attention_rows_of_16_bytes(p.q_offset, p.q_strides, sizeof(T));
  const bool wide_kv = abi::attention_rows_of_16_bytes(p.k_offset, p.k_strides, sizeof(T)) &&
                       abi::attention_rows_of_16_bytes(p.v_offset, p.v_strides, sizeof(T));
  auto* work = static_cast<float*>(l.buffers[4].address);
  const dim3 grid(unsigned(heads < (i64(1) << 30) ? heads : i64(1) << 30), unsigned(p.splits),
                  unsigned(chunks));
  split_kernel<T, LG, Rows><<<grid, kThreads, 0, st>>>(
      p, static_cast<const T*>(l.buffers[1].address), static_cast<const T*>(l.buffers[2].address),
      static_cast<const T*>(l.buffers[3].address), work, wide_q, wide_kv);
  if (const Error e = last_launch_error(); e != kSuccess) return e;
  const i64 rows = p.batch * p.q_heads * p.q_len;
  combine_kernel<T><<<unsigned(rows < (i64(1) << 30) ? rows : i64(1) << 30), kThreads, 0, st>>>(
      p, work, static_cast<T*>(l.buffers[0].address));
  return last_launch_error();
}

template <typename T, int LG>
Error launch_lanes(const abi::AttentionParams& p, const GpuLaunch& l) {
  const i64 rows = p.q_heads / p.kv_heads * p.q_len;  // at most 16 (the variant's contract)
  if (rows <= 1) return launch_rows<T, LG, 1>(p, l);
  if (rows <= 2) return launch_rows<T, LG, 2>(p, l);
  if (rows <= 4) return launch_rows<T, LG, 4>(p, l);
  return launch_rows<T, LG, kMaxChunkRows>(p, l);
}

template <typename T>
Error launch_dtype(const abi::AttentionParams& p, const GpuLaunch& l) {
  const i64 widest = p.head_dim > p.value_dim ? p.head_dim : p.value_dim;
  if (widest <= 64) return launch_lanes<T, 8>(p, l);
  if (widest <= 128) return launch_lanes<T, 16>(p, l);
  return launch_lanes<T, 32>(p, l);
}

}  // namespace

Error launch_split_kv(const abi::AttentionParams& p, const GpuLaunch& l) {
  return with_dtype(p.dtype, [&](auto t) { return launch_dtype<decltype(t)>(p, l); });
}

}  // namespace nbx::gpu::attention
