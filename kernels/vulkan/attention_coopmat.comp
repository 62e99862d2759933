#version 450
// Kernel family "attention", variant flash, on cooperative matrices (GL_NV_cooperative_matrix,
// 16 x lN x 16 float16 fragments, lN 16 or 8 as the device lists, float32 accumulators): the
// float16 problems where backends/vulkan/vk_attention.cpp finds the device and the operands
// fit (subgroups of 32, head_dim == value_dim in {64, 96, 128}, rows contiguous on 16 bytes);
// attention.comp serves everything else. Same uniform block and semantics as attention.comp
// (flash only).
//
// A workgroup of four subgroups takes 64 query rows of one (batch, head), 16 a subgroup, and
// walks the keys in tiles of 64 staged once for all four subgroups as raw 16-byte words in
// shared memory (rows padded by one word, so eight fragment rows hit eight distinct bank
// groups). With PREFETCH the next tile's words load into registers while this one multiplies.
// Q stays in registers as D/16 A fragments, the output O in D/lN float32 accumulators for the
// whole key walk. Each tile is two steps of 32 keys: S = Q K^T into the subgroup's float32
// scratch, where lane l takes row l / 2 and keys (l % 2) x 16 .. + 15 (scale, causal mask,
// row max by a shuffle with the partner lane, exp2), the float16 probabilities P back into
// the scratch as A fragments, O += P V on the matrix units. The sums count the rounded
// probabilities, so numerator and denominator weigh alike.
//
// Lazy rescaling: a row's reference max m moves only when a step's max exceeds it by more than
// TAU (log2 units), so probabilities stay <= 2^TAU (float16-safe) and, after the first keys,
// O is almost never rescaled. When some row of the subgroup must rescale, its factors go to
// the scratch as a 16 x lN matrix whose row r holds row r's factor, and O's fragments are
// multiplied element by element with that fragment (same type, so same element order: NV
// fragments cannot be scaled by row otherwise). The final O goes through shared memory to be
// divided by the row sums and rounded once.
//
// Shared memory: 2 x 64 x (D + 8) halves of K and V + 4 x 2304 bytes of scratch — 27648,
// 35840 and 44032 bytes for D = 64, 96, 128 (NVIDIA's limit is 48 KiB).
//
// The design before this one (32-key tiles staged half by half, P V added to per-lane
// registers through the scratch) ran prefill b4 h32 s4096 d128 causal in 20.40 ms, 27
// TFLOP/s, on an H100 (NVIDIA 580.159.04, 2026-12-07); this one is not yet measured.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_NV_cooperative_matrix : require

#include "nbx_vk_codes.glsl"

const int CDT = DT_FLOAT32;  // vk_codec.glsl's compute dtype
#define kNaN uintBitsToFloat(0x7fc00000u)
#define kInf uintBitsToFloat(0x7f800000u)
#include "vk_codec.glsl"

layout(local_size_x = 128) in;                 // four subgroups of 32
layout(constant_id = 1) const uint D = 128;    // head_dim == value_dim: 64, 96 or 128
layout(constant_id = 2) const uint lN = 16;    // the device's fragment: 16 x lN x 16, lN 8 or 16
layout(constant_id = 3) const bool PREFETCH = true;  // next tile's loads under this one's math

const uint BR = 64u, BC = 64u, SK = 32u;  // rows a workgroup, keys a tile, keys a step
const uint RW = D / 8u;                   // 16-byte words a row
const uint KS = RW + 1u;                  // a staged row in words (8 halves of padding)
const uint PER = BC * RW / 128u;          // words each invocation stages a tile (BR == BC)
const uint SST = SK / 4u + 1u;            // a score row: SK + 4 floats, in words
const uint PST = SK / 8u + 1u;            // a probability row: SK + 8 halves, in words
const uint AOFF = 16u * PST;              // the rescale matrix (16 x lN floats) after P
const uint SCR = 16u * SST;               // a subgroup's scratch in words (2304 bytes)
const uint OST = D / 4u + 1u;             // an output row at the end: D + 4 floats, in words
const float TAU = 8.0;                    // lazy rescale threshold (probabilities <= 256)

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

// Q [BR][KS] while it loads, then K [BC][KS] and V [BC][KS]; at the end O [4 x 16][OST]
// float32 (64 x (D + 4) x 4 bytes < 2 x 64 x (D + 8) x 2).
shared uvec4 kv[2u * BC * KS];
shared uvec4 scr[4u * SCR];  // a subgroup's scores, then its P and rescale matrix

uvec4 wk[PER], wv[PER];  // the words this invocation stages (Q first, then K and V)

// Rows [0, valid) of a [*, D] float16 view from element `base` (row stride `stride`, both
// multiples of 8) into w; rows past `valid` (up to 64) as zeros, never garbage: a zero-weight
// key times NaN would be NaN.
void fetch_q(uint base, uint stride, uint valid) {
  for (uint q = 0u; q < PER; ++q) {
    const uint u = gl_LocalInvocationIndex + 128u * q, r = u / RW;
    wk[q] = r < valid ? q128.v[(base + r * stride) / 8u + u % RW] : uvec4(0u);
  }
}
void fetch_kv(uint kbase, uint kstride, uint vbase, uint vstride, uint valid) {
  for (uint q = 0u; q < PER; ++q) {
    const uint u = gl_LocalInvocationIndex + 128u * q, r = u / RW;
    wk[q] = r < valid ? k128.v[(kbase + r * kstride) / 8u + u % RW] : uvec4(0u);
  }
  for (uint q = 0u; q < PER; ++q) {
    const uint u = gl_LocalInvocationIndex + 128u * q, r = u / RW;
    wv[q] = r < valid ? v128.v[(vbase + r * vstride) / 8u + u % RW] : uvec4(0u);
  }
}
void put(bool with_v) {
  for (uint q = 0u; q < PER; ++q) {
    const uint u = gl_LocalInvocationIndex + 128u * q;
    kv[(u / RW) * KS + u % RW] = wk[q];
    if (with_v) kv[BC * KS + (u / RW) * KS + u % RW] = wv[q];
  }
}

void main() {
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint r = lane / 2u, half_ = lane % 2u;  // the lane's row in the subgroup's 16
  const uint q_len = P.dims.w, kv_len = P.dims2.x, group = P.dims2.y;
  const bool causal = P.dims2.z != 0u;
  const int shift = int(P.dims2.w);
  const float scale2 = uintBitsToFloat(P.misc.x);
  const uint sb = sg * SCR;

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
    // Keys past the subgroup's last live row's bound: no row of the subgroup sees them.
    const uint i_last = min(row0 + sg * 16u + 15u, q_len - 1u);
    const uint sg_seen = row0 + sg * 16u >= q_len ? 0u
                         : causal ? uint(clamp(int(i_last) + shift + 1, 0, int(kv_len)))
                                  : kv_len;

    fetch_q(P.offs.x + b * P.qs.x + h * P.qs.y + row0 * P.qs.z, P.qs.z, rows_end - row0);
    barrier();  // the previous item's reads of kv are done
    put(false);
    barrier();
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> qf[D / 16u];
    for (uint df = 0u; df < D / 16u; ++df)
      coopMatLoadNV(qf[df], kv, sg * 16u * KS + df * 2u, KS, false);

    fcoopmatNV<32, gl_ScopeSubgroup, 16, lN> o[D / lN];
    for (uint nf = 0u; nf < D / lN; ++nf) o[nf] = fcoopmatNV<32, gl_ScopeSubgroup, 16, lN>(0.0);
    float m = -kInf, l = 0.0;
    const uint kb = P.offs.y + b * P.ks.x + hk * P.ks.y, vb = P.offs.z + b * P.vs.x + hk * P.vs.y;
    const uint kst = P.ks.z, vst = P.vs.z;

    if (PREFETCH && j_end > 0u) fetch_kv(kb, kst, vb, vst, min(j_end, BC));
    for (uint j0 = 0u; j0 < j_end; j0 += BC) {
      if (!PREFETCH) fetch_kv(kb + j0 * kst, kst, vb + j0 * vst, vst, min(j_end - j0, BC));
      barrier();  // Q's fragment loads, or the previous tile's reads, are done
      put(true);
      barrier();
      if (PREFETCH && j0 + BC < j_end)
        fetch_kv(kb + (j0 + BC) * kst, kst, vb + (j0 + BC) * vst, vst, min(j_end - j0 - BC, BC));

      for (uint st = 0u; st < BC / SK; ++st) {
        const uint k0 = j0 + st * SK;
        if (k0 >= sg_seen) break;  // uniform in the subgroup

        memoryBarrierShared();
        subgroupBarrier();  // the previous step's P and rescale loads are done
        for (uint nf = 0u; nf < SK / lN; ++nf) {
          fcoopmatNV<32, gl_ScopeSubgroup, 16, lN> s =
              fcoopmatNV<32, gl_ScopeSubgroup, 16, lN>(0.0);
          for (uint df = 0u; df < D / 16u; ++df) {
            fcoopmatNV<16, gl_ScopeSubgroup, 16, lN> kt;  // K^T: column-major K rows
            coopMatLoadNV(kt, kv, (st * SK + nf * lN) * KS + df * 2u, KS, true);
            s = coopMatMulAddNV(qf[df], kt, s);
          }
          coopMatStoreNV(s, scr, sb + nf * (lN / 4u), SST, false);
        }
        memoryBarrierShared();
        subgroupBarrier();

        float p[16];
        float tile_max = -kInf;
        for (uint q = 0u; q < 4u; ++q) {
          const uvec4 w = scr[sb + r * SST + half_ * 4u + q];
          for (uint c = 0u; c < 4u; ++c) {
            const uint x = q * 4u + c;
            p[x] = k0 + half_ * 16u + x < seen ? scale2 * uintBitsToFloat(w[c]) : -kInf;
            tile_max = max(tile_max, p[x]);
          }
        }
        tile_max = max(tile_max, subgroupShuffleXor(tile_max, 1u));
        // m moves up only past TAU; m -inf (nothing seen yet) moves to any finite max.
        const bool grow = tile_max > m + TAU;
        const float alpha = grow ? exp2(m - tile_max) : 1.0;  // 0 from -inf: O and l are 0
        const bool rescale = subgroupAny(grow && m != -kInf);
        if (grow) m = tile_max;
        l *= alpha;
        uint ph[8];
        for (uint x = 0u; x < 8u; ++x) {
          const vec2 s2 = vec2(p[2u * x], p[2u * x + 1u]);
          const f16vec2 e = f16vec2(m == -kInf ? vec2(0.0) : exp2(s2 - m));
          l += float(e.x) + float(e.y);
          ph[x] = packFloat2x16(e);
        }
        memoryBarrierShared();
        subgroupBarrier();  // every lane has read its scores before P overwrites them
        scr[sb + r * PST + half_ * 2u] = uvec4(ph[0], ph[1], ph[2], ph[3]);
        scr[sb + r * PST + half_ * 2u + 1u] = uvec4(ph[4], ph[5], ph[6], ph[7]);
        if (rescale)
          for (uint q = 0u; q < lN / 8u; ++q)
            scr[sb + AOFF + r * (lN / 4u) + half_ * (lN / 8u) + q] = uvec4(floatBitsToUint(alpha));
        memoryBarrierShared();
        subgroupBarrier();

        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> pf[SK / 16u];
        for (uint kf = 0u; kf < SK / 16u; ++kf)
          coopMatLoadNV(pf[kf], scr, sb + kf * 2u, PST, false);
        if (rescale) {
          fcoopmatNV<32, gl_ScopeSubgroup, 16, lN> af;  // row r: row r's factor
          coopMatLoadNV(af, scr, sb + AOFF, lN / 4u, false);
          for (uint nf = 0u; nf < D / lN; ++nf)
            for (int e = 0; e < af.length(); ++e) o[nf][e] *= af[e];
        }
        for (uint nf = 0u; nf < D / lN; ++nf) {
          for (uint kf = 0u; kf < SK / 16u; ++kf) {
            fcoopmatNV<16, gl_ScopeSubgroup, 16, lN> vf;
            coopMatLoadNV(vf, kv, BC * KS + (st * SK + kf * 16u) * KS + nf * (lN / 8u), KS,
                          false);
            o[nf] = coopMatMulAddNV(pf[kf], vf, o[nf]);
          }
        }
      }
    }

    barrier();  // every subgroup is done with the last tile's K and V
    const uint ob0 = sg * 16u * OST;
    for (uint nf = 0u; nf < D / lN; ++nf)
      coopMatStoreNV(o[nf], kv, ob0 + nf * (lN / 4u), OST, false);
    memoryBarrierShared();
    subgroupBarrier();
    l += subgroupShuffleXor(l, 1u);
    const float inv = l > 0.0 ? 1.0 / l : 0.0;  // no key seen: zeros
    for (uint rr = 0u; rr < 16u; ++rr) {
      const float f = subgroupShuffle(inv, 2u * rr);
      const uint ii = row0 + sg * 16u + rr;
      if (ii < q_len) {  // uniform in the subgroup
        const uint ob = P.offs.w + b * P.os.x + h * P.os.y + ii * P.os.z;
        for (uint c4 = lane; c4 < D / 4u; c4 += 32u) {
          const uvec4 w = kv[ob0 + rr * OST + c4];
          for (uint c = 0u; c < 4u; ++c)
            out16.v[ob + (4u * c4 + c) * P.os.w] =
                uint16_t(nbx_f32_to_f16(uintBitsToFloat(w[c]) * f));  // rounded once
        }
      }
    }
  }
}
