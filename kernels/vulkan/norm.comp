#version 450
// Kernel family "norm" (nbx::abi::NormParams; semantics backends/host/host_norm.cpp, the
// CUDA twin kernels/gpu/norm_kernels.cu): layer_norm, rms_norm, group_norm and batch_norm
// in inference, over rows of a contiguous input.
//
// A group of GROUP lanes (a power of two within the workgroup) handles one row; the
// workgroup holds `slots` rows. Statistics run in the accumulate class (float32 for half
// types, as PyTorch). The mean and the biased variance take two passes, as the host does:
// the second sums squared deviations from the finished mean, which loses nothing to
// cancellation the way E[x²] - E[x]² does, and corrects for the rounding of the mean. Sums are compensated (TwoSum) and combined
// through a shared-memory tree in a fixed order, so results are deterministic. batch_norm
// reads running statistics instead.
//
// Built per accumulate class: NBX_CLS_F (+ NBX_F64 when an operand is float64), NBX_CLS_D.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

#include "nbx_vk_codes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const int CDT = DT_FLOAT32;  // accumulate dtype
layout(constant_id = 2) const int IDT = DT_FLOAT32;
layout(constant_id = 3) const int ODT = DT_FLOAT32;
layout(constant_id = 4) const int PDT = DT_FLOAT32;  // weight, bias, running statistics

const uint kLayer = 0u, kRms = 1u, kGroup = 2u, kBatch = 3u;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;   // x rows, y row_len, z op, w flags (1 weight, 2 bias)
  uvec4 tile;   // x lanes per row (group), y row slots per workgroup
  uvec4 chan;   // x channels, y inner, z groups
  uvec4 eps;    // xy float64 bits, z float32 bits
} P;

// Binding 1 out, 2 in, 3 weight, 4 bias, 5 running_mean, 6 running_var.
layout(set = 0, binding = 1) writeonly buffer Out16 { uint16_t v[]; } out_u16;
layout(set = 0, binding = 1) writeonly buffer Out32 { uint v[]; } out_u32;
layout(set = 0, binding = 1) writeonly buffer Out64 { uvec2 v[]; } out_u64;
#define NBX_IN_BUFFER(B, N)                                                   \
  layout(set = 0, binding = B) readonly buffer N##16 { uint16_t v[]; } N##_u16; \
  layout(set = 0, binding = B) readonly buffer N##32 { uint v[]; } N##_u32;     \
  layout(set = 0, binding = B) readonly buffer N##64 { uvec2 v[]; } N##_u64;
NBX_IN_BUFFER(2, in)
NBX_IN_BUFFER(3, weight)
NBX_IN_BUFFER(4, bias)
NBX_IN_BUFFER(5, rmean)
NBX_IN_BUFFER(6, rvar)

#define NBX_FETCH(N, DT, i)                                             \
  (nbx_esize(DT) == 2 ? uvec2(uint(N##_u16.v[i]), 0u)                   \
   : nbx_esize(DT) == 4 ? uvec2(N##_u32.v[i], 0u) : N##_u64.v[i])

#define kNaN uintBitsToFloat(0x7fc00000u)
#define kInf uintBitsToFloat(0x7f800000u)

#if NBX_F64
#include "vk_math64.glsl"
#endif
#if NBX_CLS_F
#include "vk_math.glsl"
#endif
#include "vk_codec.glsl"
#include "vk_rows_common.glsl"

shared ACC s_sum[WG];
shared ACC s_comp[WG];

ACC load_in(uint i) { return acc_dec(IDT, NBX_FETCH(in, IDT, i)); }

void store_out(uint i, ACC y) {
  uvec2 r = acc_enc(ODT, y);
  int s = nbx_esize(ODT);
  if (s == 2) out_u16.v[i] = uint16_t(r.x);
  else if (s == 4) out_u32.v[i] = r.x;
  else out_u64.v[i] = r;
}

// The compensated sum of the group's partial sums (lanes 0..group-1 of this row's slot).
ACC group_sum(ACC v, ACC c, uint t, uint lane, uint group) {
  s_sum[t] = v;
  s_comp[t] = c;
  barrier();
  for (uint half_ = group / 2u; half_ > 0u; half_ /= 2u) {
    if (lane < half_) {
      ACC a = s_sum[t], ac = s_comp[t];
      two_sum_add(a, ac, s_sum[t + half_], s_comp[t + half_]);
      s_sum[t] = a;
      s_comp[t] = ac;
    }
    barrier();
  }
  ACC r = compensated_total(s_sum[t - lane], s_comp[t - lane]);
  barrier();
  return r;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint rows = P.head.x, len = P.head.y, op = P.head.z, group = P.tile.x, slots = P.tile.y;
  const bool has_weight = (P.head.w & 1u) != 0u, has_bias = (P.head.w & 2u) != 0u;
  const uint lane = t & (group - 1u), slot = t / group;
  const uint row_step = gl_NumWorkGroups.x * slots;
  const uint rounds = (rows + row_step - 1u) / row_step;  // equal for all: barriers match
#if NBX_CLS_D
  const ACC eps = packDouble2x32(P.eps.xy);
#else
  const ACC eps = uintBitsToFloat(P.eps.z);
#endif
  const ACC n = ACC(len);
  for (uint round = 0u; round < rounds; ++round) {
    const uint row = gl_WorkGroupID.x * slots + slot + round * row_step;
    const bool live = slot < slots && row < rows;
    const uint base = (live ? row : 0u) * len;
    ACC mean = ACC(0), delta = ACC(0), inv_std = ACC(1);
    if (op == kRms) {
      ACC sq = ACC(0), sqc = ACC(0);
      if (live)
        for (uint k = lane; k < len; k += group) {
          ACC v = load_in(base + k);
          two_sum_add(sq, sqc, v * v, ACC(0));
        }
      inv_std = ACC(1) / sqrt(group_sum(sq, sqc, t, lane, group) / n + eps);
    } else if (op != kBatch) {
      ACC s = ACC(0), sc = ACC(0);
      if (live)
        for (uint k = lane; k < len; k += group) two_sum_add(s, sc, load_in(base + k), ACC(0));
      mean = group_sum(s, sc, t, lane, group) / n;
      // The corrected two-pass algorithm (Chan, Golub, LeVeque): the deviations' own sum
      // measures the rounding of `mean` (half an ulp of the mean: 3e-5 at 1000 in
      // float32), which is taken out of the variance and of every output below.
      ACC m2 = ACC(0), m2c = ACC(0), sd = ACC(0), sdc = ACC(0);
      if (live)
        for (uint k = lane; k < len; k += group) {
          ACC d = load_in(base + k) - mean;
          two_sum_add(sd, sdc, d, ACC(0));
          two_sum_add(m2, m2c, d * d, ACC(0));
        }
      delta = group_sum(sd, sdc, t, lane, group) / n;
      ACC var = group_sum(m2, m2c, t, lane, group) / n - delta * delta;
      if (var < ACC(0)) var = ACC(0);  // not max(): a NaN variance must stay NaN
      inv_std = ACC(1) / sqrt(var + eps);
    }
    if (!live) continue;
    // The channel of element k: its position (layer/rms), or its channel within the row's
    // group (group_norm) or sample (batch_norm).
    const uint channel_base = op == kGroup ? (row % P.chan.z) * (P.chan.x / P.chan.z) : 0u;
    const bool by_channel = op == kGroup || op == kBatch;
    for (uint k = lane; k < len; k += group) {
      const uint c = by_channel ? channel_base + k / P.chan.y : k;
      const ACC v = load_in(base + k);
      ACC y;
      if (op == kBatch) {
        ACC rm = acc_dec(PDT, NBX_FETCH(rmean, PDT, c));
        ACC rv = acc_dec(PDT, NBX_FETCH(rvar, PDT, c));
        y = (v - rm) / sqrt(rv + eps);
      } else {
        y = ((v - mean) - delta) * inv_std;
      }
      if (has_weight) y *= acc_dec(PDT, NBX_FETCH(weight, PDT, c));
      if (has_bias) y += acc_dec(PDT, NBX_FETCH(bias, PDT, c));
      store_out(base + k, y);
    }
  }
}
