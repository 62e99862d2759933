// The "scatter" kernel family for CUDA and HIP (kernel ABI: abi::ScatterParams, semantics
// backends/host/host_scatter.cpp): index writes combined into the destination by `reduce`.
//  - atomic (kScatterAtomic): a thread per iteration element reads its index, checks it and
//    combines its source element into the destination with one atomic read-modify-write:
//    the native atomic where one exists and is exact (integer add, float/double add, int32
//    and int64 (CUDA) max/min, plain stores for assign), else a compare-and-swap loop on the
//    element's bits, or on its enclosing aligned 32-bit word for 1- and 2-byte elements so
//    that neighbours are never clobbered. Float16/bfloat16 combine in float32, rounded to
//    the dtype at every step. A launch of at most two dims (after merging the dims every
//    operand walks as one) adding int32/int64/float32/float64 or assigning takes the rows
//    kernel: strides as arguments, four elements in flight per thread, CUDA's adds as RED.
//    An add into at most 16 KiB of destinations that depend on the index alone, with many
//    elements per destination, adds into per-block copies in shared memory first (on the
//    H200, 2^26 float32 into 1024 destinations: 0.27 ms, against 5.7 ms for one global
//    atomic per element, as PyTorch takes).
//  - sorted (kScatterSorted): a thread per sorted position; the first position of each run
//    of equal keys folds the run, in order, into its destination and stores it once:
//    deterministic, the host's sequential result.
//  - keys (kScatterKeys): each iteration element's destination offset (or -1 for a bad
//    index), for the sorted pass or for index_put's several index tensors.
// A bad index (or key, or order entry) goes to the device's fault record (the first one wins)
// and nothing is written for it.
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {
namespace {

using u32 = unsigned;
using u64 = unsigned long long;

constexpr int kRowsIlp = 4;  // elements in flight per thread in the rows kernel
// The rows kernel's private copies (see scatter_rows_kernel): at most 16 KiB of shared memory
// a block, four blocks a multiprocessor, at least 16 elements per destination and block.
constexpr i64 kPrivateBytes = 16384;
constexpr i64 kPrivateBlocksPerSm = 4;
constexpr i64 kPrivateMinRatio = 16;

NBX_GPU_INLINE void record_index_fault(abi::FaultRecord* f, int op, i64 index, i64 bound,
                                       i64 position) {
  if (atomic_cas(&f->code, abi::kFaultNone, abi::kFaultIndexOutOfRange) == abi::kFaultNone) {
    f->op = abi::fault_op(abi::kFamily_scatter, op);
    f->index = index;
    f->bound = bound;
    f->position = position;
    memory_fence();
  }
}

// ---- element bits and how two of them combine ----

template <int Bytes>
struct BitsOf;
template <>
struct BitsOf<1> {
  using type = unsigned char;
};
template <>
struct BitsOf<2> {
  using type = unsigned short;
};
template <>
struct BitsOf<4> {
  using type = u32;
};
template <>
struct BitsOf<8> {
  using type = u64;
};

template <int D>
inline constexpr int kBytesOf = D == kBool || D == kInt8 || D == kUInt8          ? 1
                                : D == kInt16 || D == kFloat16 || D == kBFloat16 ? 2
                                : D == kInt32 || D == kFloat32                   ? 4
                                                                                 : 8;
// Every element is handled as the unsigned integer of its size.
template <int D>
using Bits = typename BitsOf<kBytesOf<D>>::type;

// Float dtypes: the value an element's bits hold (16-bit floats widened to float32, exact),
// and the bits of a computed value (16-bit floats rounded to nearest even, NaN quieted as the
// host does).
template <int D>
NBX_GPU_INLINE auto float_value(Bits<D> b) {
  if constexpr (D == kFloat64) {
    return __longlong_as_double((long long)b);
  } else if constexpr (D == kFloat32) {
    return __uint_as_float(b);
  } else if constexpr (D == kFloat16) {
    return to_float(__ushort_as_half(b));
  } else {
    return __uint_as_float(u32(b) << 16);  // bfloat16 is float32's upper half
  }
}

template <int D, typename F>
NBX_GPU_INLINE Bits<D> float_bits(F v) {
  if constexpr (D == kFloat64) {
    return u64(__double_as_longlong(v));
  } else if constexpr (D == kFloat32) {
    return __float_as_uint(v);
  } else if constexpr (D == kFloat16) {
    return __half_as_ushort(half_from_float(v));
  } else {
#if NBX_GPU_HIP
    return bfloat16_from_float(v).data;
#else
    return __bfloat16_as_ushort(bfloat16_from_float(v));
#endif
  }
}

// Integer dtypes: the signed or unsigned type max and min compare in.
template <int D>
struct OrderOf {
  using type = long long;
};
template <>
struct OrderOf<kInt8> {
  using type = signed char;
};
template <>
struct OrderOf<kUInt8> {
  using type = unsigned char;
};
template <>
struct OrderOf<kInt16> {
  using type = short;
};
template <>
struct OrderOf<kInt32> {
  using type = int;
};

// `a` (the destination) combined with `b` (the source) by `reduce`, as dtype D.
template <int D>
NBX_GPU_INLINE Bits<D> combine(int reduce, Bits<D> a, Bits<D> b) {
  using B = Bits<D>;
  if (reduce == abi::kScatterAssign) return b;
  if constexpr (D == kFloat16 || D == kBFloat16 || D == kFloat32 || D == kFloat64) {
    // Add and mul round once (16-bit floats: the float32 result to the dtype); max and min
    // pick an operand's bits, NaN winning from either side: the source's when it is NaN,
    // the destination's kept when the comparison fails.
    const auto x = float_value<D>(a), y = float_value<D>(b);
    switch (reduce) {
      case abi::kScatterAdd:
        return float_bits<D>(x + y);
      case abi::kScatterMul:
        return float_bits<D>(x * y);
      case abi::kScatterMax:
        return y != y ? b : (x < y ? b : a);
      default:
        return y != y ? b : (y < x ? b : a);
    }
  } else if constexpr (D == kBool) {
    switch (reduce) {
      case abi::kScatterAdd:
        return B((a != 0 || b != 0) ? 1 : 0);
      case abi::kScatterMul:
        return B((a != 0 && b != 0) ? 1 : 0);
      case abi::kScatterMax:
        return a < b ? b : a;
      default:
        return b < a ? b : a;
    }
  } else {
    // Integers: add and mul wrap (unsigned arithmetic of at least 32 bits, truncated); max
    // and min compare in the dtype's own signedness.
    using W = typename BitsOf<(kBytesOf<D> < 4 ? 4 : kBytesOf<D>)>::type;
    using S = typename OrderOf<D>::type;
    switch (reduce) {
      case abi::kScatterAdd:
        return B(W(a) + W(b));
      case abi::kScatterMul:
        return B(W(a) * W(b));
      case abi::kScatterMax:
        return S(a) < S(b) ? b : a;
      default:
        return S(b) < S(a) ? b : a;
    }
  }
}

// ---- atomic read-modify-write of one destination element ----

// A compare-and-swap loop on a 4- or 8-byte element. The first read bypasses the
// incoherent L1 (volatile), so an update that would change nothing can stop at once: it
// takes effect at that read.
template <int D>
NBX_GPU_INLINE void cas_combine(Bits<D>* dst, Bits<D> v, int reduce) {
  using B = Bits<D>;
  B old = *reinterpret_cast<volatile B*>(dst), assumed;
  do {
    assumed = old;
    const B desired = combine<D>(reduce, assumed, v);
    if (desired == assumed) return;
    old = atomicCAS(dst, assumed, desired);
  } while (old != assumed);
}

// A 1- or 2-byte element: the loop runs on its enclosing aligned 32-bit word (buffers are at
// least 4-byte aligned, so the word never leaves the allocation) and puts back its
// neighbours' bytes as they are.
template <int D>
NBX_GPU_INLINE void subword_combine(Bits<D>* dst, Bits<D> v, int reduce) {
  using B = Bits<D>;
  const auto address = reinterpret_cast<unsigned long long>(dst);
  u32* word = reinterpret_cast<u32*>(address & ~3ull);
  const u32 shift = u32(address & 3ull) * 8u;
  const u32 mask = (sizeof(B) == 1 ? 0xffu : 0xffffu) << shift;
  u32 old = *reinterpret_cast<volatile u32*>(word), assumed;
  do {
    assumed = old;
    const B current = B((assumed & mask) >> shift);
    const B next = combine<D>(reduce, current, v);
    if (next == current) return;
    old = atomicCAS(word, assumed, (assumed & ~mask) | (u32(next) << shift));
  } while (old != assumed);
}

// CUDA: the native reductions as RED, which returns nothing. A kernel holding a system fence
// (the fault record's memory_fence) keeps ptxas from turning an atomicAdd whose result is
// unused into RED: it stays ATOM, a reply from L2 per element (on the H200, adding 2^26
// float32 into 2^20 destinations took 1.04 ms as ATOM, 0.74 ms as RED, as PyTorch's).
#if !NBX_GPU_HIP
NBX_GPU_INLINE void red_add(float* p, float v) {
  asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}
NBX_GPU_INLINE void red_add(double* p, double v) {
  asm volatile("red.global.add.f64 [%0], %1;" ::"l"(p), "d"(v) : "memory");
}
NBX_GPU_INLINE void red_add(u32* p, u32 v) {
  asm volatile("red.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
NBX_GPU_INLINE void red_add(u64* p, u64 v) {
  asm volatile("red.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
NBX_GPU_INLINE void red_max(int* p, int v) {
  asm volatile("red.global.max.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
NBX_GPU_INLINE void red_min(int* p, int v) {
  asm volatile("red.global.min.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
NBX_GPU_INLINE void red_max(long long* p, long long v) {
  asm volatile("red.global.max.s64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
NBX_GPU_INLINE void red_min(long long* p, long long v) {
  asm volatile("red.global.min.s64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
#else
template <typename T>
NBX_GPU_INLINE void red_add(T* p, T v) {
  atomicAdd(p, v);
}
NBX_GPU_INLINE void red_max(int* p, int v) {
  atomicMax(p, v);
}
NBX_GPU_INLINE void red_min(int* p, int v) {
  atomicMin(p, v);
}
#endif

template <int D>
NBX_GPU_INLINE void atomic_combine(Bits<D>* dst, Bits<D> v, int reduce) {
  if (reduce == abi::kScatterAssign) {
    *dst = v;  // any duplicate's write wins, whole: every size is a single store
    return;
  }
  if constexpr (D == kInt32) {
    if (reduce == abi::kScatterAdd) {
      red_add(dst, v);  // unsigned: wraps as int32 does
      return;
    }
    if (reduce == abi::kScatterMax) {
      red_max(reinterpret_cast<int*>(dst), int(v));
      return;
    }
    if (reduce == abi::kScatterMin) {
      red_min(reinterpret_cast<int*>(dst), int(v));
      return;
    }
  } else if constexpr (D == kInt64) {
    if (reduce == abi::kScatterAdd) {
      red_add(dst, v);
      return;
    }
#if !NBX_GPU_HIP  // HIP has no signed 64-bit atomicMax/atomicMin: the CAS loop below
    if (reduce == abi::kScatterMax) {
      red_max(reinterpret_cast<long long*>(dst), (long long)v);
      return;
    }
    if (reduce == abi::kScatterMin) {
      red_min(reinterpret_cast<long long*>(dst), (long long)v);
      return;
    }
#endif
  } else if constexpr (D == kFloat32) {
    if (reduce == abi::kScatterAdd) {
      red_add(reinterpret_cast<float*>(dst), __uint_as_float(v));
      return;
    }
  } else if constexpr (D == kFloat64) {
    if (reduce == abi::kScatterAdd) {
      red_add(reinterpret_cast<double*>(dst), __longlong_as_double((long long)v));
      return;
    }
  }
  if constexpr (sizeof(Bits<D>) >= 4) {
    cas_combine<D>(dst, v, reduce);
  } else {
    subword_combine<D>(dst, v, reduce);
  }
}

// ---- atomic: the general kernel (any dims, any reduction) ----

NBX_GPU_INLINE i64 index_position(const abi::ScatterParams& p, i64 e) {
  i64 pos = 0;
  for (int d = p.ndim - 1; d >= 0; --d)
    pos += next_coordinate(e, p.sizes[d]) * p.index_positions[d];
  return pos;
}

// The index checked against the bound (negatives wrapped once first when asked); false for
// a bad one, whose fault is then recorded.
NBX_GPU_INLINE bool checked_index(i64& k, i64 bound, int wrap_negative) {
  if (wrap_negative && k < 0 && k >= -bound) k += bound;
  return k >= 0 && k < bound;
}

template <int D, typename Index>
__global__ void __launch_bounds__(kElementwiseBlock)
    scatter_atomic_kernel(const NBX_GPU_GRID_CONSTANT abi::ScatterParams p, Bits<D>* out,
                          const Bits<D>* src, const Index* index, abi::FaultRecord* fault) {
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < p.numel; e += step) {
    i64 rest = e, o = p.out_offset, s = p.src_offset, x = p.index_offset;
    for (int d = p.ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.sizes[d]);
      o += c * p.out_strides[d];
      s += c * p.src_strides[d];
      x += c * p.index_strides[d];
    }
    const i64 raw = i64(index[x]);
    i64 k = raw;
    if (!checked_index(k, p.bound, p.wrap_negative)) {
      record_index_fault(fault, p.op, raw, p.bound, index_position(p, e));
      continue;
    }
    atomic_combine<D>(out + o + k * p.index_scale, src[s], p.reduce);
  }
}

// ---- atomic: the rows kernel (at most two dims, one reduction fixed at compile time) ----

// A [rows, cols] iteration space (one dim: rows = 1); offsets as start + row·r + col·c.
struct RowsView {
  i64 numel, cols, bound, index_scale;
  i64 out, out_r, out_c;
  i64 src, src_r, src_c;
  i64 index, index_r, index_c;
  i64 pos_r, pos_c;
  int wrap_negative, op;
};

NBX_GPU_INLINE void row_col(const RowsView& v, i64 e, i64& row, i64& col) {
  if (v.cols >= v.numel) {
    row = 0;
    col = e;
  } else {
    row = e;
    col = next_coordinate(row, v.cols);
  }
}

// Private (add into few destinations: every iteration element's destination depends on its
// index alone, out_r = out_c = 0): each block adds into its own copy of the bound
// destinations in shared memory, then adds every touched one to the output with one global
// reduction, instead of every element's reduction queueing on a few L2 lines. Copies start at
// the additive identity (-0.0 for floats: -0 + x is x for every x), and a copy still holding
// its bits is not added (out + -0.0 is out, but for a NaN's payload), so untouched
// destinations keep their bits.
template <int D>
inline constexpr Bits<D> kAddIdentity = D == kFloat32   ? Bits<D>(0x80000000u)
                                        : D == kFloat64 ? Bits<D>(0x8000000000000000ull)
                                                        : Bits<D>(0);

template <int D>
NBX_GPU_INLINE void shared_add(Bits<D>* slot, Bits<D> v) {
  if constexpr (D == kFloat32) {
    atomicAdd(reinterpret_cast<float*>(slot), __uint_as_float(v));
  } else if constexpr (D == kFloat64) {
    atomicAdd(reinterpret_cast<double*>(slot), __longlong_as_double((long long)v));
  } else {
    atomicAdd(slot, v);  // int32 as u32, int64 as u64: wrapping adds
  }
}

template <int D, int Reduce, bool Private, typename Index>
__global__ void __launch_bounds__(kElementwiseBlock)
    scatter_rows_kernel(const RowsView v, Bits<D>* out, const Bits<D>* src, const Index* index,
                        abi::FaultRecord* fault) {
  using B = Bits<D>;
  extern __shared__ __align__(16) unsigned char scatter_smem[];
  B* part = reinterpret_cast<B*>(scatter_smem);
  if constexpr (Private) {
    for (i64 i = threadIdx.x; i < v.bound; i += blockDim.x) part[i] = kAddIdentity<D>;
    __syncthreads();
  }
  constexpr i64 kTile = i64(kElementwiseBlock) * kRowsIlp;
  const i64 step = i64(gridDim.x) * kTile;
  for (i64 base = i64(blockIdx.x) * kTile + threadIdx.x; base < v.numel; base += step) {
    // Every load first, then the read-modify-writes: four independent chains per thread.
    i64 k[kRowsIlp] = {}, o[kRowsIlp] = {};
    B value[kRowsIlp] = {};
#pragma unroll
    for (int u = 0; u < kRowsIlp; ++u) {
      const i64 e = base + i64(u) * kElementwiseBlock;
      if (e < v.numel) {
        i64 row, col;
        row_col(v, e, row, col);
        k[u] = i64(index[v.index + row * v.index_r + col * v.index_c]);
        value[u] = src[v.src + row * v.src_r + col * v.src_c];
        if constexpr (!Private) o[u] = v.out + row * v.out_r + col * v.out_c;
      }
    }
#pragma unroll
    for (int u = 0; u < kRowsIlp; ++u) {
      const i64 e = base + i64(u) * kElementwiseBlock;
      if (e >= v.numel) continue;
      i64 i = k[u];
      if (!checked_index(i, v.bound, v.wrap_negative)) {
        i64 row, col;
        row_col(v, e, row, col);
        record_index_fault(fault, v.op, k[u], v.bound, row * v.pos_r + col * v.pos_c);
        continue;
      }
      if constexpr (Private) {
        shared_add<D>(part + i, value[u]);
      } else {
        atomic_combine<D>(out + o[u] + i * v.index_scale, value[u], Reduce);
      }
    }
  }
  if constexpr (Private) {
    __syncthreads();
    for (i64 i = threadIdx.x; i < v.bound; i += blockDim.x) {
      const B x = part[i];
      if (x != kAddIdentity<D>) atomic_combine<D>(out + v.out + i * v.index_scale, x, Reduce);
    }
  }
}

// ---- sorted: a run of equal keys folded in order by its first position ----

template <int D>
__global__ void __launch_bounds__(kElementwiseBlock)
    scatter_sorted_kernel(const NBX_GPU_GRID_CONSTANT abi::ScatterParams p, Bits<D>* out,
                          const Bits<D>* src, const long long* keys_base,
                          const long long* order_base, abi::FaultRecord* fault) {
  const long long* keys = keys_base + p.index_offset;
  const long long* order = order_base + p.key_offset;
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 j = i64(blockIdx.x) * blockDim.x + threadIdx.x; j < p.numel; j += step) {
    const i64 key = keys[j];
    if (j > 0 && keys[j - 1] == key) continue;  // not a segment head
    if (key < 0 || key >= p.bound) {
      record_index_fault(fault, p.op, key, p.bound, j);
      continue;
    }
    Bits<D>* dst = out + p.out_offset + key;
    Bits<D> acc = *dst;
    for (i64 t = j; t < p.numel && keys[t] == key; ++t) {
      const i64 e = order[t];
      if (e < 0 || e >= p.numel) {
        record_index_fault(fault, p.op, e, p.numel, t);
        continue;
      }
      i64 rest = e, s = p.src_offset;
      for (int d = p.ndim - 1; d >= 0; --d)
        s += next_coordinate(rest, p.sizes[d]) * p.src_strides[d];
      acc = combine<D>(p.reduce, acc, src[s]);
    }
    *dst = acc;
  }
}

// ---- keys: each iteration element's destination offset ----

template <typename Index>
__global__ void __launch_bounds__(kElementwiseBlock)
    scatter_keys_kernel(const NBX_GPU_GRID_CONSTANT abi::ScatterParams p, long long* keys_base,
                        const Index* index, abi::FaultRecord* fault) {
  long long* keys = keys_base + p.key_offset;
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < p.numel; e += step) {
    i64 rest = e, o = 0, x = p.index_offset;
    for (int d = p.ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.sizes[d]);
      o += c * p.out_strides[d];
      x += c * p.index_strides[d];
    }
    const i64 raw = i64(index[x]);
    i64 k = raw, key = -1;
    if (!checked_index(k, p.bound, p.wrap_negative)) {
      record_index_fault(fault, p.op, raw, p.bound, index_position(p, e));
    } else {
      key = p.accumulate_keys ? keys[e] : 0;
      if (!(p.accumulate_keys && key == -1)) key += o + k * p.index_scale;
    }
    keys[e] = key;
  }
}

// ---- partitioned: the atomics bucket by bucket of destinations ----

constexpr int kBucketSlots = int(abi::kScatterMaxBuckets) + 1;  // the buckets and the bad one
constexpr int kPartitionItems = 8;  // elements a thread holds in the partition pass
constexpr int kApplyIlp = 4;        // pairs in flight per thread in the apply pass
constexpr u32 kBadPair = 0xffffffffu;

// Iteration element e's destination offset relative to out_offset before its index (`o`),
// its source (`s`) and index (`x`) elements. The outermost coordinate is what is left of e
// (e < numel): no division for it.
NBX_GPU_INLINE void element_offsets(const abi::ScatterParams& p, i64 e, i64& o, i64& s, i64& x) {
  i64 rest = e;
  o = 0, s = p.src_offset, x = p.index_offset;
  for (int d = p.ndim - 1; d > 0; --d) {
    const i64 c = next_coordinate(rest, p.sizes[d]);
    o += c * p.out_strides[d];
    s += c * p.src_strides[d];
    x += c * p.index_strides[d];
  }
  o += rest * p.out_strides[0];
  s += rest * p.src_strides[0];
  x += rest * p.index_strides[0];
}

// The bucket of element e whose index reads `raw` and whose offset before it is `o`, with
// its relative destination offset in `rel`; a bad index's is the last bucket (its fault
// recorded when `fault`).
NBX_GPU_INLINE u32 bucket_of(const abi::ScatterParams& p, i64 raw, i64 o, i64 e, u32& rel,
                             abi::FaultRecord* fault) {
  i64 k = raw;
  if (!checked_index(k, p.bound, p.wrap_negative)) {
    if (fault) record_index_fault(fault, p.op, raw, p.bound, index_position(p, e));
    rel = kBadPair;
    return u32(p.buckets);
  }
  const i64 r = o + k * p.index_scale;
  rel = u32(r);
  return u32(r >> p.bucket_shift);
}

// Elements [lo, hi) of part `part`: runs of ceil(numel / parts).
NBX_GPU_INLINE void part_range(const abi::ScatterParams& p, i64 part, i64& lo, i64& hi) {
  const i64 len = (p.numel + p.parts - 1) / p.parts;
  lo = part * len;
  hi = lo + len < p.numel ? lo + len : p.numel;
}

// Count: a block a part, its histogram of the buckets in shared memory, stored as its column
// of the counts (bucket-major).
template <typename Index>
__global__ void __launch_bounds__(kElementwiseBlock)
    scatter_count_kernel(const NBX_GPU_GRID_CONSTANT abi::ScatterParams p, u32* counts,
                         const Index* index, abi::FaultRecord* fault) {
  __shared__ u32 hist[kBucketSlots];
  const int slots = int(p.buckets) + 1;
  for (int b = threadIdx.x; b < slots; b += blockDim.x) hist[b] = 0;
  __syncthreads();
  i64 lo, hi;
  part_range(p, blockIdx.x, lo, hi);
  constexpr int kIlp = 4;
  for (i64 base = lo + threadIdx.x; base < hi; base += i64(kIlp) * kElementwiseBlock) {
    i64 raw[kIlp], o[kIlp];
#pragma unroll
    for (int u = 0; u < kIlp; ++u) {
      const i64 e = base + i64(u) * kElementwiseBlock;
      if (e < hi) {
        i64 s, x;
        element_offsets(p, e, o[u], s, x);
        raw[u] = i64(index[x]);
      }
    }
#pragma unroll
    for (int u = 0; u < kIlp; ++u) {
      const i64 e = base + i64(u) * kElementwiseBlock;
      u32 rel;
      if (e < hi) atomicAdd(&hist[bucket_of(p, raw[u], o[u], e, rel, fault)], 1u);
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < slots; b += blockDim.x)
    counts[i64(b) * p.parts + blockIdx.x] = hist[b];
}

// Partition: a block a part, its buckets' next slots from the starts; tile by tile, each
// element ranked within its bucket by a shared atomic, its pair stored at the bucket's next
// slot + rank, then the slots advanced by the tile's counts. No global atomics: the starts
// already hold every part's place in every bucket.
template <int Bytes, typename Index>
__global__ void __launch_bounds__(kElementwiseBlock)
    scatter_partition_kernel(const NBX_GPU_GRID_CONSTANT abi::ScatterParams p, uint2* pairs,
                             const typename BitsOf<Bytes>::type* src, const Index* index,
                             const u32* starts) {
  __shared__ u32 next[kBucketSlots], hist[kBucketSlots];
  const int slots = int(p.buckets) + 1, tid = threadIdx.x;
  for (int b = tid; b < slots; b += kElementwiseBlock) {
    next[b] = starts[i64(b) * p.parts + blockIdx.x];
    hist[b] = 0;
  }
  __syncthreads();
  i64 lo, hi;
  part_range(p, blockIdx.x, lo, hi);
  constexpr i64 kTile = i64(kElementwiseBlock) * kPartitionItems;
  for (i64 t0 = lo; t0 < hi; t0 += kTile) {
    // Every load and bucket first (no memory side effect between the loads), then the ranks.
    u32 rel[kPartitionItems], bucket[kPartitionItems], rank[kPartitionItems], bits[kPartitionItems];
#pragma unroll
    for (int u = 0; u < kPartitionItems; ++u) {
      const i64 e = t0 + i64(u) * kElementwiseBlock + tid;
      bucket[u] = kBadPair;  // past the part's end
      if (e < hi) {
        i64 o, s, x;
        element_offsets(p, e, o, s, x);
        bucket[u] = bucket_of(p, i64(index[x]), o, e, rel[u], nullptr);
        bits[u] = u32(src[s]);
      }
    }
#pragma unroll
    for (int u = 0; u < kPartitionItems; ++u)
      if (bucket[u] != kBadPair) rank[u] = atomicAdd(&hist[bucket[u]], 1u);
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kPartitionItems; ++u) {
      if (bucket[u] == kBadPair) continue;
      const i64 slot = i64(next[bucket[u]]) + rank[u];
      if (slot < p.numel) pairs[slot] = make_uint2(rel[u], bits[u]);  // starts not the counts'
    }
    __syncthreads();  // every slot read before it advances
#pragma unroll
    for (int u = 0; u < kPartitionItems; ++u) {
      if (bucket[u] != kBadPair && rank[u] == 0) {
        next[bucket[u]] += hist[bucket[u]];
        hist[bucket[u]] = 0;
      }
    }
    __syncthreads();
  }
}

// Apply: the pairs in order, a few in flight per thread, each combined as the atomic variant.
template <int D>
__global__ void __launch_bounds__(kElementwiseBlock)
    scatter_apply_kernel(const NBX_GPU_GRID_CONSTANT abi::ScatterParams p, Bits<D>* out,
                         const u32* ws) {
  const uint2* pairs = reinterpret_cast<const uint2*>(ws);
  constexpr i64 kTile = i64(kElementwiseBlock) * kApplyIlp;
  const i64 step = i64(gridDim.x) * kTile;
  for (i64 base = i64(blockIdx.x) * kTile + threadIdx.x; base < p.numel; base += step) {
    uint2 pair[kApplyIlp];
#pragma unroll
    for (int u = 0; u < kApplyIlp; ++u) {
      const i64 j = base + i64(u) * kElementwiseBlock;
      pair[u] = j < p.numel ? pairs[j] : make_uint2(kBadPair, 0u);
    }
#pragma unroll
    for (int u = 0; u < kApplyIlp; ++u)
      if (pair[u].x != kBadPair)
        atomic_combine<D>(out + p.out_offset + pair[u].x, Bits<D>(pair[u].y), p.reduce);
  }
}

// ---- launch ----

unsigned grid_for(i64 n, i64 per_block, const GpuLaunch& l) {
  const i64 wanted = (n + per_block - 1) / per_block;
  const i64 cap = i64(l.options->multiprocessors > 0 ? l.options->multiprocessors : 1) * 32;
  return unsigned(wanted < cap ? wanted : cap);
}

RowsView rows_view(const abi::ScatterParams& p) {
  RowsView v{};
  v.numel = p.numel;
  v.bound = p.bound;
  v.index_scale = p.index_scale;
  v.wrap_negative = p.wrap_negative;
  v.op = p.op;
  v.out = p.out_offset;
  v.src = p.src_offset;
  v.index = p.index_offset;
  v.cols = 1;
  if (p.ndim >= 1) {
    const int c = p.ndim - 1;
    v.cols = p.sizes[c];
    v.out_c = p.out_strides[c];
    v.src_c = p.src_strides[c];
    v.index_c = p.index_strides[c];
    v.pos_c = p.index_positions[c];
  }
  if (p.ndim == 2) {
    v.out_r = p.out_strides[0];
    v.src_r = p.src_strides[0];
    v.index_r = p.index_strides[0];
    v.pos_r = p.index_positions[0];
  }
  return v;
}

// The rows kernel serves what it has native atomics (or plain stores) for.
template <int D>
constexpr bool kRowsAdd = D == kInt32 || D == kInt64 || D == kFloat32 || D == kFloat64;
// Assign moves bits: one instantiation per element size.
template <int D>
constexpr int kAssignAs = kBytesOf<D> == 1   ? kUInt8
                          : kBytesOf<D> == 2 ? kInt16
                          : kBytesOf<D> == 4 ? kInt32
                                             : kInt64;

template <int D, typename Index>
void launch_atomic(const abi::ScatterParams& p, const GpuLaunch& l, Stream s) {
  auto* out = static_cast<Bits<D>*>(l.buffers[0].address);
  const auto* src = static_cast<const Bits<D>*>(l.buffers[1].address);
  const auto* index = static_cast<const Index*>(l.buffers[2].address);
  if (p.ndim <= 2) {
    const RowsView v = rows_view(p);
    const i64 per_block = i64(kElementwiseBlock) * kRowsIlp;
    const unsigned blocks = grid_for(p.numel, per_block, l);
    if (p.reduce == abi::kScatterAssign) {
      constexpr int A = kAssignAs<D>;
      scatter_rows_kernel<A, abi::kScatterAssign, false, Index>
          <<<blocks, kElementwiseBlock, 0, s>>>(v, reinterpret_cast<Bits<A>*>(out),
                                                reinterpret_cast<const Bits<A>*>(src), index,
                                                l.fault);
      return;
    }
    if constexpr (kRowsAdd<D>) {
      if (p.reduce == abi::kScatterAdd) {
        // Private copies: one wave of blocks, each adding at least kPrivateMinRatio elements
        // per destination, so the copies' setup and flush stay a small part of the work.
        const i64 slots = kPrivateBytes / i64(sizeof(Bits<D>));
        const i64 wave = i64(l.options->multiprocessors > 0 ? l.options->multiprocessors : 1) *
                         kPrivateBlocksPerSm;
        if (v.out_r == 0 && v.out_c == 0 && p.bound > 0 && p.bound <= slots &&
            p.numel / p.bound >= kPrivateMinRatio * wave) {
          scatter_rows_kernel<D, abi::kScatterAdd, true, Index>
              <<<unsigned(wave), kElementwiseBlock, size_t(p.bound) * sizeof(Bits<D>), s>>>(
                  v, out, src, index, l.fault);
          return;
        }
        scatter_rows_kernel<D, abi::kScatterAdd, false, Index>
            <<<blocks, kElementwiseBlock, 0, s>>>(v, out, src, index, l.fault);
        return;
      }
    }
  }
  scatter_atomic_kernel<D, Index>
      <<<grid_for(p.numel, kElementwiseBlock, l), kElementwiseBlock, 0, s>>>(p, out, src, index,
                                                                             l.fault);
}

template <typename Index>
void launch_partition_pass(const abi::ScatterParams& p, const GpuLaunch& l, Stream s) {
  const auto* index = static_cast<const Index*>(l.buffers[2].address);
  const unsigned blocks = unsigned(p.parts);  // a block a part
  if (p.pass == abi::kPassCount) {
    scatter_count_kernel<Index><<<blocks, kElementwiseBlock, 0, s>>>(
        p, static_cast<u32*>(l.buffers[0].address), index, l.fault);
    return;
  }
  auto* pairs = static_cast<uint2*>(l.buffers[0].address);
  const void* src = l.buffers[1].address;
  const auto* starts = static_cast<const u32*>(l.buffers[3].address);
  const int item = p.dtype == kBool || p.dtype == kInt8 || p.dtype == kUInt8          ? 1
                   : p.dtype == kInt16 || p.dtype == kFloat16 || p.dtype == kBFloat16 ? 2
                                                                                      : 4;
  switch (item) {
    case 1:
      scatter_partition_kernel<1, Index><<<blocks, kElementwiseBlock, 0, s>>>(
          p, pairs, static_cast<const unsigned char*>(src), index, starts);
      break;
    case 2:
      scatter_partition_kernel<2, Index><<<blocks, kElementwiseBlock, 0, s>>>(
          p, pairs, static_cast<const unsigned short*>(src), index, starts);
      break;
    default:
      scatter_partition_kernel<4, Index><<<blocks, kElementwiseBlock, 0, s>>>(
          p, pairs, static_cast<const u32*>(src), index, starts);
      break;
  }
}

template <int D>
void launch_dtype(const abi::ScatterParams& p, const GpuLaunch& l, Stream s) {
  if constexpr (kBytesOf<D> <= 4) {
    if (p.variant == abi::kScatterPartitioned) {
      const i64 per_block = i64(kElementwiseBlock) * kApplyIlp;
      scatter_apply_kernel<D><<<grid_for(p.numel, per_block, l), kElementwiseBlock, 0, s>>>(
          p, static_cast<Bits<D>*>(l.buffers[0].address),
          static_cast<const u32*>(l.buffers[2].address));
      return;
    }
  }
  if (p.variant == abi::kScatterSorted) {
    scatter_sorted_kernel<D><<<grid_for(p.numel, kElementwiseBlock, l), kElementwiseBlock, 0, s>>>(
        p, static_cast<Bits<D>*>(l.buffers[0].address),
        static_cast<const Bits<D>*>(l.buffers[1].address),
        static_cast<const long long*>(l.buffers[2].address),
        static_cast<const long long*>(l.buffers[3].address), l.fault);
  } else if (p.index_dtype == kInt64) {
    launch_atomic<D, long long>(p, l, s);
  } else {
    launch_atomic<D, int>(p, l, s);
  }
}

}  // namespace

ElementwiseLaunchResult launch_family(const abi::ScatterParams& params, const GpuLaunch& l) {
  ElementwiseLaunchResult result;
  result.call = "scatter launch";
  result.path = ElementwisePath::kGeneric;
  if (params.numel == 0) return result;
  const Stream s = static_cast<Stream>(l.stream);

  // Fewer dims: fewer divisions per element, and the rows kernel for more launches. Only the
  // strides a variant reads take part (the others need not be meaningful).
  abi::ScatterParams p = params;
  std::int64_t* strides[4];
  int arrays = 0;
  if (p.variant == abi::kScatterSorted) {
    strides[arrays++] = p.src_strides;
  } else {
    strides[arrays++] = p.out_strides;
    strides[arrays++] = p.index_strides;
    strides[arrays++] = p.index_positions;
    if (p.variant != abi::kScatterKeys) strides[arrays++] = p.src_strides;
  }
  p.ndim = collapse_strided_dims(p.ndim, p.sizes, strides, arrays);

  if (p.variant == abi::kScatterPartitioned && p.pass != abi::kPassApply) {
    if (p.index_dtype == kInt64)
      launch_partition_pass<long long>(p, l, s);
    else
      launch_partition_pass<int>(p, l, s);
    result.error = int(last_launch_error());
    return result;
  }

  if (p.variant == abi::kScatterKeys) {
    auto* keys = static_cast<long long*>(l.buffers[0].address);
    const unsigned blocks = grid_for(p.numel, kElementwiseBlock, l);
    if (p.index_dtype == kInt64)
      scatter_keys_kernel<long long><<<blocks, kElementwiseBlock, 0, s>>>(
          p, keys, static_cast<const long long*>(l.buffers[2].address), l.fault);
    else
      scatter_keys_kernel<int><<<blocks, kElementwiseBlock, 0, s>>>(
          p, keys, static_cast<const int*>(l.buffers[2].address), l.fault);
  } else {
    switch (p.dtype) {
      case kBool:
        launch_dtype<kBool>(p, l, s);
        break;
      case kInt8:
        launch_dtype<kInt8>(p, l, s);
        break;
      case kUInt8:
        launch_dtype<kUInt8>(p, l, s);
        break;
      case kInt16:
        launch_dtype<kInt16>(p, l, s);
        break;
      case kInt32:
        launch_dtype<kInt32>(p, l, s);
        break;
      case kInt64:
        launch_dtype<kInt64>(p, l, s);
        break;
      case kFloat16:
        launch_dtype<kFloat16>(p, l, s);
        break;
      case kBFloat16:
        launch_dtype<kBFloat16>(p, l, s);
        break;
      case kFloat32:
        launch_dtype<kFloat32>(p, l, s);
        break;
      default:
        launch_dtype<kFloat64>(p, l, s);
        break;
    }
  }
  result.error = int(last_launch_error());
  return result;
}

}  // namespace nbx::gpu
