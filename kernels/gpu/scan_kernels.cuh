// The "scan" kernel family for CUDA and HIP: cumsum, cumprod, cummax, cummin, logcumsumexp
// along one dim (kernel ABI: abi::ScanParams, semantics backends/host/host_scan.cpp).
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
//    scan of the warps' states through shared memory (any warp size): few long rows;
//  - chunked rows, when even a block per row leaves the GPU mostly idle (fewer rows than two
//    per SM; the plan decides in core/ops/variant_plan.cpp): each row splits into chunks of whole
//    tiles, a block each, in three kernels on the stream — (1) each block folds its chunk into one
//    state (the long kernel's tile scan, not writing), (2) one warp per row scans its chunks'
//    states into exclusive prefixes, (3) each block rescans its chunk from its prefix, writing.
//    Every combine happens in an order fixed by the sizes alone, so results do not vary from run to
//    run. The chunk states live in a small buffer taken from the stream's memory pool
//    (cudaMallocAsync / hipMallocAsync) and given back in stream order after (3): the launch
//    interface stays as it is, nothing is shared between streams or devices, and where the pool is
//    unavailable the launch fails with the runtime's error (the variant is never swapped). The
//    device's default pool is set to keep 4 MiB past a synchronize, so a chunked scan does not map
//    new memory each time.
// The long and chunked kernels read and write the operands of a row that have stride 1 and
// start 16-byte aligned in 16-byte vectors (each thread's 16 elements are consecutive, so
// its first element is aligned too).
// Float sums are compensated (compensated_sum.cuh) and each sum + compensation pair rounds
// once to the output dtype through double, so the result is the correctly rounded prefix up
// to the compensation's own error — as the host's float64 sum rounded once. Float products
// are compensated too (an FMA-exact rounding error carried as a second float: `mul_exact`),
// because a scan's tree order makes plain float products biased, not just noisy: it
// multiplies partial products near ±1 together, whose rounding errors lean one way (the
// low-order cross term of (1+a)(1+b) is not uniform modulo an ulp), about -1e-9 relative
// per multiply for factors exp(±0.001): a 16,777,216-element float32 cumprod was 0.8% off by
// element 13,630,554 on the H200 (-10.3515 for -10.4386; 1% by its end, emulated), where a
// sequential float product (partial products of any mantissa) stays within 1e-4. (A
// compiler contracting v * x + e into one FMA leaves v + comp as accurate.) Extremes are
// exact: PyTorch's cummax_cummin_helper (ties take the later index, a NaN sticks, a later
// NaN takes the index), integers compared as int64. logcumsumexp's state is a run's maximum
// and its compensated sum of exp(x - maximum): two runs combine by rescaling the sum of the
// one with the smaller maximum (an exact product through mul_exact, so only exp's own
// rounding enters, once per rescale), and the value written is maximum + log(sum) in double.
//
// Each op instantiates these templates in a translation unit of its own (scan_<op>_kernels.cu;
// cumsum in scan_kernels.cu, beside the launch): five kernels per compute type, each with
// every dtype conversion unrolled over its elements, took nvcc longer than any other file of
// the build in one translation unit; split, the build's cores share them. Each kernel's code
// is the same wherever it is instantiated.
#pragma once

#include <cstring>
#include <string>

#include "core/errors.hpp"
#include "kernels/gpu/compensated_sum.cuh"
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {

// The plan's layout (core/ops/variant_plan.cpp plan_scan_variant, in the block's variant,
// lanes and chunk_len) and the grid it needs.
struct ScanPlan {
  bool long_rows = false;
  int group = 1;
  unsigned blocks = 1;
  i64 chunks = 1;     // per row: more than 1 takes the chunked kernels
  i64 chunk_len = 0;  // elements per chunk (the last of a row may be shorter): whole tiles
};

// Each op's kernels, enqueued for the plan (the first error returned); each is defined in
// that op's translation unit.
Error enqueue_cumsum(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers,
                     Stream s);
Error enqueue_cumprod(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers,
                      Stream s);
Error enqueue_cummax(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers,
                     Stream s);
Error enqueue_cummin(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers,
                     Stream s);
Error enqueue_logcumsumexp(const abi::ScanParams& p, const ScanPlan& plan,
                           const BoundBuffer* buffers, Stream s);

namespace {

constexpr int kGroupBlock = 256;                  // threads per block of the groups kernel
constexpr int kGroupItems = abi::kScanLaneItems;  // consecutive elements per lane there
constexpr int kMaxGroup = abi::kScanMaxLanes;     // lanes per row there
constexpr int kLongBlock = 512;  // threads per block (one row at a time) of the long kernel
constexpr int kLongItems = 16;   // consecutive elements per thread there
constexpr i64 kLongTile = i64(kLongBlock) * kLongItems;
static_assert(kLongTile == abi::kScanTile, "the plan sizes chunks in the long kernel's tiles");
constexpr int kLongWarps = kLongBlock / kWarpSize;  // 16 or 8: a power of two <= kWarpSize
constexpr int kCarryBlock = 64;  // the chunk-prefix kernel's block: one warp of any target

template <int Op>
inline constexpr bool kExtreme = Op == abi::kScan_cummax || Op == abi::kScan_cummin;
template <int Op>
inline constexpr bool kLogSum = Op == abi::kScan_logcumsumexp;

template <typename C>
struct ScanState {
  C v;      // running sum, product or extreme (logcumsumexp: Σ exp(x - shift), 0 when empty)
  C comp;   // float sums and products: the compensation of v (the state is v + comp)
  i64 idx;  // extremes: the extreme's position in the row; -1 before any element
  C shift;  // logcumsumexp: the run's maximum (NaN once a NaN is seen)
};

template <int Op, typename C>
NBX_GPU_INLINE ScanState<C> identity() {
  ScanState<C> s{Op == abi::kScan_cumprod ? C(1) : C(0), C(0), -1, C(0)};
  if constexpr (kLogSum<Op> && IsFloatCompute<C>::value) s.shift = C(-INFINITY);
  return s;
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

template <typename C>
NBX_GPU_INLINE C fused_multiply_add(C a, C b, C c) {
  if constexpr (sizeof(C) == sizeof(float))
    return fmaf(a, b, c);
  else
    return fma(a, b, c);
}

// (v + comp) *= (x + x_comp) to about twice C's precision: the product's rounding error is
// exact through an FMA, the cross terms are added to it, and (v, comp) is renormalized
// (|comp| <= half an ulp of v, so v alone is the rounded product). A zero, ±inf or NaN
// product is kept as it is (its sign too) with no compensation: there is nothing to carry.
template <typename C>
NBX_GPU_INLINE void mul_exact(C& v, C& comp, C x, C x_comp) {
  const C p = v * x;
  if (!isfinite(p) || p == C(0)) {
    v = p;
    comp = C(0);
    return;
  }
  C e = fused_multiply_add(v, x, -p);
  e = fused_multiply_add(v, x_comp, fused_multiply_add(comp, x, e));
  const C s = p + e;
  comp = isfinite(s) ? e - (s - p) : C(0);  // rounded up to ±inf: nothing to carry
  v = s;
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
      mul_exact(a.v, a.comp, b.v, b.comp);
    } else {
      a.v = i64((unsigned long long)a.v * (unsigned long long)b.v);
    }
  } else if constexpr (kLogSum<Op>) {
    if constexpr (IsFloatCompute<C>::value) {
      if (b.v == C(0)) return a;  // an empty run
      if (a.v == C(0)) return b;
      if (is_nan(a.shift) || is_nan(b.shift)) {
        a.shift = is_nan(a.shift) ? a.shift : b.shift;
        return a;
      }
      // The run with the larger maximum keeps its scale. Equal maxima need no rescaling,
      // which also keeps two +inf (or -inf) maxima from exp(inf - inf) = NaN.
      const bool a_high = a.shift >= b.shift;
      ScanState<C> high = a_high ? a : b;
      const ScanState<C>& low = a_high ? b : a;
      C lv = low.v, lc = low.comp;
      if (low.shift != high.shift) mul_exact(lv, lc, C(exp(low.shift - high.shift)), C(0));
      two_sum_add(high.v, high.comp, lv, lc);
      return high;
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
  } else if constexpr (kLogSum<Op>) {
    s = combine<Op>(s, ScanState<C>{C(1), C(0), -1, x});  // exp(x - x) at scale x
  } else {
    s = combine<Op>(s, ScanState<C>{x, C(0), -1});
  }
}

// Another lane's state; every lane of the warp must call it (the fields the op uses only).
template <int Op, typename C>
NBX_GPU_INLINE ScanState<C> shuffle_state(ScanState<C> s, int src_lane) {
  s.v = warp_shuffle(s.v, src_lane);
  if constexpr (!kExtreme<Op> && IsFloatCompute<C>::value) s.comp = warp_shuffle(s.comp, src_lane);
  if constexpr (kExtreme<Op>) s.idx = warp_shuffle(s.idx, src_lane);
  if constexpr (kLogSum<Op>) s.shift = warp_shuffle(s.shift, src_lane);
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

// bits_as over a thread's K elements with the dtype switch outside the loop: each case
// converts element after element, so an element's bits die as its value is made (a switch
// per element keeps every element's bits live across the branches, and spills).
template <int Dtype, int K, typename C>
NBX_GPU_INLINE void convert_as(C (&x)[K], const unsigned long long (&bits)[K]) {
#pragma unroll
  for (int j = 0; j < K; ++j) x[j] = bits_as<C>(bits[j], Dtype);
}
template <int K, typename C>
NBX_GPU_INLINE void convert_items(C (&x)[K], const unsigned long long (&bits)[K], int dtype) {
  switch (dtype) {
    case kBool:
      return convert_as<kBool>(x, bits);
    case kInt8:
      return convert_as<kInt8>(x, bits);
    case kUInt8:
      return convert_as<kUInt8>(x, bits);
    case kInt16:
      return convert_as<kInt16>(x, bits);
    case kInt32:
      return convert_as<kInt32>(x, bits);
    case kInt64:
      return convert_as<kInt64>(x, bits);
    case kFloat16:
      return convert_as<kFloat16>(x, bits);
    case kBFloat16:
      return convert_as<kBFloat16>(x, bits);
    case kFloat32:
      return convert_as<kFloat32>(x, bits);
    default:
      return convert_as<kFloat64>(x, bits);
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

NBX_GPU_INLINE int storage_bytes(int dtype) {
  switch (dtype) {
    case kBool:
    case kInt8:
    case kUInt8:
      return 1;
    case kInt16:
    case kFloat16:
    case kBFloat16:
      return 2;
    case kInt32:
    case kFloat32:
      return 4;
    default:
      return 8;
  }
}

// Which of a row's operands move in 16-byte vectors: those of stride 1 whose row starts
// 16-byte aligned (a thread's first element, a multiple of 16 along the row, then is too).
struct RowVectors {
  bool in = false, out = false, idx = false;
};
NBX_GPU_INLINE bool aligned_row(const void* base, i64 offset, int bytes, i64 stride) {
  return base != nullptr && stride == 1 &&
         (reinterpret_cast<std::uintptr_t>(base) + std::uintptr_t(offset) * bytes) % 16 == 0;
}
NBX_GPU_INLINE RowVectors row_vectors(const abi::ScanParams& p, int in_bytes, const void* in,
                                      const void* out, const void* indices, const RowOffsets& o) {
  return {aligned_row(in, o.in, in_bytes, p.in_row_stride),
          aligned_row(out, o.out, storage_bytes(p.out_dtype), p.out_row_stride),
          aligned_row(indices, o.idx, 8, p.index_row_stride)};
}

NBX_GPU_INLINE unsigned vector_word(const uint4& w, int i) {
  return i == 0 ? w.x : i == 1 ? w.y : i == 2 ? w.z : w.w;
}
NBX_GPU_INLINE void or_vector_word(uint4& w, int i, unsigned v) {
  if (i == 0)
    w.x |= v;
  else if (i == 1)
    w.y |= v;
  else if (i == 2)
    w.z |= v;
  else
    w.w |= v;
}

// Places the `Bytes` low bytes of `bits` as element `e` of the 16-byte vector w (zeroed
// before its first element; little-endian).
template <int Bytes>
NBX_GPU_INLINE void pack_element(uint4& w, int e, unsigned long long bits) {
  if constexpr (Bytes == 8) {
    or_vector_word(w, 2 * e, unsigned(bits));
    or_vector_word(w, 2 * e + 1, unsigned(bits >> 32));
  } else {
    constexpr int kPerWord = 4 / Bytes;
    or_vector_word(w, e / kPerWord, unsigned(bits) << (8 * Bytes * (e % kPerWord)));
  }
}

// What store_as writes, as the element's raw bits.
template <typename V>
NBX_GPU_INLINE unsigned long long storage_bits(V v, int dtype) {
  switch (dtype) {
    case kBool:
      return from_compute<bool>(v) ? 1u : 0u;
    case kInt8:
      return std::uint8_t(from_compute<std::int8_t>(v));
    case kUInt8:
      return from_compute<std::uint8_t>(v);
    case kInt16:
      return std::uint16_t(from_compute<std::int16_t>(v));
    case kInt32:
      return std::uint32_t(from_compute<std::int32_t>(v));
    case kInt64:
      return (unsigned long long)from_compute<i64>(v);
    case kFloat16: {
      const half_t h = from_compute<half_t>(v);
      std::uint16_t u;
      memcpy(&u, &h, sizeof u);
      return u;
    }
    case kBFloat16: {
      const bfloat16_t h = from_compute<bfloat16_t>(v);
      std::uint16_t u;
      memcpy(&u, &h, sizeof u);
      return u;
    }
    case kFloat32: {
      const float f = from_compute<float>(v);
      std::uint32_t u;
      memcpy(&u, &f, sizeof u);
      return u;
    }
    default: {
      const double d = from_compute<double>(v);
      unsigned long long u;
      memcpy(&u, &d, sizeof u);
      return u;
    }
  }
}

// K consecutive elements of `Bytes` each from `at` (16-byte aligned) as raw bits: all the
// vector loads first, then the unpacking (little-endian, as both targets are).
template <int Bytes, int K>
NBX_GPU_INLINE void load_vector_bits(unsigned long long (&bits)[K], const void* at) {
  static_assert(K * Bytes % 16 == 0, "whole vectors only");
  constexpr int kVectors = K * Bytes / 16;
  uint4 w[kVectors];
  const uint4* v = static_cast<const uint4*>(at);
#pragma unroll
  for (int i = 0; i < kVectors; ++i) w[i] = v[i];
#pragma unroll
  for (int e = 0; e < K; ++e) {
    if constexpr (Bytes == 8) {
      bits[e] = vector_word(w[e / 2], 2 * (e % 2)) |
                (unsigned long long)vector_word(w[e / 2], 2 * (e % 2) + 1) << 32;
    } else {
      constexpr int kPerWord = 4 / Bytes;
      const int word = e / kPerWord;
      const unsigned u = vector_word(w[word / 4], word % 4);
      bits[e] = (u >> (8 * Bytes * (e % kPerWord))) & ((1ull << (8 * Bytes)) - 1);
    }
  }
}

// Elements first .. first + K - 1 of the row (those below n; the rest read as 0, unused).
// `vector`: the row's input is RowVectors::in and `first` is a multiple of K (16 or more).
template <int K, typename C>
NBX_GPU_INLINE void load_items(C (&x)[K], const abi::ScanParams& p, int in_bytes, const void* in,
                               const RowOffsets& o, i64 first, i64 n, bool vector = false) {
  unsigned long long bits[K];
  if constexpr (K % 16 == 0) {
    if (vector && first + K <= n) {
      const void* at = static_cast<const unsigned char*>(in) + (o.in + first) * in_bytes;
      switch (in_bytes) {
        case 1:
          load_vector_bits<1>(bits, at);
          break;
        case 2:
          load_vector_bits<2>(bits, at);
          break;
        case 4:
          load_vector_bits<4>(bits, at);
          break;
        default:
          load_vector_bits<8>(bits, at);
          break;
      }
      convert_items(x, bits, p.in_dtype);
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < K; ++j)
    bits[j] = first + j < n ? load_bits(in, in_bytes, o.in + (first + j) * p.in_row_stride) : 0ull;
  convert_items(x, bits, p.in_dtype);
}

template <int Op, int K, typename C>
NBX_GPU_INLINE ScanState<C> fold_items(const C (&x)[K], i64 first, i64 n) {
  ScanState<C> s = identity<Op, C>();
#pragma unroll
  for (int j = 0; j < K; ++j)
    if (first + j < n) fold<Op>(s, x[j], first + j);
  return s;
}

// The value an inclusive state writes. Float sums: v + comp is (all but) exact in double,
// so the output dtype takes one rounding. Float products: v is already v + comp rounded to
// C, but a wider output (float32 accumulated into float64) takes the pair; comp 0 keeps v
// itself, so a -0 product stays -0.
template <int Op, typename C>
NBX_GPU_INLINE auto output_value(const ScanState<C>& s) {
  if constexpr (Op == abi::kScan_cumsum && IsFloatCompute<C>::value)
    return isfinite(s.v) ? double(s.v) + double(s.comp) : double(s.v);
  else if constexpr (Op == abi::kScan_cumprod && IsFloatCompute<C>::value)
    return s.comp != C(0) ? double(s.v) + double(s.comp) : double(s.v);
  else if constexpr (kLogSum<Op> && IsFloatCompute<C>::value)  // ±inf and NaN pass through
    return double(s.shift) + (isfinite(s.shift) ? log(double(s.v) + double(s.comp)) : 0.0);
  else
    return s.v;
}

// write_items for K whole elements (first + K <= n) whose output is RowVectors::out: the
// values packed into 16-byte vectors of the output's `Bytes`, each stored once full; the
// indices likewise (two per vector) when `vector_idx`, else one at a time.
template <int Op, int Bytes, int K, typename C>
NBX_GPU_INLINE ScanState<C> write_vector_items(ScanState<C> s, const C (&x)[K],
                                               const abi::ScanParams& p, const RowOffsets& o,
                                               void* out, void* indices, i64 first,
                                               bool vector_idx) {
  static_assert(K * Bytes % 16 == 0, "whole vectors only");
  constexpr int kPer = 16 / Bytes;
  uint4* vout =
      reinterpret_cast<uint4*>(static_cast<unsigned char*>(out) + (o.out + first) * Bytes);
  uint4* vidx = nullptr;
  if constexpr (kExtreme<Op>)
    vidx = reinterpret_cast<uint4*>(static_cast<i64*>(indices) + o.idx + first);
  uint4 w = make_uint4(0u, 0u, 0u, 0u);
  uint4 wi = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
  for (int j = 0; j < K; ++j) {
    fold<Op>(s, x[j], first + j);
    pack_element<Bytes>(w, j % kPer, storage_bits(output_value<Op>(s), p.out_dtype));
    if (j % kPer == kPer - 1) {
      vout[j / kPer] = w;
      w = make_uint4(0u, 0u, 0u, 0u);
    }
    if constexpr (kExtreme<Op>) {
      if (vector_idx) {
        pack_element<8>(wi, j % 2, (unsigned long long)s.idx);
        if (j % 2 == 1) {
          vidx[j / 2] = wi;
          wi = make_uint4(0u, 0u, 0u, 0u);
        }
      } else {
        store_as<i64>(indices, kInt64, o.idx + (first + j) * p.index_row_stride, s.idx);
      }
    }
  }
  return s;
}

// Folds the items into `s` (the state of everything before them), writing each inclusive
// value; returns the state after the last one. `v`: the row's RowVectors, where `first` is
// a multiple of K (16 or more).
template <int Op, int K, typename C>
NBX_GPU_INLINE ScanState<C> write_items(ScanState<C> s, const C (&x)[K], const abi::ScanParams& p,
                                        const RowOffsets& o, void* out, void* indices, i64 first,
                                        i64 n, RowVectors v = {}) {
  if constexpr (K % 16 == 0) {
    if (v.out && first + K <= n) {
      switch (storage_bytes(p.out_dtype)) {
        case 1:
          return write_vector_items<Op, 1>(s, x, p, o, out, indices, first, v.idx);
        case 2:
          return write_vector_items<Op, 2>(s, x, p, o, out, indices, first, v.idx);
        case 4:
          return write_vector_items<Op, 4>(s, x, p, o, out, indices, first, v.idx);
        default:
          return write_vector_items<Op, 8>(s, x, p, o, out, indices, first, v.idx);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const i64 k = first + j;
    if (k >= n) break;
    fold<Op>(s, x[j], k);
    store_as(out, p.out_dtype, o.out + k * p.out_row_stride, output_value<Op>(s));
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

// The long kernels' shared memory: the warps' states, in two buffers used by alternate
// tiles (counted across a block's rows and chunks): a tile writes its buffer before its
// first barrier, which every thread passes only after reading the buffer of two tiles
// before, so no third barrier is needed per tile.
template <typename C>
using WarpStates = ScanState<C>[2][kLongWarps];

// Scans elements begin .. end - 1 of a row (begin a multiple of kLongTile) with the whole
// block, from `carry` (the state of everything before `begin`), in tiles of kLongBlock ×
// kLongItems; writes each inclusive value when Write. Returns the state after `end - 1`,
// the same in every thread (each computes it from the same shared values).
template <int Op, bool Write, typename C>
NBX_GPU_INLINE ScanState<C> scan_block_span(ScanState<C> carry, const abi::ScanParams& p,
                                            int in_bytes, const void* in, void* out, void* indices,
                                            const RowOffsets& o, i64 begin, i64 end,
                                            WarpStates<C>& warp_states, int& phase) {
  const int lane = lane_id();
  const int warp = int(threadIdx.x) / kWarpSize;
  const RowVectors vectors = row_vectors(p, in_bytes, in, out, indices, o);
  for (i64 t = begin; t < end; t += kLongTile, phase ^= 1) {  // uniform in the block
    const i64 first = t + i64(threadIdx.x) * kLongItems;
    C x[kLongItems];
    load_items(x, p, in_bytes, in, o, first, end, vectors.in);
    const ScanState<C> inclusive =
        segment_inclusive_scan<Op>(fold_items<Op>(x, first, end), lane, kWarpSize);
    ScanState<C>* states = warp_states[phase];
    if (lane == kWarpSize - 1) states[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {  // the whole first warp: its shuffles stay converged
      ScanState<C> w = lane < kLongWarps ? states[lane] : identity<Op, C>();
      w = segment_inclusive_scan<Op>(w, lane, kLongWarps);
      if (lane < kLongWarps) states[lane] = w;  // each lane rewrites only what it read
    }
    __syncthreads();
    if constexpr (Write) {
      const ScanState<C> before = shuffle_state<Op>(inclusive, lane > 0 ? lane - 1 : lane);
      ScanState<C> s = warp > 0 ? combine<Op>(carry, states[warp - 1]) : carry;
      if (lane > 0) s = combine<Op>(s, before);
      write_items<Op>(s, x, p, o, out, indices, first, end, vectors);
    }
    carry = combine<Op>(carry, states[kLongWarps - 1]);
  }
  return carry;
}

// One block per row (the grid looping over rows).
template <int Op, typename C>
__global__ void __launch_bounds__(kLongBlock)
    scan_long_rows_kernel(const NBX_GPU_GRID_CONSTANT abi::ScanParams p, int in_bytes, void* out,
                          const void* in, void* indices) {
  __shared__ WarpStates<C> warp_states;
  int phase = 0;
  for (i64 row = blockIdx.x; row < p.rows; row += gridDim.x)  // uniform in the block
    scan_block_span<Op, true>(identity<Op, C>(), p, in_bytes, in, out, indices, row_offsets(p, row),
                              0, p.row_len, warp_states, phase);
}

// Chunked rows, kernel (1): block b folds chunk b % chunks of row b / chunks into chunk_states[b].
template <int Op, typename C>
__global__ void __launch_bounds__(kLongBlock)
    scan_chunk_states_kernel(const NBX_GPU_GRID_CONSTANT abi::ScanParams p, i64 chunk_len,
                             i64 chunks, int in_bytes, const void* in, ScanState<C>* chunk_states) {
  __shared__ WarpStates<C> warp_states;
  int phase = 0;
  const i64 b = blockIdx.x;
  const i64 begin = (b % chunks) * chunk_len;
  const i64 end = begin + chunk_len < p.row_len ? begin + chunk_len : p.row_len;
  const ScanState<C> s =
      scan_block_span<Op, false>(identity<Op, C>(), p, in_bytes, in, nullptr, nullptr,
                                 row_offsets(p, b / chunks), begin, end, warp_states, phase);
  if (threadIdx.x == 0) chunk_states[b] = s;
}

// Chunked rows, kernel (2): the first warp of block r (kCarryBlock threads, at least one
// warp on every target) replaces row r's chunk states with their exclusive prefixes. Each
// lane takes consecutive chunks, folds them, the lanes scan their folds, and each lane
// rewrites its chunks from its exclusive prefix: a fixed order for any warp size.
template <int Op, typename C>
__global__ void __launch_bounds__(kCarryBlock)
    scan_chunk_prefixes_kernel(ScanState<C>* chunk_states, i64 chunks) {
  if (threadIdx.x >= kWarpSize) return;  // a whole warp leaves: the first stays converged
  const int lane = lane_id();
  ScanState<C>* row = chunk_states + i64(blockIdx.x) * chunks;
  const i64 per_lane = (chunks + kWarpSize - 1) / kWarpSize;
  const i64 begin = lane * per_lane < chunks ? lane * per_lane : chunks;
  const i64 end = begin + per_lane < chunks ? begin + per_lane : chunks;
  ScanState<C> s = identity<Op, C>();
  for (i64 i = begin; i < end; ++i) s = combine<Op>(s, row[i]);
  const ScanState<C> inclusive = segment_inclusive_scan<Op>(s, lane, kWarpSize);
  const ScanState<C> before = shuffle_state<Op>(inclusive, lane > 0 ? lane - 1 : lane);
  ScanState<C> prefix = lane > 0 ? before : identity<Op, C>();
  for (i64 i = begin; i < end; ++i) {
    const ScanState<C> own = row[i];
    row[i] = prefix;
    prefix = combine<Op>(prefix, own);
  }
}

// Chunked rows, kernel (3): a block rescans its chunk from the chunk's prefix, writing. The
// blocks take the chunks last first: kernel (1)'s last chunks are the likeliest still in L2.
template <int Op, typename C>
__global__ void __launch_bounds__(kLongBlock)
    scan_chunks_kernel(const NBX_GPU_GRID_CONSTANT abi::ScanParams p, i64 chunk_len, i64 chunks,
                       int in_bytes, void* out, const void* in, void* indices,
                       const ScanState<C>* chunk_prefixes) {
  __shared__ WarpStates<C> warp_states;
  int phase = 0;
  const i64 b = i64(gridDim.x) - 1 - i64(blockIdx.x);
  const i64 begin = (b % chunks) * chunk_len;
  const i64 end = begin + chunk_len < p.row_len ? begin + chunk_len : p.row_len;
  scan_block_span<Op, true>(chunk_prefixes[b], p, in_bytes, in, out, indices,
                            row_offsets(p, b / chunks), begin, end, warp_states, phase);
}

// Stream-ordered scratch (the runtime's per-device memory pool): freed in stream order, so
// later work on other streams never sees it in use.
Error malloc_async(void** ptr, std::size_t bytes, Stream s) {
#if NBX_GPU_HIP
  return hipMallocAsync(ptr, bytes, s);
#else
  return cudaMallocAsync(ptr, bytes, s);
#endif
}
Error free_async(void* ptr, Stream s) {
#if NBX_GPU_HIP
  return hipFreeAsync(ptr, s);
#else
  return cudaFreeAsync(ptr, s);
#endif
}
// The current device's default pool keeps up to 4 MiB of freed memory past a synchronize
// (the chunk states need a few KiB): at its default of 0 it hands everything back to the
// driver at each synchronize, and the next chunked scan would pay for mapping it again.
Error keep_pool_memory() {
  unsigned long long keep = 4ull << 20;
  int device = 0;
#if NBX_GPU_HIP
  hipMemPool_t pool;
  Error e = hipGetDevice(&device);
  if (e == kSuccess) e = hipDeviceGetDefaultMemPool(&pool, device);
  if (e == kSuccess) e = hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep);
#else
  cudaMemPool_t pool;
  Error e = cudaGetDevice(&device);
  if (e == kSuccess) e = cudaDeviceGetDefaultMemPool(&pool, device);
  if (e == kSuccess) e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
#endif
  return e;
}

// Enqueues the plan's kernels; returns the first error.
template <int Op, typename C>
Error enqueue(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers,
              Stream s) {
  void* out = buffers[0].address;
  const void* in = buffers[1].address;
  void* indices = kExtreme<Op> ? buffers[2].address : nullptr;
  const int in_bytes = dtype_bytes(p.in_dtype);
  if (plan.chunks > 1) {
    const i64 count = p.rows * plan.chunks;  // about 8 per SM (plan_scan_variant)
    void* scratch = nullptr;
    if (keep_pool_memory() != kSuccess) (void)last_launch_error();  // only slower without it
    // The chunked variant runs as asked or fails with the runtime's error: no pool (or no
    // memory for the states) is reported, never swapped for the block-per-row kernel.
    const Error got = malloc_async(&scratch, std::size_t(count) * sizeof(ScanState<C>), s);
    if (got != kSuccess) return got;
    auto* states = static_cast<ScanState<C>*>(scratch);
    scan_chunk_states_kernel<Op, C><<<unsigned(count), kLongBlock, 0, s>>>(
        p, plan.chunk_len, plan.chunks, in_bytes, in, states);
    scan_chunk_prefixes_kernel<Op, C><<<unsigned(p.rows), kCarryBlock, 0, s>>>(states, plan.chunks);
    scan_chunks_kernel<Op, C><<<unsigned(count), kLongBlock, 0, s>>>(
        p, plan.chunk_len, plan.chunks, in_bytes, out, in, indices, states);
    const Error launched = last_launch_error();
    const Error freed = free_async(scratch, s);
    return launched != kSuccess ? launched : freed;
  }
  if (plan.long_rows)
    scan_long_rows_kernel<Op, C><<<plan.blocks, kLongBlock, 0, s>>>(p, in_bytes, out, in, indices);
  else
    scan_groups_kernel<Op, C>
        <<<plan.blocks, kGroupBlock, 0, s>>>(p, plan.group, in_bytes, out, in, indices);
  return last_launch_error();
}

// Compute types: float for float16/bfloat16/float32 accumulation, double, and int64 for
// every integer and bool (sums and products wrap as int64; extremes compare exactly).
// logcumsumexp has no int64 kernels: the family refuses it an integer accumulate dtype
// (core/families/scan_family.cpp), so they could never be launched.
template <int Op>
Error enqueue_op(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers,
                 Stream s) {
  switch (p.accumulate_dtype) {
    case kFloat16:
    case kBFloat16:
    case kFloat32:
      return enqueue<Op, float>(p, plan, buffers, s);
    case kFloat64:
      return enqueue<Op, double>(p, plan, buffers, s);
    default:
      if constexpr (kLogSum<Op>)
        throw InvalidArgument("scan",
                              "scan launch: logcumsumexp needs a floating accumulate dtype.");
      else
        return enqueue<Op, i64>(p, plan, buffers, s);
  }
}

}  // namespace
}  // namespace nbx::gpu
