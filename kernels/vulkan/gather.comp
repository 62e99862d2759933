#version 450
// Kernel family "gather", variant strided (nbx::abi::GatherParams; semantics
// backends/host/host_gather.cpp): every output element reads its index, checks it against
// [0, bound) ([-bound, bound) with WRAP) and copies the picked input element bit for bit, four
// consecutive elements an invocation. A bad index is written to the
// fault record (the first one wins) and its element is left alone: nothing out of range is
// read. No 64-bit shader types: int64 indices are read as two words, 8-byte elements as
// uvec2, so any device with 8/16-bit storage runs every dtype.
//
// ITEM (specialization constant) is the element size in bytes, WIDE 1 for int64 indices,
// WRAP 1 where negative indices count from the end (take). All offsets and strides are in
// elements of their own buffer and fit the 32-bit index path (backends/vulkan/vk_gather.cpp).
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

const int kFaultIndexOutOfRange = 1;  // abi::kFaultIndexOutOfRange

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITEM = 4u;
layout(constant_id = 2) const uint WIDE = 1u;
layout(constant_id = 3) const uint WRAP = 0u;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;     // x numel, y ndim, z invocations in the grid, w bound
  uvec4 offsets;  // x out, y input, z index, w the input's stride along the indexed dim
  uvec4 misc;     // x the fault record's op (abi::fault_op)
  uvec4 sizes[2];  // [d / 4][d % 4]
  uvec4 out_strides[2];
  uvec4 src_strides[2];
  uvec4 index_strides[2];
  uvec4 positions[2];
} P;

layout(set = 0, binding = 1) writeonly buffer O8 { uint8_t v[]; } o8;
layout(set = 0, binding = 1) writeonly buffer O16 { uint16_t v[]; } o16;
layout(set = 0, binding = 1) writeonly buffer O32 { uint v[]; } o32;
layout(set = 0, binding = 1) writeonly buffer O64 { uvec2 v[]; } o64;
layout(set = 0, binding = 2) readonly buffer S8 { uint8_t v[]; } s8;
layout(set = 0, binding = 2) readonly buffer S16 { uint16_t v[]; } s16;
layout(set = 0, binding = 2) readonly buffer S32 { uint v[]; } s32;
layout(set = 0, binding = 2) readonly buffer S64 { uvec2 v[]; } s64;
layout(set = 0, binding = 3) readonly buffer Index { uint v[]; } idx;
layout(set = 0, binding = 7) coherent buffer Fault { uint w[8]; } fault_rec;

uint at(uvec4 a[2], uint d) { return a[d >> 2][d & 3u]; }

void record_fault(uint lo, uint hi, uint position) {
  if (atomicCompSwap(fault_rec.w[0], 0u, uint(kFaultIndexOutOfRange)) == 0u) {
    fault_rec.w[1] = P.misc.x;
    fault_rec.w[2] = lo;  // the index, 64-bit little-endian
    fault_rec.w[3] = hi;
    fault_rec.w[4] = P.head.w;  // the bound
    fault_rec.w[5] = 0u;
    fault_rec.w[6] = position;
    fault_rec.w[7] = 0u;
  }
}

// Element i's coordinates (the last one in `c_last`) and offsets in out, input and index,
// and its index position.
void locate(uint i, out uint o, out uint s, out uint x, out uint pos, out uint c_last) {
  uint rest = i;
  o = P.offsets.x, s = P.offsets.y, x = P.offsets.z, pos = 0u, c_last = 0u;
  for (uint d = P.head.y; d-- > 0u;) {
    const uint size = at(P.sizes, d);
    const uint c = rest % size;
    rest /= size;
    if (d == P.head.y - 1u) c_last = c;
    o += c * at(P.out_strides, d);
    s += c * at(P.src_strides, d);
    x += c * at(P.index_strides, d);
    pos += c * at(P.positions, d);
  }
}

// RUN consecutive elements an invocation: their coordinates found once (a step along the last
// dim after the first, unless the run crosses into the next row), their indices and inputs
// loaded before any is stored.
const uint RUN = 4u;

void main() {
  const uint n = P.head.x, ndim = P.head.y, bound = P.head.w;
  const uint last = ndim - 1u, last_size = at(P.sizes, last);
  const uint so = at(P.out_strides, last), ss = at(P.src_strides, last);
  const uint sx = at(P.index_strides, last), sp = at(P.positions, last);
  for (uint first = gl_GlobalInvocationID.x * RUN; first < n; first += P.head.z * RUN) {
    uint o[RUN], s[RUN], pos[RUN], lo[RUN], hi[RUN];
    uint oo, so_, xo, po, c;
    for (uint u = 0u; u < RUN; ++u) {
      if (first + u >= n) break;
      if (u == 0u || c + 1u >= last_size) {
        locate(first + u, oo, so_, xo, po, c);
      } else {
        ++c;
        oo += so;
        so_ += ss;
        xo += sx;
        po += sp;
      }
      o[u] = oo;
      s[u] = so_;
      pos[u] = po;
      // The index as (lo, hi) words.
      lo[u] = WIDE == 1u ? idx.v[2u * xo] : idx.v[xo];
      hi[u] = WIDE == 1u ? idx.v[2u * xo + 1u] : (int(lo[u]) < 0 ? 0xffffffffu : 0u);
    }
    bool ok[RUN] = bool[RUN](false, false, false, false);
    uvec2 value[RUN];
    for (uint u = 0u; u < RUN; ++u) {
      if (first + u >= n) break;
      // In range when it is a non-negative value below the bound or, with WRAP, a negative
      // one no smaller than -bound (bound <= 2^31 - 1, so -bound fits an int; -int(lo) would
      // not for -2^31).
      uint k;
      if (hi[u] == 0u && lo[u] < bound) {
        k = lo[u];
      } else if (WRAP == 1u && hi[u] == 0xffffffffu && int(lo[u]) < 0 &&
                 int(lo[u]) >= -int(bound)) {
        k = lo[u] + bound;
      } else {
        record_fault(lo[u], hi[u], pos[u]);
        continue;
      }
      ok[u] = true;
      const uint src = s[u] + k * P.offsets.w;
      if (ITEM == 1u) value[u] = uvec2(uint(s8.v[src]), 0u);
      else if (ITEM == 2u) value[u] = uvec2(uint(s16.v[src]), 0u);
      else if (ITEM == 4u) value[u] = uvec2(s32.v[src], 0u);
      else value[u] = s64.v[src];
    }
    for (uint u = 0u; u < RUN; ++u) {
      if (!ok[u]) continue;
      if (ITEM == 1u) o8.v[o[u]] = uint8_t(value[u].x);
      else if (ITEM == 2u) o16.v[o[u]] = uint16_t(value[u].x);
      else if (ITEM == 4u) o32.v[o[u]] = value[u].x;
      else o64.v[o[u]] = value[u];
    }
  }
}
