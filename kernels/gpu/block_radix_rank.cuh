// Ranking a block's keys by one 8-bit digit, stably, for the radix sorts (rows and onesweep).
//
// A block of 256 threads holds Items keys per thread in a warp-striped arrangement: item i of
// lane l in warp w is element w·(kWarpSize·Items) + i·kWarpSize + l of the block's tile, so a
// warp's loads are consecutive and element order is (warp, item, lane) order. For each item,
// the warp finds the lanes that share its digit with one ballot per digit bit (portable: no
// match instruction on AMD), the lowest such lane bumps the warp's counter of that digit, and
// each lane's rank is the counter's old value plus its peers below it — so ranks within a warp
// follow element order. Then thread d turns the warps' counters of digit d into offsets (the
// warps before, then the digits before, by a block scan). The rank of an element is its place in
// the tile ordered by digit with ties in element order: one stable counting-sort step, as CUB's
// BlockRadixRankMatch does it (Merrill & Garland; Adinets & Merrill, "Onesweep", 2022).
#pragma once

#include "kernels/gpu/gpu_portability.cuh"

namespace nbx::gpu::sort {

inline constexpr int kRankThreads = 256;  // one thread per digit value
inline constexpr int kDigitBits = 8;
inline constexpr int kDigits = 1 << kDigitBits;
inline constexpr int kRankWarps = kRankThreads / kWarpSize;

struct RankShared {
  unsigned warp_counts[kRankWarps][kDigits];
  unsigned digit_start[kDigits];  // the tile's first rank of each digit
  unsigned warp_totals[kRankWarps];
};

// The element of the tile that item `item` of this thread is.
template <int Items>
NBX_GPU_INLINE int striped_element(int item) {
  const int warp = int(threadIdx.x) / kWarpSize;
  return warp * kWarpSize * Items + item * kWarpSize + lane_id();
}

// An exclusive scan of one value per thread over the block; `total` receives the sum.
NBX_GPU_INLINE unsigned block_exclusive_scan(unsigned v, RankShared& s, unsigned& total) {
  const int lane = lane_id(), warp = int(threadIdx.x) / kWarpSize;
  unsigned x = v;
  for (int d = 1; d < kWarpSize; d <<= 1) {
    const unsigned y = warp_shuffle(x, lane >= d ? lane - d : lane);
    if (lane >= d) x += y;
  }
  if (lane == kWarpSize - 1) s.warp_totals[warp] = x;
  __syncthreads();
  unsigned before = 0;
  total = 0;
  for (int w = 0; w < kRankWarps; ++w) {
    const unsigned t = s.warp_totals[w];
    if (w < warp) before += t;
    total += t;
  }
  __syncthreads();  // warp_totals may be written again by the next scan
  return before + x - v;
}

// Ranks the valid items by their digits (each < kDigits): digit_of(i) and valid(i) for item
// i, called again after the counts are scanned (so a caller can recompute a digit from the key
// it holds rather than keep Items more registers live). Returns, for thread d, the number of
// valid items with digit d; s.digit_start holds each digit's first rank. Ends with the block
// synchronised, so s may be reused at once.
template <int Items, typename DigitOf, typename Valid>
NBX_GPU_INLINE unsigned rank_digits_by(RankShared& s, DigitOf digit_of, Valid valid,
                                       unsigned (&rank)[Items]) {
  unsigned* flat = &s.warp_counts[0][0];
  for (int k = threadIdx.x; k < kRankWarps * kDigits; k += kRankThreads) flat[k] = 0;
  __syncthreads();
  const int warp = int(threadIdx.x) / kWarpSize, lane = lane_id();
  const LaneMask below = lanes_below();
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const bool ok = valid(i);
    const unsigned digit = digit_of(i);
    const LaneMask peers = warp_peers_of_digit(digit, warp_ballot(ok));
    const int leader = ok ? first_lane(peers) : lane;
    unsigned base = 0;
    if (ok && lane == leader) {
      base = s.warp_counts[warp][digit];
      s.warp_counts[warp][digit] = base + unsigned(lane_count(peers));
    }
    base = warp_shuffle(base, leader);
    rank[i] = base + unsigned(lane_count(peers & below));
    warp_sync();
  }
  __syncthreads();
  const int d = int(threadIdx.x);
  unsigned count = 0;
  for (int w = 0; w < kRankWarps; ++w) {
    const unsigned c = s.warp_counts[w][d];
    s.warp_counts[w][d] = count;
    count += c;
  }
  unsigned total;
  const unsigned start = block_exclusive_scan(count, s, total);
  s.digit_start[d] = start;
  for (int w = 0; w < kRankWarps; ++w) s.warp_counts[w][d] += start;
  __syncthreads();
#pragma unroll
  for (int i = 0; i < Items; ++i)
    if (valid(i)) rank[i] += s.warp_counts[warp][digit_of(i)];
  __syncthreads();
  return count;
}

// rank_digits_by with the digits and validity held in arrays.
template <int Items>
NBX_GPU_INLINE unsigned rank_digits(RankShared& s, const unsigned (&digit)[Items],
                                    const bool (&valid)[Items], unsigned (&rank)[Items]) {
  return rank_digits_by<Items>(
      s, [&](int i) { return digit[i]; }, [&](int i) { return valid[i]; }, rank);
}

// Moves each thread's items to their ranks through `buffer` (one slot per element of the
// tile) and back, so item i of a thread then holds slot striped_element(i): the tile in rank
// order, in the striped arrangement the next pass ranks. Synchronises before and after.
template <typename T, int Items>
NBX_GPU_INLINE void exchange_by_rank(T* buffer, T (&items)[Items], const unsigned (&rank)[Items]) {
#pragma unroll
  for (int i = 0; i < Items; ++i) buffer[rank[i]] = items[i];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < Items; ++i) items[i] = buffer[striped_element<Items>(i)];
  __syncthreads();
}

}  // namespace nbx::gpu::sort
