// The sort family's select variant on CUDA/HIP (abi::kSortSelect, op kSort_topk; semantics
// backends/host/host_sort.cpp: the first k of each stably sorted row). A block per row gathers
// into shared memory candidates among which are the row's k smallest keys, sorts them by a
// block radix sort (block_radix_rank.cuh; a quarter of the slots where they fit) — stable, so
// ties stay in position order — and writes the first k: values rebuilt from keys where the key
// determines the bits, copied from the input otherwise (sort_keys.cuh). The candidates (the
// plan's `tile`: 4096, 2048 for 8-byte keys, where shared memory holds them) come from one of
// two methods:
//  - filter (abi::sort_select_filters: k at most half the candidates, chunks of the other
//    half — every topk of k <= 1024 on 4-byte keys where the full buffer fits): ONE read of
//    the row. Each element that can still be among the k smallest is appended in row order
//    (ballots; a warp's run after those of the warps before it) — all of them until more than
//    max(4k, 256) are held or the buffer might not take the next chunk; then the buffer is
//    compacted to its k smallest (key, position) pairs (8-bit digit counts over the
//    candidates, in shared memory), and from then on only elements with a key below the
//    largest kept are appended: a later element with an equal key loses the tie by position.
//    A comparison of the raw element with the bound's value (Pretest) spares the key transform
//    of items no lane of the warp may take. On random logits a few hundred of a row's 128256
//    elements are ever held, in three compactions; rows sorted against the selection compact
//    once a chunk, which is still one read of the row.
//  - narrow (larger k): the k-th smallest key's digits, most significant first — a histogram
//    of the next digit (12 bits, then 8) over the keys that share the digits found so far,
//    and the digit where the running count reaches the rank still needed — until the keys
//    below that prefix (all selected) and those sharing it fit the candidates, or no digit is
//    left (then all that share it are one key, and only the first of them by position that
//    complete k are kept); then the candidates gathered in row order (ballots and a scan over
//    the warps, a chunk of the row at a time). Two or three reads of the row, as PyTorch's
//    radix select, which also counts digits.
// topk(largest) is the k smallest keys of the descending transform; NaN is the largest value.
#include "core/kernel_abi_sort_select.hpp"
#include "kernels/gpu/block_radix_rank.cuh"
#include "kernels/gpu/sort_keys.cuh"
#include "kernels/gpu/sort_launchers.hpp"

namespace nbx::gpu {
namespace {

using namespace sort;

template <typename Key>
constexpr int kCandidates = int(abi::sort_select_candidates(8 * int(sizeof(Key))));
constexpr int kUnroll = 16;     // loads in flight per thread while counting
constexpr int kFirstBits = 12;  // the first digit's width
// The filter's elements a thread a chunk at most: a block's chunk is the ABI's
// (abi::sort_select_filter_chunk: half the plan's candidates), tile / 512 elements a thread.
template <typename Key>
constexpr int kFilterItems = kCandidates<Key> / (2 * kRankThreads);
static_assert(kFilterItems<u32> <= 8 && kFilterItems<u64> <= 8);

template <typename Key>
struct SelectShared {
  RankShared rank;
  u32 digit, before, count;  // the digit holding the rank still needed, and its counts
  u32 warp_lt[kRankWarps], warp_eq[kRankWarps];
  u32 bins[kDigits];  // the filter's compaction: digit counts over the candidates
  Key found;          // the filter's compaction: the one candidate a narrowing left
  Key keys[kCandidates<Key>];
  u32 pos[kCandidates<Key>];
};

// The first m candidates of sh (in row order) sorted in the first kRankThreads · Items slots
// (pads after them with the largest key), then the first k written.
template <typename Key, typename Elem, int Items>
NBX_GPU_INLINE void sort_candidates(const abi::SortParams& p, SelectShared<Key>& sh, u32 m,
                                    Elem* values, long long* indices, const Elem* in,
                                    const RowOffsets& o) {
  Key key[Items];
  u32 at[Items];
  bool all[Items];
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const u32 s = u32(striped_element<Items>(i));
    key[i] = s < m ? sh.keys[s] : Key(~Key(0));
    at[i] = s < m ? sh.pos[s] : ~0u;
    all[i] = true;
  }
  __syncthreads();
  const int passes = p.key_bits / kDigitBits;
  for (int pass = 0; pass < passes; ++pass) {
    u32 digit[Items], rank[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) digit[i] = u32(key[i] >> (kDigitBits * pass)) & (kDigits - 1);
    rank_digits<Items>(sh.rank, digit, all, rank);
    if (pass + 1 < passes) {
      exchange_by_rank(sh.keys, key, rank);
      exchange_by_rank(sh.pos, at, rank);
      continue;
    }
#pragma unroll
    for (int i = 0; i < Items; ++i) sh.keys[rank[i]] = key[i], sh.pos[rank[i]] = at[i];
    __syncthreads();
  }
  for (u32 s = threadIdx.x; s < u32(p.k); s += kRankThreads)
    write_sorted(p, o, values, indices, in, u64(sh.keys[s]), sh.pos[s], s);
}

// A row's elements and their keys. Loads come first, all of them unconditional (a position
// past the row reads its last element), keys after: so a thread's loads are in flight
// together.
template <typename Key, typename Elem>
struct RowReader {
  const abi::SortParams& p;
  const Elem* in;
  RowOffsets o;
  NBX_GPU_INLINE Elem operator()(u32 j) const {
    const u32 n = u32(p.row_len);
    return in[o.in + i64(j < n ? j : n - 1) * p.in_row_stride];
  }
  NBX_GPU_INLINE Key key(Elem raw) const {
    return sort_key_in<Key>(Key(raw_bits(raw)), p.dtype, p.key_bits, p.descending != 0);
  }
};

// One narrowing step over `bins` counts of the digit at bit `shift`: the bin holding rank
// `need` (1-based) joins the prefix under the mask, `need` becomes the rank within it and
// `match` its count; returns the count below it. Thread t owns `per` consecutive counts; the
// bin is found by one. Ends with the block synchronised, so the counts may be written again.
template <typename Key>
NBX_GPU_INLINE u32 narrow_to_bin(SelectShared<Key>& sh, const u32* counts, u32 bins, int shift,
                                 u32& need, u32& match, Key& prefix, Key& mask) {
  const u32 per = bins > kRankThreads ? bins / kRankThreads : 1u;
  const u32 first = threadIdx.x * per;
  u32 sum = 0;
  for (u32 b = first; b < first + per && b < bins; ++b) sum += counts[b];
  u32 total;
  u32 running = block_exclusive_scan(sum, sh.rank, total);
  for (u32 b = first; b < first + per && b < bins; ++b) {
    const u32 c = counts[b];
    if (running < need && need <= running + c) sh.digit = b, sh.before = running, sh.count = c;
    running += c;
  }
  __syncthreads();
  const u32 below = sh.before;
  need -= below;
  match = sh.count;
  prefix |= Key(sh.digit) << shift;
  mask |= Key(bins - 1) << shift;
  __syncthreads();  // sh.digit, before and count are written again by the next step
  return below;
}

// The narrow method: the candidates of the row gathered into sh in row order; returns their
// count. C: the candidates the plan fitted.
template <typename Key, typename Elem>
NBX_GPU_INLINE u32 narrow_and_gather(SelectShared<Key>& sh, const abi::SortParams& p, u32 C,
                                     const RowReader<Key, Elem>& row) {
  constexpr int kMax = kCandidates<Key>, Items = kMax / kRankThreads;
  const u32 n = u32(p.row_len), k = u32(p.k);
  // Keys with (key & mask) < prefix are `below` (all selected); `match` share the prefix, of
  // which the `need` smallest complete k. The first digit is kFirstBits wide (a float's sign,
  // exponent and top mantissa bits: few keys share one, and few lanes of a warp hit one
  // counter), the others 8; the counters use the candidates' buffer, free until the gather.
  u32* hist = reinterpret_cast<u32*>(sh.keys);
  static_assert(sizeof(sh.keys) >= sizeof(u32) << kFirstBits);
  Key prefix = 0, mask = 0;
  u32 below = 0, match = n, need = k;
  for (int hi = p.key_bits; hi > 0 && below + match > C;) {
    const int widest = hi == p.key_bits ? kFirstBits : kDigitBits;
    const int width = hi < widest ? hi : widest;
    const int shift = hi - width;
    const u32 bins = 1u << width;
    for (u32 b = threadIdx.x; b < bins; b += kRankThreads) hist[b] = 0;
    __syncthreads();
    for (u32 base = 0; base < n; base += kRankThreads * kUnroll) {
      Elem raw[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) raw[u] = row(base + u * kRankThreads + threadIdx.x);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const Key kk = row.key(raw[u]);
        if (base + u * kRankThreads + threadIdx.x < n && (kk & mask) == prefix)
          atomicAdd(&hist[u32(kk >> shift) & (bins - 1)], 1u);
      }
    }
    __syncthreads();
    below += narrow_to_bin(sh, hist, bins, shift, need, match, prefix, mask);
    hi = shift;
  }

  // Gather in row order: the keys below the prefix, and of those sharing it all of them or,
  // when they are one key too many to hold, the first `need` by position.
  const u32 eq_cap = below + match <= C ? match : need;
  const int warp = int(threadIdx.x) / kWarpSize;
  const LaneMask lanes_before = lanes_below();
  u32 lt_seen = 0, eq_seen = 0;
  for (u32 base = 0; base < n && (lt_seen < below || eq_seen < eq_cap); base += u32(kMax)) {
    Key kk[Items];
    bool lt[Items], eq[Items];
    u32 lt_rank[Items], eq_rank[Items], wl = 0, we = 0;
    Elem raw[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) raw[i] = row(base + u32(striped_element<Items>(i)));
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const u32 j = base + u32(striped_element<Items>(i));
      kk[i] = row.key(raw[i]);
      lt[i] = j < n && (kk[i] & mask) < prefix;
      eq[i] = j < n && (kk[i] & mask) == prefix;
      const LaneMask bl = warp_ballot(lt[i]), be = warp_ballot(eq[i]);
      lt_rank[i] = wl + u32(lane_count(bl & lanes_before));
      eq_rank[i] = we + u32(lane_count(be & lanes_before));
      wl += u32(lane_count(bl));
      we += u32(lane_count(be));
    }
    if (lane_id() == 0) sh.warp_lt[warp] = wl, sh.warp_eq[warp] = we;
    __syncthreads();
    u32 lt_before = lt_seen, eq_before = eq_seen;
    for (int w = 0; w < kRankWarps; ++w) {
      if (w < warp) lt_before += sh.warp_lt[w], eq_before += sh.warp_eq[w];
      lt_seen += sh.warp_lt[w], eq_seen += sh.warp_eq[w];
    }
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const u32 a = lt_before + lt_rank[i], b = eq_before + eq_rank[i];
      if (lt[i] || (eq[i] && b < eq_cap)) {
        const u32 slot = a + (b < eq_cap ? b : eq_cap);
        sh.keys[slot] = kk[i];
        sh.pos[slot] = base + u32(striped_element<Items>(i));
      }
    }
    __syncthreads();  // warp_lt and warp_eq are written again by the next chunk
  }
  return below + (match < eq_cap ? match : eq_cap);
}

// The `need`-th smallest value among the first c candidates — their keys (OfPos false) or the
// positions of those whose key is `key` — narrowed 8 bits a pass from bit `hi` down until one
// candidate shares the prefix or no bit is left; returns the whole value.
template <bool OfPos, typename Key>
NBX_GPU_INLINE Key narrow_candidates(SelectShared<Key>& sh, u32 c, Key key, int hi, u32& need,
                                     u32& match) {
  Key prefix = 0, mask = 0;
  const auto value = [&](u32 i) { return OfPos ? Key(sh.pos[i]) : sh.keys[i]; };
  const auto shares = [&](u32 i) {
    return (!OfPos || sh.keys[i] == key) && (value(i) & mask) == prefix;
  };
  while (hi > 0 && match > 1) {
    const int width = hi < kDigitBits ? hi : kDigitBits, shift = hi - width;
    const u32 bins = 1u << width;
    for (u32 b = threadIdx.x; b < bins; b += kRankThreads) sh.bins[b] = 0;
    __syncthreads();
    for (u32 i = threadIdx.x; i < c; i += kRankThreads)
      if (shares(i)) atomicAdd(&sh.bins[u32(value(i) >> shift) & (bins - 1)], 1u);
    __syncthreads();
    narrow_to_bin(sh, sh.bins, bins, shift, need, match, prefix, mask);
    hi = shift;
  }
  if (hi == 0) return prefix;
  // One candidate shares the prefix: its value has the bits below it.
  for (u32 i = threadIdx.x; i < c; i += kRankThreads)
    if (shares(i)) sh.found = value(i);
  __syncthreads();
  const Key found = sh.found;
  __syncthreads();
  return found;
}

// Keeps in sh the k smallest (key, position) pairs of its first c candidates (c >= k), in the
// order they were held, and returns the largest key kept: an element met later (at a larger
// position) is among the row's k smallest only with a smaller key.
template <typename Key>
NBX_GPU_INLINE Key keep_smallest(SelectShared<Key>& sh, u32 c, u32 k, int key_bits, u32 n) {
  u32 need = k, match = c;
  const Key kth = narrow_candidates<false>(sh, c, Key(0), key_bits, need, match);
  // Of the `match` candidates whose key is kth, the `need` first by position are kept.
  u32 last_pos = ~0u;
  if (match > need) {
    const int position_bits = n > 1 ? 32 - __clz(int(n - 1)) : 1;
    last_pos = u32(narrow_candidates<true>(sh, c, kth, position_bits, need, match));
  }
  // Compact a block's width at a time: a kept candidate moves to a slot no later than its own,
  // which this window has already read or an earlier one has.
  const int warp = int(threadIdx.x) / kWarpSize;
  const LaneMask lanes_before = lanes_below();
  u32 kept = 0;
  for (u32 w = 0; w < c; w += kRankThreads) {
    const u32 i = w + threadIdx.x;
    Key key = 0;
    u32 pos = 0;
    bool keep = false;
    if (i < c) {
      key = sh.keys[i];
      pos = sh.pos[i];
      keep = key < kth || (key == kth && pos <= last_pos);
    }
    const LaneMask b = warp_ballot(keep);
    if (lane_id() == 0) sh.warp_lt[warp] = u32(lane_count(b));
    __syncthreads();
    u32 before = 0, total = 0;
    for (int v = 0; v < kRankWarps; ++v) {
      if (v < warp) before += sh.warp_lt[v];
      total += sh.warp_lt[v];
    }
    if (keep) {
      const u32 slot = kept + before + u32(lane_count(b & lanes_before));
      sh.keys[slot] = key;
      sh.pos[slot] = pos;
    }
    kept += total;
    __syncthreads();  // warp_lt is written again by the next window
  }
  return kth;
}

// The filter's pretest (as sort_select.comp's): once bounded, a row element is compared with
// the bound's own value in its dtype — one comparison, no key transform — and only where some
// lane of the warp passes do the exact key test and the ranks run. It passes every element
// whose key is below the bound (and some that are not: ties, and on a bound that is a NaN's or
// a zero's key the NaNs, +inf or both zeros): the decodings never reverse an order. For keys of
// up to 32 bits; none for 8-byte keys.
struct Pretest {
  enum Mode : int { kNone = 0, kF32, kBF16, kF16, kSigned, kUnsigned };
  int mode = kNone;
  int bits = 32;
  bool descending = false;
  float f = 0;  // the bound's value: floats as float32,
  int i = 0;    // signed integers sign-extended,
  u32 u = 0;    // unsigned integers

  NBX_GPU_INLINE static Pretest of(const abi::SortParams& p) {
    Pretest t;
    t.bits = p.key_bits;
    t.descending = p.descending != 0;
    if (p.key_bits <= 32)
      t.mode = p.dtype == kFloat32                     ? kF32
               : p.dtype == kBFloat16                  ? kBF16
               : p.dtype == kFloat16                   ? kF16
               : p.dtype == kBool || p.dtype == kUInt8 ? kUnsigned
                                                       : kSigned;
    return t;
  }
  NBX_GPU_INLINE float as_float(u32 raw) const {
    if (mode == kBF16) return __uint_as_float(raw << 16);
    if (mode == kF16) return to_float(__ushort_as_half((unsigned short)raw));
    return __uint_as_float(raw);
  }
  NBX_GPU_INLINE int as_signed(u32 raw) const {
    return bits == 32 ? int(raw) : int(raw << (32 - bits)) >> (32 - bits);
  }
  // The bound's value: element_of_key's where the key determines it; the zero key as 0, the
  // NaN key (every NaN, above +inf) as +inf.
  NBX_GPU_INLINE void set_bound(u64 bound, int dtype) {
    u64 raw = 0;
    const bool known = element_of_key(bound, dtype, bits, descending, raw);
    f = known                                           ? as_float(u32(raw))
        : bound == sort_key(0, dtype, bits, descending) ? 0.0f
                                                        : __uint_as_float(0x7f800000u);
    i = as_signed(u32(raw));
    u = u32(raw);
  }
  // Whether raw may have a key below the bound (ascending keys: at most its value; descending:
  // at least, NaNs included).
  NBX_GPU_INLINE bool passes(u32 raw) const {
    if (mode <= kF16) {
      const float x = as_float(raw);
      return descending ? !(x < f) : x <= f;
    }
    if (mode == kSigned) return descending ? as_signed(raw) >= i : as_signed(raw) <= i;
    return descending ? raw >= u : raw <= u;
  }
};

// The filter method (the header): one read of the row; returns the candidates' count (the
// row's k smallest among them, in row order). C: the candidates the plan fitted; a chunk is
// half of them, `items` elements a thread (item i of lane l in warp w: element w·32·items +
// i·32 + l, so (warp, item, lane) is row order). A warp's appended run is placed by the runs
// of the warps before it (one barrier a chunk: the run counts alternate between two arrays),
// so the candidates stay in row order and the stable sort breaks ties by position. The next
// chunk is loaded while this one is appended (two chunks ahead measured no faster).
template <typename Key, typename Elem>
NBX_GPU_INLINE u32 filter_candidates(SelectShared<Key>& sh, const abi::SortParams& p, u32 C,
                                     const RowReader<Key, Elem>& row) {
  constexpr int Items = kFilterItems<Key>;
  const u32 chunk = C / 2, items = chunk / kRankThreads;
  const u32 n = u32(p.row_len), k = u32(p.k);
  const int warp = int(threadIdx.x) / kWarpSize;
  const u32 lane_first = u32(warp) * kWarpSize * items + u32(lane_id());
  const LaneMask lanes_before = lanes_below();
  Key bound = 0;  // elements with keys below it are appended (once `bounded`)
  bool bounded = false;
  Pretest pre = Pretest::of(p);
  u32 held = 0;
  // Compacted when the next chunk might not fit, and as soon as more than max(4k, 256) are
  // held: the bound then tightens as the row is read (random logits: three compactions a row,
  // the pretest passing about one item in eight a warp instead of three in eight).
  const u32 compact_at = min(C - chunk, max(4 * k, 256u));
  const auto load = [&](Elem(&raw)[Items], u32 base) {
#pragma unroll
    for (int i = 0; i < Items; ++i)
      if (u32(i) < items) raw[i] = row(base + lane_first + u32(i) * kWarpSize);
  };
  // Chunk `base` from `raw` (then reloaded with the next chunk); `runs` its run counts.
  const auto append = [&](Elem(&raw)[Items], u32 base, u32* runs) {
    // A vote an item: the key transform and the exact test only where a lane may take it.
    Key key[Items];
    u32 take = 0;  // a bit an item
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const bool may =
          u32(i) < items && base + lane_first + u32(i) * kWarpSize < n &&
          (!bounded || pre.mode == Pretest::kNone || pre.passes(u32(raw_bits(raw[i]))));
      key[i] = Key(0);
      if (warp_any(may)) {
        key[i] = row.key(raw[i]);
        if (may && (!bounded || key[i] < bound)) take |= 1u << i;
      }
    }
    load(raw, base + chunk);
    u32 rank[Items], run = 0;
    if (warp_any(take != 0)) {
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        const LaneMask b = warp_ballot((take >> i & 1u) != 0);
        rank[i] = run + u32(lane_count(b & lanes_before));
        run += u32(lane_count(b));
      }
    }
    if (lane_id() == 0) runs[warp] = run;
    __syncthreads();
    u32 before = held;
    for (int w = 0; w < kRankWarps; ++w) {
      if (w < warp) before += runs[w];
      held += runs[w];
    }
#pragma unroll
    for (int i = 0; i < Items; ++i)
      if ((take >> i & 1u) != 0) {
        sh.keys[before + rank[i]] = key[i];
        sh.pos[before + rank[i]] = base + lane_first + u32(i) * kWarpSize;
      }
    // `held` is the same in every thread; the compaction's first barrier orders the stores.
    if (held > compact_at && base + chunk < n) {
      bound = keep_smallest(sh, held, k, p.key_bits, n);
      pre.set_bound(u64(bound), p.dtype);
      bounded = true;
      held = k;
    }
  };
  Elem raw[Items];
  load(raw, 0);
  for (u32 base = 0, parity = 0; base < n; base += chunk, parity ^= 1)
    append(raw, base, parity ? sh.warp_lt : sh.warp_eq);
  __syncthreads();  // the last chunk's candidates are stored
  return held;
}

// A block a row by one method. The narrow method's kernel runs two blocks a multiprocessor at
// least (128 registers), for its counting reads need the warps; the filter's four (64
// registers), so its one read has the warps to keep loads in flight, and its sort takes a
// quarter of the slots (half for 8-byte keys with k above a quarter), the candidates compacted
// to k first where more are held.
template <typename Key, typename Elem, bool Filter>
__global__ void __launch_bounds__(kRankThreads, Filter ? 4 : 2)
    select_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, Elem* values, long long* indices,
                  const Elem* in) {
  constexpr int kMax = kCandidates<Key>, Items = kMax / kRankThreads;
  extern __shared__ __align__(16) unsigned char select_smem[];
  SelectShared<Key>& sh = *reinterpret_cast<SelectShared<Key>*>(select_smem);
  const RowOffsets o = row_offsets(p, i64(blockIdx.x));
  const RowReader<Key, Elem> r{p, in, o};
  if constexpr (Filter) {
    const u32 k = u32(p.k);
    u32 m = filter_candidates<Key, Elem>(sh, p, u32(p.tile), r);
    const u32 slots = k <= u32(kMax / 4) ? u32(kMax / 4) : u32(kMax / 2);
    if (m > slots) {
      keep_smallest(sh, m, k, p.key_bits, u32(p.row_len));
      m = k;
    }
    if (slots == u32(kMax / 4))
      sort_candidates<Key, Elem, Items / 4>(p, sh, m, values, indices, in, o);
    else
      sort_candidates<Key, Elem, Items / 2>(p, sh, m, values, indices, in, o);
  } else {
    // Sort the m candidates and write the first k: a quarter of the slots where they fit.
    const u32 m = narrow_and_gather<Key, Elem>(sh, p, u32(p.tile), r);
    if (m <= u32(kMax / 4))
      sort_candidates<Key, Elem, Items / 4>(p, sh, m, values, indices, in, o);
    else
      sort_candidates<Key, Elem, Items>(p, sh, m, values, indices, in, o);
  }
}

template <typename Key, typename Elem>
void launch_select(const abi::SortParams& p, const GpuLaunch& l) {
  const SortBuffers<Elem> b = sort_buffers<Elem>(l);
  const auto kernel = abi::sort_select_filters(p.k, p.tile) ? select_kernel<Key, Elem, true>
                                                            : select_kernel<Key, Elem, false>;
  kernel<<<unsigned(p.rows), kRankThreads, sizeof(SelectShared<Key>),
           static_cast<Stream>(l.stream)>>>(p, b.values, b.indices, b.in);
}

}  // namespace

void launch_sort_select(const abi::SortParams& p, const GpuLaunch& l) {
  with_key_types(p.key_bits, [&](auto types) {
    using T = decltype(types);
    launch_select<typename T::Key, typename T::Elem>(p, l);
  });
}

}  // namespace nbx::gpu
