// The sort family's select variant on CUDA/HIP (abi::kSortSelect, op kSort_topk; semantics
// backends/host/host_sort.cpp: the first k of each stably sorted row). A block per row:
//  1. narrow: the k-th smallest key's digits, most significant first — a histogram of the
//     next digit (12 bits, then 8) over the keys that share the digits found so far, and the
//     digit where the running count reaches the rank still needed — until the keys below that
//     prefix (all selected) and those sharing it fit the candidates (the plan's `tile`: 4096,
//     2048 for 8-byte keys, where shared memory holds them), or no digit is left (then all that
//     share it are one key, and only the first of them by position that complete k are kept);
//  2. gather: the candidates in row order into shared memory (ballots and a scan over the
//     warps, a chunk of the row at a time);
//  3. sort them by a block radix sort (block_radix_rank.cuh; a quarter of the slots where
//     they fit) — stable, so ties stay in position order — and write the first k: values
//     rebuilt from keys where the key determines the bits, copied from the input otherwise
//     (sort_keys.cuh).
// topk(largest) is the k smallest keys of the descending transform; NaN is the largest value.
// Two or three reads of the row (random logits: a few hundred to a few thousand keys share
// the k-th key's first 12 bits), as PyTorch's radix select, which also counts digits.
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

template <typename Key>
struct SelectShared {
  RankShared rank;
  u32 digit, before, count;  // the digit holding the rank still needed, and its counts
  u32 warp_lt[kRankWarps], warp_eq[kRankWarps];
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

// Two blocks a multiprocessor at least (128 registers): the counting reads need the warps.
template <typename Key, typename Elem>
__global__ void __launch_bounds__(kRankThreads, 2)
    select_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, Elem* values, long long* indices,
                  const Elem* in) {
  // C: the candidates the plan fitted (`tile`), at most the buffers' kCandidates.
  constexpr int kMax = kCandidates<Key>, Items = kMax / kRankThreads;
  const int C = int(p.tile);
  extern __shared__ __align__(16) unsigned char select_smem[];
  SelectShared<Key>& sh = *reinterpret_cast<SelectShared<Key>*>(select_smem);
  const RowOffsets o = row_offsets(p, i64(blockIdx.x));
  const u32 n = u32(p.row_len), k = u32(p.k);
  const bool descending = p.descending != 0;
  // Loads first, all of them unconditional (a position past the row reads its last element),
  // keys after: so a thread's loads are in flight together.
  const auto raw_at = [&](u32 j) { return in[o.in + i64(j < n ? j : n - 1) * p.in_row_stride]; };
  const auto key_of = [&](Elem raw) {
    return Key(sort_key(raw_bits(raw), p.dtype, p.key_bits, descending));
  };

  // 1. Narrow. Keys with (key & mask) < prefix are `below` (all selected); `match` share the
  // prefix, of which the `need` smallest complete k. The first digit is kFirstBits wide (a
  // float's sign, exponent and top mantissa bits: few keys share one, and few lanes of a warp
  // hit one counter), the others 8; the counters use the candidates' buffer, free until the
  // gather.
  u32* hist = reinterpret_cast<u32*>(sh.keys);
  static_assert(sizeof(sh.keys) >= sizeof(u32) << kFirstBits);
  Key prefix = 0, mask = 0;
  u32 below = 0, match = n, need = k;
  for (int hi = p.key_bits; hi > 0 && below + match > u32(C);) {
    const int widest = hi == p.key_bits ? kFirstBits : kDigitBits;
    const int width = hi < widest ? hi : widest;
    const int shift = hi - width;
    const u32 bins = 1u << width;
    for (u32 b = threadIdx.x; b < bins; b += kRankThreads) hist[b] = 0;
    __syncthreads();
    for (u32 base = 0; base < n; base += kRankThreads * kUnroll) {
      Elem raw[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) raw[u] = raw_at(base + u * kRankThreads + threadIdx.x);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const Key kk = key_of(raw[u]);
        if (base + u * kRankThreads + threadIdx.x < n && (kk & mask) == prefix)
          atomicAdd(&hist[u32(kk >> shift) & (bins - 1)], 1u);
      }
    }
    __syncthreads();
    // Thread t owns `per` consecutive counters; the bin holding rank `need` is found by one.
    const u32 per = bins > kRankThreads ? bins / kRankThreads : 1u;
    const u32 first = threadIdx.x * per;
    u32 sum = 0;
    for (u32 b = first; b < first + per && b < bins; ++b) sum += hist[b];
    u32 total;
    u32 running = block_exclusive_scan(sum, sh.rank, total);
    for (u32 b = first; b < first + per && b < bins; ++b) {
      const u32 c = hist[b];
      if (running < need && need <= running + c) sh.digit = b, sh.before = running, sh.count = c;
      running += c;
    }
    __syncthreads();
    below += sh.before;
    need -= sh.before;
    match = sh.count;
    prefix |= Key(sh.digit) << shift;
    mask |= Key(bins - 1) << shift;
    hi = shift;
    __syncthreads();  // the counters and the chosen digit are written again by the next digit
  }

  // 2. Gather in row order: the keys below the prefix, and of those sharing it all of them or,
  // when they are one key too many to hold, the first `need` by position.
  const u32 eq_cap = below + match <= u32(C) ? match : need;
  const int warp = int(threadIdx.x) / kWarpSize;
  const LaneMask lanes_before = lanes_below();
  u32 lt_seen = 0, eq_seen = 0;
  for (u32 base = 0; base < n && (lt_seen < below || eq_seen < eq_cap); base += u32(kMax)) {
    Key kk[Items];
    bool lt[Items], eq[Items];
    u32 lt_rank[Items], eq_rank[Items], wl = 0, we = 0;
    Elem raw[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) raw[i] = raw_at(base + u32(striped_element<Items>(i)));
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const u32 j = base + u32(striped_element<Items>(i));
      kk[i] = key_of(raw[i]);
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

  // 3. Sort the m candidates and write the first k: a quarter of the slots where they fit.
  const u32 m = below + (match < eq_cap ? match : eq_cap);
  if (m <= u32(kMax / 4))
    sort_candidates<Key, Elem, Items / 4>(p, sh, m, values, indices, in, o);
  else
    sort_candidates<Key, Elem, Items>(p, sh, m, values, indices, in, o);
}

template <typename Key, typename Elem>
void launch_select(const abi::SortParams& p, const GpuLaunch& l) {
  const SortBuffers<Elem> b = sort_buffers<Elem>(l);
  select_kernel<Key, Elem><<<unsigned(p.rows), kRankThreads, sizeof(SelectShared<Key>),
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
