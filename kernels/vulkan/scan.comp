#version 450
// Kernel family "scan" (nbx::abi::ScanParams; semantics backends/host/host_scan.cpp):
// inclusive cumsum, cumprod, cummax and cummin (+ int64 indices) and logcumsumexp along one
// strided dim.
//
// Every scan is a fold with an associative combine of states (value, compensation, index):
// cumsum adds with TwoSum (float builds; a float32 prefix of 128k terms keeps float32
// accuracy), cumprod multiplies, cummax/cummin keep the later state when it "takes over"
// (PyTorch's rule: a NaN always does, nothing displaces a NaN, ties move to the later
// element) — which is associative, so the parallel scan gives the host's indices.
// logcumsumexp's state is a run's maximum m and its TwoSum of exp(x - m): two runs combine
// by rescaling the sum of the one with the smaller maximum, and the value is m + log(sum).
//
// PATH 0 (short rows): one invocation walks a whole row. PATH 1 (long rows): one workgroup
// per row loops over chunks of WG * kItems elements; each invocation folds kItems
// consecutive elements, a Hillis-Steele scan over the workgroup's totals gives each its
// exclusive prefix, and the chunk's total carries into the next chunk.
//
// Built per accumulate class: NBX_CLS_F (float32, also for float16/bfloat16; + NBX_F64 for
// float64 operands), NBX_CLS_D (float64), NBX_CLS_L (int64: integer and bool inputs).
// Indices are written as two 32-bit words, so float scans need no shaderInt64.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#if NBX_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

#include "nbx_vk_codes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const int CDT = DT_FLOAT32;  // accumulate dtype
layout(constant_id = 2) const int IDT = DT_FLOAT32;
layout(constant_id = 3) const int ODT = DT_FLOAT32;
layout(constant_id = 4) const int OP = 0;    // abi::ScanOp
layout(constant_id = 5) const int PATH = 0;  // 0 a row per invocation, 1 a row per workgroup

const int kCumsum = 0, kCumprod = 1, kCummax = 2, kCummin = 3, kLogcumsumexp = 4;
const bool kExtreme = OP == kCummax || OP == kCummin;
const uint kNone = 0xffffffffu;  // the index of the empty state (cummax/cummin identity)
const int kItems = 8;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;        // x rows, y row_len, z outer_ndim
  uvec4 row_stride;  // x in, y out, z index
  uvec4 offsets;     // x in, y out, z index
  uvec4 sizes[2];
  uvec4 in_strides[2];
  uvec4 out_strides[2];
  uvec4 index_strides[2];
} P;

layout(set = 0, binding = 1) writeonly buffer Out8 { uint8_t v[]; } out_u8;
layout(set = 0, binding = 1) writeonly buffer Out16 { uint16_t v[]; } out_u16;
layout(set = 0, binding = 1) writeonly buffer Out32 { uint v[]; } out_u32;
layout(set = 0, binding = 1) writeonly buffer Out64 { uvec2 v[]; } out_u64;
layout(set = 0, binding = 2) readonly buffer In8 { uint8_t v[]; } in_u8;
layout(set = 0, binding = 2) readonly buffer In16 { uint16_t v[]; } in_u16;
layout(set = 0, binding = 2) readonly buffer In32 { uint v[]; } in_u32;
layout(set = 0, binding = 2) readonly buffer In64 { uvec2 v[]; } in_u64;
layout(set = 0, binding = 3) writeonly buffer Index64 { uvec2 v[]; } index_u64;

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

#if NBX_CLS_L
#define VAL int64_t
VAL val_dec(int dt, uvec2 r) { return nbx_decL(dt, r); }
uvec2 val_enc(int dt, VAL v) { return nbx_encL(dt, v); }
bool val_nan(VAL v) { return false; }
#else
#define VAL ACC
VAL val_dec(int dt, uvec2 r) { return acc_dec(dt, r); }
uvec2 val_enc(int dt, VAL v) { return acc_enc(dt, v); }
bool val_nan(VAL v) { return isnan(v); }
#endif

struct State {
  VAL v;     // logcumsumexp: Σ exp(x - m), 0 when empty
  VAL c;     // cumsum's and logcumsumexp's compensation (float builds)
  uint idx;  // cummax/cummin: the position of v in the row; kNone: empty
  VAL m;     // logcumsumexp: the run's maximum (NaN once a NaN is seen)
};

State identity() {
  if (OP == kCumprod) return State(VAL(1), VAL(0), 0u, VAL(0));
#if !NBX_CLS_L
  if (OP == kLogcumsumexp) return State(VAL(0), VAL(0), 0u, -ACC_INF);
#endif
  return State(VAL(0), VAL(0), kExtreme ? kNone : 0u, VAL(0));
}

// Element x (at position k) as a run of one.
State element_state(VAL x, uint k) {
  if (OP == kLogcumsumexp) return State(VAL(1), VAL(0), k, x);  // exp(x - x) at scale x
  return State(x, VAL(0), k, VAL(0));
}

// Whether `cur` (later) replaces `best` as the running extreme (host_scan.cpp takes_over).
bool takes_over(VAL cur, VAL best) {
  if (val_nan(cur)) return true;
  if (val_nan(best)) return false;
  return OP == kCummax ? cur >= best : cur <= best;
}

// a then b (b covers later elements).
State combine(State a, State b) {
  if (OP == kCumsum) {
#if NBX_CLS_L
    a.v += b.v;  // wraps, like the host's two's complement
#else
    two_sum_add(a.v, a.c, b.v, b.c);
#endif
    return a;
  }
  if (OP == kCumprod) {
    a.v *= b.v;
    return a;
  }
#if !NBX_CLS_L
  if (OP == kLogcumsumexp) {
    if (b.v == VAL(0)) return a;  // an empty run
    if (a.v == VAL(0)) return b;
    if (isnan(a.m) || isnan(b.m)) {
      if (!isnan(a.m)) a.m = b.m;
      return a;
    }
    // The run with the larger maximum keeps its scale. Equal maxima need no rescaling,
    // which also keeps two +inf (or -inf) maxima from exp(inf - inf) = NaN.
    const bool a_high = a.m >= b.m;
    State high = a_high ? a : b;
    State low = a_high ? b : a;
    if (low.m != high.m) {
      const VAL f = acc_exp(low.m - high.m);
      low.v *= f;
      low.c *= f;
    }
    two_sum_add(high.v, high.c, low.v, low.c);
    return high;
  }
#endif
  if (b.idx == kNone) return a;
  if (a.idx == kNone) return b;
  return takes_over(b.v, a.v) ? b : a;
}

VAL fetch(uint i) {
  int s = nbx_esize(IDT);
  uvec2 r = s == 1   ? uvec2(uint(in_u8.v[i]), 0u)
            : s == 2 ? uvec2(uint(in_u16.v[i]), 0u)
            : s == 4 ? uvec2(in_u32.v[i], 0u)
                     : in_u64.v[i];
  return val_dec(IDT, r);
}

void emit(uint out_i, uint index_i, State st) {
  VAL y = st.v;
#if !NBX_CLS_L
  if (OP == kCumsum) y = compensated_total(st.v, st.c);
  // ±inf and NaN maxima are the value itself.
  if (OP == kLogcumsumexp)
    y = acc_finite(st.m) ? st.m + acc_log(compensated_total(st.v, st.c)) : st.m;
#endif
  uvec2 r = val_enc(ODT, y);
  int s = nbx_esize(ODT);
  if (s == 1) out_u8.v[out_i] = uint8_t(r.x);
  else if (s == 2) out_u16.v[out_i] = uint16_t(r.x);
  else if (s == 4) out_u32.v[out_i] = r.x;
  else out_u64.v[out_i] = r;
  if (kExtreme) index_u64.v[index_i] = uvec2(st.idx, 0u);
}

shared VAL s_v[WG];
shared VAL s_c[WG];
shared uint s_idx[WG];
shared VAL s_m[WG];

void put(uint t, State s) {
  s_v[t] = s.v;
  s_c[t] = s.c;
  s_idx[t] = s.idx;
  s_m[t] = s.m;
}
State get(uint t) { return State(s_v[t], s_c[t], s_idx[t], s_m[t]); }

void offsets_of(uint row, out uint in_off, out uint out_off, out uint index_off) {
  NBX_ROW_OFFSET(in_off, row, P.head.z, P.sizes, P.in_strides, P.offsets.x)
  NBX_ROW_OFFSET(out_off, row, P.head.z, P.sizes, P.out_strides, P.offsets.y)
  NBX_ROW_OFFSET(index_off, row, P.head.z, P.sizes, P.index_strides, P.offsets.z)
}

void scan_rows_serial() {
  const uint rows = P.head.x, len = P.head.y;
  const uint step = gl_NumWorkGroups.x * WG;
  for (uint row = gl_GlobalInvocationID.x; row < rows; row += step) {
    uint in_off, out_off, index_off;
    offsets_of(row, in_off, out_off, index_off);
    State st = identity();
    for (uint k = 0u; k < len; ++k) {
      st = combine(st, element_state(fetch(in_off + k * P.row_stride.x), k));
      emit(out_off + k * P.row_stride.y, index_off + k * P.row_stride.z, st);
    }
  }
}

void scan_rows_chunked() {
  const uint rows = P.head.x, len = P.head.y, t = gl_LocalInvocationID.x;
  const uint chunk = WG * uint(kItems);
  for (uint row = gl_WorkGroupID.x; row < rows; row += gl_NumWorkGroups.x) {  // uniform
    uint in_off, out_off, index_off;
    offsets_of(row, in_off, out_off, index_off);
    State carry = identity();
    for (uint base = 0u; base < len; base += chunk) {
      const uint first = base + t * uint(kItems);
      VAL vals[kItems];
      State mine = identity();
      for (int j = 0; j < kItems; ++j) {
        const uint k = first + uint(j);
        vals[j] = k < len ? fetch(in_off + k * P.row_stride.x) : VAL(0);
        if (k < len) mine = combine(mine, element_state(vals[j], k));
      }
      put(t, mine);
      barrier();
      for (uint off = 1u; off < WG; off <<= 1u) {
        State other = identity();
        if (t >= off) other = get(t - off);
        barrier();
        if (t >= off) put(t, combine(other, get(t)));
        barrier();
      }
      State st = combine(carry, t > 0u ? get(t - 1u) : identity());
      carry = combine(carry, get(WG - 1u));
      barrier();  // the next chunk overwrites the totals
      for (int j = 0; j < kItems; ++j) {
        const uint k = first + uint(j);
        if (k >= len) break;
        st = combine(st, element_state(vals[j], k));
        emit(out_off + k * P.row_stride.y, index_off + k * P.row_stride.z, st);
      }
    }
  }
}

void main() {
  if (PATH == 0) scan_rows_serial();
  else scan_rows_chunked();
}
