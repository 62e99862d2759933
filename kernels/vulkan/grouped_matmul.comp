#version 450
// Kernel family "grouped_matmul" (nbx::abi::GroupedMatmulParams; semantics
// backends/host/host_grouped_matmul.cpp, the CUDA/HIP twin kernels/gpu/grouped_matmul_kernels.cu):
// out[r, n] = Σ_k a[r, k] · b[e][n, k] for the rows r of group e, every group in one dispatch.
//
// Work: a tile is (m slot, column block): kTileM rows of one group × one column per
// invocation. The grid walks ceil(rows / kTileM) + groups m slots (an upper bound of the
// groups' tiles; the excess slots are idle), so the counts never reach the host. For each tile
// invocation 0 reads every offset, checks it (offsets[0] = 0, never decreasing,
// offsets[groups] = rows; the lowest bad entry goes to the fault record and the workgroup
// writes nothing) and finds the tile's group; the workgroup shares it through shared memory.
// Each invocation then accumulates its column over the kTileM rows in float32 — the a values
// of a k step are the same for every invocation of the workgroup (one cached read) and the b
// column is read along its own stride. Elements go through vk_codec.glsl (float16 and bfloat16
// round to nearest even once). Offsets and strides fit the 32-bit index path
// (backends/vulkan/vk_grouped_matmul.cpp).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require

#include "nbx_vk_codes.glsl"

const int kFaultIndexOutOfRange = 1;  // abi::kFaultIndexOutOfRange
const uint kTileM = 16u;

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int DT = DT_FLOAT32;  // a's, b's and out's dtype
layout(constant_id = 2) const uint WIDE = 1u;       // int64 offsets

const int CDT = DT_FLOAT32;  // vk_codec.glsl's compute dtype (it reads no integers here)
#define kNaN uintBitsToFloat(0x7fc00000u)
#include "vk_codec.glsl"

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 sizes;    // x rows, y n, z k, w groups
  uvec4 grid;     // x m slots, y column blocks, z tiles (x · y), w the fault record's op
  uvec4 a;        // x offset, y row stride, z column stride
  uvec4 b;        // x offset, y group stride, z n stride, w k stride
  uvec4 o;        // x offset, y row stride, z column stride
  uvec4 offsets;  // x offset, y stride
} P;

layout(set = 0, binding = 1) writeonly buffer O16 { uint16_t v[]; } o16;
layout(set = 0, binding = 1) writeonly buffer O32 { uint v[]; } o32;
layout(set = 0, binding = 2) readonly buffer A16 { uint16_t v[]; } a16;
layout(set = 0, binding = 2) readonly buffer A32 { uint v[]; } a32;
layout(set = 0, binding = 3) readonly buffer B16 { uint16_t v[]; } b16;
layout(set = 0, binding = 3) readonly buffer B32 { uint v[]; } b32;
layout(set = 0, binding = 4) readonly buffer Offsets { uint v[]; } offs;
layout(set = 0, binding = 7) coherent buffer Fault { uint w[8]; } fault_rec;

shared int s_group;  // -2: bad offsets, -1: idle slot
shared uint s_row0;
shared uint s_row_end;

float load_a(uint i) {
  return nbx_decF(DT, nbx_esize(DT) == 2 ? uvec2(uint(a16.v[i]), 0u) : uvec2(a32.v[i], 0u));
}
float load_b(uint i) {
  return nbx_decF(DT, nbx_esize(DT) == 2 ? uvec2(uint(b16.v[i]), 0u) : uvec2(b32.v[i], 0u));
}
void store_out(uint i, float v) {
  const uvec2 r = nbx_encF(DT, v);
  if (nbx_esize(DT) == 2)
    o16.v[i] = uint16_t(r.x);
  else
    o32.v[i] = r.x;
}

// Entry i of the offsets as (lo, hi) words: int64 as a word pair, int32 sign-extended.
uvec2 offset_at(uint i) {
  const uint e = P.offsets.x + i * P.offsets.y;
  const uint lo = WIDE == 1u ? offs.v[2u * e] : offs.v[e];
  const uint hi = WIDE == 1u ? offs.v[2u * e + 1u] : (int(lo) < 0 ? 0xffffffffu : 0u);
  return uvec2(lo, hi);
}

void record_fault(uvec2 value, uint entry) {
  if (atomicCompSwap(fault_rec.w[0], 0u, uint(kFaultIndexOutOfRange)) == 0u) {
    fault_rec.w[1] = P.grid.w;
    fault_rec.w[2] = value.x;  // the entry's value, 64-bit little-endian
    fault_rec.w[3] = value.y;
    fault_rec.w[4] = P.sizes.x;  // the bound: the rows
    fault_rec.w[5] = 0u;
    fault_rec.w[6] = entry;
    fault_rec.w[7] = 0u;
  }
}

// Invocation 0: check every offset, and find m slot `slot`'s group and rows.
void find_tile(uint slot) {
  const uint rows = P.sizes.x, groups = P.sizes.w;
  int group = -1;
  uint row0 = 0u, row_end = 0u, tiles_before = 0u, prev = 0u;
  for (uint i = 0u; i <= groups; ++i) {
    const uvec2 v = offset_at(i);
    // A value is good when it is in [prev, rows] (so hi is 0), 0 first and rows last.
    const bool bad = v.y != 0u || v.x < prev || v.x > rows || (i == 0u && v.x != 0u) ||
                     (i == groups && v.x != rows);
    if (bad) {
      record_fault(v, i);
      group = -2;
      break;
    }
    if (i > 0u) {
      const uint tiles = (v.x - prev + kTileM - 1u) / kTileM;
      if (group == -1 && slot >= tiles_before && slot < tiles_before + tiles) {
        group = int(i - 1u);
        row0 = prev + (slot - tiles_before) * kTileM;
        row_end = v.x;
      }
      tiles_before += tiles;
    }
    prev = v.x;
  }
  s_group = group;
  s_row0 = row0;
  s_row_end = row_end;
}

void main() {
  const uint n = P.sizes.y, k = P.sizes.z;
  const uint wg = gl_WorkGroupSize.x, lid = gl_LocalInvocationID.x;
  for (uint t = gl_WorkGroupID.x; t < P.grid.z; t += gl_NumWorkGroups.x) {
    const uint slot = t % P.grid.x, block = t / P.grid.x;
    barrier();  // the previous tile's readers are done with the shared values
    if (lid == 0u) find_tile(slot);
    barrier();
    const int group = s_group;
    if (group == -2) return;  // uniform: every invocation read the same value
    if (group < 0) continue;
    const uint col = block * wg + lid;
    if (col >= n) continue;
    const uint row0 = s_row0, rows = min(kTileM, s_row_end - s_row0);
    float acc[kTileM];
    for (uint i = 0u; i < kTileM; ++i) acc[i] = 0.0;
    const uint b_col = P.b.x + uint(group) * P.b.y + col * P.b.z;
    for (uint kk = 0u; kk < k; ++kk) {
      const float bv = load_b(b_col + kk * P.b.w);
      const uint a_at = P.a.x + row0 * P.a.y + kk * P.a.z;
      for (uint i = 0u; i < rows; ++i) acc[i] += load_a(a_at + i * P.a.y) * bv;
    }
    for (uint i = 0u; i < rows; ++i) store_out(P.o.x + (row0 + i) * P.o.y + col * P.o.z, acc[i]);
  }
}
