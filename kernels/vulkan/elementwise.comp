#version 450
// Kernel family "elementwise" (nbx::abi::ElementwiseParams): every op of
// core/elementwise_op_list.inc over strided, broadcast operands of any dtype.
//
// Built once per compute class (NBX_CLS_F float32, NBX_CLS_I int32, NBX_CLS_D float64,
// NBX_CLS_L int64) and per 64-bit type set (NBX_F64, NBX_I64: float64/int64 operands);
// the backend picks the build whose capabilities the launch needs, nothing more.
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
#if NBX_CLS_D && !NBX_F64
#error "NBX_CLS_D needs NBX_F64"
#endif
#if NBX_CLS_L && !NBX_I64
#error "NBX_CLS_L needs NBX_I64"
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
layout(constant_id = 9) const int PATH = 0;  // 0 strided, 1 contiguous, 2 contiguous x8

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

layout(set = 0, binding = 7) coherent buffer Fault { uint w[8]; } fault_rec;

#define kNaN uintBitsToFloat(0x7fc00000u)
#define kInf uintBitsToFloat(0x7f800000u)

#if NBX_F64
#include "vk_math64.glsl"
#endif
#if NBX_CLS_F
#include "vk_math.glsl"
#endif
#include "vk_codec.glsl"
#include "vk_elementwise_ops.glsl"

// One element's raw bits of input k at element index i.
#define NBX_FETCH(N, DT, i)                                                                \
  (nbx_esize(DT) == 1 ? uvec2(uint(N##_u8.v[i]), 0u)                                         \
   : nbx_esize(DT) == 2 ? uvec2(uint(N##_u16.v[i]), 0u)                                      \
   : nbx_esize(DT) == 4 ? uvec2(N##_u32.v[i], 0u) : N##_u64.v[i])

// The compute class is fixed per build (NBX_CLS_F/I/D/L): keeping the other classes out of
// the module keeps each pipeline's driver compile short (llvmpipe translates every function
// before specialization removes dead code). The backend picks the class: a cast (copy) runs
// in its input's class so the one rounding happens on the store; everything else in the
// class of compute_dtype.
bool is_scalar(int k) { return ((SCALAR_MASK >> k) & 1) != 0; }
bool reads(int k) { return k < NIN && !is_scalar(k); }

uvec2 compute(uvec2 r0, uvec2 r1, uvec2 r2, uint pos) {
#if NBX_CLS_F
  float a = is_scalar(0) ? uintBitsToFloat(P.scalars[0].z) : nbx_decF(IDT0, r0);
  float b = NIN < 2 ? 0.0 : is_scalar(1) ? uintBitsToFloat(P.scalars[1].z) : nbx_decF(IDT1, r1);
  float c = NIN < 3 ? 0.0 : is_scalar(2) ? uintBitsToFloat(P.scalars[2].z) : nbx_decF(IDT2, r2);
  return nbx_encF(ODT, opF(a, b, c, pos));
#elif NBX_CLS_I
  int a = is_scalar(0) ? int(P.scalars[0].z) : nbx_decI(IDT0, r0);
  int b = NIN < 2 ? 0 : is_scalar(1) ? int(P.scalars[1].z) : nbx_decI(IDT1, r1);
  int c = NIN < 3 ? 0 : is_scalar(2) ? int(P.scalars[2].z) : nbx_decI(IDT2, r2);
  return nbx_encI(ODT, opI(a, b, c, pos));
#elif NBX_CLS_D
  double a = is_scalar(0) ? packDouble2x32(P.scalars[0].xy) : nbx_decD(IDT0, r0);
  double b = NIN < 2 ? 0.0LF : is_scalar(1) ? packDouble2x32(P.scalars[1].xy) : nbx_decD(IDT1, r1);
  double c = NIN < 3 ? 0.0LF : is_scalar(2) ? packDouble2x32(P.scalars[2].xy) : nbx_decD(IDT2, r2);
  return nbx_encD(ODT, opD(a, b, c, pos));
#elif NBX_CLS_L
  int64_t a = is_scalar(0) ? int64_t(pack64(P.scalars[0].xy)) : nbx_decL(IDT0, r0);
  int64_t b = NIN < 2 ? 0l : is_scalar(1) ? int64_t(pack64(P.scalars[1].xy)) : nbx_decL(IDT1, r1);
  int64_t c = NIN < 3 ? 0l : is_scalar(2) ? int64_t(pack64(P.scalars[2].xy)) : nbx_decL(IDT2, r2);
  return nbx_encL(ODT, opL(a, b, c, pos));
#else
#error "define one of NBX_CLS_F, NBX_CLS_I, NBX_CLS_D, NBX_CLS_L"
#endif
}

uint stride_of(int k, uint d) { return P.strides[2 * k + int(d >> 2)][d & 3u]; }

// The vector path moves kLanes consecutive elements per work item, and every operand
// (of 2 bytes or wider) in whole 16-byte transactions: 8 bfloat16 = one uvec4, 8 float32 =
// two, 8 float64 = four; 8 bytes = one uvec2. NVIDIA reaches its copy bandwidth only with
// 16-byte accesses and several of them in flight per thread.
const int kLanes = 8;
#define NBX_LANES(T, N) T N[kLanes] = T[kLanes](0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u)

// The eight elements of chunk j of input k (the backend guarantees its element offset is a
// multiple of 8, so every access is aligned to its own width).
#define NBX_FETCH8(N, DT, j, lo, hi)                                                      \
  {                                                                                       \
    int s = nbx_esize(DT);                                                                \
    if (s == 1) {                                                                         \
      uvec2 w = N##_u64.v[(j)];                                                           \
      for (int t = 0; t < 4; ++t) {                                                       \
        lo[t] = (w.x >> (8 * t)) & 0xffu;                                                 \
        lo[t + 4] = (w.y >> (8 * t)) & 0xffu;                                             \
      }                                                                                   \
    } else if (s == 2) {                                                                  \
      uvec4 w = N##_u128.v[(j)];                                                          \
      for (int t = 0; t < 4; ++t) {                                                       \
        lo[2 * t] = w[t] & 0xffffu;                                                       \
        lo[2 * t + 1] = w[t] >> 16;                                                       \
      }                                                                                   \
    } else if (s == 4) {                                                                  \
      uvec4 p = N##_u128.v[2u * (j)], q = N##_u128.v[2u * (j) + 1u];                      \
      for (int t = 0; t < 4; ++t) {                                                       \
        lo[t] = p[t];                                                                     \
        lo[t + 4] = q[t];                                                                 \
      }                                                                                   \
    } else {                                                                              \
      for (int t = 0; t < 4; ++t) {                                                       \
        uvec4 p = N##_u128.v[4u * (j) + uint(t)];                                         \
        lo[2 * t] = p.x;                                                                  \
        hi[2 * t] = p.y;                                                                  \
        lo[2 * t + 1] = p.z;                                                              \
        hi[2 * t + 1] = p.w;                                                              \
      }                                                                                   \
    }                                                                                     \
  }

// One work item: kLanes consecutive elements on the vector path, otherwise one element
// (or the last 1-7 of the vector path). Loads and stores differ by path; the op itself is
// called from this one place, so the driver inlines it once.
void item(uint w) {
  const uint numel = P.head.x;
  NBX_LANES(uint, lo0);
  NBX_LANES(uint, hi0);
  NBX_LANES(uint, lo1);
  NBX_LANES(uint, hi1);
  NBX_LANES(uint, lo2);
  NBX_LANES(uint, hi2);
  NBX_LANES(uint, o_out);
  uint count = 1u;
  // Whole chunks only: the tail chunk takes the element-wise branch below.
  const bool vec = PATH == 2 && w < (numel >> 3);
  if (vec) {
    count = uint(kLanes);
    if (reads(0)) NBX_FETCH8(b0, IDT0, (P.offsets.y >> 3) + w, lo0, hi0)
    if (reads(1)) NBX_FETCH8(b1, IDT1, (P.offsets.z >> 3) + w, lo1, hi1)
    if (reads(2)) NBX_FETCH8(b2, IDT2, (P.offsets.w >> 3) + w, lo2, hi2)
  } else {
    uint first = PATH == 2 ? uint(kLanes) * w : w;
    count = PATH == 2 ? numel - first : 1u;
    // Constant trip counts with guards: the driver unrolls them, so every lane index is a
    // constant (a dynamic array index sends the lanes to local memory on NVIDIA).
    for (int t = 0; t < kLanes; ++t) {
      if (uint(t) >= count) break;
      uint e = first + uint(t);
      uvec4 o = P.offsets + uvec4(e);
      if (PATH == 0) {
        o = P.offsets;
        uint rest = e;
        for (int d = int(P.head.y) - 1; d >= 0; --d) {
          uint n = P.sizes[d >> 2][d & 3];
          uint idx = rest % n;
          rest /= n;
          o += idx * uvec4(stride_of(0, uint(d)), stride_of(1, uint(d)), stride_of(2, uint(d)),
                           stride_of(3, uint(d)));
        }
      }
      o_out[t] = o.x;
      uvec2 r;
      if (reads(0)) { r = NBX_FETCH(b0, IDT0, o.y); lo0[t] = r.x; hi0[t] = r.y; }
      if (reads(1)) { r = NBX_FETCH(b1, IDT1, o.z); lo1[t] = r.x; hi1[t] = r.y; }
      if (reads(2)) { r = NBX_FETCH(b2, IDT2, o.w); lo2[t] = r.x; hi2[t] = r.y; }
    }
  }
  NBX_LANES(uint, lo);
  NBX_LANES(uint, hi);
  const uint first = PATH == 2 ? uint(kLanes) * w : w;
  for (int t = 0; t < kLanes; ++t) {
    if (uint(t) >= count) break;
    uvec2 r = compute(uvec2(lo0[t], hi0[t]), uvec2(lo1[t], hi1[t]), uvec2(lo2[t], hi2[t]),
                      first + uint(t));
    lo[t] = r.x;
    hi[t] = r.y;
  }
  int s = nbx_esize(ODT);
  if (vec) {
    uint j = (P.offsets.x >> 3) + w;
    if (s == 1) {
      uvec2 v = uvec2(0u);
      for (int t = 0; t < 4; ++t) {
        v.x |= (lo[t] & 0xffu) << (8 * t);
        v.y |= (lo[t + 4] & 0xffu) << (8 * t);
      }
      bo_u64.v[j] = v;
    } else if (s == 2) {
      uvec4 v;
      for (int t = 0; t < 4; ++t) v[t] = (lo[2 * t] & 0xffffu) | (lo[2 * t + 1] << 16);
      bo_u128.v[j] = v;
    } else if (s == 4) {
      bo_u128.v[2u * j] = uvec4(lo[0], lo[1], lo[2], lo[3]);
      bo_u128.v[2u * j + 1u] = uvec4(lo[4], lo[5], lo[6], lo[7]);
    } else {
      for (int t = 0; t < 4; ++t)
        bo_u128.v[4u * j + uint(t)] = uvec4(lo[2 * t], hi[2 * t], lo[2 * t + 1], hi[2 * t + 1]);
    }
  } else {
    for (int t = 0; t < kLanes; ++t) {
      if (uint(t) >= count) break;
      uint i = o_out[t];
      if (s == 1) bo_u8.v[i] = uint8_t(lo[t]);
      else if (s == 2) bo_u16.v[i] = uint16_t(lo[t]);
      else if (s == 4) bo_u32.v[i] = lo[t];
      else bo_u64.v[i] = uvec2(lo[t], hi[t]);
    }
  }
}

void main() {
  const uint items = P.head.z, step = P.head.w;
  for (uint w = gl_GlobalInvocationID.x; w < items; w += step) item(w);
}
