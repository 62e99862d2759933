#version 450
// Kernel family "softmax" (nbx::abi::SoftmaxParams; semantics backends/host/host_softmax.cpp,
// the CUDA twin kernels/gpu/softmax_kernels.cu).
//
// A group of GROUP lanes (a power of two within the workgroup) handles one row; the
// workgroup holds `slots` such rows. Pass 1 folds the row into an online (max, sum) state —
// the compensated sum is rescaled whenever the maximum grows, so one read suffices — and
// the group merges states through a shared-memory tree (any subgroup size). Pass 2 writes
// exp(x - max) / sum or (x - max) - log(sum). The one-pass variant keeps the scaled row in
// shared memory (CACHE_N elements, a specialization constant) so pass 2 does not read the
// input again; the looped variant reads it twice and takes rows of any length (128k
// vocabularies). PyTorch's special values follow from the state: a kept +inf, NaN, or only
// -inf values make the maximum non-finite and every kept element NaN; a fully masked row
// gives 0 (softmax) or -inf (log_softmax).
//
// Built per accumulate class: NBX_CLS_F (float32 math, also for float16/bfloat16), with
// NBX_F64 when an operand is float64, and NBX_CLS_D (float64). 32-bit offsets: the backend
// refuses operands beyond 2^31 elements or maxStorageBufferRange (vk_softmax.cpp).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

#include "nbx_vk_codes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const int CDT = DT_FLOAT32;  // accumulate dtype
layout(constant_id = 2) const int IDT = DT_FLOAT32;
layout(constant_id = 3) const int ODT = DT_FLOAT32;
layout(constant_id = 4) const bool ONE_PASS = false;
layout(constant_id = 5) const uint CACHE_N = 1;  // row-cache elements (one-pass)

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;        // x rows, y row_len, z outer_ndim, w flags (1 log, 2 mask)
  uvec4 tile;        // x lanes per row (group), y row slots per workgroup
  uvec4 row_stride;  // x in, y out, z mask
  uvec4 offsets;     // x in, y out, z mask
  uvec4 sizes[2];
  uvec4 in_strides[2];
  uvec4 out_strides[2];
  uvec4 mask_strides[2];
  uvec4 scale;  // xy float64 bits, z float32 bits
} P;

layout(set = 0, binding = 1) writeonly buffer Out16 { uint16_t v[]; } out_u16;
layout(set = 0, binding = 1) writeonly buffer Out32 { uint v[]; } out_u32;
layout(set = 0, binding = 1) writeonly buffer Out64 { uvec2 v[]; } out_u64;
layout(set = 0, binding = 2) readonly buffer In16 { uint16_t v[]; } in_u16;
layout(set = 0, binding = 2) readonly buffer In32 { uint v[]; } in_u32;
layout(set = 0, binding = 2) readonly buffer In64 { uvec2 v[]; } in_u64;
layout(set = 0, binding = 3) readonly buffer Mask8 { uint8_t v[]; } mask_u8;

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

shared ACC s_max[WG];
shared ACC s_sum[WG];
shared ACC s_comp[WG];
shared uint s_kept[WG];
shared ACC cache[CACHE_N];

uvec2 fetch_in(uint i) {
  int s = nbx_esize(IDT);
  return s == 2 ? uvec2(uint(in_u16.v[i]), 0u) : s == 4 ? uvec2(in_u32.v[i], 0u) : in_u64.v[i];
}

void store_out(uint i, ACC y) {
  uvec2 r = acc_enc(ODT, y);
  int s = nbx_esize(ODT);
  if (s == 2) out_u16.v[i] = uint16_t(r.x);
  else if (s == 4) out_u32.v[i] = r.x;
  else out_u64.v[i] = r;
}

struct Online {
  ACC m;
  ACC s;
  ACC comp;
  bool kept;
};

void fold(inout Online a, ACC x) {
  a.kept = true;
  if (isnan(x)) a.m = x;                        // NaN: the row's answer is NaN
  if (isnan(a.m) || x == -ACC_INF) return;      // exp(-inf - m) adds nothing
  if (x > a.m) {
    ACC f = acc_exp(a.m - x);
    a.s *= f;
    a.comp *= f;
    a.m = x;
    two_sum_add(a.s, a.comp, ACC(1), ACC(0));
  } else {
    two_sum_add(a.s, a.comp, acc_exp(x - a.m), ACC(0));
  }
}

Online merge(Online a, Online b) {
  a.kept = a.kept || b.kept;
  if (isnan(a.m) || isnan(b.m)) {
    a.m = isnan(a.m) ? a.m : b.m;
    return a;
  }
  ACC m = max(a.m, b.m);
  if (m == -ACC_INF) return a;  // both sums are empty
  ACC fa = acc_exp(a.m - m), fb = acc_exp(b.m - m);
  a.s *= fa;
  a.comp *= fa;
  a.m = m;
  two_sum_add(a.s, a.comp, b.s * fb, b.comp * fb);
  return a;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint rows = P.head.x, len = P.head.y, group = P.tile.x, slots = P.tile.y;
  const bool log_out = (P.head.w & 1u) != 0u, has_mask = (P.head.w & 2u) != 0u;
  const uint lane = t & (group - 1u), slot = t / group;
  const uint row_step = gl_NumWorkGroups.x * slots;
  const uint rounds = (rows + row_step - 1u) / row_step;  // equal for all: barriers match
#if NBX_CLS_D
  const ACC scale = packDouble2x32(P.scale.xy);
#else
  const ACC scale = uintBitsToFloat(P.scale.z);
#endif
  const uint cache_base = ONE_PASS ? slot * len : 0u;
  for (uint round = 0u; round < rounds; ++round) {
    const uint row = gl_WorkGroupID.x * slots + slot + round * row_step;
    const bool live = slot < slots && row < rows;
    uint in_off, out_off, mask_off;
    NBX_ROW_OFFSET(in_off, live ? row : 0u, P.head.z, P.sizes, P.in_strides, P.offsets.x)
    NBX_ROW_OFFSET(out_off, live ? row : 0u, P.head.z, P.sizes, P.out_strides, P.offsets.y)
    NBX_ROW_OFFSET(mask_off, live ? row : 0u, P.head.z, P.sizes, P.mask_strides, P.offsets.z)
    Online st = Online(-ACC_INF, ACC(0), ACC(0), false);
    if (live) {
      for (uint k = lane; k < len; k += group) {
        ACC x = scale * acc_dec(IDT, fetch_in(in_off + k * P.row_stride.x));
        if (ONE_PASS) cache[cache_base + k] = x;
        bool excluded = has_mask && uint(mask_u8.v[mask_off + k * P.row_stride.z]) != 0u;
        if (!excluded) fold(st, x);
      }
    }
    s_max[t] = st.m;
    s_sum[t] = st.s;
    s_comp[t] = st.comp;
    s_kept[t] = st.kept ? 1u : 0u;
    barrier();
    for (uint half_ = group / 2u; half_ > 0u; half_ /= 2u) {
      if (lane < half_) {
        Online a = Online(s_max[t], s_sum[t], s_comp[t], s_kept[t] != 0u);
        Online b = Online(s_max[t + half_], s_sum[t + half_], s_comp[t + half_],
                          s_kept[t + half_] != 0u);
        a = merge(a, b);
        s_max[t] = a.m;
        s_sum[t] = a.s;
        s_comp[t] = a.comp;
        s_kept[t] = a.kept ? 1u : 0u;
      }
      barrier();
    }
    const uint lead = t - lane;
    const ACC m = s_max[lead], sum = compensated_total(s_sum[lead], s_comp[lead]);
    const bool kept = s_kept[lead] != 0u;
    barrier();
    if (live) {
      const bool nan_row = kept && !(m > -ACC_INF && m < ACC_INF);
      const ACC log_sum = acc_log(sum);
      for (uint k = lane; k < len; k += group) {
        bool excluded = has_mask && uint(mask_u8.v[mask_off + k * P.row_stride.z]) != 0u;
        ACC y;
        if (!kept || excluded) {
          y = log_out ? -ACC_INF : ACC(0);
        } else if (nan_row) {
          y = ACC(kNaN);
        } else {
          // One-pass: written by this same invocation in pass 1.
          ACC x = ONE_PASS ? cache[cache_base + k]
                           : scale * acc_dec(IDT, fetch_in(in_off + k * P.row_stride.x));
          y = log_out ? (x - m) - log_sum : acc_exp(x - m) / sum;
        }
        store_out(out_off + k * P.row_stride.y, y);
      }
    }
  }
}
