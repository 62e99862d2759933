// Ranking a workgroup's keys by one 8-bit digit, stably, for the radix sorts (sort_rows.comp,
// sort_onesweep.comp) on any subgroup size — the design of kernels/gpu/block_radix_rank.cuh
// (CUB's BlockRadixRankMatch: Merrill & Garland; Adinets & Merrill, "Onesweep", 2022):
//
// 256 invocations hold ITEMS keys each, subgroup-striped: item i of lane l in subgroup s is
// element s·(SG·ITEMS) + i·SG + l of the tile, so element order is (subgroup, item, lane) order.
// For each item the subgroup finds the lanes sharing its digit by one ballot per digit bit; the
// lowest of them adds their number to the subgroup's counter of the digit, and each lane's rank
// is the counter's old value plus its peers below it. Then the subgroups' counters become
// offsets (the subgroups before, then the digits before, by a workgroup scan). An element's rank
// is its place in the tile ordered by digit, ties in element order: a stable counting step.
//
// The counters are 16-bit, two digits a word (a tile of at most 4096 never carries into the
// next half), so 256 / SG subgroups take 32 KiB / SG; they alias the exchange buffer `sbuf`,
// which the includer uses between rankings (BUF_WORDS >= max(its need, 128 · 256 / SG), chosen
// by vk_sort.cpp). The leader's add is atomic because the leaders of digits 2k and 2k + 1 share
// a word; a later item's add follows this item's, which it depends on through the shuffle.
//
// The includer declares, before this file: SG (the device's subgroup size, a specialization
// constant; every subgroup full), ITEMS and BUF_WORDS, and runs 256 invocations.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require

const uint RANK_WG = 256u;       // one invocation per digit value
const uint NSG = RANK_WG / SG;   // subgroups in the workgroup
const uint PAIRS = 128u;         // counter words per subgroup: two 16-bit digits each

shared uint sbuf[BUF_WORDS];  // the counters while ranking, else the includer's exchange
shared uint s_start[256];     // the tile's first rank of each digit
shared uint s_count[256];     // the tile's count of each digit
shared uint s_sums[NSG];      // the workgroup scan's subgroup totals

// The ranking's operands: each item's digit and whether it is an element (the rest are
// neither counted nor ranked); its rank out.
uint g_digit[ITEMS];
bool g_valid[ITEMS];
uint g_rank[ITEMS];

// The tile element item `i` of this invocation is.
uint striped(uint i) {
  return gl_SubgroupID * (SG * ITEMS) + i * SG + gl_SubgroupInvocationID;
}

// This invocation's place in the order block_exclusive_scan scans in (subgroup, lane).
uint scan_index() {
  return gl_SubgroupID * SG + gl_SubgroupInvocationID;
}

// An exclusive scan of one value per invocation over the workgroup, in scan_index() order;
// `total` gets the sum. Ends with the workgroup in step (s_sums reused at once).
uint block_exclusive_scan(uint v, out uint total) {
  const uint x = subgroupInclusiveAdd(v);
  if (gl_SubgroupInvocationID == SG - 1u) s_sums[gl_SubgroupID] = x;
  barrier();
  uint before = 0u;
  total = 0u;
  for (uint s = 0u; s < NSG; ++s) {
    const uint c = s_sums[s];
    if (s < gl_SubgroupID) before += c;
    total += c;
  }
  barrier();
  return before + x - v;
}

// The lanes of this subgroup whose item has digit `d` (this lane among them when `valid`),
// as counts: the peers below this lane, all peers, and the lowest peer.
void peers_of(uint d, bool valid, out uint below, out uint count, out uint leader) {
  if (SG <= 32u) {
    uint peers = subgroupBallot(valid).x;
    [[unroll]] for (uint b = 0u; b < 8u; ++b) {
      const bool set = ((d >> b) & 1u) != 0u;
      const uint m = subgroupBallot(set).x;
      peers &= set ? m : ~m;
    }
    below = bitCount(peers & gl_SubgroupLtMask.x);
    count = bitCount(peers);
    leader = uint(findLSB(peers));
  } else {
    uvec4 peers = subgroupBallot(valid);
    [[unroll]] for (uint b = 0u; b < 8u; ++b) {
      const bool set = ((d >> b) & 1u) != 0u;
      const uvec4 m = subgroupBallot(set);
      peers &= set ? m : ~m;
    }
    below = subgroupBallotExclusiveBitCount(peers);
    count = subgroupBallotBitCount(peers);
    leader = subgroupBallotFindLSB(peers);
  }
}

// Ranks the valid items by g_digit (each < 256) into g_rank; s_start and s_count describe the
// tile's digits. Begins with a barrier (sbuf's earlier readers done) and ends with the
// counters read, not synchronised: the caller's next use of sbuf starts with a barrier.
void rank_digits() {
  const uint t = scan_index();
  barrier();
  for (uint k = t; k < NSG * PAIRS; k += RANK_WG) sbuf[k] = 0u;
  barrier();
  const uint mine = gl_SubgroupID * PAIRS;
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    const uint d = g_digit[i];
    const bool valid = g_valid[i];
    uint below, count, leader;
    peers_of(d, valid, below, count, leader);
    uint base = 0u;
    if (valid && below == 0u) {
      const uint half_ = (d & 1u) * 16u;
      base = (atomicAdd(sbuf[mine + (d >> 1u)], count << half_) >> half_) & 0xffffu;
    }
    base = subgroupShuffle(base, valid ? leader : gl_SubgroupInvocationID);
    g_rank[i] = base + below;
  }
  barrier();
  // Invocation t < 128: counter word t (digits 2t, 2t + 1) of every subgroup, exclusive over
  // the subgroups, both halves at once; then the digits' starts by a workgroup scan.
  uint run = 0u;
  if (t < PAIRS) {
    for (uint s = 0u; s < NSG; ++s) {
      const uint c = sbuf[s * PAIRS + t];
      sbuf[s * PAIRS + t] = run;
      run += c;
    }
  }
  const uint lo = run & 0xffffu, hi = run >> 16u;
  uint total;
  const uint start = block_exclusive_scan(lo + hi, total);
  if (t < PAIRS) {
    s_start[2u * t] = start;
    s_start[2u * t + 1u] = start + lo;
    s_count[2u * t] = lo;
    s_count[2u * t + 1u] = hi;
    const uint add = start | ((start + lo) << 16u);
    for (uint s = 0u; s < NSG; ++s) sbuf[s * PAIRS + t] += add;
  }
  barrier();
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
    if (!g_valid[i]) continue;
    const uint d = g_digit[i], half_ = (d & 1u) * 16u;
    g_rank[i] += (sbuf[mine + (d >> 1u)] >> half_) & 0xffffu;
  }
}
