#version 450
// Kernel family "sort", variant rows (nbx::abi::SortParams; the CUDA twin and the method:
// kernels/gpu/sort_kernels.cu): a block radix sort of one tile of 256 · ITEMS elements, as
// CUB's BlockRadixSort. The tile holds tile / segment rows, row r's element j at r · segment +
// j; elements past a row's end (or past the tile) are pads with the largest key. Keys stay in
// registers, subgroup-striped; each pass ranks them by one 8-bit digit (sort_rank.glsl) and
// exchanges them through shared memory into rank order — the key's digits, least significant
// first, then (when the tile holds several rows) the row number's (the element's tile index
// over the segment), so the tile ends grouped by row, each row in key order and ties in
// element order (every pass is stable).
//
// The tile index travels with the key, one 32-bit word an exchange: below keys of 8 and 16
// bits from the start (key << 16 | index); for 32- and 64-bit keys in a word of its own until
// two digits are done, then in the low 16 bits of the key's first word, which no later pass
// reads. The last pass leaves the tile indices in rank order; each row's values are copied
// from the input by position, with the positions as indices. Workgroups loop over the row
// groups, so any row count fits the grid.
//
// Specialization: ITEMS (4, 8 or 16), SG the subgroup size, BUF_WORDS >= max(256 · ITEMS,
// 128 · 256 / SG) (vk_sort.cpp, from maxComputeSharedMemorySize).
#include "sort_keys.glsl"
#include "sort_common.glsl"

layout(constant_id = 2) const uint ITEMS = 16u;
layout(constant_id = 3) const uint SG = 32u;
layout(constant_id = 4) const uint BUF_WORDS = 4096u;

#include "sort_rank.glsl"

const uint KT = RANK_WG * ITEMS;       // the elements of the workgroup's tile
const uint KEY_BITS = 8u * ITEM;
const bool WIDE = KEY_BITS > 32u;      // a second key word
const bool PACKED = KEY_BITS <= 16u;   // the index below the key from the start
const uint KEY_SHIFT = PACKED ? 16u : 0u;

uint g_w0[ITEMS];  // the key (its low word; keys of 8 and 16 bits over the index)
uint g_w1[ITEMS];  // 64-bit keys: the high word
uint g_el[ITEMS];  // the tile index, until it travels in g_w0

// Moves each invocation's `x` to its rank through sbuf and back, so item i then holds slot
// striped(i): the tile in rank order, arranged for the next ranking.
#define EXCHANGE(x)                                                      \
  barrier();                                                             \
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) sbuf[g_rank[i]] = x[i];   \
  barrier();                                                             \
  [[unroll]] for (uint i = 0u; i < ITEMS; ++i) x[i] = sbuf[striped(i)];

void main() {
  const uint rows = P.head.x, row_len = P.head.y, seg_shift = P.misc.y;
  const uint seg_mask = (1u << seg_shift) - 1u;
  const uint per_group = P.misc.z >> seg_shift;  // rows a tile
  const uint groups = (rows + per_group - 1u) / per_group;
  uint row_bits = 0u;  // the tile's row numbers, pads past the tile's rows included
  while ((KT >> (seg_shift + row_bits)) > 1u) ++row_bits;
  const uint key_passes = KEY_BITS / 8u;
  // One row a tile needs no row digits: its pads have the largest key and follow it.
  const uint passes = key_passes + (per_group > 1u ? (row_bits + 7u) / 8u : 0u);
  const bool descending = P.key.w != 0u;

  for (uint g = gl_WorkGroupID.x; g < groups; g += P.head.w) {
    const uint first_row = g * per_group;
    // A row's offsets, cached: an invocation's consecutive items are mostly in one row.
    uint cached = 0xffffffffu;
    uvec3 o = uvec3(0u);
    uvec2 keys[ITEMS];
    if (per_group == 1u) {
      // One row a tile (the long rows): its loads unconditional (past its end: its last
      // element), so they are in flight together.
      cached = first_row;
      o = row_offsets(cached);
      [[unroll]] for (uint i = 0u; i < ITEMS; ++i)
        keys[i] = read_input(o.x + min(striped(i), row_len - 1u) * P.strides.x);
      [[unroll]] for (uint i = 0u; i < ITEMS; ++i)
        keys[i] = striped(i) < row_len
                      ? sort_key(keys[i], KEY_BITS, P.key.y, P.key.z, descending)
                      : uvec2(0xffffffffu);
    } else {
      [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
        const uint el = striped(i), r = el >> seg_shift, j = el & seg_mask;
        keys[i] = uvec2(0xffffffffu);
        if (r < per_group && first_row + r < rows && j < row_len) {
          if (first_row + r != cached) {
            cached = first_row + r;
            o = row_offsets(cached);
          }
          keys[i] = sort_key(read_input(o.x + j * P.strides.x), KEY_BITS, P.key.y, P.key.z,
                             descending);
        }
      }
    }
    [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
      const uint el = striped(i);
      const uvec2 key = keys[i];
      if (PACKED) {
        g_w0[i] = (key.x << 16u) | el;
      } else {
        g_w0[i] = key.x;
        g_w1[i] = key.y;
        g_el[i] = el;
      }
      g_valid[i] = true;
    }

    for (uint pass = 0u; pass < passes; ++pass) {
      // Keys of 32 and 64 bits carry the index in their first word after two digits.
      const bool carried = PACKED || pass >= 2u;
      [[unroll]] for (uint i = 0u; i < ITEMS; ++i) {
        uint d;
        if (pass < key_passes) {
          const uint s = KEY_SHIFT + 8u * pass;
          d = (s >= 32u ? g_w1[i] >> (s - 32u) : g_w0[i] >> s) & 0xffu;
        } else {
          const uint el = carried ? g_w0[i] & 0xffffu : g_el[i];
          d = ((el >> seg_shift) >> (8u * (pass - key_passes))) & 0xffu;
        }
        g_digit[i] = d;
      }
      rank_digits();
      if (pass + 1u == passes) break;
      EXCHANGE(g_w0);
      if (WIDE && pass + 1u < key_passes) {
        EXCHANGE(g_w1);
      }
      if (!carried) {
        EXCHANGE(g_el);
        if (pass == 1u) {
          [[unroll]] for (uint i = 0u; i < ITEMS; ++i)
            g_w0[i] = (g_w0[i] & 0xffff0000u) | g_el[i];
        }
      }
    }

    // The tile indices in rank order (carried in g_w0 by now: keys of 32 and 64 bits take
    // four passes at least); sorted slot s is row s / segment's element s % segment.
    barrier();
    [[unroll]] for (uint i = 0u; i < ITEMS; ++i) sbuf[g_rank[i]] = g_w0[i] & 0xffffu;
    barrier();
    for (uint s = gl_LocalInvocationID.x; s < KT; s += RANK_WG) {
      const uint r = s >> seg_shift, j = s & seg_mask;
      if (r >= per_group || first_row + r >= rows || j >= row_len) continue;
      if (first_row + r != cached) {
        cached = first_row + r;
        o = row_offsets(cached);
      }
      write_out(o, j, sbuf[s] & seg_mask);
    }
  }
}
