// The "softmax" family's contiguous-row kernels (NBX_GPU_ROWS=fast; the default once
// measured on hardware). The general kernel (softmax_kernels.cu) pays, per element, a
// run-time dtype switch and a scalar load, and per row a shared-memory tree with a barrier
// per level: on the H200 it ran softmax over [32768, 4096] float32 at 844 GB/s against
// PyTorch's 2480. Here, for rows of stride 1 (input, output and mask):
//   - the storage dtype and the compute type are template parameters; elements move as
//     16-byte vectors from each row's first 16-byte aligned element (a scalar head before
//     it, a scalar tail after the last whole vector);
//   - rows up to 512 threads x 8 vectors (16384 float32, 32768 float16) are held in REGISTERS
//     (softmax_regs_kernel): a group of `group` threads (a multiple of the warp, at most a
//     block) reads its row once, finds the maximum and then the sum of exp(x - max) through
//     warp shuffles (plus one shared-memory exchange each when a row has several warps),
//     and writes the result from registers: one read and one write of every element;
//   - longer rows (vocabulary rows, 128256) take a block each (softmax_loop_kernel): an
//     online (max, compensated sum) pass over 4 vectors at a time, one block merge, and a
//     second pass that reads the row again BACKWARDS (the end of the row, read last, is the
//     likeliest to still be in L2) and writes it.
// Numerics are the general kernel's (PyTorch's): the softmax of scale·x in float (float64
// for float64), a row whose kept maximum is ±inf or which holds a kept NaN gives NaN at
// every kept element, a fully masked row gives 0 (softmax) or -inf (log_softmax), masked
// elements give 0 / -inf. Masked elements are read as -inf, which yields exactly that in
// every other row. NaN is found through the sum (exp(NaN - m) is NaN) rather than the
// maximum, so the maximum is a plain fmax. Sums: float partial sums of at most 32 terms per
// thread and chunk, chunks added with compensation in the long-row kernel (a 128256-term
// float sum keeps float accuracy); results are deterministic (fixed merge order).
#include <cstdint>

#include "kernels/gpu/compensated_sum.cuh"
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/softmax_rows_fast.hpp"

namespace nbx::gpu {
namespace {

// The register kernel's blocks: 256 threads (groups of up to 256), or 512 for a group of
// 512 (the longest rows it holds). Bounds of 256 and 512 threads leave ptxas up to 255 and
// 128 registers: the held values do not spill.
constexpr int kMaxGroup = 512;
constexpr int kLoopBlock = 1024;  // the long-row kernel: one block per row
constexpr int kLoopUnroll = 4;    // vectors in flight per thread in the long-row kernel
// Vectors a thread holds in the register kernel: 8 x 16 bytes as stored (32 registers).
constexpr int kMaxVecs = 8;

template <typename T>
struct alignas(16) Vec {
  T x[16 / sizeof(T)];
};

NBX_GPU_INLINE float max_of(float a, float b) {
  return fmaxf(a, b);
}
NBX_GPU_INLINE double max_of(double a, double b) {
  return fmax(a, b);
}
// exp(d) for d = x - max <= 0: __expf is 2^(d·log2 e) in one hardware instruction (2 ulp),
// flushing results below 2^-126 to 0; rounding d·log2 e adds a relative error of about
// |d|·2^-24, which only matters where exp(d) is far below any tolerance's floor. (expf's
// range reduction and subnormal handling double the registers of the register kernel.)
NBX_GPU_INLINE float exp_of(float d) {
  return __expf(d);
}
NBX_GPU_INLINE double exp_of(double d) {
  return exp(d);
}
NBX_GPU_INLINE float log_of(float x) {
  return logf(x);
}
NBX_GPU_INLINE double log_of(double x) {
  return log(x);
}

// A row's split: `head` scalar elements before the first 16-byte aligned one (fewer than a
// vector), `vectors` whole 16-byte vectors, then scalar tail elements from `tail`.
// Positions within a row are ints: the host sends rows of 2^31 - 16 or more elsewhere.
struct Split {
  int head, vectors, tail;
};
template <typename T>
NBX_GPU_INLINE Split split_row(const void* row, int n) {
  constexpr int kVec = int(16 / sizeof(T));
  const auto a = reinterpret_cast<std::uintptr_t>(row);  // element-aligned (host checks)
  int head = int((16 - a % 16) % 16 / sizeof(T));
  if (head > n) head = n;
  const int vectors = (n - head) / kVec;
  return {head, vectors, head + vectors * kVec};
}

// Element k of a row as the compute value softmax sees: scale·x, or -inf where masked.
template <typename T, typename C>
NBX_GPU_INLINE C value_at(const T* row, const unsigned char* mrow, int k, C scale) {
  const C x = scale * to_compute<C>(row[k]);
  return mrow && mrow[k] != 0 ? C(-INFINITY) : x;
}

// A vector's elements as compute values; `mk` (null without a mask) points at its mask
// bytes.
template <typename T, typename C>
NBX_GPU_INLINE void vector_values(const Vec<T>& r, C scale, const unsigned char* mk,
                                  C (&x)[16 / sizeof(T)]) {
  constexpr int kVec = int(16 / sizeof(T));
#pragma unroll
  for (int j = 0; j < kVec; ++j) x[j] = scale * to_compute<C>(r.x[j]);
  if (mk) {
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if (mk[j] != 0) x[j] = C(-INFINITY);
  }
}

// Whether any element of the row is unmasked (only asked with a mask).
NBX_GPU_INLINE bool any_unmasked(const unsigned char* mrow, int k0, int k1) {
  for (int k = k0; k < k1; ++k)
    if (mrow[k] == 0) return true;
  return false;
}

// A row with no kept element, or whose kept maximum is ±inf or that holds a kept NaN:
// 0 / -inf at masked elements (all of them when none is kept), NaN at the others.
template <typename T, typename C>
NBX_GPU_INLINE void write_special(T* yrow, const unsigned char* mrow, int n, bool kept,
                                  bool log_out, int g, int group) {
  const C fill = log_out ? C(-INFINITY) : C(0);
  for (int k = g; k < n; k += group) {
    const bool masked = !kept || (mrow && mrow[k] != 0);
    yrow[k] = from_compute<T>(masked ? fill : C(NAN));
  }
}

// The result at one kept-or-masked element of a normal row: masked elements hold -inf,
// which gives 0 (softmax, `e` = exp(-inf) = 0) and -inf (log_softmax).
template <typename C>
NBX_GPU_INLINE C result_of(C x_or_e, C m, C inv_sum, C log_sum, bool log_out) {
  return log_out ? (x_or_e - m) - log_sum : x_or_e * inv_sum;
}

// ---- Rows in registers.
// kVecs vectors per thread; `group` threads (a multiple of kWarpSize, dividing blockDim.x)
// per row, so group·kVecs vectors (+ head and tail) cover the row. Every thread runs the
// same number of rounds, so the barriers (only when a row has several warps, a value
// uniform over the grid) are reached by all.
template <typename T, typename C, int kVecs, int kBlock>
__global__ void __launch_bounds__(kBlock)
    softmax_regs_kernel(const abi::SoftmaxParams p, int group, void* out, const void* in,
                        const unsigned char* mask) {
  constexpr int kVec = int(16 / sizeof(T));
  constexpr int kWarps = kBlock / kWarpSize;
  // Written by lane 0 of each warp: the maximum and keep flag, then the sum. A buffer is
  // rewritten only after the next barrier, which every reader of its last value has passed.
  __shared__ C red_m[kWarps], red_s[kWarps];
  __shared__ int red_k[kWarps];
  const int tid = int(threadIdx.x);
  const int g = tid % group, warp = tid / kWarpSize, lane = tid % kWarpSize;
  const int wpr = group / kWarpSize;
  const int row_warp0 = warp - g / kWarpSize;
  const i64 rows_per_block = i64(blockDim.x) / group;
  const i64 first_row = i64(blockIdx.x) * rows_per_block + tid / group;
  const i64 row_step = i64(gridDim.x) * rows_per_block;
  const i64 rounds = (p.rows + row_step - 1) / row_step;
  const bool log_out = p.op == abi::kSoftmax_log_softmax;
  const C scale = C(p.scale), ninf = C(-INFINITY);
  const int n = int(p.row_len);
  for (i64 round = 0; round < rounds; ++round) {
    const i64 row = first_row + round * row_step;
    const bool active = row < p.rows;  // the same for the whole group
    i64 rest = active ? row : 0, in_off = p.in_offset, out_off = p.out_offset,
        mask_off = p.mask_offset;
    for (int d = p.outer_ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.outer_sizes[d]);
      in_off += c * p.in_outer_strides[d];
      out_off += c * p.out_outer_strides[d];
      mask_off += c * p.mask_outer_strides[d];
    }
    const T* xrow = static_cast<const T*>(in) + in_off;
    T* yrow = static_cast<T*>(out) + out_off;
    const unsigned char* mrow = mask ? mask + mask_off : nullptr;
    const Split sp = split_row<T>(xrow, n);
    // Load every vector (all in flight) and keep them as stored: 16-byte vectors take 4
    // registers whatever the dtype, and converting again is cheaper than holding floats.
    // Bit i·kVec + j of `off` marks slot (i, j) masked or past the row's vectors: -inf.
    Vec<T> r[kVecs];
    std::uint64_t off = 0;
    const Vec<T>* xv = reinterpret_cast<const Vec<T>*>(xrow + sp.head);
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int v = g + i * group;
      if (active && v < sp.vectors) {
        r[i] = xv[v];
      } else {
        r[i] = Vec<T>{};
        off |= ((std::uint64_t(1) << kVec) - 1) << (i * kVec);
      }
    }
    const bool has_head = active && g < sp.head, has_tail = active && sp.tail + g < n;
    const C xh = has_head ? value_at(xrow, mrow, g, scale) : ninf;
    const C xt = has_tail ? value_at(xrow, mrow, sp.tail + g, scale) : ninf;
    bool kept = active;
    if (mrow) {
      kept = (has_head && mrow[g] == 0) || (has_tail && mrow[sp.tail + g] == 0);
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        const int v = g + i * group;
        if (!active || v >= sp.vectors) continue;
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          if (mrow[sp.head + v * kVec + j] != 0)
            off |= std::uint64_t(1) << (i * kVec + j);
          else
            kept = true;
        }
      }
      kept = warp_any(kept);
    }
    auto value = [&](int i, int j) -> C {
      return (off >> (i * kVec + j)) & 1 ? ninf : scale * to_compute<C>(r[i].x[j]);
    };
    // The row's maximum (NaN ignored: a NaN shows in the sum).
    C m = max_of(xh, xt);
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
#pragma unroll
      for (int j = 0; j < kVec; ++j) m = max_of(m, value(i, j));
    for (int o = kWarpSize / 2; o > 0; o /= 2) m = max_of(m, warp_shuffle_xor(m, o));
    if (wpr > 1) {
      if (lane == 0) {
        red_m[warp] = m;
        red_k[warp] = kept ? 1 : 0;
      }
      __syncthreads();
      m = red_m[row_warp0];
      kept = red_k[row_warp0] != 0;
      for (int w = 1; w < wpr; ++w) {
        m = max_of(m, red_m[row_warp0 + w]);
        kept = kept || red_k[row_warp0 + w] != 0;
      }
    }
    // The sum of exp(x - m): -inf slots add 0. Rows whose m is not finite compute garbage
    // here and take write_special.
    C s = exp_of(xh - m) + exp_of(xt - m);
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      C sv = C(0);
#pragma unroll
      for (int j = 0; j < kVec; ++j) sv += exp_of(value(i, j) - m);
      s += sv;
    }
    for (int o = kWarpSize / 2; o > 0; o /= 2) s += warp_shuffle_xor(s, o);
    if (wpr > 1) {
      if (lane == 0) red_s[warp] = s;
      __syncthreads();
      s = red_s[row_warp0];
      for (int w = 1; w < wpr; ++w) s += red_s[row_warp0 + w];
    }
    if (!active) continue;
    if (!kept || !(isfinite(m) && isfinite(s))) {
      write_special<T, C>(yrow, mrow, n, kept, log_out, g, group);
      continue;
    }
    const C inv = C(1) / s, ls = log_of(s);
    auto result = [&](C x) { return log_out ? (x - m) - ls : exp_of(x - m) * inv; };
    if (has_head) yrow[g] = from_compute<T>(result(xh));
    if (has_tail) yrow[sp.tail + g] = from_compute<T>(result(xt));
    // Vector stores where the output row has the input row's alignment; element stores
    // otherwise (views at different offsets mod 16 bytes).
    const bool vec_out = split_row<T>(yrow, n).head == sp.head;
    Vec<T>* yv = reinterpret_cast<Vec<T>*>(yrow + sp.head);
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int v = g + i * group;
      if (v >= sp.vectors) continue;
      Vec<T> w;
#pragma unroll
      for (int j = 0; j < kVec; ++j) w.x[j] = from_compute<T>(result(value(i, j)));
      if (vec_out) {
        yv[v] = w;
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) yrow[sp.head + v * kVec + j] = w.x[j];
      }
    }
  }
}

// ---- Long rows: a block per row, two passes.
// The online state of a set of elements: maximum m (NaN ignored) and the compensated sum
// of exp(x - m) (NaN once a NaN was added). While m is -inf the sum holds 0 or NaN, and is
// never rescaled (exp(-inf - -inf) would be NaN).
template <typename C>
struct Online {
  C m, s, comp;
};

template <typename C>
NBX_GPU_INLINE Online<C> merge(Online<C> a, const Online<C>& b) {
  const C m = max_of(a.m, b.m);
  const C fa = a.m == C(-INFINITY) ? C(1) : exp_of(a.m - m);
  const C fb = b.m == C(-INFINITY) ? C(1) : exp_of(b.m - m);
  a.m = m;
  a.s *= fa;
  a.comp *= fa;
  two_sum_add(a.s, a.comp, b.s * fb, b.comp * fb);
  return a;
}

// Folds `count` values into the state: one rescale per chunk, a plain float sum of the
// chunk (at most 32 terms), added to the state with compensation.
template <typename C, int kCount>
NBX_GPU_INLINE void absorb(Online<C>& st, const C (&x)[kCount]) {
  C cm = x[0];
#pragma unroll
  for (int j = 1; j < kCount; ++j) cm = max_of(cm, x[j]);
  if (cm > st.m) {
    if (st.m != C(-INFINITY)) {
      const C f = exp_of(st.m - cm);
      st.s *= f;
      st.comp *= f;
    }
    st.m = cm;
  }
  const C base = st.m == C(-INFINITY) ? C(0) : st.m;  // -inf - -inf would be NaN
  C cs = C(0);
#pragma unroll
  for (int j = 0; j < kCount; ++j) cs += exp_of(x[j] - base);
  two_sum_add(st.s, st.comp, cs, C(0));
}

// Lane 0 ends with the merge of the warp's states, lower lanes first.
template <typename C>
NBX_GPU_INLINE Online<C> warp_merge(Online<C> st) {
  for (int off = kWarpSize / 2; off > 0; off /= 2) {
    Online<C> o;
    o.m = warp_shuffle_down(st.m, unsigned(off));
    o.s = warp_shuffle_down(st.s, unsigned(off));
    o.comp = warp_shuffle_down(st.comp, unsigned(off));
    st = merge(st, o);
  }
  return st;
}

template <typename T, typename C>
__global__ void __launch_bounds__(kLoopBlock)
    softmax_loop_kernel(const abi::SoftmaxParams p, void* out, const void* in,
                        const unsigned char* mask) {
  constexpr int kVec = int(16 / sizeof(T));
  constexpr int kWarps = kLoopBlock / kWarpSize;
  constexpr int G = kLoopBlock;
  // Per warp: its state and keep flag; double-buffered by round so one barrier suffices.
  __shared__ Online<C> part[2][kWarps];
  __shared__ int part_k[2][kWarps];
  const int g = int(threadIdx.x), warp = g / kWarpSize, lane = g % kWarpSize;
  const bool log_out = p.op == abi::kSoftmax_log_softmax;
  const C scale = C(p.scale);
  const int n = int(p.row_len);
  int round = 0;
  for (i64 row = blockIdx.x; row < p.rows; row += gridDim.x, ++round) {  // uniform per block
    i64 rest = row, in_off = p.in_offset, out_off = p.out_offset, mask_off = p.mask_offset;
    for (int d = p.outer_ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.outer_sizes[d]);
      in_off += c * p.in_outer_strides[d];
      out_off += c * p.out_outer_strides[d];
      mask_off += c * p.mask_outer_strides[d];
    }
    const T* xrow = static_cast<const T*>(in) + in_off;
    T* yrow = static_cast<T*>(out) + out_off;
    const unsigned char* mrow = mask ? mask + mask_off : nullptr;
    const Split sp = split_row<T>(xrow, n);
    const Vec<T>* xv = reinterpret_cast<const Vec<T>*>(xrow + sp.head);
    // Pass 1: this thread's state.
    Online<C> st{C(-INFINITY), C(0), C(0)};
    bool kept = false;
    if (g < sp.head) {
      const C x[1] = {value_at(xrow, mrow, g, scale)};
      absorb(st, x);
      kept = !mrow || mrow[g] == 0;
    }
    int v = g;
    for (; v + (kLoopUnroll - 1) * G < sp.vectors; v += kLoopUnroll * G) {
      Vec<T> r[kLoopUnroll];
#pragma unroll
      for (int u = 0; u < kLoopUnroll; ++u) r[u] = xv[v + u * G];
      C x[kLoopUnroll * kVec];
#pragma unroll
      for (int u = 0; u < kLoopUnroll; ++u) {
        C xu[kVec];
        const int k0 = sp.head + (v + u * G) * kVec;
        vector_values(r[u], scale, mrow ? mrow + k0 : nullptr, xu);
        if (mrow && !kept) kept = any_unmasked(mrow, k0, k0 + kVec);
#pragma unroll
        for (int j = 0; j < kVec; ++j) x[u * kVec + j] = xu[j];
      }
      absorb(st, x);
    }
    for (; v < sp.vectors; v += G) {
      C x[kVec];
      const int k0 = sp.head + v * kVec;
      vector_values(xv[v], scale, mrow ? mrow + k0 : nullptr, x);
      if (mrow && !kept) kept = any_unmasked(mrow, k0, k0 + kVec);
      absorb(st, x);
    }
    if (sp.tail + g < n) {
      const C x[1] = {value_at(xrow, mrow, sp.tail + g, scale)};
      absorb(st, x);
      kept = kept || !mrow || mrow[sp.tail + g] == 0;
    }
    if (!mrow) kept = true;
    // Block merge: warps through shuffles, then every warp merges the warps' states the
    // same way (so all threads agree to the bit).
    st = warp_merge(st);
    kept = warp_any(kept);
    if (lane == 0) {
      part[round & 1][warp] = st;
      part_k[round & 1][warp] = kept ? 1 : 0;
    }
    __syncthreads();
    Online<C> w{C(-INFINITY), C(0), C(0)};
    bool wk = false;
    if (lane < kWarps) {
      w = part[round & 1][lane];
      wk = part_k[round & 1][lane] != 0;
    }
    w = warp_merge(w);
    kept = warp_any(wk);
    const C m = warp_shuffle(w.m, 0);
    const C s = warp_shuffle(compensated_total(w.s, w.comp), 0);
    if (!kept || !(isfinite(m) && isfinite(s))) {
      write_special<T, C>(yrow, mrow, n, kept, log_out, g, G);
      continue;
    }
    // Pass 2, backwards: tail, vectors from this thread's last, head.
    const C inv = C(1) / s, ls = log_of(s);
    if (sp.tail + g < n)
      yrow[sp.tail + g] =
          from_compute<T>(result_of(log_out ? value_at(xrow, mrow, sp.tail + g, scale)
                                            : exp_of(value_at(xrow, mrow, sp.tail + g, scale) - m),
                                    m, inv, ls, log_out));
    const bool vec_out = split_row<T>(yrow, n).head == sp.head;
    Vec<T>* yv = reinterpret_cast<Vec<T>*>(yrow + sp.head);
    auto write_vector = [&](const Vec<T>& r, int vi) {
      C x[kVec];
      const int k0 = sp.head + vi * kVec;
      vector_values(r, scale, mrow ? mrow + k0 : nullptr, x);
      Vec<T> y;
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        y.x[j] = from_compute<T>(result_of(log_out ? x[j] : exp_of(x[j] - m), m, inv, ls, log_out));
      if (vec_out) {
        yv[vi] = y;
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) yrow[k0 + j] = y.x[j];
      }
    };
    // This thread's vectors are g + i·G for i < count.
    int i = g < sp.vectors ? (sp.vectors - 1 - g) / G : -1;
    for (; i >= kLoopUnroll - 1; i -= kLoopUnroll) {
      Vec<T> r[kLoopUnroll];
#pragma unroll
      for (int u = 0; u < kLoopUnroll; ++u) r[u] = xv[g + (i - u) * G];
#pragma unroll
      for (int u = 0; u < kLoopUnroll; ++u) write_vector(r[u], g + (i - u) * G);
    }
    for (; i >= 0; --i) write_vector(xv[g + i * G], g + i * G);
    if (g < sp.head)
      yrow[g] = from_compute<T>(result_of(
          log_out ? value_at(xrow, mrow, g, scale) : exp_of(value_at(xrow, mrow, g, scale) - m), m,
          inv, ls, log_out));
  }
}

struct Launch {
  const abi::SoftmaxParams& p;
  const ElementwiseOptions& o;
  Stream stream;
  void* out;
  const void* in;
  const unsigned char* mask;
};

i64 mps_of(const ElementwiseOptions& o) {
  return o.multiprocessors > 0 ? o.multiprocessors : 1;
}

template <typename T, typename C, int kVecs>
void launch_regs(const Launch& l, int group) {
  const int threads = group > 256 ? group : 256;
  if (threads > 256) {
    if constexpr (kVecs == kMaxVecs) {
      const unsigned blocks = unsigned(l.p.rows < mps_of(l.o) * 64 ? l.p.rows : mps_of(l.o) * 64);
      softmax_regs_kernel<T, C, kVecs, kMaxGroup>
          <<<blocks, unsigned(kMaxGroup), 0, l.stream>>>(l.p, group, l.out, l.in, l.mask);
    }
    return;  // a group of 512 holds kMaxVecs per thread (launch_typed)
  }
  const i64 rows_per_block = threads / group;
  const i64 wanted = (l.p.rows + rows_per_block - 1) / rows_per_block;
  const i64 cap = mps_of(l.o) * 64;
  const unsigned blocks = unsigned(wanted < cap ? wanted : cap);
  softmax_regs_kernel<T, C, kVecs, 256>
      <<<blocks, unsigned(threads), 0, l.stream>>>(l.p, group, l.out, l.in, l.mask);
}

// Rows in registers when a group of at most kMaxGroup threads holding at most kMaxVecs
// vectors each covers the row's whole vectors; one block per row otherwise. No group takes
// more threads than the launch's row_tile (the wrapper's clamp to reduce.tile_max and the
// block size): where the row needs more — the register path's smallest group is a warp, the
// loop kernel's block kLoopBlock — nothing is enqueued and false is returned (the general
// kernel, which honours any row_tile, serves the launch).
template <typename T, typename C>
bool launch_typed(const Launch& l) {
  constexpr i64 kVec = i64(16 / sizeof(T));
  const int warp = l.o.warp_size == 64 ? 64 : 32;
  const i64 tile = l.p.row_tile > 0 ? l.p.row_tile : 1;
  const i64 need = l.p.row_len / kVec > 0 ? l.p.row_len / kVec : 1;  // vectors, at most
  i64 group = warp;
  while (group * kMaxVecs < need && group < kMaxGroup && group * 2 <= tile) group *= 2;
  if (group <= tile && group * kMaxVecs >= need) {
    auto vecs_for = [&](i64 gsize) {
      i64 v = 1;
      while (gsize * v < need) v *= 2;
      return v;
    };
    // Spread rows over more threads (fewer vectors each, groups up to 256) while the rows
    // are too few to give every multiprocessor 2048 threads.
    while (group < 256 && group * 2 <= tile && vecs_for(group) > 1 &&
           l.p.rows * group < mps_of(l.o) * 2048)
      group *= 2;
    switch (vecs_for(group)) {
      case 1:
        launch_regs<T, C, 1>(l, int(group));
        return true;
      case 2:
        launch_regs<T, C, 2>(l, int(group));
        return true;
      case 4:
        launch_regs<T, C, 4>(l, int(group));
        return true;
      default:
        launch_regs<T, C, kMaxVecs>(l, int(group));
        return true;
    }
  }
  if (tile < kLoopBlock) return false;
  const i64 cap = mps_of(l.o) * (2048 / kLoopBlock);
  const unsigned blocks = unsigned(l.p.rows < cap ? l.p.rows : cap);
  softmax_loop_kernel<T, C><<<blocks, kLoopBlock, 0, l.stream>>>(l.p, l.out, l.in, l.mask);
  return true;
}

}  // namespace

bool softmax_rows_fast_eligible(const abi::SoftmaxParams& p, const BoundBuffer* buffers) {
  if (p.rows < 1 || p.row_len < 1 || p.in_dtype != p.out_dtype) return false;
  if (p.row_len > 0x7fffffff - 64) return false;  // positions within a row are ints
  // A row of one element has no stride to speak of.
  const bool unit = p.row_len == 1;
  if (!unit && (p.in_row_stride != 1 || p.out_row_stride != 1)) return false;
  if (p.has_mask && !unit && p.mask_row_stride != 1) return false;
  const bool acc64 = p.accumulate_dtype == kFloat64;
  switch (p.in_dtype) {
    case kFloat16:
    case kBFloat16:
    case kFloat32:
      if (acc64) return false;
      break;
    case kFloat64:
      if (!acc64) return false;
      break;
    default:
      return false;
  }
  // Rows are read through typed pointers: the buffers must be element-aligned (every
  // allocation is).
  const auto size = std::uintptr_t(dtype_bytes(p.in_dtype));
  return reinterpret_cast<std::uintptr_t>(buffers[0].address) % size == 0 &&
         reinterpret_cast<std::uintptr_t>(buffers[1].address) % size == 0;
}

bool launch_softmax_rows_fast(const abi::SoftmaxParams& p, const BoundBuffer* buffers,
                              int num_buffers, const ElementwiseOptions& options, void* stream,
                              ElementwiseLaunchResult& result) {
  if (!softmax_rows_fast_eligible(p, buffers)) return false;
  const Launch l{p,
                 options,
                 static_cast<Stream>(stream),
                 buffers[0].address,
                 buffers[1].address,
                 p.has_mask && num_buffers > 2
                     ? static_cast<const unsigned char*>(buffers[2].address)
                     : nullptr};
  bool launched;
  switch (p.in_dtype) {
    case kFloat16:
      launched = launch_typed<half_t, float>(l);
      break;
    case kBFloat16:
      launched = launch_typed<bfloat16_t, float>(l);
      break;
    case kFloat32:
      launched = launch_typed<float, float>(l);
      break;
    default:
      launched = launch_typed<double, double>(l);
      break;
  }
  if (!launched) return false;  // more threads per row than row_tile allows
  result.error = int(last_launch_error());
  result.call = "softmax launch (contiguous rows)";
  result.path = ElementwisePath::kRows;
  return true;
}

}  // namespace nbx::gpu
