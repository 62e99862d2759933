#version 450
// Kernel family "sort", variant rows (nbx::abi::SortParams; the CUDA twin and the method:
// kernels/gpu/sort_kernels.cu): a workgroup loads tile / segment rows into shared memory as
// (key, position) pairs, pads each row to its power-of-two segment with pairs above any real
// one, runs a bitonic network whose last merge of every segment is ascending, and writes each
// row's values (copied from the input by position) and positions. Workgroups loop over the
// row groups, so any row count fits the grid.
//
// TILE (specialization constant) is the tile, KEY_WORDS 2 for 64-bit keys (else 1): shared
// memory is TILE × (4 × KEY_WORDS + 4) bytes, within maxComputeSharedMemorySize (vk_sort.cpp).
#include "sort_keys.glsl"
#include "sort_common.glsl"

layout(constant_id = 2) const uint TILE = 2048u;
layout(constant_id = 3) const uint KEY_WORDS = 1u;
layout(constant_id = 4) const uint TILE_WORDS = 2048u;  // TILE × KEY_WORDS

shared uint skey[TILE_WORDS];
shared uint spos[TILE];

uvec2 load_key(uint i) { return KEY_WORDS == 2u ? uvec2(skey[2u * i], skey[2u * i + 1u]) : uvec2(skey[i], 0u); }
void store_key(uint i, uvec2 k) {
  if (KEY_WORDS == 2u) {
    skey[2u * i] = k.x;
    skey[2u * i + 1u] = k.y;
  } else {
    skey[i] = k.x;
  }
}

void main() {
  const uint rows = P.head.x, row_len = P.head.y, seg = P.misc.x, seg_shift = P.misc.y;
  const uint per_group = TILE >> seg_shift, wg = gl_WorkGroupSize.x;
  const uint groups = (rows + per_group - 1u) / per_group;
  for (uint g = gl_WorkGroupID.x; g < groups; g += P.head.w) {
    const uint first_row = g * per_group;
    for (uint i = gl_LocalInvocationID.x; i < TILE; i += wg) {
      const uint r = first_row + (i >> seg_shift), j = i & (seg - 1u);
      uvec2 k = uvec2(0xffffffffu);
      uint pos = 0xffffffffu;  // padding: above every real pair
      if (r < rows && j < row_len) {
        k = key_of(row_offsets(r), j);
        pos = j;
      }
      store_key(i, k);
      spos[i] = pos;
    }
    barrier();
    for (uint k = 2u; k <= seg; k <<= 1u) {
      for (uint j = k >> 1u; j > 0u; j >>= 1u) {
        for (uint t = gl_LocalInvocationID.x; t < TILE / 2u; t += wg) {
          const uint lo = 2u * t - (t & (j - 1u)), hi = lo + j;
          const bool ascending = (lo & k) == 0u || k == seg;
          const uvec2 kl = load_key(lo), kh = load_key(hi);
          const uint pl = spos[lo], ph = spos[hi];
          if (pair_less(kh, ph, kl, pl) == ascending) {
            store_key(lo, kh);
            store_key(hi, kl);
            spos[lo] = ph;
            spos[hi] = pl;
          }
        }
        barrier();
      }
    }
    for (uint i = gl_LocalInvocationID.x; i < TILE; i += wg) {
      const uint r = first_row + (i >> seg_shift), j = i & (seg - 1u);
      if (r < rows && j < row_len) write_out(row_offsets(r), j, spos[i]);
    }
    barrier();
  }
}
