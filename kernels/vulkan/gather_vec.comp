#version 450
// Kernel family "gather", variant strided, its vector path (backends/vulkan/vk_gather.cpp):
// a launch of at most two dims whose output and index run along the last dim with stride 1,
// that dim a multiple of 4 long, every row start of both a multiple of 4 elements. Each
// invocation takes a quad — 4 consecutive elements of a row: their indices in one or two
// 16-byte loads, the 4 picked input elements (any strides) loaded before any is stored, the
// quad stored with one 4-, 8- or 16-byte store (two for 8-byte elements) when all 4 indices
// are good. The quad's row is one multiply-high (Granlund and Montgomery's round-up divider,
// as PyTorch's IntDivider), not a division per dim and element as gather.comp's. A bad index
// goes to the fault record (the first one wins) and its element is left alone: nothing out of
// range is read. No 64-bit shader types (int64 indices are word pairs).
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

const int kFaultIndexOutOfRange = 1;  // abi::kFaultIndexOutOfRange

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITEM = 4u;
layout(constant_id = 2) const uint WIDE = 1u;   // int64 indices
layout(constant_id = 3) const uint WRAP = 0u;   // negative indices count from the end (take)
layout(constant_id = 4) const uint TWO_D = 1u;  // rows > 1: the row of quad q is q / row quads

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;     // x quads, y quads a row, z invocations in the grid, w bound
  uvec4 misc;     // x magic, y shift (q / row quads), z the input's stride along the indexed
                  // dim, w the fault record's op
  uvec4 out_v;    // x offset, y row stride (elements; multiples of 4)
  uvec4 index_v;  // the same for the index
  uvec4 src_v;    // x offset, y row stride, z column stride
  uvec4 pos_v;    // y, z: the index position's row and column strides
} P;

// The output as quads (ITEM 1: a word, 2: uvec2, 4: uvec4, 8: two uvec4) and as elements.
layout(set = 0, binding = 1) writeonly buffer OQ4 { uint v[]; } oq4;
layout(set = 0, binding = 1) writeonly buffer OQ8 { uvec2 v[]; } oq8;
layout(set = 0, binding = 1) writeonly buffer OQ16 { uvec4 v[]; } oq16;
layout(set = 0, binding = 1) writeonly buffer O8 { uint8_t v[]; } o8;
layout(set = 0, binding = 1) writeonly buffer O16 { uint16_t v[]; } o16;
layout(set = 0, binding = 1) writeonly buffer O32 { uint v[]; } o32;
layout(set = 0, binding = 1) writeonly buffer O64 { uvec2 v[]; } o64;
layout(set = 0, binding = 2) readonly buffer S8 { uint8_t v[]; } s8;
layout(set = 0, binding = 2) readonly buffer S16 { uint16_t v[]; } s16;
layout(set = 0, binding = 2) readonly buffer S32 { uint v[]; } s32;
layout(set = 0, binding = 2) readonly buffer S64 { uvec2 v[]; } s64;
layout(set = 0, binding = 3) readonly buffer Index { uvec4 v[]; } idx;
layout(set = 0, binding = 7) coherent buffer Fault { uint w[8]; } fault_rec;

void record_fault(uvec2 index, uint position) {
  if (atomicCompSwap(fault_rec.w[0], 0u, uint(kFaultIndexOutOfRange)) == 0u) {
    fault_rec.w[1] = P.misc.w;
    fault_rec.w[2] = index.x;  // 64-bit little-endian
    fault_rec.w[3] = index.y;
    fault_rec.w[4] = P.head.w;  // the bound
    fault_rec.w[5] = 0u;
    fault_rec.w[6] = position;
    fault_rec.w[7] = 0u;
  }
}

uvec2 load_src(uint s) {
  if (ITEM == 1u) return uvec2(uint(s8.v[s]), 0u);
  if (ITEM == 2u) return uvec2(uint(s16.v[s]), 0u);
  if (ITEM == 4u) return uvec2(s32.v[s], 0u);
  return s64.v[s];
}

void store_one(uint o, uvec2 v) {
  if (ITEM == 1u) o8.v[o] = uint8_t(v.x);
  else if (ITEM == 2u) o16.v[o] = uint16_t(v.x);
  else if (ITEM == 4u) o32.v[o] = v.x;
  else o64.v[o] = v;
}

// The quad at output element o (a multiple of 4).
void store_quad(uint o, uvec2 v[4]) {
  if (ITEM == 1u) {
    oq4.v[o >> 2] = v[0].x | (v[1].x << 8) | (v[2].x << 16) | (v[3].x << 24);
  } else if (ITEM == 2u) {
    oq8.v[o >> 2] = uvec2(v[0].x | (v[1].x << 16), v[2].x | (v[3].x << 16));
  } else if (ITEM == 4u) {
    oq16.v[o >> 2] = uvec4(v[0].x, v[1].x, v[2].x, v[3].x);
  } else {
    oq16.v[o >> 1] = uvec4(v[0], v[1]);
    oq16.v[(o >> 1) + 1u] = uvec4(v[2], v[3]);
  }
}

void main() {
  const uint quads = P.head.x, bound = P.head.w;
  uint q = gl_GlobalInvocationID.x;
  if (q >= quads) return;
  for (;;) {
    uint row = 0u, c = q;
    if (TWO_D == 1u) {
      uint hi, lo;
      umulExtended(q, P.misc.x, hi, lo);
      row = (hi + q) >> P.misc.y;
      c = q - row * P.head.y;
    }
    c *= 4u;  // the quad's first column
    const uint o = P.out_v.x + row * P.out_v.y + c;
    const uint x = P.index_v.x + row * P.index_v.y + c;
    // The 4 indices as (lo, hi) words, int32 ones sign-extended.
    uvec2 k[4];
    if (WIDE == 1u) {
      const uvec4 a = idx.v[x >> 1], b = idx.v[(x >> 1) + 1u];
      k = uvec2[4](a.xy, a.zw, b.xy, b.zw);
    } else {
      const uvec4 a = idx.v[x >> 2];
      for (uint u = 0u; u < 4u; ++u) k[u] = uvec2(a[u], int(a[u]) < 0 ? 0xffffffffu : 0u);
    }
    // Each checked as gather.comp does (bound <= 2^31 - 1); a bad one reads element 0 of its
    // row's indexed dim instead (in range whenever bound > 0) and is never stored.
    bool ok[4];
    uint pick[4];
    for (uint u = 0u; u < 4u; ++u) {
      ok[u] = true;
      pick[u] = 0u;
      if (k[u].y == 0u && k[u].x < bound) pick[u] = k[u].x;
      else if (WRAP == 1u && k[u].y == 0xffffffffu && int(k[u].x) < 0 &&
               int(k[u].x) >= -int(bound))
        pick[u] = k[u].x + bound;
      else
        ok[u] = false;
    }
    uvec2 v[4] = uvec2[4](uvec2(0u), uvec2(0u), uvec2(0u), uvec2(0u));
    if (bound > 0u) {  // else every index is bad and the input may have no element at all
      const uint s = P.src_v.x + row * P.src_v.y + c * P.src_v.z;
      for (uint u = 0u; u < 4u; ++u) v[u] = load_src(s + u * P.src_v.z + pick[u] * P.misc.z);
    }
    if (ok[0] && ok[1] && ok[2] && ok[3]) {
      store_quad(o, v);
    } else {
      for (uint u = 0u; u < 4u; ++u) {
        if (ok[u]) store_one(o + u, v[u]);
        else record_fault(k[u], row * P.pos_v.y + (c + u) * P.pos_v.z);
      }
    }
    if (quads - q <= P.head.z) return;  // the next pass, without forming q + step past 2^32
    q += P.head.z;
  }
}
