// The "norm" family's contiguous-row kernel for layer_norm and rms_norm (opt-in:
// NBX_GPU_ROWS=fast). The general kernel (norm_kernels.cu) pays a run-time dtype switch and
// a scalar load per element, reads each row three times from global memory and meets its
// lanes in a shared-memory tree with a barrier per level: on the H200 it normalized a
// [32768, 4096] tensor at 792 (float32) and 426 (bfloat16) GB/s for layer_norm, against
// PyTorch 2.11's 2890 and 2640. Here:
//   - the storage dtype and the op are template parameters, dispatched once at launch;
//   - a row is read ONCE into registers as 16-byte vectors, all of a thread's vectors in
//     flight together (kVpt per thread, a template parameter: 8 float4 per lane for a 4096
//     float32 row over 128 lanes, 4 × 8 bfloat16 over 128 lanes), then the mean, the squared
//     deviations and the outputs are computed from those registers and written as 16-byte
//     vectors: one read and one write of global memory per element;
//   - the lanes of a row (a power of two, 1 to 1024) meet through butterfly shuffles, plus
//     ONE barrier per statistic when a row spans several warps (each statistic has its own
//     shared buffer, so no second barrier is needed); a thread serves one row;
//   - rows that do not fit the registers (over kMaxVpt vectors a lane at 1024 lanes) or whose
//     starts are not 16-byte aligned (row_len not a multiple of the vector) take the looped
//     kernel: scalar head and tail, 16-byte vectors between, the row read once per pass.
// Numerics are the host's (backends/host/host_norm.cpp): statistics in float32 for 16-bit
// types and float32 (float64 for float64), biased variance, two passes — the squared
// deviations are taken from the finished mean, and their own sum Σd corrects the mean's
// rounding (var = Σd²/n − (Σd/n)², outputs ((x − mean) − Σd/n)·inv_std), as
// kernels/vulkan/norm.comp and norm_kernels.cu do. In registers a lane's sums are pairwise
// within a vector and at most 8 vectors long; the looped kernel's are compensated (TwoSum).
// Every lane ends with bitwise the same statistics, combined in a fixed order: results are
// deterministic.
#include <cstdint>

#include "kernels/gpu/compensated_sum.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/elementwise_values.cuh"
#include "kernels/gpu/norm_rows_fast.hpp"

namespace nbx::gpu {
namespace {

constexpr int kMaxGroup = 1024;  // lanes per row at most: one block
constexpr int kMinBlock = 256;   // threads per block when rows take fewer lanes
// 16-byte vectors a lane holds in registers: at most 32 registers of row values in the
// accumulate type (32 float32, 32 float16/bfloat16 once widened, 8 float64), the rest of the
// 64 that a 1024-thread block allows for everything else (no spills with nvcc 12 for sm_90).
template <typename T>
constexpr int kMaxVpt = sizeof(T) == 4 ? 8 : 4;
constexpr int kMaxWarps = kMaxGroup / kWarpSize;
constexpr int kLoopUnroll = 4;  // vectors in flight per lane in the looped kernel
constexpr int kCoalesce = 32;   // lanes a short row gets before more vectors per lane
// Lanes per row in the looped kernel: at most half a 1024-thread block, so that up to 128
// registers are allowed (the unrolled vectors with their weights and biases spill in 64).
constexpr int kMaxLoopedGroup = 512;

template <typename T>
struct Accumulate {
  using type = float;
};
template <>
struct Accumulate<double> {
  using type = double;
};

template <typename T>
struct alignas(16) Vec {
  T x[16 / sizeof(T)];
};

struct RowArgs {
  void* out;
  const void* in;
  const void* weight;  // null when absent
  const void* bias;    // null when absent
  i64 first_row;       // the rows of this launch: [first_row, rows)
  i64 rows;
  i64 row_len;
  int group;  // lanes per row: a power of two, at most kMaxGroup
  double eps;
};

NBX_GPU_INLINE float inv_sqrt(float x) {
  return 1.0f / sqrtf(x);
}
NBX_GPU_INLINE double inv_sqrt(double x) {
  return 1.0 / sqrt(x);
}

// s[0] + … + s[N-1] in a pairwise tree (N a power of two); overwrites s.
template <int N, typename C>
NBX_GPU_INLINE C pairwise(C (&s)[N]) {
#pragma unroll
  for (int w = N / 2; w > 0; w /= 2)
#pragma unroll
    for (int j = 0; j < w; ++j) s[j] += s[j + w];
  return s[0];
}

// Sums each v[i] over the `group` lanes of a row. Every thread of the block must call it
// (a barrier when a row spans several warps), the same number of times. Every lane of a
// row ends with bitwise the same sums: a butterfly step adds the same two values in both
// lanes of a pair (a + b == b + a), and the warps' sums are added in one fixed order.
// Each call of a kernel gets its own `exchange` buffer (a warp may write the next call's
// sums while a slower one still reads this call's), so one barrier per call suffices.
template <int N, typename C>
NBX_GPU_INLINE void group_sum(C (&v)[N], int group, C (*exchange)[kMaxWarps]) {
  const int width = group < kWarpSize ? group : kWarpSize;
  for (int m = width / 2; m > 0; m /= 2)
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] += warp_shuffle_xor(v[i], m);
  if (group > kWarpSize) {  // uniform over the grid
    const int warp = int(threadIdx.x) / kWarpSize, per_row = group / kWarpSize;
    if (int(threadIdx.x) % kWarpSize == 0)
#pragma unroll
      for (int i = 0; i < N; ++i) exchange[i][warp] = v[i];
    __syncthreads();
    const int first = warp - warp % per_row;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      C t = exchange[i][first];
      for (int w = 1; w < per_row; ++w) t += exchange[i][first + w];
      v[i] = t;
    }
  }
}

// The statistics of a row from its lanes' sums: (Σx or Σx², then Σd and Σd² for layer_norm).
template <typename C>
struct Stats {
  C mean = C(0), delta = C(0), inv_std = C(1);
};

template <bool kLayer, typename C>
NBX_GPU_INLINE C normalize(const Stats<C>& s, C x) {
  if constexpr (kLayer) {
    return ((x - s.mean) - s.delta) * s.inv_std;
  } else {
    return x * s.inv_std;
  }
}

template <typename C>
NBX_GPU_INLINE C variance(C sum_d, C sum_d2, C n, C& delta) {
  delta = sum_d / n;
  C var = sum_d2 / n - delta * delta;
  if (var < C(0)) var = C(0);  // not max(): a NaN variance must stay NaN
  return var;
}

template <bool kLayer, typename T, typename C>
NBX_GPU_INLINE T finish(const Stats<C>& s, C x, const T* weight, const T* bias, i64 k) {
  C y = normalize<kLayer>(s, x);
  if (weight) y *= to_compute<C>(weight[k]);
  if (bias) y += to_compute<C>(bias[k]);
  return from_compute<T>(y);
}

// Rows whose starts are 16-byte aligned (row_len a multiple of the vector) and that fit
// group × kVpt vectors: lane g of a row holds its vectors g, g + group, … in registers.
// A thread serves one row (the host launches more blocks, or again, for more rows), so
// every thread of a block reaches the barriers in group_sum.
template <typename T, int kVpt, bool kLayer>
__global__ void __launch_bounds__(kMaxGroup) norm_rows_registers(const RowArgs a) {
  using C = typename Accumulate<T>::type;
  constexpr int kVec = int(16 / sizeof(T));
  __shared__ C exchange[2][2][kMaxWarps];
  const int group = a.group;
  const int g = int(threadIdx.x) & (group - 1);
  const i64 row =
      a.first_row + i64(blockIdx.x) * (int(blockDim.x) / group) + int(threadIdx.x) / group;
  const bool active = row < a.rows;
  const int vectors = int(a.row_len / kVec);
  const int held_vectors = active ? vectors : 0;  // an inactive row reads nothing
  const C n = C(a.row_len), eps = C(a.eps);
  const Vec<T>* in = static_cast<const Vec<T>*>(a.in);
  Vec<T>* out = static_cast<Vec<T>*>(a.out);
  const Vec<T>* weight = static_cast<const Vec<T>*>(a.weight);
  const Vec<T>* bias = static_cast<const Vec<T>*>(a.bias);
  const i64 base = (active ? row : 0) * vectors;
  // All of this lane's loads first: they are in flight together.
  Vec<T> x[kVpt];
  bool held[kVpt];
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    held[j] = g + j * group < held_vectors;
    if (held[j]) x[j] = in[base + g + j * group];
  }
  C sum[1] = {C(0)};  // Σx (layer_norm) or Σx² (rms_norm)
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    if (!held[j]) continue;
    C e[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const C v = to_compute<C>(x[j].x[i]);
      e[i] = kLayer ? v : v * v;
    }
    sum[0] += pairwise(e);
  }
  group_sum(sum, group, exchange[0]);
  Stats<C> s;
  if constexpr (kLayer) {
    s.mean = sum[0] / n;
    C dev[2] = {C(0), C(0)};  // Σd, Σd² with d = x − mean
#pragma unroll
    for (int j = 0; j < kVpt; ++j) {
      if (!held[j]) continue;
      C d[kVec], d2[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        d[i] = to_compute<C>(x[j].x[i]) - s.mean;
        d2[i] = d[i] * d[i];
      }
      dev[0] += pairwise(d);
      dev[1] += pairwise(d2);
    }
    group_sum(dev, group, exchange[1]);
    s.inv_std = inv_sqrt(variance(dev[0], dev[1], n, s.delta) + eps);
  } else {
    s.inv_std = inv_sqrt(sum[0] / n + eps);
  }
  if (!active) return;  // after the barriers: every thread reached them
#pragma unroll
  for (int j = 0; j < kVpt; ++j) {
    if (!held[j]) continue;
    const int k = g + j * group;  // the vector's index in the row (and in weight, bias)
    Vec<T> w, b, y;
    if (weight) w = weight[k];
    if (bias) b = bias[k];
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      C v = normalize<kLayer>(s, to_compute<C>(x[j].x[i]));
      if (weight) v *= to_compute<C>(w.x[i]);
      if (bias) v += to_compute<C>(b.x[i]);
      y.x[i] = from_compute<T>(v);
    }
    out[base + k] = y;
  }
}

// Visits the elements of row[0, len) that lane g of `group` owns: scalar(x, k) for those
// before the first 16-byte boundary (`head` of them) and after the last whole vector, and
// vector(x, v) for the whole vectors g, g + group, … (kLoopUnroll loaded at a time).
template <typename T, typename Scalar, typename Vector>
NBX_GPU_INLINE void walk_row(const T* row, i64 head, i64 vectors, i64 len, int g, int group,
                             Scalar&& scalar, Vector&& vector) {
  constexpr int kVec = int(16 / sizeof(T));
  for (i64 k = g; k < head; k += group) scalar(row[k], k);
  const Vec<T>* vec = reinterpret_cast<const Vec<T>*>(row + head);
  i64 v = g;
  for (; v + i64(kLoopUnroll - 1) * group < vectors; v += i64(kLoopUnroll) * group) {
    Vec<T> x[kLoopUnroll];
#pragma unroll
    for (int u = 0; u < kLoopUnroll; ++u) x[u] = vec[v + i64(u) * group];
#pragma unroll
    for (int u = 0; u < kLoopUnroll; ++u) vector(x[u], v + i64(u) * group);
  }
  for (; v < vectors; v += group) vector(vec[v], v);
  for (i64 k = head + vectors * kVec + g; k < len; k += group) scalar(row[k], k);
}

// Any row: long ones (more than the registers hold) and rows whose starts are not 16-byte
// aligned. The row is read once per pass (twice for rms_norm, three times for layer_norm);
// a lane's sums are compensated, as in the general kernel.
template <typename T, bool kLayer>
__global__ void __launch_bounds__(kMaxLoopedGroup) norm_rows_looped(const RowArgs a) {
  using C = typename Accumulate<T>::type;
  constexpr int kVec = int(16 / sizeof(T));
  __shared__ C exchange[2][2][kMaxWarps];
  const int group = a.group;
  const int g = int(threadIdx.x) & (group - 1);
  const i64 row =
      a.first_row + i64(blockIdx.x) * (int(blockDim.x) / group) + int(threadIdx.x) / group;
  const bool active = row < a.rows;
  const C n = C(a.row_len), eps = C(a.eps);
  const T* weight = static_cast<const T*>(a.weight);
  const T* bias = static_cast<const T*>(a.bias);
  const i64 len = active ? a.row_len : 0;  // an inactive row reads nothing
  const i64 base = (active ? row : 0) * a.row_len;
  const T* src = static_cast<const T*>(a.in) + base;
  T* dst = static_cast<T*>(a.out) + base;
  // The buffers are 16-byte aligned (eligibility), so out's row has in's alignment.
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(src);
  i64 head = i64((16 - address % 16) % 16 / sizeof(T));
  if (head > len) head = len;
  const i64 vectors = (len - head) / kVec;
  // A vector's elements are summed pairwise, then added to the lane's compensated sum.
  C sum[1] = {C(0)}, comp = C(0);
  walk_row(
      src, head, vectors, len, g, group,
      [&](T x, i64) {
        const C v = to_compute<C>(x);
        two_sum_add(sum[0], comp, kLayer ? v : v * v, C(0));
      },
      [&](const Vec<T>& x, i64) {
        C e[kVec];
#pragma unroll
        for (int i = 0; i < kVec; ++i) {
          const C v = to_compute<C>(x.x[i]);
          e[i] = kLayer ? v : v * v;
        }
        two_sum_add(sum[0], comp, pairwise(e), C(0));
      });
  sum[0] = compensated_total(sum[0], comp);
  group_sum(sum, group, exchange[0]);
  Stats<C> s;
  if constexpr (kLayer) {
    s.mean = sum[0] / n;
    C dev[2] = {C(0), C(0)}, dev_comp[2] = {C(0), C(0)};  // Σd, Σd² with d = x − mean
    walk_row(
        src, head, vectors, len, g, group,
        [&](T x, i64) {
          const C d = to_compute<C>(x) - s.mean;
          two_sum_add(dev[0], dev_comp[0], d, C(0));
          two_sum_add(dev[1], dev_comp[1], d * d, C(0));
        },
        [&](const Vec<T>& x, i64) {
          C d[kVec], d2[kVec];
#pragma unroll
          for (int i = 0; i < kVec; ++i) {
            d[i] = to_compute<C>(x.x[i]) - s.mean;
            d2[i] = d[i] * d[i];
          }
          two_sum_add(dev[0], dev_comp[0], pairwise(d), C(0));
          two_sum_add(dev[1], dev_comp[1], pairwise(d2), C(0));
        });
    dev[0] = compensated_total(dev[0], dev_comp[0]);
    dev[1] = compensated_total(dev[1], dev_comp[1]);
    group_sum(dev, group, exchange[1]);
    s.inv_std = inv_sqrt(variance(dev[0], dev[1], n, s.delta) + eps);
  } else {
    s.inv_std = inv_sqrt(sum[0] / n + eps);
  }
  if (!active) return;  // after the barriers: every thread reached them
  // Weight and bias are read as vectors where the row's vectors are also theirs (an
  // aligned row start), element by element otherwise.
  const bool aligned = head == 0;
  const Vec<T>* weight_vec = reinterpret_cast<const Vec<T>*>(weight);
  const Vec<T>* bias_vec = reinterpret_cast<const Vec<T>*>(bias);
  Vec<T>* dst_vec = reinterpret_cast<Vec<T>*>(dst + head);
  walk_row(
      src, head, vectors, len, g, group,
      [&](T x, i64 k) { dst[k] = finish<kLayer>(s, to_compute<C>(x), weight, bias, k); },
      [&](const Vec<T>& x, i64 v) {
        Vec<T> y;
        if (aligned) {
          Vec<T> w, b;
          if (weight) w = weight_vec[v];
          if (bias) b = bias_vec[v];
#pragma unroll
          for (int i = 0; i < kVec; ++i) {
            C r = normalize<kLayer>(s, to_compute<C>(x.x[i]));
            if (weight) r *= to_compute<C>(w.x[i]);
            if (bias) r += to_compute<C>(b.x[i]);
            y.x[i] = from_compute<T>(r);
          }
        } else {
          const i64 k0 = head + v * kVec;
#pragma unroll
          for (int i = 0; i < kVec; ++i)
            y.x[i] = finish<kLayer>(s, to_compute<C>(x.x[i]), weight, bias, k0 + i);
        }
        dst_vec[v] = y;
      });
}

i64 pow2_at_least(i64 x) {
  i64 p = 1;
  while (p < x) p *= 2;
  return p;
}

// How a launch spreads: lanes per row, vectors per lane (0: the looped kernel).
struct Shape {
  int group;
  int vpt;
};

// Registers when the row's vectors fit 1024 lanes × kMaxVpt: the fewest lanes that hold
// the row in at most kMaxVpt vectors each (4096 float32: 128 lanes × 8 float4; 4096
// bfloat16: 128 × 4), doubled (halving the vectors per lane) while fewer than kCoalesce
// lanes share a row or the rows are too few to give every SM 2048 threads. The looped
// kernel: about kLoopUnroll vectors per lane, up to kMaxLoopedGroup lanes, doubled likewise.
// Short rows get up to kCoalesce lanes, one vector each where they fit: adjacent lanes then
// read adjacent vectors (whole sectors), where a lane per row holding kVpt vectors would
// read 16 bytes of every 16·kVpt with each load.
Shape shape_for(const abi::NormParams& p, int vec, const ElementwiseOptions& options) {
  const i64 mps = options.multiprocessors > 0 ? options.multiprocessors : 1;
  const i64 target = mps * 2048;
  const i64 max_vpt = vec == 4 ? kMaxVpt<float> : kMaxVpt<half_t>;
  // No more lanes per row than the launch's row_tile (the wrapper's clamp to
  // reduce.tile_max and the block size); a row it leaves too few lanes to hold in
  // registers takes the looped kernel, which works with any number of lanes.
  const i64 tile = p.row_tile > 0 ? p.row_tile : 1;
  if (p.row_len % vec == 0 && p.row_len / vec <= i64(kMaxGroup) * max_vpt &&
      pow2_at_least((p.row_len / vec + max_vpt - 1) / max_vpt) <= tile) {
    const i64 vectors = p.row_len / vec;
    i64 group = pow2_at_least((vectors + max_vpt - 1) / max_vpt);
    i64 vpt = pow2_at_least((vectors + group - 1) / group);
    while (vpt > 1 && group < kMaxGroup && group * 2 <= tile &&
           (group < kCoalesce || p.rows * group < target)) {
      group *= 2;
      vpt = pow2_at_least((vectors + group - 1) / group);
    }
    return {int(group), int(vpt)};
  }
  i64 group = 1;
  while (group < kMaxLoopedGroup && group * 2 <= tile && group * 2 * vec * kLoopUnroll <= p.row_len)
    group *= 2;
  while (group < kMaxLoopedGroup && group * 2 <= tile &&
         (group < kCoalesce || p.rows * group < target) && group * 2 * vec <= p.row_len)
    group *= 2;
  return {int(group), 0};
}

struct Launch {
  RowArgs args;
  unsigned blocks;
  unsigned threads;
  Stream stream;
};

template <typename T, bool kLayer>
void launch_op(const Launch& l, int vpt) {
  switch (vpt) {
    case 0:
      norm_rows_looped<T, kLayer><<<l.blocks, l.threads, 0, l.stream>>>(l.args);
      break;
    case 1:
      norm_rows_registers<T, 1, kLayer><<<l.blocks, l.threads, 0, l.stream>>>(l.args);
      break;
    case 2:
      norm_rows_registers<T, 2, kLayer><<<l.blocks, l.threads, 0, l.stream>>>(l.args);
      break;
    case 4:
      norm_rows_registers<T, 4, kLayer><<<l.blocks, l.threads, 0, l.stream>>>(l.args);
      break;
    default:
      norm_rows_registers<T, kMaxVpt<T>, kLayer><<<l.blocks, l.threads, 0, l.stream>>>(l.args);
      break;
  }
}

template <typename T>
void launch_dtype(const abi::NormParams& p, const Launch& l, int vpt) {
  if (p.op == abi::kNorm_layer_norm)
    launch_op<T, true>(l, vpt);
  else
    launch_op<T, false>(l, vpt);
}

void launch_dtype_of(const abi::NormParams& p, const Launch& l, int vpt) {
  switch (p.in_dtype) {
    case kFloat16:
      launch_dtype<half_t>(p, l, vpt);
      break;
    case kBFloat16:
      launch_dtype<bfloat16_t>(p, l, vpt);
      break;
    case kFloat32:
      launch_dtype<float>(p, l, vpt);
      break;
    default:
      launch_dtype<double>(p, l, vpt);
      break;
  }
}

bool aligned16(const void* address) {
  return reinterpret_cast<std::uintptr_t>(address) % 16 == 0;
}

bool half_or_float(int t) {
  return t == kFloat16 || t == kBFloat16 || t == kFloat32;
}

}  // namespace

bool norm_rows_fast_eligible(const abi::NormParams& p, const BoundBuffer* buffers,
                             int num_buffers) {
  if (p.op != abi::kNorm_layer_norm && p.op != abi::kNorm_rms_norm) return false;
  if (p.rows < 1 || p.row_len < 1 || num_buffers < 2) return false;
  const int t = p.in_dtype;
  const bool affine = p.has_weight != 0 || p.has_bias != 0;
  if (p.out_dtype != t || (affine && p.param_dtype != t)) return false;
  // The general kernel's accumulation for this dtype: float for float16/bfloat16/float32
  // with any of those accumulate dtypes, double for float64.
  const bool usual = (half_or_float(t) && half_or_float(p.accumulate_dtype)) ||
                     (t == kFloat64 && p.accumulate_dtype == kFloat64);
  if (!usual) return false;
  if (!aligned16(buffers[0].address) || !aligned16(buffers[1].address)) return false;
  if (p.has_weight != 0 && (num_buffers < 3 || !aligned16(buffers[2].address))) return false;
  if (p.has_bias != 0 && (num_buffers < 4 || !aligned16(buffers[3].address))) return false;
  return true;
}

bool launch_norm_rows_fast(const abi::NormParams& p, const BoundBuffer* buffers, int num_buffers,
                           const ElementwiseOptions& options, void* stream,
                           ElementwiseLaunchResult& result) {
  if (!norm_rows_fast_eligible(p, buffers, num_buffers)) return false;
  const int vec = 16 / dtype_bytes(p.in_dtype);
  const Shape shape = shape_for(p, vec, options);
  const int threads = shape.group > kMinBlock ? shape.group : kMinBlock;
  const i64 rows_per_block = threads / shape.group;
  // A grid holds at most 2^31 - 1 blocks; more rows take further launches.
  const i64 max_blocks = i64(1) << 30;
  Launch l{RowArgs{buffers[0].address, buffers[1].address,
                   p.has_weight != 0 ? buffers[2].address : nullptr,
                   p.has_bias != 0 ? buffers[3].address : nullptr, 0, p.rows, p.row_len,
                   shape.group, p.eps},
           0, unsigned(threads), static_cast<Stream>(stream)};
  for (i64 first = 0; first < p.rows; first += max_blocks * rows_per_block) {
    const i64 wanted = (p.rows - first + rows_per_block - 1) / rows_per_block;
    l.args.first_row = first;
    l.blocks = unsigned(wanted < max_blocks ? wanted : max_blocks);
    launch_dtype_of(p, l, shape.vpt);
  }
  result.error = int(last_launch_error());
  result.call = "norm launch (contiguous rows)";
  result.path = ElementwisePath::kRows;
  return true;
}

}  // namespace nbx::gpu
