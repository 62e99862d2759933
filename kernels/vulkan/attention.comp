#version 450
// Kernel family "attention" (nbx::abi::AttentionParams; semantics
// backends/host/host_attention.cpp, the CUDA twin kernels/gpu/attention_*.cu), variants flash
// and split_kv's first pass: tiled attention with an online softmax, no L x S matrix.
//
// A work item is ROWS query rows against a range of keys, walked in tiles of BK keys. flash:
// ROWS consecutive rows of one (batch, query head), every key the rows may see, the
// normalised output written to `out`. split_kv (SPLIT): the q_len x group rows of one
// (batch, kv head) — all the query heads that read it, so each K/V tile is read once for
// them — against one chunk of split_len keys; the unnormalised partial output, the running
// max and the sum of exponentials go to the workspace (abi::attention_workspace_words), and
// attention_combine.comp merges the chunks.
//
// Each row belongs to G consecutive invocations of one subgroup (G a power of two, at most
// the device's smallest subgroup and BK): lane c of a row scores keys c, c + G, ... of the
// tile and owns value columns c, c + G, ...; the probabilities reach the other lanes by
// subgroupShuffle, so the only shared memory is the formula of core/ops/attention_path.cpp:
// Q [ROWS][D] and the K [BK][D + 1] (a padded row: the G lanes read G distinct rows, on
// distinct banks) and V [BK][DV] tiles, all float32. Scores carry scale x log2(e), so the
// softmax is exp2; the workspace holds natural-log maxima. A row that sees no key keeps max
// -inf and sum 0 and writes zeros. Elements are read through vk_codec.glsl (bfloat16 and
// float16 as 16-bit words), offsets and strides in elements within the 32-bit index path
// (backends/vulkan/vk_attention.cpp checks every view). K and V tiles load as 16-byte vectors
// where their rows are contiguous and aligned (K_VEC, V_VEC): decode is bandwidth-bound.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require

#include "nbx_vk_codes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;  // slots x G invocations
layout(constant_id = 1) const int DT = DT_FLOAT32;
layout(constant_id = 2) const uint D = 64;   // head_dim
layout(constant_id = 3) const uint DV = 64;  // value_dim
layout(constant_id = 4) const uint ROWS = 16;
layout(constant_id = 5) const uint BK = 32;
layout(constant_id = 6) const uint G = 4;
layout(constant_id = 7) const bool SPLIT = false;
// K's / V's rows contiguous with every 16-byte vector aligned: the tiles load as uvec4.
layout(constant_id = 8) const bool K_VEC = false;
layout(constant_id = 9) const bool V_VEC = false;

const int CDT = DT_FLOAT32;  // vk_codec.glsl's compute dtype
#define kNaN uintBitsToFloat(0x7fc00000u)
#define kInf uintBitsToFloat(0x7f800000u)
#include "vk_codec.glsl"

const uint KPT = BK / G;             // keys each lane scores a tile
const uint APT = (DV + G - 1u) / G;  // value columns each lane accumulates
const uint KST = D + 1u;             // the K tile's padded row
const float kLn2 = 0.69314718055994531;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 dims;   // x batch, y q_heads, z kv_heads, w q_len
  uvec4 dims2;  // x kv_len, y group (q_heads / kv_heads), z causal, w causal_shift (int bits)
  uvec4 work;   // x work items, y row blocks a head (flash), z splits, w split_len
  uvec4 misc;   // x scale x log2(e) (float bits), y the workspace's words a split
  uvec4 offs;   // offsets of q, k, v, out
  uvec4 qs;     // strides [batch, head, row, dim]
  uvec4 ks;
  uvec4 vs;
  uvec4 os;
} P;

layout(set = 0, binding = 1) writeonly buffer Out16 { uint16_t v[]; } out16;
layout(set = 0, binding = 1) writeonly buffer Out32 { uint v[]; } out32;
layout(set = 0, binding = 2) readonly buffer Q16 { uint16_t v[]; } q16;
layout(set = 0, binding = 2) readonly buffer Q32 { uint v[]; } q32;
layout(set = 0, binding = 3) readonly buffer K16 { uint16_t v[]; } k16;
layout(set = 0, binding = 3) readonly buffer K32 { uint v[]; } k32;
layout(set = 0, binding = 3) readonly buffer K128 { uvec4 v[]; } k128;
layout(set = 0, binding = 4) readonly buffer V16 { uint16_t v[]; } v16;
layout(set = 0, binding = 4) readonly buffer V32 { uint v[]; } v32;
layout(set = 0, binding = 4) readonly buffer V128 { uvec4 v[]; } v128;
layout(set = 0, binding = 5) writeonly buffer Work { float v[]; } ws;

shared float sq[ROWS * D];
shared float sk[BK * KST];
shared float sv[BK * DV];

float load_q(uint i) {
  return nbx_decF(DT, uvec2(nbx_esize(DT) == 2 ? uint(q16.v[i]) : q32.v[i], 0u));
}
float load_k(uint i) {
  return nbx_decF(DT, uvec2(nbx_esize(DT) == 2 ? uint(k16.v[i]) : k32.v[i], 0u));
}
float load_v(uint i) {
  return nbx_decF(DT, uvec2(nbx_esize(DT) == 2 ? uint(v16.v[i]) : v32.v[i], 0u));
}
// Elements a 16-byte vector holds, and element w of one (little-endian: the low half first).
const uint VW = DT == DT_FLOAT32 ? 4u : 8u;  // float32, else float16 / bfloat16
float vec_elem(uvec4 r, uint w) {
  if (nbx_esize(DT) == 4) return uintBitsToFloat(r[w]);
  const uint word = r[w >> 1];
  const uint bits = (w & 1u) == 0u ? word & 0xffffu : word >> 16;
  return nbx_decF(DT, uvec2(bits, 0u));
}

void store_out(uint i, float y) {
  const uint r = nbx_encF(DT, y).x;
  if (nbx_esize(DT) == 2) out16.v[i] = uint16_t(r);
  else out32.v[i] = r;
}

// Query row `slot` of a work item: its head and row, or false past the item's rows.
bool row_of(uint slot, uint head0, uint row0, out uint h, out uint i) {
  if (SPLIT) {  // q_len x group rows, the row fastest
    const uint q_len = P.dims.w;
    h = head0 + slot / q_len;
    i = slot % q_len;
    return slot < q_len * P.dims2.y;
  }
  h = head0;
  i = row0 + slot;
  return slot < ROWS && i < P.dims.w;
}

void main() {
  const uint lane = gl_SubgroupInvocationID % G;
  const uint slot = (gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID) / G;
  const uint src0 = gl_SubgroupInvocationID - lane;  // the row's lane 0 in the subgroup
  const uint t = gl_LocalInvocationIndex;
  const uint q_len = P.dims.w, kv_len = P.dims2.x, group = P.dims2.y;
  const bool causal = P.dims2.z != 0u;
  const int shift = int(P.dims2.w);
  const float scale2 = uintBitsToFloat(P.misc.x);

  for (uint item = gl_WorkGroupID.x; item < P.work.x; item += gl_NumWorkGroups.x) {
    // The item's batch, head(s), rows and key range [j_begin, j_end).
    uint b, head0, hk, row0 = 0u, split = 0u, j_begin = 0u, j_end = kv_len, rows_end;
    if (SPLIT) {
      split = item % P.work.z;
      const uint bk = item / P.work.z;
      hk = bk % P.dims.z;
      b = bk / P.dims.z;
      head0 = hk * group;
      j_begin = split * P.work.w;
      j_end = min(kv_len, j_begin + P.work.w);
      rows_end = q_len;
    } else {
      // Late row blocks first: under causal they are the longest.
      const uint blocks = P.work.y;
      const uint rb = blocks - 1u - item % blocks;
      const uint bh = item / blocks;
      head0 = bh % P.dims.y;
      b = bh / P.dims.y;
      hk = head0 / group;
      row0 = rb * ROWS;
      rows_end = min(q_len, row0 + ROWS);
    }
    // Keys past the last row's causal bound are seen by no row of the item.
    if (causal) j_end = uint(clamp(int(rows_end) + shift, int(j_begin), int(j_end)));

    uint h, i;
    const bool live = row_of(slot, head0, row0, h, i);
    // The row's last key + 1 (all keys without causal).
    const uint seen = !live   ? 0u
                      : causal ? uint(clamp(int(i) + shift + 1, 0, int(kv_len)))
                               : kv_len;

    // Q rows into shared memory, scaled.
    const uint q_base = P.offs.x + b * P.qs.x;
    for (uint e = t; e < ROWS * D; e += WG) {
      uint hh, ii;
      const bool ok = row_of(e / D, head0, row0, hh, ii);
      sq[e] = ok ? scale2 * load_q(q_base + hh * P.qs.y + ii * P.qs.z + (e % D) * P.qs.w) : 0.0;
    }
    const uint k_base = P.offs.y + b * P.ks.x + hk * P.ks.y;
    const uint v_base = P.offs.z + b * P.vs.x + hk * P.vs.y;

    float m = -kInf, l = 0.0;
    float acc[APT];
    for (uint c = 0u; c < APT; ++c) acc[c] = 0.0;

    for (uint j0 = j_begin; j0 < j_end; j0 += BK) {
      barrier();  // the previous tile's reads are done (and, the first time, Q's writes)
      // Keys past the range are zeros, never garbage: their weight 0 times NaN is NaN.
      if (K_VEC) {
        for (uint u = t; u < BK * D / VW; u += WG) {
          const uint j = u / (D / VW), d = (u % (D / VW)) * VW;
          const uvec4 r =
              j0 + j < j_end ? k128.v[(k_base + (j0 + j) * P.ks.z + d) / VW] : uvec4(0u);
          for (uint w = 0u; w < VW; ++w) sk[j * KST + d + w] = vec_elem(r, w);
        }
      } else {
        for (uint e = t; e < BK * D; e += WG) {
          const uint j = e / D, d = e % D;
          sk[j * KST + d] = j0 + j < j_end ? load_k(k_base + (j0 + j) * P.ks.z + d * P.ks.w) : 0.0;
        }
      }
      if (V_VEC) {
        for (uint u = t; u < BK * DV / VW; u += WG) {
          const uint j = u / (DV / VW), d = (u % (DV / VW)) * VW;
          const uvec4 r =
              j0 + j < j_end ? v128.v[(v_base + (j0 + j) * P.vs.z + d) / VW] : uvec4(0u);
          for (uint w = 0u; w < VW; ++w) sv[j * DV + d + w] = vec_elem(r, w);
        }
      } else {
        for (uint e = t; e < BK * DV; e += WG) {
          const uint j = e / DV, d = e % DV;
          sv[e] = j0 + j < j_end ? load_v(v_base + (j0 + j) * P.vs.z + d * P.vs.w) : 0.0;
        }
      }
      barrier();

      float s[KPT];
      for (uint c = 0u; c < KPT; ++c) s[c] = 0.0;
      if (live) {
        // d outermost: one read of q serves the lane's KPT keys.
        for (uint d = 0u; d < D; ++d) {
          const float q = sq[slot * D + d];
          for (uint c = 0u; c < KPT; ++c) s[c] += q * sk[(c * G + lane) * KST + d];
        }
      }
      float tile_max = -kInf;
      for (uint c = 0u; c < KPT; ++c) {
        if (!(live && j0 + c * G + lane < min(seen, j_end))) s[c] = -kInf;
        tile_max = max(tile_max, s[c]);
      }
      for (uint o = G / 2u; o > 0u; o /= 2u)
        tile_max = max(tile_max, subgroupShuffleXor(tile_max, o));
      const float m_new = max(m, tile_max);
      // Nothing seen yet (m_new -inf): no weight and no rescale, never exp2(-inf + inf).
      const float alpha = m_new == -kInf ? 1.0 : exp2(m - m_new);
      float part = 0.0;
      for (uint c = 0u; c < KPT; ++c) {
        s[c] = m_new == -kInf ? 0.0 : exp2(s[c] - m_new);
        part += s[c];
      }
      l = l * alpha;
      for (uint c = 0u; c < APT; ++c) acc[c] *= alpha;
      m = m_new;
      // Every lane runs the shuffles (uniform control flow); rows past the item hold zeros.
      for (uint c = 0u; c < KPT; ++c) {
        for (uint src = 0u; src < G; ++src) {
          const float p = subgroupShuffle(s[c], src0 + src);
          const uint j = c * G + src;
          l += p;
          for (uint a = 0u; a < APT; ++a) {
            const uint col = a * G + lane;
            if (col < DV) acc[a] += p * sv[j * DV + col];
          }
        }
      }
    }

    if (live) {
      if (SPLIT) {
        // [split][batch][query head][row]: DV partial outputs, the max, the sum.
        const uint w = split * P.misc.y +
                       (((b * P.dims.y + h) * q_len + i) * (DV + 2u));
        for (uint a = 0u; a < APT; ++a) {
          const uint col = a * G + lane;
          if (col < DV) ws.v[w + col] = acc[a];
        }
        if (lane == 0u) {
          ws.v[w + DV] = m * kLn2;
          ws.v[w + DV + 1u] = l;
        }
      } else {
        const uint o = P.offs.w + b * P.os.x + h * P.os.y + i * P.os.z;
        const float inv = l > 0.0 ? 1.0 / l : 0.0;
        for (uint a = 0u; a < APT; ++a) {
          const uint col = a * G + lane;
          if (col < DV) store_out(o + col * P.os.w, acc[a] * inv);
        }
      }
    }
    barrier();  // the next item's Q writes wait for this one's reads
  }
}
