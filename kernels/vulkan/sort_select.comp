#version 450
// Kernel family "sort", variant select, op topk (nbx::abi::SortParams; the CUDA twin and the
// method: kernels/gpu/sort_select_kernels.cu): a workgroup a row (looping over the rows)
// gathers into shared memory candidates among which are the row's k smallest keys, then
// sorts them as (key, position) pairs by a bitonic network over the next power of two and
// writes the first k (values copied from the input by position, bit for bit). The candidates
// come from one of two methods:
//  - filter (FILTER = 1: abi::sort_select_filters, so k and a chunk fit CAND): one read
//    of the row, appending each element that can still be among the k smallest — all until
//    the first compaction, then those below the largest key of the k smallest held, which a
//    compaction in shared memory finds (8-bit digit counts over the candidates) whenever more
//    than max(4k, 256) are held or the next chunk might not fit; once bounded, a comparison of
//    the raw element with the bound's value (PRETEST) spares the key transform of items no
//    invocation of the subgroup may take;
//  - narrow (larger k): the k-th smallest key's digits, most significant first (FIRST_BITS,
//    then 8): shared-memory counts of the next digit over the keys sharing the digits found
//    so far, a scan, the digit where the running count reaches the rank still needed — until
//    the keys below that prefix (all selected) and those sharing it fit CAND candidates, or no
//    digit is left (then all that share it are one key: only the first of them by position
//    that complete k are kept); then the candidates gathered in row order (GATHER_ITEMS
//    elements an invocation a subgroup's width apart, each item's lanes ranked by subgroup
//    ballots, one barrier a chunk for the subgroups' counts). The counts use the
//    candidates' buffer, free until the gather.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "sort_keys.glsl"
#include "sort_common.glsl"

layout(constant_id = 2) const uint CAND = 4096u;       // the candidates (ABI: `tile`)
layout(constant_id = 3) const uint KEY_WORDS = 1u;     // 2 for 64-bit keys
layout(constant_id = 4) const uint BUF_WORDS = 8192u;  // CAND × (KEY_WORDS + 1)
layout(constant_id = 5) const uint FIRST_BITS = 12u;   // 2^FIRST_BITS <= BUF_WORDS
layout(constant_id = 6) const uint FILTER_ITEMS = 8u;  // elements an invocation a filter chunk
// 1: the filter reads 4-byte elements 16 bytes at a time (rows of stride 1 whose starts and
// lengths are multiples of 4; FILTER_ITEMS a multiple of 4): a quarter of the loads and their
// address arithmetic.
layout(constant_id = 7) const uint VEC4 = 0u;
// 1: the filter method (abi::sort_select_filters), 0: narrow. A specialization constant, so a
// pipeline holds one method and its registers (NVIDIA: both in one took 87, two workgroups a
// multiprocessor).
layout(constant_id = 8) const uint FILTER = 0u;
// The filter's pretest on the raw element (vk_sort.cpp: 0 none, 64-bit keys; 1 float32,
// 2 bfloat16, 3 float16, 4 signed, 5 unsigned integers of up to 32 bits).
layout(constant_id = 9) const uint PRETEST = 0u;
// The filter's chunks in flight an invocation: 1, the next chunk loaded while this one is
// appended; 2, the one after it too (two register sets, the loop taken two chunks a turn).
layout(constant_id = 10) const uint PREFETCH = 2u;
layout(set = 0, binding = 3) readonly buffer S128 { uvec4 v[]; } s128;

const uint COUNT_UNROLL = 16u;  // loads in flight an invocation while counting
const uint GATHER_ITEMS = 8u;   // elements an invocation gathers a chunk
const uint MAX_SUBGROUPS = 64u;  // a workgroup of at most 256 in subgroups of at least 4

shared uint sbuf[BUF_WORDS];  // keys at [0, CAND · KEY_WORDS), positions after them
shared uint sscan[gl_WorkGroupSize.x];
shared uint schosen[3];  // the digit, the count below it, its count
shared uint sbins[256];  // the filter's compaction: digit counts over the candidates
shared uvec2 sfound;     // the filter's compaction: the one candidate left by a narrowing
// A gather chunk's counts, item-major then subgroup: below the prefix in the low 16 bits,
// sharing it in the high 16.
shared uint sgather[GATHER_ITEMS * MAX_SUBGROUPS];

uvec2 load_key(uint i) {
  return KEY_WORDS == 2u ? uvec2(sbuf[2u * i], sbuf[2u * i + 1u]) : uvec2(sbuf[i], 0u);
}
void store_key(uint i, uvec2 k) {
  if (KEY_WORDS == 2u) {
    sbuf[2u * i] = k.x;
    sbuf[2u * i + 1u] = k.y;
  } else {
    sbuf[i] = k.x;
  }
}
uint load_pos(uint i) { return sbuf[CAND * KEY_WORDS + i]; }
void store_pos(uint i, uint p) { sbuf[CAND * KEY_WORDS + i] = p; }

// `width` bits of a key (lo, hi) from bit `shift`.
uint bits_of(uvec2 k, uint shift, uint width) {
  uint v = shift >= 32u ? k.y >> (shift - 32u)
                        : (k.x >> shift) | (shift == 0u ? 0u : k.y << (32u - shift));
  return v & ((1u << width) - 1u);
}
// `v` placed at bit `shift` of a key (lo, hi).
uvec2 at_bit(uint v, uint shift) {
  if (shift >= 32u) return uvec2(0u, v << (shift - 32u));
  return uvec2(v << shift, shift == 0u ? 0u : v >> (32u - shift));
}
bool key_less(uvec2 a, uvec2 b) { return a.y != b.y ? a.y < b.y : a.x < b.x; }

// An exclusive scan of one value per invocation; `total` receives the sum. Subgroup scans and
// the subgroups' totals through sscan: one barrier (the Hillis–Steele scan in shared memory
// took two a step, 16 for a workgroup of 256). sscan is written again only after a barrier:
// narrow_to_bin, the one caller, ends with two.
uint exclusive_scan(uint v, out uint total) {
  const uint sg = gl_SubgroupID, nsg = gl_NumSubgroups;
  const uint within = subgroupExclusiveAdd(v), sum = subgroupAdd(v);
  if (subgroupElect()) sscan[sg] = sum;
  barrier();
  uint before = 0u;
  total = 0u;
  for (uint s = 0u; s < nsg; ++s) {
    const uint c = sscan[s];
    if (s < sg) before += c;
    total += c;
  }
  return before + within;
}

// One narrowing step over `bins` counts of the digit at bit `shift` (sbins when `small`, else
// sbuf): the bin holding rank `need` (1-based) joins the prefix under the mask, `need` becomes
// the rank within it and `match` its count; returns the count below it. Called by the whole
// workgroup; ends with it synchronised, so the counts may be written again at once.
uint narrow_to_bin(bool small, uint bins, uint shift, inout uint need, inout uint match,
                   inout uvec2 prefix, inout uvec2 mask) {
  const uint t = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  const uint per = max(bins / wg, 1u), first = t * per;
  uint sum = 0u;
  for (uint b = first; b < first + per && b < bins; ++b) sum += small ? sbins[b] : sbuf[b];
  uint total;
  uint running = exclusive_scan(sum, total);
  for (uint b = first; b < first + per && b < bins; ++b) {
    const uint c = small ? sbins[b] : sbuf[b];
    if (running < need && need <= running + c) {
      schosen[0] = b;
      schosen[1] = running;
      schosen[2] = c;
    }
    running += c;
  }
  barrier();
  const uint below = schosen[1];
  need -= below;
  match = schosen[2];
  prefix |= at_bit(schosen[0], shift);
  mask |= at_bit(bins - 1u, shift);
  barrier();  // schosen is written again by the next step
  return below;
}

// The smallest power of two no smaller than m.
uint span_of(uint m) {
  uint span = 1u;
  while (span < m) span <<= 1u;
  return span;
}

// 1. + 2. of the narrowing method (the header): the candidates of row `row` gathered into
// sbuf; returns their count.
uint narrow_and_gather(uvec3 row, uint n, uint k, uint bits) {
  const uint t = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  uvec2 prefix = uvec2(0u), mask = uvec2(0u);
  uint below = 0u, match = n, need = k;
  for (uint hi = bits; hi > 0u && below + match > CAND;) {
    const uint width = min(hi == bits ? FIRST_BITS : 8u, hi), shift = hi - width;
    const uint bins = 1u << width;
    for (uint b = t; b < bins; b += wg) sbuf[b] = 0u;
    barrier();
    for (uint base = 0u; base < n; base += COUNT_UNROLL * wg) {
      uvec2 raw[COUNT_UNROLL];  // loaded together (past the row's end: its last element)
      [[unroll]] for (uint u = 0u; u < COUNT_UNROLL; ++u)
        raw[u] = read_input(row.x + min(base + u * wg + t, n - 1u) * P.strides.x);
      [[unroll]] for (uint u = 0u; u < COUNT_UNROLL; ++u) {
        const uvec2 key = sort_key(raw[u], bits, P.key.y, P.key.z, P.key.w != 0u);
        if (base + u * wg + t < n && (key & mask) == prefix)
          atomicAdd(sbuf[bits_of(key, shift, width)], 1u);
      }
    }
    barrier();
    below += narrow_to_bin(false, bins, shift, need, match, prefix, mask);
    hi = shift;
  }

  // Gather in row order: the keys below the prefix, and of those sharing it all of them or,
  // when they are one key too many to hold, the first `need` by position. Element order
  // within a chunk is (item, subgroup, lane), so a lane's ballots rank it among its item's
  // lanes and the subgroups' counts before it place the item's run.
  const uint eq_cap = below + match <= CAND ? match : need;
  const uint sg = gl_SubgroupID, nsg = gl_NumSubgroups;
  const uint me = sg * gl_SubgroupSize + gl_SubgroupInvocationID;
  uint lt_seen = 0u, eq_seen = 0u;
  for (uint base = 0u; base < n && (lt_seen < below || eq_seen < eq_cap);
       base += GATHER_ITEMS * wg) {
    uvec2 raw[GATHER_ITEMS];
    [[unroll]] for (uint i = 0u; i < GATHER_ITEMS; ++i)
      raw[i] = read_input(row.x + min(base + i * wg + me, n - 1u) * P.strides.x);
    uvec2 keys[GATHER_ITEMS];
    uint ranks[GATHER_ITEMS];  // below in the low 16 bits, sharing in the high 16
    uint lt_bits = 0u, eq_bits = 0u;
    [[unroll]] for (uint i = 0u; i < GATHER_ITEMS; ++i) {
      keys[i] = sort_key(raw[i], bits, P.key.y, P.key.z, P.key.w != 0u);
      const uvec2 m = keys[i] & mask;
      const bool in_row = base + i * wg + me < n;
      const bool lt = in_row && key_less(m, prefix), eq = in_row && m == prefix;
      const uvec4 bl = subgroupBallot(lt), be = subgroupBallot(eq);
      ranks[i] = subgroupBallotExclusiveBitCount(bl) | (subgroupBallotExclusiveBitCount(be) << 16);
      if (subgroupElect())
        sgather[i * nsg + sg] = subgroupBallotBitCount(bl) | (subgroupBallotBitCount(be) << 16);
      if (lt) lt_bits |= 1u << i;
      if (eq) eq_bits |= 1u << i;
    }
    barrier();
    // Each item's counts before this subgroup's run (item-major order), and the chunk's.
    uint before[GATHER_ITEMS], total = 0u;
    [[unroll]] for (uint i = 0u; i < GATHER_ITEMS; ++i) {
      uint earlier = 0u, item_total = 0u;
      for (uint s = 0u; s < nsg; ++s) {
        const uint c = sgather[i * nsg + s];
        if (s < sg) earlier += c;
        item_total += c;
      }
      before[i] = total + earlier;
      total += item_total;
    }
    [[unroll]] for (uint i = 0u; i < GATHER_ITEMS; ++i) {
      const bool lt = (lt_bits >> i & 1u) != 0u, eq = (eq_bits >> i & 1u) != 0u;
      const uint at = before[i] + ranks[i];
      const uint lt_at = lt_seen + (at & 0xffffu), eq_at = eq_seen + (at >> 16);
      if (lt || (eq && eq_at < eq_cap)) {
        const uint slot = lt_at + min(eq_at, eq_cap);
        store_key(slot, keys[i]);
        store_pos(slot, base + i * wg + me);
      }
    }
    lt_seen += total & 0xffffu;
    eq_seen += total >> 16;
    barrier();  // sgather is written again by the next chunk
  }
  return below + min(match, eq_cap);
}

// Candidate i's key (`of_pos` false) or position, as a key-sized value.
uvec2 candidate_value(uint i, bool of_pos) { return of_pos ? uvec2(load_pos(i), 0u) : load_key(i); }
// Whether candidate i is among those narrowed: its value shares `prefix` under `mask` (and,
// for positions, its key is `key`).
bool candidate_in(uint i, bool of_pos, uvec2 key, uvec2 prefix, uvec2 mask) {
  return (!of_pos || load_key(i) == key) && (candidate_value(i, of_pos) & mask) == prefix;
}

// The `need`-th smallest value (keys, or the positions of the candidates whose key is `key`)
// among the first c candidates, narrowed 8 bits a pass from bit `hi` down until one candidate
// shares the prefix or no bit is left; returns the whole value.
uvec2 narrow_candidates(uint c, bool of_pos, uvec2 key, uint hi, inout uint need,
                        inout uint match) {
  const uint t = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  uvec2 prefix = uvec2(0u), mask = uvec2(0u);
  while (hi > 0u && match > 1u) {
    const uint width = min(8u, hi), shift = hi - width, bins = 1u << width;
    for (uint b = t; b < bins; b += wg) sbins[b] = 0u;
    barrier();
    for (uint i = t; i < c; i += wg)
      if (candidate_in(i, of_pos, key, prefix, mask))
        atomicAdd(sbins[bits_of(candidate_value(i, of_pos), shift, width)], 1u);
    barrier();
    narrow_to_bin(true, bins, shift, need, match, prefix, mask);
    hi = shift;
  }
  if (hi == 0u) return prefix;
  // One candidate shares the prefix: its value has the bits below it.
  for (uint i = t; i < c; i += wg)
    if (candidate_in(i, of_pos, key, prefix, mask)) sfound = candidate_value(i, of_pos);
  barrier();
  const uvec2 found = sfound;
  barrier();
  return found;
}

// Keeps in sbuf the k smallest (key, position) pairs of its first c candidates (c >= k), in no
// particular order, and returns the largest key kept: an element met later (at a larger
// position) is among the row's k smallest only with a smaller key.
uvec2 keep_smallest(uint c, uint k, uint bits, uint n) {
  const uint t = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  uint need = k, match = c;
  const uvec2 kth = narrow_candidates(c, false, uvec2(0u), bits, need, match);
  // Of the `match` candidates whose key is kth, the `need` first by position are kept.
  uint last_pos = 0xffffffffu;
  if (match > need) last_pos = narrow_candidates(c, true, kth, findMSB(n - 1u) + 1u, need, match).x;
  // Compact a workgroup's width at a time: a kept candidate moves to a slot no later than its
  // own, which this window has already read or an earlier one has.
  const uint sg = gl_SubgroupID, nsg = gl_NumSubgroups;
  uint kept = 0u;
  for (uint w = 0u; w < c; w += wg) {
    const uint i = w + t;
    uvec2 key = uvec2(0u);
    uint pos = 0u;
    bool keep = false;
    if (i < c) {
      key = load_key(i);
      pos = load_pos(i);
      keep = key_less(key, kth) || (key == kth && pos <= last_pos);
    }
    const uvec4 ballot = subgroupBallot(keep);
    const uint rank = subgroupBallotExclusiveBitCount(ballot);
    if (subgroupElect()) sgather[sg] = subgroupBallotBitCount(ballot);
    barrier();
    uint before = 0u, total = 0u;
    for (uint s = 0u; s < nsg; ++s) {
      if (s < sg) before += sgather[s];
      total += sgather[s];
    }
    if (keep) {
      const uint slot = kept + before + rank;
      store_key(slot, key);
      store_pos(slot, pos);
    }
    kept += total;
    barrier();  // sgather is written again by the next window
  }
  return kth;
}

// The filter method (k + FILTER_ITEMS · workgroup <= CAND, so a chunk always fits): one read
// of the row. Elements are appended to sbuf while they can still be among the k smallest —
// all of them until it might not take the next chunk, then those with a key below the largest
// of the k kept at the last compaction (keep_smallest) — so on random keys a few hundred of a
// row's 128256 are ever held. A subgroup's run goes after the runs of the subgroups before it
// (their counts alternate between two halves of sgather: one barrier a chunk); the next chunk
// is loaded while this one is appended.

// The row position of invocation t's item i of a chunk: i · wg + t, or with VEC4 element i % 4
// of the quad (i / 4) · wg + t.
uint chunk_element(uint i) {
  const uint wg = gl_WorkGroupSize.x, t = gl_LocalInvocationID.x;
  return VEC4 == 1u ? (((i >> 2u) * wg + t) << 2u) + (i & 3u) : i * wg + t;
}

void load_chunk(out uvec2 raw[FILTER_ITEMS], uvec3 row, uint n, uint base) {
  const uint wg = gl_WorkGroupSize.x, t = gl_LocalInvocationID.x;
  if (VEC4 == 1u) {
    // Quads past the row's end read its last quad.
    const uint last = (n >> 2u) - 1u;
    [[unroll]] for (uint q = 0u; q < FILTER_ITEMS / 4u; ++q) {
      const uvec4 w = s128.v[(row.x >> 2u) + min((base >> 2u) + q * wg + t, last)];
      raw[4u * q] = uvec2(w.x, 0u);
      raw[4u * q + 1u] = uvec2(w.y, 0u);
      raw[4u * q + 2u] = uvec2(w.z, 0u);
      raw[4u * q + 3u] = uvec2(w.w, 0u);
    }
    return;
  }
  [[unroll]] for (uint i = 0u; i < FILTER_ITEMS; ++i)
    raw[i] = read_input(row.x + min(base + i * wg + t, n - 1u) * P.strides.x);
}

// The filter's pretest (PRETEST != 0): once bounded, an element is compared with the bound's
// own value in its dtype — one comparison, no key transform — and only where some invocation
// of the subgroup passes does the exact key test run. It passes every element whose key is
// below the bound (and some that are not: ties, and on a bound that is a NaN's or a zero's key
// the NaNs, +inf or both zeros), as the decodings below never reverse an order.
struct Threshold {
  float f;  // floats: as float32
  int i;    // signed integers, sign-extended
  uint u;   // unsigned integers
};

float pretest_float(uint raw) {
  if (PRETEST == 2u) return uintBitsToFloat(raw << 16u);
  if (PRETEST == 3u) return unpackHalf2x16(raw).x;
  return uintBitsToFloat(raw);
}
int pretest_signed(uint raw, uint bits) {
  return bits == 32u ? int(raw) : bitfieldExtract(int(raw), 0, int(bits));
}

// The bound's value: element_of_key's where the key determines it; the zero key as 0; the NaN
// key (every NaN, above +inf) as +inf.
Threshold threshold_of(uvec2 bound, uint bits) {
  Threshold t;
  uvec2 raw;
  const bool known = element_of_key(bound, raw);
  const uvec2 zero_key = sort_key(uvec2(0u), bits, P.key.y, P.key.z, P.key.w != 0u);
  t.f = known ? pretest_float(raw.x) : bound == zero_key ? 0.0 : uintBitsToFloat(0x7f800000u);
  t.i = pretest_signed(raw.x, bits);
  t.u = raw.x;
  return t;
}

// Whether raw may have a key below the bound whose value is t (ascending keys: at most t;
// descending: at least t, NaNs included).
bool pretest(uint raw, Threshold t, uint bits) {
  const bool descending = P.key.w != 0u;
  if (PRETEST <= 3u) {
    const float x = pretest_float(raw);
    return descending ? !(x < t.f) : x <= t.f;
  }
  if (PRETEST == 4u) {
    const int x = pretest_signed(raw, bits);
    return descending ? x >= t.i : x <= t.i;
  }
  return descending ? raw >= t.u : raw <= t.u;
}

// Chunk `base` from `raw` (then reloaded with chunk `reload`); `runs` the half of sgather
// for its run counts. An invocation's appended elements are consecutive, after those of the
// invocations before it in its subgroup (one exclusive add); the bitonic sort orders ties by
// position, so the candidates' order is free.
void append_chunk(inout uvec2 raw[FILTER_ITEMS], uvec3 row, uint n, uint k, uint bits, uint base,
                  uint reload, uint runs, uint compact_at, inout uvec2 bound, inout Threshold t,
                  inout bool bounded, inout uint held) {
  const uint wg = gl_WorkGroupSize.x;
  const uint sg = gl_SubgroupID, nsg = gl_NumSubgroups;
  const uint chunk = FILTER_ITEMS * wg;
  // A vote an item: the key transform and the exact test only where an invocation of the
  // subgroup may take it.
  uvec2 keys[FILTER_ITEMS];
  uint take = 0u;  // a bit an item
  [[unroll]] for (uint i = 0u; i < FILTER_ITEMS; ++i) {
    const bool may = base + chunk_element(i) < n &&
                     (!bounded || PRETEST == 0u || pretest(raw[i].x, t, bits));
    keys[i] = uvec2(0u);
    if (subgroupBallot(may) != uvec4(0u)) {
      keys[i] = sort_key(raw[i], bits, P.key.y, P.key.z, P.key.w != 0u);
      if (KEY_WORDS == 1u) keys[i].y = 0u;  // known to the compiler: one register a key
      if (may && (!bounded || key_less(keys[i], bound))) take |= 1u << i;
    }
  }
  load_chunk(raw, row, n, reload);
  const uint mine = bitCount(take);
  const uint first = subgroupExclusiveAdd(mine), run = subgroupAdd(mine);
  if (subgroupElect()) sgather[runs + sg] = run;
  barrier();
  uint slot = held;
  for (uint s = 0u; s < nsg; ++s) {
    if (s < sg) slot += sgather[runs + s];
    held += sgather[runs + s];
  }
  slot += first;
  [[unroll]] for (uint i = 0u; i < FILTER_ITEMS; ++i)
    if ((take >> i & 1u) != 0u) {
      store_key(slot, keys[i]);
      store_pos(slot, base + chunk_element(i));
      ++slot;
    }
  // `held` is the same in every invocation; the compaction's first barrier orders the stores.
  if (held > compact_at && base + chunk < n) {
    bound = keep_smallest(held, k, bits, n);
    if (PRETEST != 0u) t = threshold_of(bound, bits);
    bounded = true;
    held = k;
  }
}

// Returns the candidates' count (the row's k smallest among them).
uint filter_candidates(uvec3 row, uint n, uint k, uint bits) {
  const uint chunk = FILTER_ITEMS * gl_WorkGroupSize.x;
  uvec2 bound = uvec2(0u);  // elements with keys below it are appended (once `bounded`)
  Threshold t = Threshold(0.0, 0, 0u);  // the bound's value (PRETEST)
  bool bounded = false;
  uint held = 0u;
  // Compacted when the next chunk might not fit, and as soon as more than max(4k, 256) are
  // held: the bound then tightens as the row is read (the CUDA twin's rule).
  const uint compact_at = min(CAND - chunk, max(4u * k, 256u));
  uvec2 raw[FILTER_ITEMS];
  load_chunk(raw, row, n, 0u);
  if (PREFETCH == 2u) {
    // Two register sets, each reloaded two chunks ahead once appended (a set is never copied:
    // a move would wait for its loads). vulkan:0 topk50 over 4096 x 128256 on an H100,
    // 2026-12-06: 3.97 -> 3.34 ms; four sets 3.57 (98 registers), a group of four placed by
    // one scan 5.01 (a 196 KB binary).
    uvec2 raw1[FILTER_ITEMS];
    load_chunk(raw1, row, n, chunk);
    for (uint base = 0u; base < n; base += 2u * chunk) {
      append_chunk(raw, row, n, k, bits, base, base + 2u * chunk, 0u, compact_at, bound, t,
                   bounded, held);
      if (base + chunk < n)
        append_chunk(raw1, row, n, k, bits, base + chunk, base + 3u * chunk, MAX_SUBGROUPS,
                     compact_at, bound, t, bounded, held);
    }
  } else {
    for (uint base = 0u, parity = 0u; base < n; base += chunk, parity ^= 1u)
      append_chunk(raw, row, n, k, bits, base, base + chunk, parity * MAX_SUBGROUPS, compact_at,
                   bound, t, bounded, held);
  }
  barrier();  // the last chunk's candidates are stored
  // Compacted to k where that shrinks the bitonic sort's span (about 1500 held on random
  // logits: 2048 slots, 64 for k = 50).
  if (held > span_of(k)) {
    keep_smallest(held, k, bits, n);
    held = k;
  }
  return held;
}

// 3. Sort the m candidates over the next power of two (pads above every real pair), write the
// first k.
void sort_and_write(uvec3 row, uint m, uint k) {
  const uint t = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  const uint span = span_of(m);
  for (uint i = m + t; i < span; i += wg) {
    store_key(i, uvec2(0xffffffffu));
    store_pos(i, 0xffffffffu);
  }
  barrier();
  for (uint kk = 2u; kk <= span; kk <<= 1u) {
    for (uint j = kk >> 1u; j > 0u; j >>= 1u) {
      for (uint q = t; q < span / 2u; q += wg) {
        const uint lo = 2u * q - (q & (j - 1u)), hi = lo + j;
        const bool ascending = (lo & kk) == 0u || kk == span;
        const uvec2 kl = load_key(lo), kh = load_key(hi);
        const uint pl = load_pos(lo), ph = load_pos(hi);
        if (pair_less(kh, ph, kl, pl) == ascending) {
          store_key(lo, kh);
          store_key(hi, kl);
          store_pos(lo, ph);
          store_pos(hi, pl);
        }
      }
      barrier();
    }
  }
  for (uint s = t; s < k; s += wg) write_out(row, s, load_pos(s));
  barrier();  // the next row's counts reuse the buffer
}

void main() {
  const uint rows = P.head.x, n = P.head.y, k = P.misc.x, bits = P.key.x;
  for (uint r = gl_WorkGroupID.x; r < rows; r += P.head.w) {
    const uvec3 row = row_offsets(r);
    const uint m =
        FILTER == 1u ? filter_candidates(row, n, k, bits) : narrow_and_gather(row, n, k, bits);
    sort_and_write(row, m, k);
  }
}
