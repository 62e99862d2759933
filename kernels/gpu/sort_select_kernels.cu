// The sort family's select variant on CUDA/HIP (abi::kSortSelect, op kSort_topk; semantics
// backends/host/host_sort.cpp: the first k of each stably sorted row). A block per row:
//  1. narrow: the k-th smallest key's digits, most significant first — a histogram of the
//     next 8-bit digit over the keys that share the digits found so far, and the digit where
//     the running count reaches the rank still needed — until the keys below that prefix
//     (all selected) and those sharing it fit the candidates (4096; 2048 for 8-byte keys), or
//     no digit is left (then all that share it are one key, and only the first of them by
//     position that complete k are kept);
//  2. gather: the candidates in row order into shared memory (ballots and a scan over the
//     warps, a chunk of the row at a time);
//  3. sort them by a block radix sort (block_radix_rank.cuh) — stable, so ties stay in
//     position order — and write the first k: values rebuilt from keys where the key
//     determines the bits, copied from the input otherwise (sort_keys.cuh).
// topk(largest) is the k smallest keys of the descending transform; NaN is the largest value.
// Two reads of the row where the top digit narrows enough (random logits: a few thousand
// share the k-th key's top byte), as PyTorch's radix select, which also counts digits.
#include "kernels/gpu/block_radix_rank.cuh"
#include "kernels/gpu/sort_keys.cuh"
#include "kernels/gpu/sort_launchers.hpp"

namespace nbx::gpu {
namespace {

using namespace sort;

template <typename Key>
constexpr int kCandidates = int(abi::sort_select_candidates(8 * int(sizeof(Key))));
constexpr int kUnroll = 16;  // loads in flight per thread while counting

template <typename Key>
struct SelectShared {
  RankShared rank;
  u32 hist[kDigits];
  u32 digit, before, count;  // the digit holding the rank still needed, and its counts
  u32 warp_lt[kRankWarps], warp_eq[kRankWarps];
  Key keys[kCandidates<Key>];
  u32 pos[kCandidates<Key>];
};

// Two blocks a multiprocessor at least (128 registers): the counting reads need the warps.
template <typename Key, typename Elem>
__global__ void __launch_bounds__(kRankThreads, 2)
    select_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, Elem* values, long long* indices,
                  const Elem* in) {
  constexpr int C = kCandidates<Key>, Items = C / kRankThreads;
  extern __shared__ __align__(16) unsigned char select_smem[];
  SelectShared<Key>& sh = *reinterpret_cast<SelectShared<Key>*>(select_smem);
  const RowOffsets o = row_offsets(p, i64(blockIdx.x));
  const u32 n = u32(p.row_len), k = u32(p.k);
  const bool descending = p.descending != 0;
  const auto key_at = [&](u32 j) {
    return Key(sort_key(raw_bits(in[o.in + i64(j) * p.in_row_stride]), p.dtype, p.key_bits,
                        descending));
  };

  // 1. Narrow. Keys with (key & mask) < prefix are `below` (all selected); `match` share the
  // prefix, of which the `need` smallest complete k.
  Key prefix = 0, mask = 0;
  u32 below = 0, match = n, need = k;
  for (int shift = p.key_bits - kDigitBits; shift >= 0 && below + match > u32(C);
       shift -= kDigitBits) {
    sh.hist[threadIdx.x] = 0;
    __syncthreads();
    for (u32 base = 0; base < n; base += kRankThreads * kUnroll) {
      Key kk[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const u32 j = base + u * kRankThreads + threadIdx.x;
        kk[u] = j < n ? key_at(j) : Key(0);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const u32 j = base + u * kRankThreads + threadIdx.x;
        if (j < n && (kk[u] & mask) == prefix)
          atomicAdd(&sh.hist[u32(kk[u] >> shift) & (kDigits - 1)], 1u);
      }
    }
    __syncthreads();
    const u32 c = sh.hist[threadIdx.x];
    u32 total;
    const u32 start = block_exclusive_scan(c, sh.rank, total);
    if (start < need && need <= start + c) sh.digit = threadIdx.x, sh.before = start, sh.count = c;
    __syncthreads();
    below += sh.before;
    need -= sh.before;
    match = sh.count;
    prefix |= Key(sh.digit) << shift;
    mask |= Key(kDigits - 1) << shift;
    __syncthreads();  // hist and the chosen digit are written again by the next digit
  }

  // 2. Gather in row order: the keys below the prefix, and of those sharing it all of them or,
  // when they are one key too many to hold, the first `need` by position.
  const u32 eq_cap = below + match <= u32(C) ? match : need;
  const int warp = int(threadIdx.x) / kWarpSize;
  const LaneMask lanes_before = lanes_below();
  u32 lt_seen = 0, eq_seen = 0;
  for (u32 base = 0; base < n && (lt_seen < below || eq_seen < eq_cap); base += u32(C)) {
    Key kk[Items];
    bool lt[Items], eq[Items];
    u32 lt_rank[Items], eq_rank[Items], wl = 0, we = 0;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const u32 j = base + u32(striped_element<Items>(i));
      kk[i] = j < n ? key_at(j) : Key(0);
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

  // 3. Sort the m candidates (pads after them with the largest key), write the first k.
  const u32 m = below + (match < eq_cap ? match : eq_cap);
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
  for (u32 s = threadIdx.x; s < k; s += kRankThreads) {
    const u32 from = sh.pos[s];
    u64 raw;
    const Elem v = element_of_key(u64(sh.keys[s]), p.dtype, p.key_bits, descending, raw)
                       ? Elem(raw)
                       : in[o.in + i64(from) * p.in_row_stride];
    values[o.values + i64(s) * p.values_row_stride] = v;
    indices[o.indices + i64(s) * p.indices_row_stride] = from;
  }
}

template <typename Key, typename Elem>
void launch_select(const abi::SortParams& p, const GpuLaunch& l) {
  select_kernel<Key, Elem>
      <<<unsigned(p.rows), kRankThreads, sizeof(SelectShared<Key>), static_cast<Stream>(l.stream)>>>(
          p, static_cast<Elem*>(l.buffers[0].address),
          static_cast<long long*>(l.buffers[1].address),
          static_cast<const Elem*>(l.buffers[2].address));
}

}  // namespace

void launch_sort_select(const abi::SortParams& p, const GpuLaunch& l) {
  switch (p.key_bits) {
    case 8:
      return launch_select<u32, unsigned char>(p, l);
    case 16:
      return launch_select<u32, unsigned short>(p, l);
    case 32:
      return launch_select<u32, unsigned>(p, l);
    default:
      return launch_select<u64, unsigned long long>(p, l);
  }
}

}  // namespace nbx::gpu
