#version 450
// Kernel family "sort", variant onesweep (nbx::abi::SortParams; the CUDA twin and the method:
// kernels/gpu/sort_onesweep_kernels.cu, after Adinets & Merrill, "Onesweep: A Faster Least
// Significant Digit Radix Sort for GPUs", 2022). The workspace (binding 4) is laid out as
// abi::sort_onesweep_workspace_words says: keys A, keys B, positions A, positions B, the digit
// offsets [row][pass][digit], a tile counter per pass, the look-back words
// [pass][row · tiles + tile][digit]. STAGE (specialization constant) picks one of the
// dispatches vk_sort.cpp records in order:
//   1 clear:     the offsets, counters and look-back words zeroed;
//   2 histogram: each workgroup counts every 8-bit digit of the keys of its consecutive tiles
//                (shared counters, HIST_PARTS copies each), added to the row's counts;
//   3 scan:      a workgroup per (row, pass) turns the counts into the digits' first offsets;
//   4 pass:      once per digit, least significant first: a workgroup takes the next tile of
//                4096 from the pass's counter (so every tile before it has been taken by a
//                running workgroup), ranks its keys by the digit (sort_rank.glsl), publishes
//                its digit counts and looks back over the row's tiles before it for theirs
//                (a tile whose inclusive count is published ends the walk), then writes its
//                keys and positions, grouped by digit through shared memory, to the digit's
//                offset plus the count before it. The first pass reads the input, the last
//                writes the values (rebuilt from the key where it determines them, else
//                copied by position) and the indices.
// A look-back word is a 2-bit flag over a 30-bit count, one atomic word (no other data rides
// on it), so relaxed device-scope atomics suffice. Without LOOKBACK (CPU devices: llvmpipe ends
// every shader invocation's loops after 65535 iterations in all, so a spin-wait on another
// workgroup may end early) two more dispatches before each pass give every tile its counts
// before it, without waiting:
//   5 tile counts: each tile's count of every digit of the pass into its look-back words;
//   6 tile scan:   a workgroup per (row, digit) scans the row's tiles' counts of the digit.
// Workgroups loop over the tiles (rows, or (row, pass) pairs), so any size fits
// maxComputeWorkGroupCount.
#extension GL_KHR_memory_scope_semantics : require
#include "sort_keys.glsl"
#include "sort_common.glsl"

layout(constant_id = 2) const uint STAGE = 4u;
layout(constant_id = 3) const uint SG = 32u;
layout(constant_id = 4) const uint BUF_WORDS = 4096u;
layout(constant_id = 5) const uint HIST_PARTS = 4u;  // PASSES · 256 · HIST_PARTS <= BUF_WORDS
// Decoupled look-back (GPUs); without it, stages 5 and 6 give each tile its counts before it.
layout(constant_id = 6) const bool LOOKBACK = true;

const uint ITEMS = 16u;  // abi::kSortOnesweepTile / 256 invocations

#include "sort_rank.glsl"

const uint TILE = RANK_WG * ITEMS;
const uint KEY_WORDS = ITEM == 8u ? 2u : 1u;
const uint PASSES = ITEM;  // 8-bit digits
const uint FLAG_AGGREGATE = 1u << 30u;  // this tile's own count of the digit
const uint FLAG_PREFIX = 2u << 30u;     // the count in this tile and all before it in the row
const uint COUNT_MASK = FLAG_AGGREGATE - 1u;

layout(set = 0, binding = 4) buffer Work { uint w[]; } ws;
layout(set = 0, binding = 4) coherent buffer Status { uint w[]; } st;  // the atomics' view

shared uint s_base[256];  // a digit's place in the row, less its first rank in the tile
shared uint s_tile;

uint n_elements() { return P.head.x * P.head.y; }
uint tiles_per_row() { return P.misc.x; }
uint keys_at(uint h) { return h * n_elements() * KEY_WORDS; }
uint pos_at(uint h) { return 2u * n_elements() * KEY_WORDS + h * n_elements(); }
uint offsets_at() { return pos_at(2u); }
uint counters_at() { return offsets_at() + P.head.x * PASSES * 256u; }
uint status_at() { return counters_at() + PASSES; }
uint cleared_words() {
  return status_at() + PASSES * P.head.x * tiles_per_row() * 256u - offsets_at();
}

uvec2 load_key(uint h, uint e) {
  const uint b = keys_at(h) + e * KEY_WORDS;
  return KEY_WORDS == 2u ? uvec2(ws.w[b], ws.w[b + 1u]) : uvec2(ws.w[b], 0u);
}
void store_key(uint h, uint e, uvec2 k) {
  const uint b = keys_at(h) + e * KEY_WORDS;
  ws.w[b] = k.x;
  if (KEY_WORDS == 2u) ws.w[b + 1u] = k.y;
}
uint digit_of(uvec2 k, uint shift) {
  return (shift >= 32u ? k.y >> (shift - 32u) : k.x >> shift) & 0xffu;
}
uint relaxed_load(uint i) {
  return atomicLoad(st.w[i], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}
void relaxed_store(uint i, uint v) {
  atomicStore(st.w[i], v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

void clear_stage() {
  const uint words = cleared_words(), step = P.head.w * RANK_WG;
  for (uint e = gl_GlobalInvocationID.x; e < words; e += step) ws.w[offsets_at() + e] = 0u;
}

// Workgroup b counts tiles [b · per, (b + 1) · per) of all rows' tiles; sbuf holds
// [pass][digit][part] (an invocation adds to part lane % HIST_PARTS: fewer lanes meet on one
// counter where a digit takes few values, as a float's top byte does).
void histogram_stage() {
  const uint t = gl_LocalInvocationID.x, tiles = tiles_per_row(), row_len = P.head.y;
  const uint all_tiles = P.head.x * tiles, per = P.misc.z;
  const uint part = gl_SubgroupInvocationID % HIST_PARTS;
  const uint hist_words = PASSES * 256u * HIST_PARTS;
  for (uint b = gl_WorkGroupID.x; b * per < all_tiles; b += P.head.w) {
    const uint first = b * per, end = min(first + per, all_tiles);
    barrier();
    for (uint k = t; k < hist_words; k += RANK_WG) sbuf[k] = 0u;
    barrier();
    uint row = first / tiles;
    uvec3 o = row_offsets(row);
    for (uint tile = first; tile < end; ++tile) {
      const uint r = tile / tiles, begin = (tile - r * tiles) * TILE;
      if (r != row) {
        row = r;
        o = row_offsets(r);
      }
      uvec2 raw[ITEMS];  // loaded together (past the row's end: its last element)
      [[unroll]] for (uint i = 0u; i < ITEMS; ++i)
        raw[i] = read_input(o.x + min(begin + i * RANK_WG + t, row_len - 1u) * P.strides.x);
      [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
        if (begin + i * RANK_WG + t >= row_len) break;
        const uvec2 key = sort_key(raw[i], P.key.x, P.key.y, P.key.z, P.key.w != 0u);
        [[unroll]] for (uint pass = 0u; pass < PASSES; ++pass)
          atomicAdd(sbuf[((pass * 256u) + digit_of(key, 8u * pass)) * HIST_PARTS + part], 1u);
      }
      // The row's counts out where its tiles end (or the workgroup's do).
      if (tile + 1u == end || (tile + 1u) / tiles != r) {
        barrier();
        for (uint k = t; k < PASSES * 256u; k += RANK_WG) {
          uint sum = 0u;
          for (uint q = 0u; q < HIST_PARTS; ++q) {
            sum += sbuf[k * HIST_PARTS + q];
            sbuf[k * HIST_PARTS + q] = 0u;
          }
          if (sum != 0u) atomicAdd(ws.w[offsets_at() + r * PASSES * 256u + k], sum);
        }
        barrier();
      }
    }
  }
}

// Each (row, pass)'s digit counts into exclusive offsets.
void scan_stage() {
  const uint t = scan_index();
  for (uint b = gl_WorkGroupID.x; b < P.head.x * PASSES; b += P.head.w) {
    const uint at = offsets_at() + b * 256u + t;
    uint total;
    const uint before = block_exclusive_scan(ws.w[at], total);
    ws.w[at] = before;
  }
}

void pass_stage() {
  const uint t = gl_LocalInvocationID.x, rows = P.head.x, row_len = P.head.y;
  const uint tiles = tiles_per_row(), pass = P.misc.y, shift = 8u * pass;
  const bool first = pass == 0u, last = pass + 1u == PASSES;
  const uint src = pass & 1u, dst = src ^ 1u;
  const uint status = status_at() + pass * rows * tiles * 256u;
  for (;;) {
    if (t == 0u) s_tile = atomicAdd(st.w[counters_at() + pass], 1u);
    barrier();
    const uint id = s_tile;
    if (id >= rows * tiles) break;
    const uint row = id / tiles, tile = id - row * tiles, begin = tile * TILE;
    const uint count = min(row_len - begin, TILE), row_base = row * row_len;
    const uvec3 o = first || last ? row_offsets(row) : uvec3(0u);

    // Loads first, unconditional (past the row's end: its last element), then keys.
    uvec2 k[ITEMS];
    uint at[ITEMS];
    [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
      const uint j = min(begin + striped(i), row_len - 1u);
      if (first) {
        k[i] = read_input(o.x + j * P.strides.x);
        at[i] = begin + striped(i);
      } else {
        k[i] = load_key(src, row_base + j);
        at[i] = ws.w[pos_at(src) + row_base + j];
      }
    }
    [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
      if (first) k[i] = sort_key(k[i], P.key.x, P.key.y, P.key.z, P.key.w != 0u);
      g_valid[i] = striped(i) < count;
      g_digit[i] = digit_of(k[i], shift);
    }
    rank_digits();

    // Invocation d: this tile's count of digit d published, the count in the row's tiles
    // before it found, the inclusive count published.
    // Without LOOKBACK the stages before this one left the count instead (prescan).
    const uint mine = s_count[t];
    uint before = 0u;
    if (!LOOKBACK) {
      before = ws.w[status + id * 256u + t];
    } else if (tile == 0u) {
      relaxed_store(status + id * 256u + t, FLAG_PREFIX | mine);
    } else {
      relaxed_store(status + id * 256u + t, FLAG_AGGREGATE | mine);
      for (uint back = id - 1u;; --back) {
        uint word;
        do {
          word = relaxed_load(status + back * 256u + t);
        } while ((word & ~COUNT_MASK) == 0u);
        before += word & COUNT_MASK;
        if ((word & FLAG_PREFIX) != 0u) break;
      }
      relaxed_store(status + id * 256u + t, FLAG_PREFIX | (before + mine));
    }
    s_base[t] = ws.w[offsets_at() + (row * PASSES + pass) * 256u + t] + before - s_start[t];

    // Keys and positions in rank order, one word an exchange; then slot s (s = m · 256 + t) to
    // its digit's place: runs of one digit are consecutive in both, so the writes coalesce.
    uvec2 sorted[ITEMS];
    uint from[ITEMS];
    barrier();
    [[unroll]] for (uint i = 0u; i < ITEMS; ++i)
      if (g_valid[i]) sbuf[g_rank[i]] = k[i].x;
    barrier();
    [[unroll]] for (uint m = 0u; m < ITEMS; ++m) sorted[m].x = sbuf[m * RANK_WG + t];
    if (KEY_WORDS == 2u) {
      barrier();
      [[unroll]] for (uint i = 0u; i < ITEMS; ++i)
        if (g_valid[i]) sbuf[g_rank[i]] = k[i].y;
      barrier();
      [[unroll]] for (uint m = 0u; m < ITEMS; ++m) sorted[m].y = sbuf[m * RANK_WG + t];
    } else {
      [[unroll]] for (uint m = 0u; m < ITEMS; ++m) sorted[m].y = 0u;
    }
    barrier();
    [[unroll]] for (uint i = 0u; i < ITEMS; ++i)
      if (g_valid[i]) sbuf[g_rank[i]] = at[i];
    barrier();
    [[unroll]] for (uint m = 0u; m < ITEMS; ++m) from[m] = sbuf[m * RANK_WG + t];
    [[unroll]] for (uint m = 0u; m < ITEMS; ++m) {
      const uint s = m * RANK_WG + t;
      if (s >= count) break;
      const uint to = s_base[digit_of(sorted[m], shift)] + s;
      if (!last) {
        store_key(dst, row_base + to, sorted[m]);
        ws.w[pos_at(dst) + row_base + to] = from[m];
        continue;
      }
      uvec2 raw;
      const uint dv = o.y + to * P.strides.y;
      if (element_of_key(sorted[m], raw))
        write_value(dv, raw);
      else
        write_out_value(dv, o.x + from[m] * P.strides.x);
      indices.v[o.z + to * P.strides.z] = uvec2(from[m], 0u);
    }
    barrier();  // s_tile, s_base and sbuf are written again by the next tile
  }
}

// Prescan, 1 of 2: each tile's count of every digit of the pass into its look-back words.
void tile_count_stage() {
  const uint t = gl_LocalInvocationID.x, rows = P.head.x, row_len = P.head.y;
  const uint tiles = tiles_per_row(), pass = P.misc.y, shift = 8u * pass;
  const uint status = status_at() + pass * rows * tiles * 256u;
  for (uint id = gl_WorkGroupID.x; id < rows * tiles; id += P.head.w) {
    const uint row = id / tiles, begin = (id - row * tiles) * TILE;
    barrier();
    sbuf[t] = 0u;
    barrier();
    const uvec3 o = pass == 0u ? row_offsets(row) : uvec3(0u);
    for (uint j = begin + t; j < min(begin + TILE, row_len); j += RANK_WG) {
      const uvec2 key = pass == 0u
          ? sort_key(read_input(o.x + j * P.strides.x), P.key.x, P.key.y, P.key.z, P.key.w != 0u)
          : load_key(pass & 1u, row * row_len + j);
      atomicAdd(sbuf[digit_of(key, shift)], 1u);
    }
    barrier();
    ws.w[status + id * 256u + t] = sbuf[t];
  }
}

// Prescan, 2 of 2: a workgroup per (row, digit) turns the row's tile counts of the digit into
// the counts before each tile (an invocation sums a run of tiles; a workgroup scan).
void tile_scan_stage() {
  const uint t = scan_index(), rows = P.head.x, tiles = tiles_per_row(), pass = P.misc.y;
  const uint status = status_at() + pass * rows * tiles * 256u;
  const uint per = (tiles + RANK_WG - 1u) / RANK_WG, first = t * per;
  for (uint b = gl_WorkGroupID.x; b < rows * 256u; b += P.head.w) {
    const uint row = b / 256u, d = b % 256u, at = status + row * tiles * 256u + d;
    uint sum = 0u;
    for (uint q = first; q < min(first + per, tiles); ++q) sum += ws.w[at + q * 256u];
    uint total;
    uint run = block_exclusive_scan(sum, total);
    for (uint q = first; q < min(first + per, tiles); ++q) {
      const uint c = ws.w[at + q * 256u];
      ws.w[at + q * 256u] = run;
      run += c;
    }
  }
}

void main() {
  if (STAGE == 1u) clear_stage();
  else if (STAGE == 2u) histogram_stage();
  else if (STAGE == 3u) scan_stage();
  else if (STAGE == 4u) pass_stage();
  else if (STAGE == 5u) tile_count_stage();
  else tile_scan_stage();
}
