// The "scan" kernel family for CUDA and HIP: cumsum, cumprod, cummax, cummin along one dim
// (kernel ABI: abi::ScanParams, semantics backends/host/host_scan.cpp).
//
// Every op is an associative combine of run states: the state of a run of elements (its
// sum, product, or running extreme and that extreme's index) followed by the state of the
// next run gives the state of both. Each thread reads a few consecutive elements of its row
// and folds them into one state; the lanes scan those states (shuffles, then shared memory
// across warps) into each thread's exclusive prefix; each thread re-folds its elements from
// that prefix, writing every inclusive value. A carry takes the prefix from one tile of the
// row to the next. Two kernels:
//  - groups: 1 to 32 lanes per row (sub-warp shuffles, so the same on 32- and 64-wide
//    warps), many rows per block, each row in tiles of group × 4 elements: short rows, many
//    rows of any length, and (a lane per row) rows that lie next to each other in memory;
//  - long rows: one block of 512 threads per row, tiles of 512 × 16 elements, a block-wide
//    scan of the warps' states through shared memory (any warp size): few long rows.
// Float sums are compensated (compensated_sum.cuh) and each sum + compensation pair rounds
// once to the output dtype through double, so the result is the correctly rounded prefix up
// to the compensation's own error — as the host's float64 sum rounded once. Float products
// multiply in the accumulate dtype (float32 for float16/bfloat16/float32). Extremes are
// exact: PyTorch's cummax_cummin_helper (ties take the later index, a NaN sticks, a later
// NaN takes the index), integers compared as int64.
#include <cstring>
#include <string>

#include "core/errors.hpp"
#include "kernels/gpu/compensated_sum.cuh"
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/scan_launch.hpp"

namespace nbx::gpu {
namespace {

constexpr int kGroupBlock = 256;  // threads per block of the groups kernel
constexpr int kGroupItems = 4;    // consecutive elements per lane there
constexpr int kMaxGroup = 32;     // lanes per row there: the narrowest warp of any target
constexpr int kLongBlock = 512;   // threads per block (one row at a time) of the long kernel
constexpr int kLongItems = 16;    // consecutive elements per thread there

template <int Op>
inline constexpr bool kExtreme = Op == abi::kScan_cummax || Op == abi::kScan_cummin;

template <typename C>
struct ScanState {
  C v;      // running sum, product or extreme
  C comp;   // float sums: the compensation of v
  i64 idx;  // extremes: the extreme's position in the row; -1 before any element
};

template <int Op, typename C>
NBX_GPU_INLINE ScanState<C> identity() {
  return {Op == abi::kScan_cumprod ? C(1) : C(0), C(0), -1};
}

template <typename C>
NBX_GPU_INLINE bool is_nan(C x) {
  return x != x;  // never true for integers
}

// The later value takes over the running extreme when it is NaN, or when neither is NaN and
// it compares >= (cummax) / <= (cummin): the host's takes_over.
template <int Op, typename C>
NBX_GPU_INLINE bool takes_over(C later, C earlier) {
  if (is_nan(later)) return true;
  if (is_nan(earlier)) return false;
  return Op == abi::kScan_cummax ? later >= earlier : later <= earlier;
}

// The state of run `a` followed by run `b`. For extremes, the sequential rule continued
// from a's state through b ends in b's own state exactly when b's extreme takes over a's
// (b's last NaN, or b's last occurrence of its extreme), otherwise in a's: so the combine
// is associative and the scan gives the host's indices.
template <int Op, typename C>
NBX_GPU_INLINE ScanState<C> combine(ScanState<C> a, const ScanState<C>& b) {
  if constexpr (Op == abi::kScan_cumsum) {
    if constexpr (IsFloatCompute<C>::value) {
      two_sum_add(a.v, a.comp, b.v, b.comp);
    } else {
      a.v = i64((unsigned long long)a.v + (unsigned long long)b.v);  // wraps as int64
    }
  } else if constexpr (Op == abi::kScan_cumprod) {
    if constexpr (IsFloatCompute<C>::value) {
      a.v *= b.v;
    } else {
      a.v = i64((unsigned long long)a.v * (unsigned long long)b.v);
    }
  } else {
    if (b.idx >= 0 && (a.idx < 0 || takes_over<Op>(b.v, a.v))) return b;
  }
  return a;
}

// Folds element x, at position k of the row, into s.
template <int Op, typename C>
NBX_GPU_INLINE void fold(ScanState<C>& s, C x, i64 k) {
  if constexpr (kExtreme<Op>) {
    if (s.idx < 0 || takes_over<Op>(x, s.v)) s = ScanState<C>{x, C(0), k};
  } else {
    s = combine<Op>(s, ScanState<C>{x, C(0), -1});
  }
}

// Another lane's state; every lane of the warp must call it (the fields the op uses only).
template <int Op, typename C>
NBX_GPU_INLINE ScanState<C> shuffle_state(ScanState<C> s, int src_lane) {
  s.v = warp_shuffle(s.v, src_lane);
  if constexpr (Op == abi::kScan_cumsum && IsFloatCompute<C>::value)
    s.comp = warp_shuffle(s.comp, src_lane);
  if constexpr (kExtreme<Op>) s.idx = warp_shuffle(s.idx, src_lane);
  return s;
}

// Inclusive scan over `width` consecutive lanes (a power of two that divides the warp, the
// segments aligned), `pos` being the lane's place in its segment. Every lane of the warp must
// call it with the same width.
template <int Op, typename C>
NBX_GPU_INLINE ScanState<C> segment_inclusive_scan(ScanState<C> s, int pos, int width) {
  const int lane = lane_id();
  for (int d = 1; d < width; d *= 2) {
    const ScanState<C> o = shuffle_state<Op>(s, pos >= d ? lane - d : lane);
    if (pos >= d) s = combine<Op>(o, s);
  }
  return s;
}

// Element loads as raw bits first, converted after all of a thread's loads are issued: a
// conversion right after its load would wait for it, one element at a time.
NBX_GPU_INLINE unsigned long long load_bits(const void* base, int bytes, i64 index) {
  switch (bytes) {
    case 1:
      return static_cast<const std::uint8_t*>(base)[index];
    case 2:
      return static_cast<const std::uint16_t*>(base)[index];
    case 4:
      return static_cast<const std::uint32_t*>(base)[index];
    default:
      return static_cast<const unsigned long long*>(base)[index];
  }
}

template <typename C>
NBX_GPU_INLINE C bits_as(unsigned long long bits, int dtype) {
  switch (dtype) {
    case kBool:
      return (bits & 0xffu) != 0 ? C(1) : C(0);
    case kInt8:
      return to_compute<C>(static_cast<std::int8_t>(bits));
    case kUInt8:
      return to_compute<C>(static_cast<std::uint8_t>(bits));
    case kInt16:
      return to_compute<C>(static_cast<std::int16_t>(bits));
    case kInt32:
      return to_compute<C>(static_cast<std::int32_t>(bits));
    case kInt64:
      return to_compute<C>(static_cast<i64>(bits));
    case kFloat16: {
      const std::uint16_t u = static_cast<std::uint16_t>(bits);
      half_t h;
      memcpy(&h, &u, sizeof u);
      return to_compute<C>(h);
    }
    case kBFloat16: {
      const std::uint16_t u = static_cast<std::uint16_t>(bits);
      bfloat16_t h;
      memcpy(&h, &u, sizeof u);
      return to_compute<C>(h);
    }
    case kFloat32: {
      const std::uint32_t u = static_cast<std::uint32_t>(bits);
      float f;
      memcpy(&f, &u, sizeof u);
      return to_compute<C>(f);
    }
    default: {
      double d;
      memcpy(&d, &bits, sizeof d);
      return to_compute<C>(d);
    }
  }
}

// A row's start in each operand (row-major over the outer dims).
struct RowOffsets {
  i64 in, out, idx;
};
NBX_GPU_INLINE RowOffsets row_offsets(const abi::ScanParams& p, i64 row) {
  RowOffsets o{p.in_offset, p.out_offset, p.index_offset};
  for (int d = p.outer_ndim - 1; d >= 0; --d) {
    const i64 c = next_coordinate(row, p.outer_sizes[d]);
    o.in += c * p.in_outer_strides[d];
    o.out += c * p.out_outer_strides[d];
    o.idx += c * p.index_outer_strides[d];
  }
  return o;
}

// Elements first .. first + K - 1 of the row (those below n; the rest read as 0, unused).
template <int K, typename C>
NBX_GPU_INLINE void load_items(C (&x)[K], const abi::ScanParams& p, int in_bytes, const void* in,
                               const RowOffsets& o, i64 first, i64 n) {
  unsigned long long bits[K];
#pragma unroll
  for (int j = 0; j < K; ++j)
    bits[j] = first + j < n ? load_bits(in, in_bytes, o.in + (first + j) * p.in_row_stride) : 0ull;
#pragma unroll
  for (int j = 0; j < K; ++j) x[j] = bits_as<C>(bits[j], p.in_dtype);
}

template <int Op, int K, typename C>
NBX_GPU_INLINE ScanState<C> fold_items(const C (&x)[K], i64 first, i64 n) {
  ScanState<C> s = identity<Op, C>();
#pragma unroll
  for (int j = 0; j < K; ++j)
    if (first + j < n) fold<Op>(s, x[j], first + j);
  return s;
}

// Folds the items into `s` (the state of everything before them), writing each inclusive
// value; returns the state after the last one.
template <int Op, int K, typename C>
NBX_GPU_INLINE ScanState<C> write_items(ScanState<C> s, const C (&x)[K], const abi::ScanParams& p,
                                        const RowOffsets& o, void* out, void* indices, i64 first,
                                        i64 n) {
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const i64 k = first + j;
    if (k >= n) break;
    fold<Op>(s, x[j], k);
    const i64 at = o.out + k * p.out_row_stride;
    if constexpr (Op == abi::kScan_cumsum && IsFloatCompute<C>::value) {
      // v + comp is (all but) exact in double: one rounding to the output dtype.
      const double total = isfinite(s.v) ? double(s.v) + double(s.comp) : double(s.v);
      store_as<double>(out, p.out_dtype, at, total);
    } else {
      store_as<C>(out, p.out_dtype, at, s.v);
    }
    if constexpr (kExtreme<Op>)
      store_as<i64>(indices, kInt64, o.idx + k * p.index_row_stride, s.idx);
  }
  return s;
}

// `group` lanes (a power of two, at most kMaxGroup) per row, kGroupBlock / group rows per
// block, the grid looping over rows.
template <int Op, typename C>
__global__ void __launch_bounds__(kGroupBlock)
    scan_groups_kernel(const NBX_GPU_GRID_CONSTANT abi::ScanParams p, int group, int in_bytes,
                       void* out, const void* in, void* indices) {
  const int pos = int(threadIdx.x) & (group - 1);
  const int lane = lane_id();
  const int segment_last = lane - pos + group - 1;
  const i64 groups_per_block = kGroupBlock / group;
  const i64 first_row = i64(blockIdx.x) * groups_per_block + threadIdx.x / group;
  const i64 row_step = i64(gridDim.x) * groups_per_block;
  // The same counts for every lane: rows past the end still take part in the shuffles.
  const i64 rounds = (p.rows + row_step - 1) / row_step;
  const i64 tile = i64(group) * kGroupItems;
  const i64 tiles = (p.row_len + tile - 1) / tile;
  for (i64 round = 0; round < rounds; ++round) {
    const i64 row = first_row + round * row_step;
    const bool active = row < p.rows;
    const i64 n = active ? p.row_len : 0;
    const RowOffsets o = row_offsets(p, active ? row : 0);
    ScanState<C> carry = identity<Op, C>();
    for (i64 t = 0; t < tiles; ++t) {
      const i64 first = t * tile + i64(pos) * kGroupItems;
      C x[kGroupItems];
      load_items(x, p, in_bytes, in, o, first, n);
      if (group == 1) {  // uniform: a lane per row scans sequentially, no shuffles
        carry = write_items<Op>(carry, x, p, o, out, indices, first, n);
        continue;
      }
      const ScanState<C> inclusive =
          segment_inclusive_scan<Op>(fold_items<Op>(x, first, n), pos, group);
      const ScanState<C> before = shuffle_state<Op>(inclusive, pos > 0 ? lane - 1 : lane);
      const ScanState<C> tile_state = shuffle_state<Op>(inclusive, segment_last);
      write_items<Op>(pos > 0 ? combine<Op>(carry, before) : carry, x, p, o, out, indices, first,
                      n);
      carry = combine<Op>(carry, tile_state);
    }
  }
}

// One block per row (the grid looping over rows), the row in tiles of kLongBlock × kLongItems.
template <int Op, typename C>
__global__ void __launch_bounds__(kLongBlock)
    scan_long_rows_kernel(const NBX_GPU_GRID_CONSTANT abi::ScanParams p, int in_bytes, void* out,
                          const void* in, void* indices) {
  constexpr int kWarps = kLongBlock / kWarpSize;  // 16 or 8: a power of two <= kWarpSize
  // The warps' states, in two buffers used by alternate tiles (counted across rows): a tile
  // writes its buffer before its first barrier, which every thread passes only after
  // reading the buffer of two tiles before, so no third barrier is needed per tile.
  __shared__ ScanState<C> warp_states[2][kWarps];
  const int lane = lane_id();
  const int warp = int(threadIdx.x) / kWarpSize;
  const i64 tile = i64(kLongBlock) * kLongItems;
  const i64 tiles = (p.row_len + tile - 1) / tile;
  int phase = 0;
  for (i64 row = blockIdx.x; row < p.rows; row += gridDim.x) {  // uniform in the block
    const RowOffsets o = row_offsets(p, row);
    ScanState<C> carry = identity<Op, C>();
    for (i64 t = 0; t < tiles; ++t, phase ^= 1) {
      const i64 first = t * tile + i64(threadIdx.x) * kLongItems;
      C x[kLongItems];
      load_items(x, p, in_bytes, in, o, first, p.row_len);
      const ScanState<C> inclusive =
          segment_inclusive_scan<Op>(fold_items<Op>(x, first, p.row_len), lane, kWarpSize);
      const ScanState<C> before = shuffle_state<Op>(inclusive, lane > 0 ? lane - 1 : lane);
      ScanState<C>* states = warp_states[phase];
      if (lane == kWarpSize - 1) states[warp] = inclusive;
      __syncthreads();
      if (warp == 0) {  // the whole first warp: its shuffles stay converged
        ScanState<C> w = lane < kWarps ? states[lane] : identity<Op, C>();
        w = segment_inclusive_scan<Op>(w, lane, kWarps);
        if (lane < kWarps) states[lane] = w;  // each lane rewrites only what it read
      }
      __syncthreads();
      ScanState<C> s = warp > 0 ? combine<Op>(carry, states[warp - 1]) : carry;
      if (lane > 0) s = combine<Op>(s, before);
      write_items<Op>(s, x, p, o, out, indices, first, p.row_len);
      // Every thread computes the same carry from the same shared values.
      carry = combine<Op>(carry, states[kWarps - 1]);
    }
  }
}

[[noreturn]] void reject(const std::string& what) {
  throw InvalidArgument("scan", "scan launch: " + what + ".");
}

// The furthest element a view reaches must lie inside its buffer.
void check_view(const abi::ScanParams& p, i64 offset, const std::int64_t* outer, i64 row_stride,
                int dtype, const BoundBuffer& b, const char* label) {
  if (offset < 0 || row_stride < 0) reject(std::string(label) + " has a negative offset or stride");
  i64 last = offset + (p.row_len - 1) * row_stride;
  for (int d = 0; d < p.outer_ndim; ++d) {
    if (outer[d] < 0) reject(std::string(label) + " has a negative stride");
    last += (p.outer_sizes[d] - 1) * outer[d];
  }
  if (b.address == nullptr || std::uint64_t(last + 1) * dtype_bytes(dtype) > b.bytes)
    reject(std::string(label) + " reaches beyond its buffer of " + std::to_string(b.bytes) +
           " bytes");
}

// Which kernel, how many lanes per row, how many blocks.
struct ScanPlan {
  bool long_rows = false;
  int group = 1;
  unsigned blocks = 1;
};

ScanPlan plan_scan(const abi::ScanParams& p, int multiprocessors) {
  const i64 sms = multiprocessors > 0 ? multiprocessors : 1;
  ScanPlan plan;
  // Rows next to each other in memory (a scan along a leading dim): a lane per row reads
  // one coalesced line per warp and element; worth it once the rows fill the GPU.
  const bool side_by_side =
      p.in_row_stride != 1 && p.outer_ndim > 0 && p.in_outer_strides[p.outer_ndim - 1] == 1;
  if (side_by_side && p.rows >= sms * 256) {
    plan.group = 1;
  } else if (p.row_len <= i64(kMaxGroup) * kGroupItems) {
    while (i64(plan.group) * kGroupItems < p.row_len) plan.group *= 2;
  } else if (p.rows >= sms * 64) {
    plan.group = kMaxGroup;  // enough rows that a warp each keeps every SM busy
  } else {
    plan.long_rows = true;  // few long rows: a block each
  }
  const i64 per_block = plan.long_rows ? 1 : kGroupBlock / plan.group;
  const i64 wanted = (p.rows + per_block - 1) / per_block;
  const i64 cap = sms * (plan.long_rows ? 8 : 32);
  plan.blocks = unsigned(wanted < cap ? wanted : cap);
  return plan;
}

template <int Op, typename C>
void enqueue(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers, Stream s) {
  void* out = buffers[0].address;
  const void* in = buffers[1].address;
  void* indices = kExtreme<Op> ? buffers[2].address : nullptr;
  const int in_bytes = dtype_bytes(p.in_dtype);
  if (plan.long_rows)
    scan_long_rows_kernel<Op, C><<<plan.blocks, kLongBlock, 0, s>>>(p, in_bytes, out, in, indices);
  else
    scan_groups_kernel<Op, C>
        <<<plan.blocks, kGroupBlock, 0, s>>>(p, plan.group, in_bytes, out, in, indices);
}

// Compute types: float for float16/bfloat16/float32 accumulation, double, and int64 for
// every integer and bool (sums and products wrap as int64; extremes compare exactly).
template <int Op>
void enqueue_op(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers,
                Stream s) {
  switch (p.accumulate_dtype) {
    case kFloat16:
    case kBFloat16:
    case kFloat32:
      enqueue<Op, float>(p, plan, buffers, s);
      break;
    case kFloat64:
      enqueue<Op, double>(p, plan, buffers, s);
      break;
    default:
      enqueue<Op, i64>(p, plan, buffers, s);
      break;
  }
}

}  // namespace

ElementwiseLaunchResult launch_scan(const abi::ScanParams& p, const BoundBuffer* buffers,
                                    int num_buffers, const ElementwiseOptions& options,
                                    void* stream) {
  if (p.op < abi::kScan_cumsum || p.op > abi::kScan_cummin)
    reject("unknown op code " + std::to_string(p.op));
  const bool extreme = p.op == abi::kScan_cummax || p.op == abi::kScan_cummin;
  if (num_buffers != (extreme ? 3 : 2))
    reject(std::to_string(num_buffers) + " buffers for op " + std::to_string(p.op));
  if (p.outer_ndim < 0 || p.outer_ndim > abi::kMaxDims) reject("outer dims out of range");
  for (int t : {p.in_dtype, p.out_dtype, p.accumulate_dtype})
    if (dtype_bytes(t) == 0) reject("unknown dtype code " + std::to_string(t));
  const bool float_accumulate = p.accumulate_dtype == kFloat16 || p.accumulate_dtype == kBFloat16 ||
                                p.accumulate_dtype == kFloat32 || p.accumulate_dtype == kFloat64;
  // Extremes copy input values: an int64 compared in a float type would lose its low bits.
  if (extreme && float_accumulate != (p.in_dtype >= kFloat16))
    reject("cummax/cummin compare " + std::to_string(p.in_dtype) + " values in dtype " +
           std::to_string(p.accumulate_dtype));
  i64 rows = 1;
  for (int d = 0; d < p.outer_ndim; ++d) {
    if (p.outer_sizes[d] < 0) reject("a negative outer size");
    rows *= p.outer_sizes[d];
  }
  if (rows != p.rows || p.row_len < 0) reject("rows/row_len disagree with the sizes");
  ElementwiseLaunchResult result;
  result.call = "scan launch";
  result.path = ElementwisePath::kGeneric;
  if (p.rows == 0 || p.row_len == 0) return result;
  check_view(p, p.out_offset, p.out_outer_strides, p.out_row_stride, p.out_dtype, buffers[0],
             "the output");
  check_view(p, p.in_offset, p.in_outer_strides, p.in_row_stride, p.in_dtype, buffers[1],
             "the input");
  if (extreme)
    check_view(p, p.index_offset, p.index_outer_strides, p.index_row_stride, kInt64, buffers[2],
               "the index output");
  const ScanPlan plan = plan_scan(p, options.multiprocessors);
  const Stream s = static_cast<Stream>(stream);
  switch (p.op) {
    case abi::kScan_cumsum:
      enqueue_op<abi::kScan_cumsum>(p, plan, buffers, s);
      break;
    case abi::kScan_cumprod:
      enqueue_op<abi::kScan_cumprod>(p, plan, buffers, s);
      break;
    case abi::kScan_cummax:
      enqueue_op<abi::kScan_cummax>(p, plan, buffers, s);
      break;
    default:
      enqueue_op<abi::kScan_cummin>(p, plan, buffers, s);
      break;
  }
  result.error = int(last_launch_error());
  return result;
}

}  // namespace nbx::gpu
