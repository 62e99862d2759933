#version 450
// Kernel family "elementwise" (nbx::abi::ElementwiseParams): every op of
// core/elementwise_op_list.inc over strided, broadcast operands of any dtype.
//
// Built four times: base (float32/int32 arithmetic, 8/16-bit storage), NBX_F64, NBX_I64
// and both; the backend picks the smallest build whose capabilities the launch needs.
// The op, dtypes, scalar operands and path are specialization constants, so each pipeline
// is straight-line code for one (op, dtypes) cell. Parameters arrive in a uniform block the
// backend translates from ElementwiseParams (vk_elementwise.cpp): 32-bit sizes, strides
// and offsets (the backend refuses launches past 2^31 elements or maxStorageBufferRange)
// and scalars pre-encoded for the compute class.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#if NBX_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

#include "nbx_vk_codes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int OP = 0;
layout(constant_id = 2) const int CDT = DT_FLOAT32;  // compute dtype
layout(constant_id = 3) const int ODT = DT_FLOAT32;
layout(constant_id = 4) const int IDT0 = DT_FLOAT32;
layout(constant_id = 5) const int IDT1 = DT_FLOAT32;
layout(constant_id = 6) const int IDT2 = DT_FLOAT32;
layout(constant_id = 7) const int SCALAR_MASK = 0;  // bit k: input k is a host scalar
layout(constant_id = 8) const int NIN = 1;
layout(constant_id = 9) const int PATH = 0;  // 0 strided, 1 contiguous, 2 contiguous x4

const int kFaultIntegerDivisionByZero = 2;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;         // x numel, y ndim, z work items, w work-item stride (threads in grid)
  uvec4 sizes[2];     // sizes[d / 4][d % 4]
  uvec4 strides[8];   // operand k (0 out, 1.. inputs): strides[2k + d / 4][d % 4]
  uvec4 offsets;      // element offsets: out, in0, in1, in2
  uvec4 scalars[3];   // host scalars: xy 64-bit payload (D, L), z 32-bit payload (F, I)
  uvec4 attrs[3];     // same encoding
} P;

// Each buffer is seen through several element widths (aliases of one binding).
#define NBX_BUFFER(B, Q, N)                                                       \
  layout(set = 0, binding = B) Q buffer N##_b8 { uint8_t v[]; } N##_u8;            \
  layout(set = 0, binding = B) Q buffer N##_b16 { uint16_t v[]; } N##_u16;         \
  layout(set = 0, binding = B) Q buffer N##_b32 { uint v[]; } N##_u32;             \
  layout(set = 0, binding = B) Q buffer N##_b64 { uvec2 v[]; } N##_u64;            \
  layout(set = 0, binding = B) Q buffer N##_b128 { uvec4 v[]; } N##_u128;

NBX_BUFFER(1, writeonly, bo)
NBX_BUFFER(2, readonly, b0)
NBX_BUFFER(3, readonly, b1)
NBX_BUFFER(4, readonly, b2)

layout(set = 0, binding = 5) coherent buffer Fault { uint w[8]; } fault_rec;

#include "vk_math.glsl"
#include "vk_codec.glsl"
#include "vk_elementwise_ops.glsl"

// One element's raw bits of input k at element index i.
#define NBX_FETCH(N, DT, i)                                                                \
  (nbx_esize(DT) == 1 ? uvec2(uint(N##_u8.v[i]), 0u)                                         \
   : nbx_esize(DT) == 2 ? uvec2(uint(N##_u16.v[i]), 0u)                                      \
   : nbx_esize(DT) == 4 ? uvec2(N##_u32.v[i], 0u) : N##_u64.v[i])

uvec2 fetch(int k, uint i) {
  if (k == 0) return NBX_FETCH(b0, IDT0, i);
  if (k == 1) return NBX_FETCH(b1, IDT1, i);
  return NBX_FETCH(b2, IDT2, i);
}

void store(uint i, uvec2 r) {
  int s = nbx_esize(ODT);
  if (s == 1) bo_u8.v[i] = uint8_t(r.x);
  else if (s == 2) bo_u16.v[i] = uint16_t(r.x);
  else if (s == 4) bo_u32.v[i] = r.x;
  else bo_u64.v[i] = r;
}

// The compute class: a cast (copy) runs in its input's class so the one rounding happens
// on the store; everything else in the class of compute_dtype.
const int CLS_F = 0, CLS_I = 1, CLS_D = 2, CLS_L = 3;
const int CLS_DT = OP == OP_copy ? IDT0 : CDT;
const int CLS = CLS_DT == DT_FLOAT64 ? CLS_D : CLS_DT == DT_INT64 ? CLS_L
              : (CLS_DT == DT_FLOAT16 || CLS_DT == DT_BFLOAT16 || CLS_DT == DT_FLOAT32) ? CLS_F
              : CLS_I;

bool is_scalar(int k) { return ((SCALAR_MASK >> k) & 1) != 0; }
int in_dt(int k) { return k == 0 ? IDT0 : k == 1 ? IDT1 : IDT2; }

uvec2 compute(uvec2 r0, uvec2 r1, uvec2 r2, uint pos) {
  if (CLS == CLS_F) {
    float a = is_scalar(0) ? uintBitsToFloat(P.scalars[0].z) : nbx_decF(IDT0, r0);
    float b = NIN < 2 ? 0.0 : is_scalar(1) ? uintBitsToFloat(P.scalars[1].z) : nbx_decF(IDT1, r1);
    float c = NIN < 3 ? 0.0 : is_scalar(2) ? uintBitsToFloat(P.scalars[2].z) : nbx_decF(IDT2, r2);
    return nbx_encF(ODT, opF(a, b, c, pos));
  }
  if (CLS == CLS_I) {
    int a = is_scalar(0) ? int(P.scalars[0].z) : nbx_decI(IDT0, r0);
    int b = NIN < 2 ? 0 : is_scalar(1) ? int(P.scalars[1].z) : nbx_decI(IDT1, r1);
    int c = NIN < 3 ? 0 : is_scalar(2) ? int(P.scalars[2].z) : nbx_decI(IDT2, r2);
    return nbx_encI(ODT, opI(a, b, c, pos));
  }
#if NBX_F64
  if (CLS == CLS_D) {
    double a = is_scalar(0) ? packDouble2x32(P.scalars[0].xy) : nbx_decD(IDT0, r0);
    double b = NIN < 2 ? 0.0LF : is_scalar(1) ? packDouble2x32(P.scalars[1].xy) : nbx_decD(IDT1, r1);
    double c = NIN < 3 ? 0.0LF : is_scalar(2) ? packDouble2x32(P.scalars[2].xy) : nbx_decD(IDT2, r2);
    return nbx_encD(ODT, opD(a, b, c, pos));
  }
#endif
#if NBX_I64
  if (CLS == CLS_L) {
    int64_t a = is_scalar(0) ? int64_t(pack64(P.scalars[0].xy)) : nbx_decL(IDT0, r0);
    int64_t b = NIN < 2 ? 0l : is_scalar(1) ? int64_t(pack64(P.scalars[1].xy)) : nbx_decL(IDT1, r1);
    int64_t c = NIN < 3 ? 0l : is_scalar(2) ? int64_t(pack64(P.scalars[2].xy)) : nbx_decL(IDT2, r2);
    return nbx_encL(ODT, opL(a, b, c, pos));
  }
#endif
  return uvec2(0u);
}

bool reads(int k) { return k < NIN && !is_scalar(k); }

void element(uint e, uint o_out, uvec3 o_in) {
  uvec2 r0 = reads(0) ? fetch(0, o_in.x) : uvec2(0u);
  uvec2 r1 = reads(1) ? fetch(1, o_in.y) : uvec2(0u);
  uvec2 r2 = reads(2) ? fetch(2, o_in.z) : uvec2(0u);
  store(o_out, compute(r0, r1, r2, e));
}

uint stride_of(int k, uint d) { return P.strides[2 * k + int(d >> 2)][d & 3u]; }

void strided(uint e) {
  uint o_out = P.offsets.x;
  uvec3 o_in = P.offsets.yzw;
  uint rest = e;
  for (int d = int(P.head.y) - 1; d >= 0; --d) {
    uint n = P.sizes[d >> 2][d & 3];
    uint idx = rest % n;
    rest /= n;
    o_out += idx * stride_of(0, uint(d));
    o_in.x += idx * stride_of(1, uint(d));
    o_in.y += idx * stride_of(2, uint(d));
    o_in.z += idx * stride_of(3, uint(d));
  }
  element(e, o_out, o_in);
}

// Four consecutive elements of input k, starting at element 4 * j of its view, whose
// offset the backend guarantees to be a multiple of 4 (so every load is one aligned access).
#define NBX_FETCH4(N, DT, j, lo, hi)                                                     \
  {                                                                                      \
    int s = nbx_esize(DT);                                                               \
    if (s == 1) {                                                                        \
      uint w = N##_u32.v[j];                                                               \
      lo = uvec4(w & 0xffu, (w >> 8) & 0xffu, (w >> 16) & 0xffu, w >> 24);               \
    } else if (s == 2) {                                                                 \
      uvec2 w = N##_u64.v[j];                                                              \
      lo = uvec4(w.x & 0xffffu, w.x >> 16, w.y & 0xffffu, w.y >> 16);                    \
    } else if (s == 4) {                                                                 \
      lo = N##_u128.v[j];                                                                  \
    } else {                                                                             \
      uvec4 p = N##_u128.v[2 * j], q = N##_u128.v[2 * j + 1];                                \
      lo = uvec4(p.x, p.z, q.x, q.z);                                                    \
      hi = uvec4(p.y, p.w, q.y, q.w);                                                    \
    }                                                                                    \
  }

void vector4(uint j) {
  uvec4 lo0 = uvec4(0u), hi0 = uvec4(0u), lo1 = uvec4(0u), hi1 = uvec4(0u);
  uvec4 lo2 = uvec4(0u), hi2 = uvec4(0u);
  if (reads(0)) NBX_FETCH4(b0, IDT0, (P.offsets.y >> 2) + j, lo0, hi0)
  if (reads(1)) NBX_FETCH4(b1, IDT1, (P.offsets.z >> 2) + j, lo1, hi1)
  if (reads(2)) NBX_FETCH4(b2, IDT2, (P.offsets.w >> 2) + j, lo2, hi2)
  uvec4 lo, hi;
  for (int t = 0; t < 4; ++t) {
    uvec2 r = compute(uvec2(lo0[t], hi0[t]), uvec2(lo1[t], hi1[t]), uvec2(lo2[t], hi2[t]),
                      4u * j + uint(t));
    lo[t] = r.x;
    hi[t] = r.y;
  }
  uint jo = (P.offsets.x >> 2) + j;
  int s = nbx_esize(ODT);
  if (s == 1) {
    bo_u32.v[jo] = (lo.x & 0xffu) | ((lo.y & 0xffu) << 8) | ((lo.z & 0xffu) << 16) | (lo.w << 24);
  } else if (s == 2) {
    bo_u64.v[jo] = uvec2((lo.x & 0xffffu) | (lo.y << 16), (lo.z & 0xffffu) | (lo.w << 16));
  } else if (s == 4) {
    bo_u128.v[jo] = lo;
  } else {
    bo_u128.v[2 * jo] = uvec4(lo.x, hi.x, lo.y, hi.y);
    bo_u128.v[2 * jo + 1] = uvec4(lo.z, hi.z, lo.w, hi.w);
  }
}

void main() {
  uint items = P.head.z;
  uint step = P.head.w;
  for (uint w = gl_GlobalInvocationID.x; w < items; w += step) {
    if (PATH == 0) {
      strided(w);
    } else if (PATH == 1) {
      element(w, P.offsets.x + w, P.offsets.yzw + uvec3(w));
    } else {
      uint numel = P.head.x;
      if (4u * w + 3u < numel) {
        vector4(w);
      } else {
        for (uint e = 4u * w; e < numel; ++e) element(e, P.offsets.x + e, P.offsets.yzw + uvec3(e));
      }
    }
  }
}
