#version 450
// Kernel family "attention", variant split_kv, second pass: merges the key chunks' partial
// results that attention.comp (SPLIT) left in the workspace into the output. For query row r
// and value column e over the splits s: M = max_s m_s, w_s = exp(m_s - M),
// out = sum_s w_s o_s[e] / sum_s w_s l_s — zeros where no chunk saw a key (every m_s -inf,
// every l_s 0). One invocation per output element, grid-stride; the row's maxima and sums
// are read by each of its DV invocations (a few words, cached). Workspace layout: for each
// split, batch, query head and row, DV partial outputs, the max (natural log), the sum.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require

#include "nbx_vk_codes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int DT = DT_FLOAT32;

const int CDT = DT_FLOAT32;
#define kNaN uintBitsToFloat(0x7fc00000u)
#define kInf uintBitsToFloat(0x7f800000u)
#include "vk_codec.glsl"

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;  // x output elements, y value_dim, z splits, w the workspace's words a split
  uvec4 dims;  // x q_heads, y q_len, z grid invocations
  uvec4 offs;  // x out offset
  uvec4 os;    // out strides [batch, head, row, dim]
} P;

layout(set = 0, binding = 1) writeonly buffer Out16 { uint16_t v[]; } out16;
layout(set = 0, binding = 1) writeonly buffer Out32 { uint v[]; } out32;
layout(set = 0, binding = 5) readonly buffer Work { float v[]; } ws;

void main() {
  const uint dv = P.head.y, splits = P.head.z, stride = P.head.w;
  for (uint x = gl_GlobalInvocationID.x; x < P.head.x; x += P.dims.z) {
    const uint e = x % dv, row = x / dv;  // row: (batch, head, i) flattened, i fastest
    const uint w = row * (dv + 2u);
    float mx = -kInf;
    for (uint s = 0u; s < splits; ++s) mx = max(mx, ws.v[s * stride + w + dv]);
    float num = 0.0, den = 0.0;
    if (mx != -kInf) {
      for (uint s = 0u; s < splits; ++s) {
        const uint at = s * stride + w;
        const float f = exp(ws.v[at + dv] - mx);  // 0 for a chunk that saw no key
        num += f * ws.v[at + e];
        den += f * ws.v[at + dv + 1u];
      }
    }
    const uint i = row % P.dims.y, bh = row / P.dims.y;
    const uint o = P.offs.x + (bh / P.dims.x) * P.os.x + (bh % P.dims.x) * P.os.y + i * P.os.z +
                   e * P.os.w;
    const uint r = nbx_encF(DT, den > 0.0 ? num / den : 0.0).x;
    if (nbx_esize(DT) == 2) out16.v[o] = uint16_t(r);
    else out32.v[o] = r;
  }
}
