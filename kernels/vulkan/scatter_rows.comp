#version 450
// Kernel family "scatter", variant atomic, its rows path (backends/vulkan/vk_scatter.cpp; the
// CUDA twin is scatter_rows_kernel in kernels/gpu/scatter_kernels.cu): a launch whose dims
// merge into at most two — a [rows, cols] iteration space, offsets start + row · r + col · c —
// and whose reduction is one native operation: assign (a plain store of 1, 2 or 4 bytes),
// int32 add/max/min, float32 add (NBX_FADD builds: VK_EXT_shader_atomic_float). Everything
// else takes scatter.comp. Against scatter.comp's element form:
//  - RUN elements an invocation, a workgroup apart (every load and atomic of a subgroup on
//    consecutive addresses), all their indices and sources loaded, from clamped positions and
//    unconditionally, before the first read-modify-write: RUN independent chains in flight;
//  - the row of element e by a multiply-high (Granlund and Montgomery's round-up divider, as
//    PyTorch's IntDivider), no per-dimension division; a 1-D view none at all;
//  - an int64 index read as one uvec2;
//  - the destination written only by atomics or single stores, so no coherent loads; the
//    fault's position is formed only for a bad index.
// A bad index goes to the fault record (the first one wins) and writes nothing; duplicates
// combine in arrival order (assign: one of them wins, whole), as the element form.
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#if NBX_FADD
#extension GL_EXT_shader_atomic_float : require
#endif

#include "nbx_vk_codes.glsl"

const int kFaultIndexOutOfRange = 1;                                  // abi::kFaultIndexOutOfRange
const uint kAssign = 0u, kAdd = 1u, kMul = 2u, kMax = 3u, kMin = 4u;  // abi::ScatterReduce

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITEM = 4u;  // element size in bytes (1 or 2: assign only)
layout(constant_id = 2) const uint WIDE = 1u;  // int64 indices
layout(constant_id = 3) const uint WRAP = 0u;
layout(constant_id = 4) const uint REDUCE = 0u;
layout(constant_id = 5) const int DT = DT_FLOAT32;
layout(constant_id = 6) const uint TWO_D = 0u;  // rows > 1: the row of e is e / cols

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;   // x numel, y cols, z elements a pass of the grid, w bound
  uvec4 misc;   // x magic, y shift (e / cols), z index_scale, w the fault record's op
  uvec4 out_v;  // x offset, y row stride, z column stride (elements)
  uvec4 src_v;
  uvec4 index_v;
  uvec4 pos_v;  // y, z: the index position's row and column strides
} P;

layout(set = 0, binding = 1) buffer O8 { uint8_t v[]; } o8;
layout(set = 0, binding = 1) buffer O16 { uint16_t v[]; } o16;
layout(set = 0, binding = 1) buffer O32 { uint v[]; } o32;
layout(set = 0, binding = 1) buffer O32I { int v[]; } o32i;
#if NBX_FADD
layout(set = 0, binding = 1) buffer O32F { float v[]; } o32f;
#endif
layout(set = 0, binding = 2) readonly buffer S8 { uint8_t v[]; } s8;
layout(set = 0, binding = 2) readonly buffer S16 { uint16_t v[]; } s16;
layout(set = 0, binding = 2) readonly buffer S32 { uint v[]; } s32;
layout(set = 0, binding = 3) readonly buffer Index32 { uint v[]; } idx32;
layout(set = 0, binding = 3) readonly buffer Index64 { uvec2 v[]; } idx64;
layout(set = 0, binding = 7) coherent buffer Fault { uint w[8]; } fault_rec;

const uint RUN = 4u;  // elements an invocation, a workgroup apart

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

// Element e's row and column: q = (umulhi(e, magic) + e) >> shift is e / cols for
// e < 2^31 (then umulhi(e, magic) <= e and the sum stays below 2^32).
void split(uint e, out uint row, out uint col) {
  if (TWO_D == 0u) {
    row = 0u;
    col = e;
    return;
  }
  uint hi, lo;
  umulExtended(e, P.misc.x, hi, lo);
  row = (hi + e) >> P.misc.y;
  col = e - row * P.head.y;
}

uint load_src(uint s) {
  if (ITEM == 1u) return uint(s8.v[s]);
  if (ITEM == 2u) return uint(s16.v[s]);
  return s32.v[s];
}

// The index as (lo, hi) words: int32 ones sign-extended.
uvec2 load_index(uint x) {
  if (WIDE == 1u) return idx64.v[x];
  const uint lo = idx32.v[x];
  return uvec2(lo, int(lo) < 0 ? 0xffffffffu : 0u);
}

// The destination element d combined with the source bits b: vk_scatter.cpp takes this
// shader only for the reductions below, each a single store or native atomic.
void update(uint d, uint b) {
  if (REDUCE == kAssign) {
    if (ITEM == 1u) o8.v[d] = uint8_t(b);
    else if (ITEM == 2u) o16.v[d] = uint16_t(b);
    else o32.v[d] = b;
  } else if (DT == DT_INT32) {
    if (REDUCE == kAdd) atomicAdd(o32.v[d], b);
    else if (REDUCE == kMax) atomicMax(o32i.v[d], int(b));
    else atomicMin(o32i.v[d], int(b));
  } else {
#if NBX_FADD
    atomicAdd(o32f.v[d], uintBitsToFloat(b));
#endif
  }
}

void main() {
  const uint n = P.head.x, bound = P.head.w, wg = gl_WorkGroupSize.x;
  uint first = gl_WorkGroupID.x * (wg * RUN) + gl_LocalInvocationID.x;
  if (first >= n) return;
  for (;;) {
    uvec2 k[RUN];
    uint value[RUN], o[RUN];
    for (uint u = 0u; u < RUN; ++u) {
      // Clamped, so the loads need no branch: past the end they repeat the last element's.
      const uint e = min(first + u * wg, n - 1u);
      uint row, col;
      split(e, row, col);
      k[u] = load_index(P.index_v.x + row * P.index_v.y + col * P.index_v.z);
      value[u] = load_src(P.src_v.x + row * P.src_v.y + col * P.src_v.z);
      o[u] = P.out_v.x + row * P.out_v.y + col * P.out_v.z;
    }
    for (uint u = 0u; u < RUN; ++u) {
      const uint e = first + u * wg;
      if (e >= n) break;
      // In range: a non-negative value below the bound or, with WRAP, a negative one no
      // smaller than -bound (bound <= 2^31 - 1, so -bound fits an int).
      uint i;
      if (k[u].y == 0u && k[u].x < bound) {
        i = k[u].x;
      } else if (WRAP == 1u && k[u].y == 0xffffffffu && int(k[u].x) < 0 &&
                 int(k[u].x) >= -int(bound)) {
        i = k[u].x + bound;
      } else {
        uint row, col;
        split(e, row, col);
        record_fault(k[u], row * P.pos_v.y + col * P.pos_v.z);
        continue;
      }
      update(o[u] + i * P.misc.z, value[u]);
    }
    // The next pass, without forming first + step past 2^32.
    if (n - first <= P.head.z) return;
    first += P.head.z;
  }
}
