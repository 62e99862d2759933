#version 450
// Kernel family "attention", variant flash, on cooperative matrices (GL_NV_cooperative_matrix,
// 16 x lN x 16 float16 fragments, lN 16 or 8 as the device lists, float32 accumulators): the
// float16 problems where backends/vulkan/vk_attention.cpp finds the device and the operands
// fit (subgroups of 32,
// head_dim == value_dim in {64, 96, 128}, rows contiguous on 16 bytes); attention.comp
// serves everything else. Same uniform block and semantics as attention.comp (flash only).
//
// A workgroup of four subgroups takes 64 query rows of one (batch, head), 16 a subgroup, and
// walks the keys in tiles of 32 staged as float16 in shared memory (rows padded by 8 halves).
// Q stays in registers as D/16 A fragments. A subgroup's scores S = Q K^T (two accumulator
// fragments) go through its float32 scratch, where lane l takes row l / 2 and keys
// (l % 2) x 16 .. + 15: scale, causal mask, row max (a shuffle with the partner lane),
// exp2, and the probabilities back as float16 A fragments; the sums count the rounded
// probabilities, so numerator and denominator weigh alike. P V is made 32 columns at a time
// into fresh accumulators and added through the scratch to the lane's float32 output
// registers (the same row as its softmax), which the online softmax rescales in place —
// NV fragments cannot be scaled by row.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_NV_cooperative_matrix : require

#include "nbx_vk_codes.glsl"

const int CDT = DT_FLOAT32;  // vk_codec.glsl's compute dtype
#define kNaN uintBitsToFloat(0x7fc00000u)
#define kInf uintBitsToFloat(0x7f800000u)
#include "vk_codec.glsl"

layout(local_size_x = 128) in;          // four subgroups of 32
layout(constant_id = 1) const uint D = 128;  // head_dim == value_dim: 64, 96 or 128
layout(constant_id = 2) const uint lN = 16;  // the device's fragment: 16 x lN x 16, lN 8 or 16

const uint BR = 64, BC = 32, KS = D + 8u;  // rows, keys a tile, padded shared row (halves)
const uint CHUNKS = D / 32u;              // P V's 32-column steps

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 dims;   // x batch, y q_heads, z kv_heads, w q_len
  uvec4 dims2;  // x kv_len, y group, z causal, w causal_shift (int bits)
  uvec4 work;   // x work items, y row blocks a head (of BR rows)
  uvec4 misc;   // x scale x log2(e) (float bits)
  uvec4 offs;   // offsets of q, k, v, out
  uvec4 qs;
  uvec4 ks;
  uvec4 vs;
  uvec4 os;
} P;

layout(set = 0, binding = 1) writeonly buffer Out16 { uint16_t v[]; } out16;
layout(set = 0, binding = 2) readonly buffer Q128 { uvec4 v[]; } q128;
layout(set = 0, binding = 3) readonly buffer K128 { uvec4 v[]; } k128;
layout(set = 0, binding = 4) readonly buffer V128 { uvec4 v[]; } v128;

shared float16_t kv[BR * KS];     // Q while it loads, then K [BC][KS] and V [BC][KS]
shared float sc[4 * 16 * 32];     // a subgroup's 16 x 32 float32 scratch
shared float16_t ps[4 * 16 * 40];  // a subgroup's 16 x 32 probabilities, rows padded

// Rows [row0, row0 + rows) of a [rows, D] float16 view from element `base` (row stride
// `stride`, all on 16 bytes) into kv from half `at`; rows at or past `valid` as zeros.
void stage(uint which, uint base, uint stride, uint rows, uint valid, uint at) {
  for (uint u = gl_LocalInvocationIndex; u < rows * D / 8u; u += 128u) {
    const uint r = u / (D / 8u), d = (u % (D / 8u)) * 8u;
    uvec4 w = uvec4(0u);
    if (r < valid) {
      const uint e = (base + r * stride + d) / 8u;
      w = which == 0u ? q128.v[e] : which == 1u ? k128.v[e] : v128.v[e];
    }
    for (uint c = 0u; c < 8u; ++c) kv[at + r * KS + d + c] = unpackFloat2x16(w[c / 2u])[c & 1u];
  }
}

void main() {
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint r = lane / 2u, half_ = lane % 2u;  // the lane's row in the subgroup's 16
  const uint q_len = P.dims.w, kv_len = P.dims2.x, group = P.dims2.y;
  const bool causal = P.dims2.z != 0u;
  const int shift = int(P.dims2.w);
  const float scale2 = uintBitsToFloat(P.misc.x);
  const uint scr = sg * 512u, pss = sg * 640u;

  for (uint item = gl_WorkGroupID.x; item < P.work.x; item += gl_NumWorkGroups.x) {
    const uint blocks = P.work.y;
    const uint rb = blocks - 1u - item % blocks;  // late row blocks first (causal: longest)
    const uint bh = item / blocks, h = bh % P.dims.y, b = bh / P.dims.y, hk = h / group;
    const uint row0 = rb * BR;
    const uint rows_end = min(q_len, row0 + BR);
    uint j_end = kv_len;
    if (causal) j_end = uint(clamp(int(rows_end) + shift, 0, int(kv_len)));
    const uint i = row0 + sg * 16u + r;  // the lane's query row
    const uint seen = i >= q_len ? 0u
                      : causal   ? uint(clamp(int(i) + shift + 1, 0, int(kv_len)))
                                 : kv_len;

    barrier();  // the previous item's reads of kv are done
    stage(0u, P.offs.x + b * P.qs.x + h * P.qs.y + row0 * P.qs.z, P.qs.z, BR, rows_end - row0,
          0u);
    barrier();
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> qf[D / 16u];
    for (uint df = 0u; df < D / 16u; ++df)
      coopMatLoadNV(qf[df], kv, sg * 16u * KS + df * 16u, KS, false);

    float o[D / 2u];  // row r, columns c x 32 + half_ x 16 + x at [c x 16 + x]
    for (uint x = 0u; x < D / 2u; ++x) o[x] = 0.0;
    float m = -kInf, l = 0.0;
    const uint kb = P.offs.y + b * P.ks.x + hk * P.ks.y, vb = P.offs.z + b * P.vs.x + hk * P.vs.y;

    for (uint j0 = 0u; j0 < j_end; j0 += BC) {
      barrier();  // Q's fragment loads, or the previous tile's reads, are done
      stage(1u, kb + j0 * P.ks.z, P.ks.z, BC, j_end - j0, 0u);
      stage(2u, vb + j0 * P.vs.z, P.vs.z, BC, j_end - j0, BC * KS);
      barrier();

      for (uint kf = 0u; kf < BC / lN; ++kf) {
        fcoopmatNV<32, gl_ScopeSubgroup, 16, lN> s = fcoopmatNV<32, gl_ScopeSubgroup, 16, lN>(0.0);
        for (uint df = 0u; df < D / 16u; ++df) {
          fcoopmatNV<16, gl_ScopeSubgroup, 16, lN> kt;  // K^T: column-major K rows
          coopMatLoadNV(kt, kv, kf * lN * KS + df * 16u, KS, true);
          s = coopMatMulAddNV(qf[df], kt, s);
        }
        coopMatStoreNV(s, sc, scr + kf * lN, 32u, false);
      }
      memoryBarrierShared();
      subgroupBarrier();

      float p[16];
      float tile_max = -kInf;
      for (uint x = 0u; x < 16u; ++x) {
        const uint k = half_ * 16u + x;
        p[x] = j0 + k < min(seen, j_end) ? scale2 * sc[scr + r * 32u + k] : -kInf;
        tile_max = max(tile_max, p[x]);
      }
      tile_max = max(tile_max, subgroupShuffleXor(tile_max, 1u));
      const float m_new = max(m, tile_max);
      const float alpha = m_new == -kInf ? 1.0 : exp2(m - m_new);
      l *= alpha;
      for (uint x = 0u; x < D / 2u; ++x) o[x] *= alpha;
      m = m_new;
      for (uint x = 0u; x < 16u; ++x) {
        const float16_t ph = float16_t(m_new == -kInf ? 0.0 : exp2(p[x] - m_new));
        l += float(ph);
        ps[pss + r * 40u + half_ * 16u + x] = ph;
      }
      memoryBarrierShared();
      subgroupBarrier();

      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> pf[2];
      for (uint kf = 0u; kf < 2u; ++kf) coopMatLoadNV(pf[kf], ps, pss + kf * 16u, 40u, false);
      for (uint c = 0u; c < CHUNKS; ++c) {
        for (uint nf = 0u; nf < 32u / lN; ++nf) {
          fcoopmatNV<32, gl_ScopeSubgroup, 16, lN> pv =
              fcoopmatNV<32, gl_ScopeSubgroup, 16, lN>(0.0);
          for (uint kf = 0u; kf < 2u; ++kf) {
            fcoopmatNV<16, gl_ScopeSubgroup, 16, lN> vf;
            coopMatLoadNV(vf, kv, (BC + kf * 16u) * KS + c * 32u + nf * lN, KS, false);
            pv = coopMatMulAddNV(pf[kf], vf, pv);
          }
          coopMatStoreNV(pv, sc, scr + nf * lN, 32u, false);
        }
        memoryBarrierShared();
        subgroupBarrier();
        for (uint x = 0u; x < 16u; ++x) o[c * 16u + x] += sc[scr + r * 32u + half_ * 16u + x];
        memoryBarrierShared();
        subgroupBarrier();  // read before the next chunk (or tile's scores) overwrite it
      }
    }

    l += subgroupShuffleXor(l, 1u);
    if (i < q_len) {
      const float inv = l > 0.0 ? 1.0 / l : 0.0;  // no key seen: zeros
      const uint ob = P.offs.w + b * P.os.x + h * P.os.y + i * P.os.z;
      for (uint c = 0u; c < CHUNKS; ++c)
        for (uint x = 0u; x < 16u; ++x)
          out16.v[ob + (c * 32u + half_ * 16u + x) * P.os.w] =
              uint16_t(nbx_f32_to_f16(o[c * 16u + x] * inv));  // rounded once, to nearest even
    }
  }
}
