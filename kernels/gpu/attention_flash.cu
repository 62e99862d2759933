// The attention family's flash variant for CUDA and HIP: the tiled online-softmax schedule
// with FMA in float32, for every GPU (HIP's path, float32 inputs, and NBX_ATTENTION=flash on
// NVIDIA, which checks on the H200 the code AMD devices run).
//
// A block of four warps takes block_rows query rows of one (batch, head), each warp
// block_rows / 4 of them; the rows' q, pre-scaled by scale * log2 e, sit in shared memory in
// float32. The keys go by in tiles of block_keys: K (rows padded by one float, so lanes reading
// a column of different keys hit different banks) and V in float32 shared memory. Lane j
// scores key j of the tile for each of the warp's rows; the tile's max and sum are warp
// reductions; each lane then accumulates value dims lane, lane + W, … of every row, taking
// the keys' weights by shuffle. Shared memory: 4 * (block_rows * head_dim + block_keys *
// (head_dim + 1) + block_keys * value_dim) bytes, the plan's formula (attention_path.cpp).
#include "kernels/gpu/attention_common.cuh"

namespace nbx::gpu::attention {
namespace {

inline constexpr int kWarps = 4;

// Rows [row0, row0 + rows) of an operand, as float32 times `factor`, into shared rows of
// `stride` floats; zeros past row_count.
template <typename T>
NBX_GPU_INLINE void stage_rows(float* dst, int stride, const T* src, i64 offset,
                               const std::int64_t* strides, i64 b, i64 h, i64 row0, int rows,
                               i64 row_count, i64 dim, float factor) {
  for (int e = threadIdx.x; e < rows * int(dim); e += kWarps * kWarpSize) {
    const int r = e / int(dim), d = e % int(dim);
    const i64 row = row0 + r;
    dst[r * stride + d] =
        row < row_count
            ? to_f32(src[row_base(offset, strides, b, h, row) + d * strides[3]]) * factor
            : 0.f;
  }
}

// Rows a warp holds (block_rows / 4) and value dims a lane accumulates (ceil(value_dim / W)).
template <typename T, int RowsPerWarp, int DimsPerLane>
__global__ void __launch_bounds__(kWarps* kWarpSize)
    flash_kernel(const NBX_GPU_GRID_CONSTANT abi::AttentionParams p, T* out, const T* q, const T* k,
                 const T* v) {
  extern __shared__ float shared_floats[];
  const int rows = kWarps * RowsPerWarp, keys = p.block_keys;
  const int dim = int(p.head_dim), vdim = int(p.value_dim), kstride = dim + 1;
  float* const sq = shared_floats;
  float* const sk = sq + rows * dim;
  float* const sv = sk + keys * kstride;
  const int warp = threadIdx.x / kWarpSize, lane = lane_id();
  const float scale_log2 = float(p.scale) * kLog2e;
  const i64 tiles = (p.q_len + rows - 1) / rows, group = p.q_heads / p.kv_heads;

  for (i64 bh = blockIdx.x; bh < p.batch * p.q_heads; bh += gridDim.x) {
    const i64 b = bh / p.q_heads, h = bh % p.q_heads, hk = h / group;
    for (i64 t_index = blockIdx.y; t_index < tiles; t_index += gridDim.y) {
      const i64 r0 = (tiles - 1 - t_index) * rows;
      const i64 last = (r0 + rows < p.q_len ? r0 + rows : p.q_len) - 1;
      const i64 seen_by_tile = keys_seen(p, last);
      stage_rows(sq, dim, q, p.q_offset, p.q_strides, b, h, r0, rows, p.q_len, p.head_dim,
                 scale_log2);
      float o[RowsPerWarp][DimsPerLane] = {};
      float m[RowsPerWarp], l[RowsPerWarp];
      i64 seen[RowsPerWarp];
#pragma unroll
      for (int r = 0; r < RowsPerWarp; ++r) {
        m[r] = -INFINITY, l[r] = 0.f;
        seen[r] = keys_seen(p, r0 + warp * RowsPerWarp + r);
      }
      for (i64 k0 = 0; k0 < seen_by_tile; k0 += keys) {
        __syncthreads();  // the previous tile's K and V are no longer read
        stage_rows(sk, kstride, k, p.k_offset, p.k_strides, b, hk, k0, keys, p.kv_len, p.head_dim,
                   1.f);
        stage_rows(sv, vdim, v, p.v_offset, p.v_strides, b, hk, k0, keys, p.kv_len, p.value_dim,
                   1.f);
        __syncthreads();
#pragma unroll
        for (int r = 0; r < RowsPerWarp; ++r) {
          const float* qr = sq + (warp * RowsPerWarp + r) * dim;
          // Lane j's key of the tile (lanes past the tile score -inf).
          float s = -INFINITY;
          if (lane < keys && k0 + lane < seen[r]) {
            const float* kr = sk + lane * kstride;
            float acc = 0.f;
            for (int d = 0; d < dim; ++d) acc += qr[d] * kr[d];
            s = acc;
          }
          const float m_new = fmaxf(m[r], warp_reduce_max(s));
          const float m_use = m_new == -INFINITY ? 0.f : m_new;
          const float alpha = exp2f(m[r] - m_use);
          const float pj = exp2f(s - m_use);
          m[r] = m_new;
          l[r] = l[r] * alpha + warp_reduce_sum(pj);
#pragma unroll
          for (int i = 0; i < DimsPerLane; ++i) o[r][i] *= alpha;
          const int n = keys < kWarpSize ? keys : kWarpSize;
          for (int j = 0; j < n; ++j) {
            const float w = warp_shuffle(pj, j);
#pragma unroll
            for (int i = 0; i < DimsPerLane; ++i) {
              const int d = lane + i * kWarpSize;
              if (d < vdim) o[r][i] += w * sv[j * vdim + d];
            }
          }
        }
      }
#pragma unroll
      for (int r = 0; r < RowsPerWarp; ++r) {
        const i64 row = r0 + warp * RowsPerWarp + r;
        if (row >= p.q_len) continue;
        const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
        T* const dst = out + row_base(p.out_offset, p.out_strides, b, h, row);
#pragma unroll
        for (int i = 0; i < DimsPerLane; ++i) {
          const int d = lane + i * kWarpSize;
          if (d < vdim) dst[d * p.out_strides[3]] = from_f32<T>(o[r][i] * inv);
        }
      }
      __syncthreads();  // the next row tile overwrites q
    }
  }
}

template <typename T, int RowsPerWarp, int DimsPerLane>
Error launch_rows(const abi::AttentionParams& p, const GpuLaunch& l) {
  const int rows = kWarps * RowsPerWarp;
  const int shared =
      4 * int(rows * p.head_dim + p.block_keys * (p.head_dim + 1) + p.block_keys * p.value_dim);
  auto* kernel = &flash_kernel<T, RowsPerWarp, DimsPerLane>;
  if (const Error e = allow_dynamic_shared(kernel, shared); e != kSuccess) return e;
  const i64 heads = p.batch * p.q_heads, tiles = (p.q_len + rows - 1) / rows;
  const dim3 grid(unsigned(heads < (i64(1) << 30) ? heads : i64(1) << 30),
                  unsigned(tiles < 65535 ? tiles : 65535));
  kernel<<<grid, kWarps * kWarpSize, shared, static_cast<Stream>(l.stream)>>>(
      p, static_cast<T*>(l.buffers[0].address), static_cast<const T*>(l.buffers[1].address),
      static_cast<const T*>(l.buffers[2].address), static_cast<const T*>(l.buffers[3].address));
  return last_launch_error();
}

template <typename T, int RowsPerWarp>
Error launch_dims(const abi::AttentionParams& p, const GpuLaunch& l) {
  const i64 per_lane = (p.value_dim + kWarpSize - 1) / kWarpSize;
  if (per_lane <= 2) return launch_rows<T, RowsPerWarp, 2>(p, l);
  if (per_lane <= 4) return launch_rows<T, RowsPerWarp, 4>(p, l);
  return launch_rows<T, RowsPerWarp, 8>(p, l);
}

template <typename T>
Error launch_dtype(const abi::AttentionParams& p, const GpuLaunch& l) {
  switch (p.block_rows) {  // 8, 16, 32 or 64: the variant's contract
    case 8:
      return launch_dims<T, 2>(p, l);
    case 16:
      return launch_dims<T, 4>(p, l);
    case 32:
      return launch_dims<T, 8>(p, l);
    default:
      return launch_dims<T, 16>(p, l);
  }
}

}  // namespace

Error launch_flash(const abi::AttentionParams& p, const GpuLaunch& l) {
  return with_dtype(p.dtype, [&](auto t) { return launch_dtype<decltype(t)>(p, l); });
}

}  // namespace nbx::gpu::attention
