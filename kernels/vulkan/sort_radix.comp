#version 450
// Kernel family "sort", variant radix (nbx::abi::SortParams; the CUDA twin and the method:
// kernels/gpu/sort_kernels.cu): rows of any length through the workspace (binding 4, laid out
// as abi::sort_workspace_words says: keys A, keys B, positions A, positions B, digit counts
// [row][digit][tile], chunk totals [pass][row][chunk]). STAGE (specialization constant) picks
// one of the six dispatches vk_sort.cpp records in order, the middle four once per 4-bit digit:
//   1 prepare: keys and positions into half A, the chunk totals zeroed;
//   2 count:   each tile of 2048 elements counts its digits and adds them to its chunk's total;
//   3 totals:  a workgroup per row scans the row's chunk totals into prefixes;
//   4 chunks:  a workgroup per chunk of 4096 counts (digit-major) scans them into offsets
//              from its total's prefix;
//   5 scatter: each tile ranks its elements by digit in tile order (an invocation owns 8
//              consecutive elements) and writes them to their offsets in the other half;
//   6 emit:    values (copied from the input by position) and positions out of half A.
// Workgroups loop over the tiles (rows), so any size fits maxComputeWorkGroupCount.
#include "sort_keys.glsl"
#include "sort_common.glsl"

layout(constant_id = 2) const uint STAGE = 1u;
layout(constant_id = 3) const uint KEY_WORDS = 1u;

const uint kBuckets = 16u;  // abi::kSortRadixBuckets
const uint kTile = 2048u;   // abi::kSortRadixTile
const uint kItems = 8u;     // kTile / 256 invocations (vk_sort.cpp dispatches 256)

layout(set = 0, binding = 4) buffer Work { uint w[]; } ws;

shared uint rank[kBuckets * 256u];
shared uint scratch[256u];
shared uint digit_start[kBuckets];

uint n_elements() { return P.head.x * P.head.y; }
uint keys_at(uint half_) { return half_ * n_elements() * KEY_WORDS; }
uint pos_at(uint half_) { return 2u * n_elements() * KEY_WORDS + half_ * n_elements(); }
uint counts_at() { return 2u * n_elements() * KEY_WORDS + 2u * n_elements(); }
// misc.x tiles per row, misc.w chunks per row; the totals of the pass of `shift`.
uint totals_at(uint shift) {
  return counts_at() + P.head.x * kBuckets * P.misc.x + (shift / 4u) * P.head.x * P.misc.w;
}

uvec2 load_key(uint half_, uint e) {
  const uint b = keys_at(half_) + e * KEY_WORDS;
  return KEY_WORDS == 2u ? uvec2(ws.w[b], ws.w[b + 1u]) : uvec2(ws.w[b], 0u);
}
void store_key(uint half_, uint e, uvec2 k) {
  const uint b = keys_at(half_) + e * KEY_WORDS;
  ws.w[b] = k.x;
  if (KEY_WORDS == 2u) ws.w[b + 1u] = k.y;
}
uint digit_of(uvec2 k, uint shift) {
  return ((shift >= 32u ? k.y >> (shift - 32u) : k.x >> shift)) & (kBuckets - 1u);
}

// An exclusive scan of one value per invocation over the workgroup; `total` gets the sum.
uint exclusive_scan(uint v, out uint total) {
  const uint t = gl_LocalInvocationID.x;
  scratch[t] = v;
  barrier();
  for (uint d = 1u; d < 256u; d <<= 1u) {
    const uint add = t >= d ? scratch[t - d] : 0u;
    barrier();
    scratch[t] += add;
    barrier();
  }
  total = scratch[255];
  const uint inclusive = scratch[t];
  barrier();
  return inclusive - v;
}

void main() {
  const uint rows = P.head.x, row_len = P.head.y, tiles = P.misc.x, src = P.misc.y;
  const uint shift = P.misc.z, t = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  const uint n = n_elements();
  if (STAGE == 1u || STAGE == 6u) {
    if (STAGE == 1u) {
      const uint words = (P.key.x / 4u) * rows * P.misc.w;
      for (uint e = gl_GlobalInvocationID.x; e < words; e += P.head.w * wg) ws.w[totals_at(0u) + e] = 0u;
    }
    for (uint e = gl_GlobalInvocationID.x; e < n; e += P.head.w * wg) {
      const uint r = e / row_len, j = e % row_len;
      const uvec3 row = row_offsets(r);
      if (STAGE == 1u) {
        store_key(0u, e, key_of(row, j));
        ws.w[pos_at(0u) + e] = j;
      } else {
        write_out(row, j, ws.w[pos_at(0u) + e]);
      }
    }
    return;
  }
  const uint chunks = P.misc.w;
  if (STAGE == 3u) {
    for (uint r = gl_WorkGroupID.x; r < rows; r += P.head.w) {
      const uint c = totals_at(shift) + r * chunks;
      uint carry = 0u;
      for (uint base = 0u; base < chunks; base += 256u) {
        const uint e = base + t;
        const uint v = e < chunks ? ws.w[c + e] : 0u;
        uint total;
        const uint before = exclusive_scan(v, total);
        if (e < chunks) ws.w[c + e] = carry + before;
        carry += total;
      }
    }
    return;
  }
  if (STAGE == 4u) {
    const uint len = kBuckets * tiles, per = 16u;  // 4096 counts a chunk, 16 an invocation
    for (uint b = gl_WorkGroupID.x; b < rows * chunks; b += P.head.w) {
      const uint r = b / chunks, chunk = b % chunks;
      const uint c = counts_at() + r * len, first = chunk * 4096u + t * per;
      uint v[16];
      uint sum = 0u;
      for (uint i = 0u; i < per; ++i) {
        v[i] = first + i < len ? ws.w[c + first + i] : 0u;
        sum += v[i];
      }
      uint total;
      uint at = ws.w[totals_at(shift) + r * chunks + chunk] + exclusive_scan(sum, total);
      for (uint i = 0u; i < per; ++i) {
        if (first + i < len) ws.w[c + first + i] = at;
        at += v[i];
      }
    }
    return;
  }
  for (uint b = gl_WorkGroupID.x; b < rows * tiles; b += P.head.w) {
    const uint r = b / tiles, tile = b % tiles, base = r * row_len;
    if (STAGE == 2u) {
      if (t < kBuckets) rank[t] = 0u;
      barrier();
      for (uint i = t; i < kTile; i += 256u) {
        const uint j = tile * kTile + i;
        if (j < row_len) atomicAdd(rank[digit_of(load_key(src, base + j), shift)], 1u);
      }
      barrier();
      if (t < kBuckets) {
        const uint at = t * tiles + tile;  // the entry's place in the row's counts
        ws.w[counts_at() + r * kBuckets * tiles + at] = rank[t];
        if (rank[t] != 0u) atomicAdd(ws.w[totals_at(shift) + r * chunks + at / 4096u], rank[t]);
      }
      barrier();
      continue;
    }
    // STAGE 5: scatter.
    const uint first = tile * kTile + t * kItems;
    for (uint d = 0u; d < kBuckets; ++d) rank[d * 256u + t] = 0u;
    for (uint i = 0u; i < kItems; ++i)
      if (first + i < row_len) rank[digit_of(load_key(src, base + first + i), shift) * 256u + t] += 1u;
    barrier();
    uint local_[kBuckets];
    uint sum = 0u;
    for (uint e = 0u; e < kBuckets; ++e) {
      local_[e] = sum;
      sum += rank[t * kBuckets + e];
    }
    uint total;
    const uint before = exclusive_scan(sum, total);
    for (uint e = 0u; e < kBuckets; ++e) rank[t * kBuckets + e] = before + local_[e];
    barrier();
    if (t < kBuckets) digit_start[t] = rank[t * 256u];
    barrier();
    const uint dst = src ^ 1u;
    for (uint i = 0u; i < kItems; ++i) {
      const uint j = first + i;
      if (j >= row_len) break;
      const uvec2 k = load_key(src, base + j);
      const uint d = digit_of(k, shift);
      const uint rk = rank[d * 256u + t];
      rank[d * 256u + t] = rk + 1u;
      const uint to = ws.w[counts_at() + (r * kBuckets + d) * tiles + tile] + (rk - digit_start[d]);
      store_key(dst, base + to, k);
      ws.w[pos_at(dst) + base + to] = ws.w[pos_at(src) + base + j];
    }
    barrier();
  }
}
