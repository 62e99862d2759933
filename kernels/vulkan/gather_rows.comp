#version 450
// Kernel family "gather", variant rows (nbx::abi::kGatherRows; the CUDA twin:
// kernels/gpu/gather_kernels.cu): output row r (the last dim, row_len elements) is one
// contiguous copy of the input row its one index picks. LANES invocations copy a row, in
// UNIT-byte words (the widest of 16/8/4/2/1 that divides the row's bytes and every row start:
// vk_gather.cpp), several rows a workgroup, the rows looped over by the grid; the index is read
// and checked once a row by every lane of its group (the same word). A bad index is written to
// the fault record (the first one wins) and its row is left alone: nothing out of range is read.
// Offsets and strides in the uniform block are in UNIT words; the index's in its own elements.
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

const int kFaultIndexOutOfRange = 1;  // abi::kFaultIndexOutOfRange

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint UNIT = 4u;   // bytes a word
layout(constant_id = 2) const uint WIDE = 1u;   // int64 indices
layout(constant_id = 3) const uint LANES = 32u;  // invocations a row, a power of two <= the group
layout(constant_id = 4) const uint WRAP = 0u;    // negative indices count from the end (take)

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;     // x rows, y outer ndim (dims before the last), z row words, w bound
  uvec4 offsets;  // x out, y input, z index, w the input's stride along the indexed dim
  uvec4 misc;     // x the fault record's op, y workgroups in the grid
  uvec4 sizes[2];  // the outer dims [d / 4][d % 4]
  uvec4 out_strides[2];
  uvec4 src_strides[2];
  uvec4 index_strides[2];
  uvec4 positions[2];
} P;

layout(set = 0, binding = 1) writeonly buffer O8 { uint8_t v[]; } o8;
layout(set = 0, binding = 1) writeonly buffer O16 { uint16_t v[]; } o16;
layout(set = 0, binding = 1) writeonly buffer O32 { uint v[]; } o32;
layout(set = 0, binding = 1) writeonly buffer O64 { uvec2 v[]; } o64;
layout(set = 0, binding = 1) writeonly buffer O128 { uvec4 v[]; } o128;
layout(set = 0, binding = 2) readonly buffer S8 { uint8_t v[]; } s8;
layout(set = 0, binding = 2) readonly buffer S16 { uint16_t v[]; } s16;
layout(set = 0, binding = 2) readonly buffer S32 { uint v[]; } s32;
layout(set = 0, binding = 2) readonly buffer S64 { uvec2 v[]; } s64;
layout(set = 0, binding = 2) readonly buffer S128 { uvec4 v[]; } s128;
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

void copy_word(uint o, uint s) {
  if (UNIT == 1u) o8.v[o] = s8.v[s];
  else if (UNIT == 2u) o16.v[o] = s16.v[s];
  else if (UNIT == 4u) o32.v[o] = s32.v[s];
  else if (UNIT == 8u) o64.v[o] = s64.v[s];
  else o128.v[o] = s128.v[s];
}

void main() {
  const uint rows = P.head.x, outer = P.head.y, words = P.head.z, bound = P.head.w;
  const uint per_group = gl_WorkGroupSize.x / LANES, lane = gl_LocalInvocationID.x % LANES;
  const uint step = P.misc.y * per_group;
  for (uint r = gl_WorkGroupID.x * per_group + gl_LocalInvocationID.x / LANES; r < rows;
       r += step) {
    uint rest = r, o = P.offsets.x, s = P.offsets.y, x = P.offsets.z, pos = 0u;
    for (uint d = outer; d-- > 0u;) {
      const uint size = at(P.sizes, d);
      const uint c = rest % size;
      rest /= size;
      o += c * at(P.out_strides, d);
      s += c * at(P.src_strides, d);
      x += c * at(P.index_strides, d);
      pos += c * at(P.positions, d);
    }
    const uint lo = WIDE == 1u ? idx.v[2u * x] : idx.v[x];
    const uint hi = WIDE == 1u ? idx.v[2u * x + 1u] : (int(lo) < 0 ? 0xffffffffu : 0u);
    uint k;
    if (hi == 0u && lo < bound) {
      k = lo;
    } else if (WRAP == 1u && hi == 0xffffffffu && int(lo) < 0 && int(lo) >= -int(bound)) {
      k = lo + bound;
    } else {
      if (lane == 0u) record_fault(lo, hi, pos);
      continue;
    }
    s += k * P.offsets.w;
    for (uint w = lane; w < words; w += LANES) copy_word(o + w, s + w);
  }
}
