#version 450
// Kernel family "search" (nbx::abi::SearchParams; semantics backends/host/host_scatter.cpp):
// every value is searched in its sorted row with PyTorch's loop — start = 0, end = seq_len;
// while start < end: mid = start + (end - start) / 2; go right (start = mid + 1) when
// !(row[mid] >= v) (RIGHT: !(row[mid] > v)), else end = mid — and `start` is written as int32
// or int64 (OUT64, a word pair). Comparisons are exact on the stored bits (vk_compare.glsl):
// integers with their signedness (bool and uint8 unsigned), floats as IEEE with -0 equal to
// +0 and NaN unordered (every comparison with a NaN is false, so a NaN on either side goes
// right), int64 and float64 as word pairs: no 64-bit shader types and no subnormal flushing.
//
// ITEM (specialization constant) is the element size in bytes, DT the dtype code. All offsets
// and strides are in elements of their own buffer and fit the 32-bit index path
// (backends/vulkan/vk_search.cpp).
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

#include "nbx_vk_codes.glsl"
#include "sort_keys.glsl"
#include "vk_compare.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITEM = 4u;
layout(constant_id = 2) const int DT = DT_FLOAT32;
layout(constant_id = 3) const uint RIGHT = 0u;
layout(constant_id = 4) const uint OUT64 = 0u;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;     // x numel, y ndim, z invocations in the grid, w seq_len
  uvec4 offsets;  // x out, y values, z sorted sequence, w seq_stride
  uvec4 sizes[2];  // [d / 4][d % 4]
  uvec4 out_strides[2];
  uvec4 values_strides[2];
  uvec4 seq_strides[2];
} P;

layout(set = 0, binding = 1) writeonly buffer Out { uint v[]; } out32;
layout(set = 0, binding = 2) readonly buffer Q8 { uint8_t v[]; } q8;
layout(set = 0, binding = 2) readonly buffer Q16 { uint16_t v[]; } q16;
layout(set = 0, binding = 2) readonly buffer Q32 { uint v[]; } q32;
layout(set = 0, binding = 2) readonly buffer Q64 { uvec2 v[]; } q64;
layout(set = 0, binding = 3) readonly buffer V8 { uint8_t v[]; } v8;
layout(set = 0, binding = 3) readonly buffer V16 { uint16_t v[]; } v16;
layout(set = 0, binding = 3) readonly buffer V32 { uint v[]; } v32;
layout(set = 0, binding = 3) readonly buffer V64 { uvec2 v[]; } v64;

uint at(uvec4 a[2], uint d) { return a[d >> 2][d & 3u]; }

uvec2 load_seq(uint i) {
  if (ITEM == 1u) return uvec2(uint(q8.v[i]), 0u);
  if (ITEM == 2u) return uvec2(uint(q16.v[i]), 0u);
  if (ITEM == 4u) return uvec2(q32.v[i], 0u);
  return q64.v[i];
}

uvec2 load_value(uint i) {
  if (ITEM == 1u) return uvec2(uint(v8.v[i]), 0u);
  if (ITEM == 2u) return uvec2(uint(v16.v[i]), 0u);
  if (ITEM == 4u) return uvec2(v32.v[i], 0u);
  return v64.v[i];
}

void main() {
  const uint n = P.head.x, ndim = P.head.y, seq_len = P.head.w, seq_stride = P.offsets.w;
  for (uint e = gl_GlobalInvocationID.x; e < n; e += P.head.z) {
    uint rest = e, o = P.offsets.x, v = P.offsets.y, r = P.offsets.z;
    for (uint d = ndim; d-- > 0u;) {
      const uint size = at(P.sizes, d);
      const uint c = rest % size;
      rest /= size;
      o += c * at(P.out_strides, d);
      v += c * at(P.values_strides, d);
      r += c * at(P.seq_strides, d);
    }
    const uvec2 kv = nbx_cmp_key(DT, load_value(v));
    const bool v_nan = nbx_key_nan(DT, kv);
    uint start = 0u, end = seq_len;
    while (start < end) {
      const uint mid = start + ((end - start) >> 1);
      const uvec2 km = nbx_cmp_key(DT, load_seq(r + mid * seq_stride));
      // left: !(m >= v), i.e. m < v or unordered; right: !(m > v), i.e. !(v < m).
      const bool unordered = v_nan || nbx_key_nan(DT, km);
      const bool go_right =
          unordered || (RIGHT == 1u ? !nbx_key_less(kv, km) : nbx_key_less(km, kv));
      if (go_right)
        start = mid + 1u;
      else
        end = mid;
    }
    if (OUT64 == 1u) {
      out32.v[2u * o] = start;
      out32.v[2u * o + 1u] = 0u;
    } else {
      out32.v[o] = start;
    }
  }
}
