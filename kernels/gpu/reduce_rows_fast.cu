// The "reduce" family's contiguous-row kernel (the default; NBX_GPU_ROWS=general opts out). The
// general kernel (reduce_kernels.cu) pays, per element, an N-d offset decomposition (64-bit
// divisions), a run-time dtype switch and a scalar load, and per row a shared-memory tree with a
// barrier per level: on the H200 it reduced a [32768, 4096] float32 tensor at 575 GB/s, and
// bfloat16 took as long (docs/performance.md, "Op wave 1"). Here, for rows contiguous in memory:
//   - the storage dtype and the accumulate type are template parameters, and so is the op's
//     kind (sum, product, maximum, minimum, count), dispatched once at launch;
//   - a row's kept-dim offset is decomposed once per row; elements are read as 16-byte
//     vectors from the first 16-byte aligned element of the row (a scalar head before it and
//     a scalar tail after the last whole vector), 4 vectors in flight per thread, a whole
//     vector folded at a time (fold_vec);
//   - a few lanes of a warp (a power of two: about 128 vectors each) reduce a row through
//     shuffles of each state field; few long rows get up to a block of warps per row, whose
//     states meet in shared memory after ONE barrier (double-buffered by round).
// On the H200 (2026-11-30): 32768×4096 rows at 4.0 TB/s in float32 and 3.6 TB/s in
// bfloat16, 1.0–1.6× PyTorch (docs/performance.md).
// Semantics are reduce_state.cuh's, shared with the general kernel: NaN propagation, first
// index among ties, compensated float sums, int64 wrap-around. States combine in a fixed
// order: results are deterministic. Within one partial state elements arrive in increasing
// index order, which the extreme fold relies on (ties keep the earlier element).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/reduce_rows_fast.hpp"
#include "kernels/gpu/reduce_state.cuh"

namespace nbx::gpu {
namespace {

using namespace reduce_detail;

constexpr int kFastBlock = 256;
// 16-byte vectors in flight per thread: a template parameter U of the kernel (4 or 8).

enum Kind : int { kSumKind, kProdKind, kMaxKind, kMinKind, kCountKind, kLseKind };

// logsumexp in one pass (cross_entropy's vocab-sized rows read once, not twice as the general
// kernel's max pass then exp-sum pass): the state keeps the running maximum m in v and
// Σ exp(x − m) in comp, rescaled when m grows. The answer is the general kernel's: NaN when an
// element is NaN, +inf when one is +inf, −inf for a row of −inf, else m + log Σ.
template <typename C>
NBX_GPU_INLINE void lse_fold(State<C>& s, C x) {
  if (nan_value(s.v)) return;
  if (nan_value(x)) {
    s.v = x;
  } else if (x == C(-INFINITY) || s.v == C(INFINITY)) {
    // exp(−inf − m) adds nothing; past +inf the answer is +inf whatever follows.
  } else if (x > s.v) {
    s.comp = (s.v == C(-INFINITY) ? C(0) : s.comp * C(exp(s.v - x))) + C(1);
    s.v = x;
  } else {
    s.comp += C(exp(x - s.v));
  }
}

template <typename C>
NBX_GPU_INLINE State<C> lse_merge(State<C> a, const State<C>& b) {
  if (nan_value(a.v) || nan_value(b.v)) {
    a.v = nan_value(a.v) ? a.v : b.v;
  } else if (b.v == C(-INFINITY) || a.v == C(INFINITY)) {
  } else if (a.v == C(-INFINITY) || b.v == C(INFINITY)) {
    a = b;
  } else if (b.v > a.v) {
    a.comp = a.comp * C(exp(a.v - b.v)) + b.comp;
    a.v = b.v;
  } else {
    a.comp += b.comp * C(exp(b.v - a.v));
  }
  return a;
}

template <typename C>
NBX_GPU_INLINE C lse_result(const State<C>& s) {
  if (nan_value(s.v) || s.v == C(INFINITY) || s.v == C(-INFINITY)) return s.v;
  return s.v + C(log(s.comp));
}

// bool's storage: a byte read as "!= 0" (what load_as does), never as a C++ bool.
struct BoolByte {
  std::uint8_t b;
};

template <typename C, typename T>
NBX_GPU_INLINE C element_value(T x) {
  return to_compute<C>(x);
}
template <typename C>
NBX_GPU_INLINE C element_value(BoolByte x) {
  return x.b != 0 ? C(1) : C(0);
}

template <typename T>
struct alignas(16) Vec {
  T x[16 / sizeof(T)];
};

// The state an empty partial starts from. The count kind counts in the int64 field `idx`
// (exact for any row length).
template <int K, typename C>
NBX_GPU_INLINE State<C> start_state(int op) {
  State<C> s = identity<C>(op, 0.0);
  if constexpr (K == kCountKind) s.idx = 0;
  return s;
}

// Folds element x at row position k into s. Positions arrive in increasing order within a
// state, so an extreme replaces the state only when strictly better (or the first NaN):
// better_extreme's tie rule (smaller index wins) without its index comparisons.
template <int K, typename C>
NBX_GPU_INLINE void fold_one(State<C>& s, C x, i64 k) {
  if constexpr (K == kSumKind) {
    add_compensated(s, x, C(0));
  } else if constexpr (K == kLseKind) {
    (void)k;
    lse_fold(s, x);
  } else if constexpr (K == kProdKind) {
    if constexpr (IsFloatCompute<C>::value) {
      s.v *= x;
    } else {
      s.v = i64((unsigned long long)s.v * (unsigned long long)x);
    }
  } else if constexpr (K == kMaxKind || K == kMinKind) {
    const bool better = K == kMaxKind ? x > s.v : x < s.v;
    if (s.idx < 0 || (!nan_value(s.v) && (nan_value(x) || better))) {
      s.v = x;
      s.idx = k;
    }
  } else {
    s.idx += x != C(0) ? 1 : 0;
  }
}

// Folds a whole 16-byte vector (elements k0, k0 + 1, …) into s, with the result fold_one
// would give element by element, for a fraction of the work: the first H200 run of this
// kernel (32768×4096) reached 3.2 TB/s in float32 but 2.4 TB/s in bfloat16, where eight
// elements share each load and the per-element compensated add and index bookkeeping, not
// memory, set the pace.
//   - float sums add the vector's elements pairwise first (a fixed tree, at most 4 levels
//     deep), then fold that one value into the compensated state;
//   - extremes find the vector's first NaN, or its first best element, then compare that one
//     with the state (the first NaN wins; ties keep the state's earlier element);
//   - counts add the vector's nonzero count.
// Products and integer sums stay element by element (wrap-around and rounding order).
template <int K, typename T, typename C>
NBX_GPU_INLINE void fold_vec(State<C>& s, const Vec<T>& x, i64 k0) {
  constexpr int kVec = int(16 / sizeof(T));
  if constexpr (K == kSumKind && IsFloatCompute<C>::value) {
    C t[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) t[j] = element_value<C>(x.x[j]);
#pragma unroll
    for (int w = kVec / 2; w > 0; w /= 2)
#pragma unroll
      for (int j = 0; j < w; ++j) t[j] += t[j + w];
    add_compensated(s, t[0], C(0));
  } else if constexpr (K == kMaxKind || K == kMinKind) {
    // The vector's extreme by plain max/min (NaN dropped) and a sum that is NaN when any
    // element is NaN (or ±inf of both signs meet): only when that extreme beats the state,
    // or the sum is NaN, is the vector folded element by element — rarely, for data whose
    // running extreme settles early — so the common vector costs a max and an add per element.
    C m = element_value<C>(x.x[0]), nan_probe = m;
#pragma unroll
    for (int j = 1; j < kVec; ++j) {
      const C c = element_value<C>(x.x[j]);
      m = K == kMaxKind ? (c > m ? c : m) : (c < m ? c : m);
      if constexpr (IsFloatCompute<C>::value) nan_probe += c;
    }
    const bool maybe_nan = nan_value(nan_probe) || nan_value(m);
    const bool better = s.idx < 0 || (!nan_value(s.v) && (K == kMaxKind ? m > s.v : m < s.v));
    if (better || (maybe_nan && !nan_value(s.v))) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) fold_one<K>(s, element_value<C>(x.x[j]), k0 + j);
    }
  } else if constexpr (K == kLseKind) {
    // The vector's maximum rescales the state once; then one exp per element. A vector or
    // state holding NaN or an infinity goes element by element (lse_fold's rules).
    C t[kVec];
    C m = element_value<C>(x.x[0]), probe = C(0);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      t[j] = element_value<C>(x.x[j]);
      m = t[j] > m ? t[j] : m;
      probe += t[j];
    }
    if (!isfinite(probe) || !isfinite(m) || nan_value(s.v) || s.v == C(INFINITY)) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) lse_fold(s, t[j]);
      return;
    }
    if (m > s.v) {
      s.comp = s.v == C(-INFINITY) ? C(0) : s.comp * C(exp(s.v - m));
      s.v = m;
    }
    C sum = C(0);
#pragma unroll
    for (int j = 0; j < kVec; ++j) sum += C(exp(t[j] - s.v));
    s.comp += sum;
    (void)k0;
  } else if constexpr (K == kCountKind) {
    i64 n = 0;
#pragma unroll
    for (int j = 0; j < kVec; ++j) n += element_value<C>(x.x[j]) != C(0) ? 1 : 0;
    s.idx += n;
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j) fold_one<K>(s, element_value<C>(x.x[j]), k0 + j);
  }
}

// Combines two partial states; `a` holds the earlier elements.
template <int K, typename C>
NBX_GPU_INLINE State<C> merge(int op, State<C> a, const State<C>& b) {
  if constexpr (K == kCountKind) {
    a.idx += b.idx;
    return a;
  } else if constexpr (K == kLseKind) {
    (void)op;
    return lse_merge(a, b);
  } else {
    return combine(op, 0.0, a, b);
  }
}

// Every lane of the warp must call this (no lane may have left): lane 0 ends with the
// combination of all lanes' states, lower lanes first.
template <int K, typename C>
NBX_GPU_INLINE State<C> warp_merge(int op, State<C> s, int width) {
  for (int off = width / 2; off > 0; off /= 2) {
    State<C> o = s;
    o.v = warp_shuffle_down(s.v, unsigned(off));
    if constexpr ((K == kSumKind && IsFloatCompute<C>::value) || K == kLseKind)
      o.comp = warp_shuffle_down(s.comp, unsigned(off));
    if constexpr (K == kMaxKind || K == kMinKind || K == kCountKind)
      o.idx = warp_shuffle_down(s.idx, unsigned(off));
    s = merge<K>(op, s, o);
  }
  return s;
}

// Folds row[0, n) into a state: lane g of a group of `group` lanes reads the head elements
// before the first 16-byte boundary (fewer than a vector, so fewer than `group`), the
// vectors g, g + group, … (U at a time, into U independent states), and the tail
// elements after the last whole vector.
template <int K, int U, typename T, typename C>
NBX_GPU_INLINE State<C> fold_row(int op, const T* row, i64 n, int g, int group) {
  constexpr int kVec = int(16 / sizeof(T));
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(row);
  // Elements before the first 16-byte aligned one; a row not even aligned to its element
  // (no allocator gives one) is read element by element.
  i64 head = address % sizeof(T) != 0 ? n : i64((16 - address % 16) % 16 / sizeof(T));
  if (head > n) head = n;
  // Sums and products fold into U independent states (their dependency chains are long);
  // an extreme or a count into one (a compare and select per vector), which keeps the
  // registers of U = 8 in check.
  constexpr int kStates = K == kSumKind || K == kProdKind || K == kLseKind ? U : 1;
  State<C> s[kStates];
  for (int u = 0; u < kStates; ++u) s[u] = start_state<K, C>(op);
  for (i64 k = g; k < head; k += group) fold_one<K>(s[0], element_value<C>(row[k]), k);
  const i64 vectors = (n - head) / kVec;
  const Vec<T>* vec = reinterpret_cast<const Vec<T>*>(row + head);
  i64 v = g;
  const Vec<T>* at = vec + g;  // = vec + v: one pointer and 32-bit offsets per load
  for (; v + i64(U - 1) * group < vectors; v += i64(U) * group, at += i64(U) * group) {
    Vec<T> x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) x[u] = at[u * group];
#pragma unroll
    for (int u = 0; u < U; ++u)
      fold_vec<K>(s[u % kStates], x[u], head + (v + i64(u) * group) * kVec);
  }
  for (; v < vectors; v += group) {
    fold_vec<K>(s[0], vec[v], head + v * kVec);
  }
  for (i64 k = head + vectors * kVec + g; k < n; k += group)
    fold_one<K>(s[0], element_value<C>(row[k]), k);
#pragma unroll
  for (int u = 1; u < kStates; ++u) s[0] = merge<K>(op, s[0], s[u]);
  return s[0];
}

// A row is reduced by `lanes` lanes of one warp (a power of two ≤ the warp: several short
// rows share a warp) or by warps_per_row whole warps (a power of two: few long rows); a block
// serves rows_per_block rows per round. Every thread runs the same number of rounds, so the
// barrier (only when warps_per_row > 1, a value uniform over the grid) is reached by all.
template <int K, int U, int MinBlocks, typename T, typename C>
__global__ void __launch_bounds__(kFastBlock, MinBlocks)
    reduce_rows_fast_kernel(const abi::ReduceParams p, int warps_per_row, int lanes, void* out,
                            const void* in, void* indices) {
  constexpr int kWarps = kFastBlock / kWarpSize;
  __shared__ State<C> partial[2][kWarps];
  const int wpr = warps_per_row < kWarps ? warps_per_row : kWarps;
  const int width = wpr > 1 || lanes > kWarpSize ? kWarpSize : lanes;  // lanes of a warp per row
  const int warp = int(threadIdx.x) / kWarpSize, lane = int(threadIdx.x) % kWarpSize;
  const int group = wpr * width;
  const int g = (warp % wpr) * kWarpSize + lane % width;  // this thread's lane in its row's group
  const i64 rows_per_warp = kWarpSize / width;
  const i64 rows_per_block = kWarps / wpr * rows_per_warp;
  const i64 first_row =
      i64(blockIdx.x) * rows_per_block + (warp / wpr) * rows_per_warp + lane / width;
  const i64 row_step = i64(gridDim.x) * rows_per_block;
  const i64 rounds = (p.rows + row_step - 1) / row_step;
  const T* base = static_cast<const T*>(in);
  for (i64 round = 0; round < rounds; ++round) {
    const i64 row = first_row + round * row_step;
    const bool active = row < p.rows;  // the same for every lane of a row's group
    i64 rest = active ? row : 0, in_off = p.in_offset, out_off = p.out_offset,
        idx_off = p.index_offset;
    for (int d = p.out_ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.out_sizes[d]);
      in_off += c * p.in_kept_strides[d];
      out_off += c * p.out_strides[d];
      idx_off += c * p.index_strides[d];
    }
    State<C> s = active ? fold_row<K, U, T, C>(p.op, base + in_off, p.row_len, g, group)
                        : start_state<K, C>(p.op);
    s = warp_merge<K>(p.op, s, width);  // every lane takes part: inactive ones add identities
    if (wpr > 1) {
      State<C>* buffer = partial[round & 1];  // the other round's buffer may still be read
      if (lane == 0) buffer[warp] = s;
      __syncthreads();
      if (g == 0)
        for (int w = 1; w < wpr; ++w) s = merge<K>(p.op, s, buffer[warp + w]);
    }
    if (!active || g != 0) continue;
    if constexpr (K == kCountKind) {
      if (p.op == abi::kReduce_count_nonzero) {
        store_as<i64>(out, p.out_dtype, out_off, s.idx);
        continue;
      }
      const bool r = p.op == abi::kReduce_any ? s.idx > 0 : s.idx == p.row_len;
      s.v = r ? C(1) : C(0);
    }
    if constexpr (K == kLseKind) s.v = lse_result(s);
    store_result(p, s, out, out_off, indices, idx_off);
  }
}

int kind_of(int op) {
  switch (op) {
    case abi::kReduce_sum:
    case abi::kReduce_mean:
      return kSumKind;
    case abi::kReduce_prod:
      return kProdKind;
    case abi::kReduce_amax:
    case abi::kReduce_argmax:
    case abi::kReduce_max_with_index:
      return kMaxKind;
    case abi::kReduce_amin:
    case abi::kReduce_argmin:
    case abi::kReduce_min_with_index:
      return kMinKind;
    case abi::kReduce_any:
    case abi::kReduce_all:
    case abi::kReduce_count_nonzero:
      return kCountKind;
    case abi::kReduce_logsumexp:
      return kLseKind;
    default:
      return -1;  // var, std, norm: the general kernel
  }
}

// Whether `acc` is the accumulation this kernel instantiates for input dtype `in` (the
// general kernel's C for it): float for 16-bit floats and float32, double, int64.
bool usual_accumulation(int in, int acc) {
  const bool acc_float = acc == kFloat16 || acc == kBFloat16 || acc == kFloat32;
  switch (in) {
    case kFloat16:
    case kBFloat16:
    case kFloat32:
      return acc_float;
    case kFloat64:
      return acc == kFloat64;
    case kBool:
    case kInt8:
    case kUInt8:
    case kInt16:
    case kInt32:
    case kInt64:
      return !acc_float && acc != kFloat64;
    default:
      return false;
  }
}

struct Launch {
  unsigned blocks;
  int warps_per_row;
  int lanes;  // lanes of a warp per row (warps_per_row == 1)
  Stream stream;
  void* out;
  const void* in;
  void* indices;
};

// Four 16-byte vectors in flight per lane, and for 16- and 32-bit floats registers capped for
// 4 blocks (1024 threads) per SM: on the H200 (2026-11-30, 32768×4096 rows) this beat 8
// vectors in flight (fewer resident warps) and a cap for 5 blocks (spills) for every op and
// dtype measured. Integer and float64 states (int64 / double fields) would spill under the
// cap: the compiler sizes those.
constexpr int kUnroll = 4;

template <int K, typename T, typename C>
void launch_kind(const abi::ReduceParams& p, const Launch& l) {
  constexpr int kMinBlocks = IsFloatCompute<C>::value && sizeof(C) == 4 ? 4 : 1;
  reduce_rows_fast_kernel<K, kUnroll, kMinBlocks, T, C>
      <<<l.blocks, kFastBlock, 0, l.stream>>>(p, l.warps_per_row, l.lanes, l.out, l.in, l.indices);
}

template <typename T, typename C>
void launch_dtype(const abi::ReduceParams& p, const Launch& l) {
  switch (kind_of(p.op)) {
    case kSumKind:
      return launch_kind<kSumKind, T, C>(p, l);
    case kProdKind:
      return launch_kind<kProdKind, T, C>(p, l);
    case kMaxKind:
      return launch_kind<kMaxKind, T, C>(p, l);
    case kMinKind:
      return launch_kind<kMinKind, T, C>(p, l);
    case kLseKind:
      if constexpr (IsFloatCompute<C>::value) return launch_kind<kLseKind, T, C>(p, l);
      return;  // eligibility admits logsumexp with float accumulation only
    default:
      return launch_kind<kCountKind, T, C>(p, l);
  }
}

// NBX_GPU_REDUCE_ROWS=LANES (a power of two) fixes the lanes per row of every launch whose
// rows a single warp serves, so one benchmark run can measure the choices the heuristic in
// launch_reduce_rows_fast weighs; unset (or malformed: ignored) → the heuristic. Read once.
int forced_lanes() {
  static const int lanes = [] {
    const char* v = std::getenv("NBX_GPU_REDUCE_ROWS");
    int n = 0;
    if (v && std::sscanf(v, "%d", &n) == 1 && n >= 1 && n <= 64 && (n & (n - 1)) == 0) return n;
    return 0;
  }();
  return lanes;
}

}  // namespace

bool reduce_rows_fast_eligible(const abi::ReduceParams& p) {
  const bool float_acc = p.accumulate_dtype == kFloat16 || p.accumulate_dtype == kBFloat16 ||
                         p.accumulate_dtype == kFloat32 || p.accumulate_dtype == kFloat64;
  return p.red_ndim == 1 && p.in_red_strides[0] == 1 && p.row_len >= 1 && p.rows >= 1 &&
         kind_of(p.op) >= 0 && usual_accumulation(p.in_dtype, p.accumulate_dtype) &&
         (kind_of(p.op) != kLseKind || float_acc);
}

bool launch_reduce_rows_fast(const abi::ReduceParams& p, const BoundBuffer* buffers,
                             int num_buffers, const ElementwiseOptions& options, void* stream,
                             ElementwiseLaunchResult& result) {
  if (!reduce_rows_fast_eligible(p)) return false;
  // Warps per row: one, unless there are too few rows to give every SM its fill of warps
  // (2048 threads) and the rows are long enough for more warps to share (two rounds of
  // unrolled vectors per lane at least).
  const int warp = options.warp_size == 64 ? 64 : 32;
  const int warps_per_block = kFastBlock / warp;
  const i64 vec = 16 / dtype_bytes(p.in_dtype);
  const i64 mps = options.multiprocessors > 0 ? options.multiprocessors : 1;
  const i64 target_warps = mps * (2048 / warp);
  // No more lanes per row than the launch's row_tile (the wrapper's clamp to
  // reduce.tile_max and the block size).
  const i64 tile = p.row_tile > 0 ? p.row_tile : 1;
  int wpr = 1;
  while (wpr < warps_per_block && i64(wpr) * 2 * warp <= tile && p.rows * wpr < target_warps &&
         p.row_len >= i64(wpr) * 2 * warp * vec * kUnroll)
    wpr *= 2;
  // Lanes per row (when one warp or less serves a row): about 128 vectors per lane — each
  // row's shuffle tree and store are then a small part of its time (H200, 32768 rows of 4096:
  // 8 lanes for float32, 4 for bfloat16 were the fastest of 1–32 for sum and amax alike) —
  // but enough lanes that the rows fill half the resident threads (1024 per SM), and fewer
  // for rows shorter than a warp of vectors, so no lane idles.
  int lanes = 1;
  if (wpr > 1) {
    lanes = warp;
  } else if (forced_lanes()) {
    lanes = forced_lanes() < warp ? forced_lanes() : warp;
  } else {
    const i64 row_vectors = (p.row_len + vec - 1) / vec;
    while (lanes < warp && i64(lanes) * 2 * 128 <= row_vectors) lanes *= 2;
    while (lanes < warp && p.rows * lanes < mps * 512 && i64(lanes) < row_vectors) lanes *= 2;
  }
  while (i64(lanes) > tile) lanes /= 2;
  const i64 rows_per_block = i64(warps_per_block / wpr) * (warp / lanes);
  const i64 wanted = (p.rows + rows_per_block - 1) / rows_per_block;
  const i64 cap = mps * 32;
  Launch l{unsigned(wanted < cap ? wanted : cap),
           wpr,
           lanes,
           static_cast<Stream>(stream),
           buffers[0].address,
           buffers[1].address,
           num_buffers > 2 ? buffers[2].address : nullptr};
  switch (p.in_dtype) {
    case kFloat16:
      launch_dtype<half_t, float>(p, l);
      break;
    case kBFloat16:
      launch_dtype<bfloat16_t, float>(p, l);
      break;
    case kFloat32:
      launch_dtype<float, float>(p, l);
      break;
    case kFloat64:
      launch_dtype<double, double>(p, l);
      break;
    case kBool:
      launch_dtype<BoolByte, i64>(p, l);
      break;
    case kInt8:
      launch_dtype<std::int8_t, i64>(p, l);
      break;
    case kUInt8:
      launch_dtype<std::uint8_t, i64>(p, l);
      break;
    case kInt16:
      launch_dtype<std::int16_t, i64>(p, l);
      break;
    case kInt32:
      launch_dtype<std::int32_t, i64>(p, l);
      break;
    default:
      launch_dtype<i64, i64>(p, l);
      break;
  }
  result.error = int(last_launch_error());
  result.call = "reduce launch (contiguous rows)";
  result.path = ElementwisePath::kRows;
  return true;
}

}  // namespace nbx::gpu
