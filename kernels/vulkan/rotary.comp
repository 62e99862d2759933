#version 450
// Kernel family "rotary" (nbx::abi::RotaryParams; semantics backends/host/host_rotary.cpp,
// the CUDA twin kernels/gpu/rotary_kernels.cu): rotary position embedding in place on q and
// k. One invocation per (token, head, pair), pairs fastest, q's heads before k's; each owns
// its two elements, so the update in place needs no barrier. The token's position is read as
// (lo, hi) words (int64 as a word pair, int32 sign-extended), so no 64-bit integer type is
// needed; one outside [0, max_position) is written to the fault record (the first one wins)
// and nothing is touched, no cache row out of range is read.
//
// Built twice: rotary (float32 arithmetic: float16, bfloat16, float32) and rotary_f64
// (NBX_F64: float64 q and k, arithmetic in float64). Elements are read and written through
// vk_codec.glsl (float16 rounds to nearest even once, bfloat16 likewise). Offsets and strides
// are in elements of their own buffer and fit the 32-bit index path (vk_rotary.cpp).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require

#include "nbx_vk_codes.glsl"

const int kFaultIndexOutOfRange = 1;  // abi::kFaultIndexOutOfRange

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int QDT = DT_FLOAT32;      // q's and k's dtype
layout(constant_id = 2) const int CACHE_DT = DT_FLOAT32;  // float32 or QDT
layout(constant_id = 3) const uint WIDE = 1u;             // int64 positions
layout(constant_id = 4) const uint STYLE = 0u;            // 0 rotate half, 1 interleaved

const int CDT = DT_FLOAT32;  // vk_codec.glsl's compute dtype (it reads no integers here)
#define kNaN uintBitsToFloat(0x7fc00000u)
#include "vk_codec.glsl"

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;   // x work items, y token dims, z invocations in the grid, w pairs (rotary_dim / 2)
  uvec4 heads;  // x q heads, y k heads, z max_position, w the fault record's op
  uvec4 q;      // x offset, y head stride, z dim stride
  uvec4 k;      // x offset, y head stride, z dim stride
  uvec4 cache;  // x offset, y row stride, z column stride, w the positions' offset
  uvec4 sizes[2];  // the token dims, [d / 4][d % 4]
  uvec4 q_strides[2];
  uvec4 k_strides[2];
  uvec4 pos_strides[2];
} P;

layout(set = 0, binding = 1) buffer Q16 { uint16_t v[]; } q16;
layout(set = 0, binding = 1) buffer Q32 { uint v[]; } q32;
layout(set = 0, binding = 1) buffer Q64 { uvec2 v[]; } q64;
layout(set = 0, binding = 2) buffer K16 { uint16_t v[]; } k16;
layout(set = 0, binding = 2) buffer K32 { uint v[]; } k32;
layout(set = 0, binding = 2) buffer K64 { uvec2 v[]; } k64;
layout(set = 0, binding = 3) readonly buffer Pos { uint v[]; } pos;
layout(set = 0, binding = 4) readonly buffer C16 { uint16_t v[]; } c16;
layout(set = 0, binding = 4) readonly buffer C32 { uint v[]; } c32;
layout(set = 0, binding = 4) readonly buffer C64 { uvec2 v[]; } c64;
layout(set = 0, binding = 7) coherent buffer Fault { uint w[8]; } fault_rec;

#if NBX_F64
#define ACC double
ACC dec(int dt, uvec2 r) { return nbx_decD(dt, r); }
uvec2 enc(int dt, ACC v) { return nbx_encD(dt, v); }
#else
#define ACC float
ACC dec(int dt, uvec2 r) { return nbx_decF(dt, r); }
uvec2 enc(int dt, ACC v) { return nbx_encF(dt, v); }
#endif

uint at(uvec4 a[2], uint d) { return a[d >> 2][d & 3u]; }

uvec2 load_x(bool is_q, uint i) {
  const int s = nbx_esize(QDT);
  if (is_q) {
    if (s == 2) return uvec2(uint(q16.v[i]), 0u);
    if (s == 4) return uvec2(q32.v[i], 0u);
    return q64.v[i];
  }
  if (s == 2) return uvec2(uint(k16.v[i]), 0u);
  if (s == 4) return uvec2(k32.v[i], 0u);
  return k64.v[i];
}

void store_x(bool is_q, uint i, uvec2 r) {
  const int s = nbx_esize(QDT);
  if (is_q) {
    if (s == 2) q16.v[i] = uint16_t(r.x);
    else if (s == 4) q32.v[i] = r.x;
    else q64.v[i] = r;
  } else {
    if (s == 2) k16.v[i] = uint16_t(r.x);
    else if (s == 4) k32.v[i] = r.x;
    else k64.v[i] = r;
  }
}

uvec2 load_cache(uint i) {
  const int s = nbx_esize(CACHE_DT);
  if (s == 2) return uvec2(uint(c16.v[i]), 0u);
  if (s == 4) return uvec2(c32.v[i], 0u);
  return c64.v[i];
}

void record_fault(uint lo, uint hi, uint token) {
  if (atomicCompSwap(fault_rec.w[0], 0u, uint(kFaultIndexOutOfRange)) == 0u) {
    fault_rec.w[1] = P.heads.w;
    fault_rec.w[2] = lo;  // the position, 64-bit little-endian
    fault_rec.w[3] = hi;
    fault_rec.w[4] = P.heads.z;  // the bound
    fault_rec.w[5] = 0u;
    fault_rec.w[6] = token;
    fault_rec.w[7] = 0u;
  }
}

void main() {
  const uint n = P.head.x, ndim = P.head.y, pairs = P.head.w;
  const uint q_heads = P.heads.x, heads = P.heads.x + P.heads.y;
  for (uint e = gl_GlobalInvocationID.x; e < n; e += P.head.z) {
    uint rest = e;
    const uint i = rest % pairs;
    rest /= pairs;
    const uint head = rest % heads;
    const uint token = rest / heads;
    rest = token;
    const bool is_q = head < q_heads;
    uint x = is_q ? P.q.x : P.k.x, po = P.cache.w;
    for (uint d = ndim; d-- > 0u;) {
      const uint size = at(P.sizes, d);
      const uint c = rest % size;
      rest /= size;
      x += c * (is_q ? at(P.q_strides, d) : at(P.k_strides, d));
      po += c * at(P.pos_strides, d);
    }
    const uint lo = WIDE == 1u ? pos.v[2u * po] : pos.v[po];
    const uint hi = WIDE == 1u ? pos.v[2u * po + 1u] : (int(lo) < 0 ? 0xffffffffu : 0u);
    if (hi != 0u || lo >= P.heads.z) {
      record_fault(lo, hi, token);
      continue;
    }
    const uint row = P.cache.x + lo * P.cache.y;
    const ACC c = dec(CACHE_DT, load_cache(row + i * P.cache.z));
    const ACC s = dec(CACHE_DT, load_cache(row + (pairs + i) * P.cache.z));
    x += is_q ? head * P.q.y : (head - q_heads) * P.k.y;
    const uint ds = is_q ? P.q.z : P.k.z;
    const uint e1 = x + (STYLE == 0u ? i : 2u * i) * ds;
    const uint e2 = x + (STYLE == 0u ? i + pairs : 2u * i + 1u) * ds;
    const ACC x1 = dec(QDT, load_x(is_q, e1)), x2 = dec(QDT, load_x(is_q, e2));
    store_x(is_q, e1, enc(QDT, x1 * c - x2 * s));
    store_x(is_q, e2, enc(QDT, x2 * c + x1 * s));
  }
}
