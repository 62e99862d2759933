#version 450
// Kernel family "fill" (nbx::abi::FillParams; semantics backends/host/host_fill.cpp):
// arange and linspace compute element i from its index, triu/tril copy an element's bits
// where it lies on the kept side of the diagonal of the last two dims and write zero bits
// elsewhere (+0, 0 or false in every dtype); eye writes the bits of 1 in the output's dtype
// (from the backend, in `start`) on a matrix's diagonal and zero bits elsewhere.
//
// MODE (specialization constant): 0 triangle, 1 int32 range, 2 int64 range (NBX_I64),
// 3 float range in float32 pairs (devices without float64), 4 float64 range (NBX_F64), 5 eye.
// The backend takes float64 wherever the device has it, whatever the wrapper's compute
// dtype: the host computes start + i * step in float64 and rounds once, and so does this.
// Without float64, a value is a float32 pair (hi + lo, ~44 bits) rounded once at the end.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#if NBX_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

#include "nbx_vk_codes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int MODE = 0;
layout(constant_id = 2) const int ODT = DT_FLOAT32;
layout(constant_id = 3) const int LINSPACE = 0;
layout(constant_id = 4) const int TRIU = 0;
const int CDT = DT_FLOAT32;  // read by vk_codec.glsl's integer decoder only

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;          // x numel, y ndim, z invocations in the grid, w linspace's n / 2
  uvec4 sizes[2];      // [d / 4][d % 4]
  uvec4 out_strides[2];
  uvec4 in_strides[2];
  uvec4 offsets;       // x out, y in, z diagonal (int32, clamped), w n - 1
  uvec4 start;         // xy 64-bit payload (float64 or int64 bits), z hi, w lo (float32 pair / int32)
  uvec4 step;
  uvec4 end_;
} P;

layout(set = 0, binding = 1) writeonly buffer O8 { uint8_t v[]; } o8;
layout(set = 0, binding = 1) writeonly buffer O16 { uint16_t v[]; } o16;
layout(set = 0, binding = 1) writeonly buffer O32 { uint v[]; } o32;
layout(set = 0, binding = 1) writeonly buffer O64 { uvec2 v[]; } o64;
layout(set = 0, binding = 2) readonly buffer I8 { uint8_t v[]; } i8;
layout(set = 0, binding = 2) readonly buffer I16 { uint16_t v[]; } i16;
layout(set = 0, binding = 2) readonly buffer I32 { uint v[]; } i32;
layout(set = 0, binding = 2) readonly buffer I64 { uvec2 v[]; } i64;

#define kNaN uintBitsToFloat(0x7fc00000u)
#define kInf uintBitsToFloat(0x7f800000u)

#include "vk_codec.glsl"

void store(uint off, uvec2 bits) {
  int s = nbx_esize(ODT);
  if (s == 1) o8.v[off] = uint8_t(bits.x);
  else if (s == 2) o16.v[off] = uint16_t(bits.x);
  else if (s == 4) o32.v[off] = bits.x;
  else o64.v[off] = bits;
}

// ---- float32 pairs: exact sums and products of float32 (Dekker, Knuth) ----
vec2 two_sum(float a, float b) {
  precise float s = a + b;
  precise float bb = s - a;
  precise float e = (a - (s - bb)) + (b - bb);
  return vec2(s, e);
}
vec2 split(float a) {
  precise float c = 4097.0 * a;
  precise float h = c - (c - a);
  precise float l = a - h;
  return vec2(h, l);
}
vec2 two_prod(float a, float b) {
  precise float p = a * b;
  vec2 x = split(a), y = split(b);
  precise float e = ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y;
  return vec2(p, e);
}
// (base.hi + base.lo) + sign * k * (d.hi + d.lo), k < 2^31, as a float32 pair: k splits
// into two parts of at most 19 and 12 bits, so both products with d.hi are exact pairs.
vec2 pair_axpy(vec2 base, vec2 d, uint k, float sign) {
  float kh = float(k & 0xfffff000u), kl = float(k & 0xfffu);  // both exact
  vec2 p1 = two_prod(kh, d.x), p2 = two_prod(kl, d.x);
  precise float small = (kh + kl) * d.y;
  vec2 s = two_sum(base.x, sign * p1.x);
  vec2 t = two_sum(s.x, sign * p2.x);
  precise float lo = (s.y + t.y) + (base.y + sign * ((p1.y + p2.y) + small));
  return two_sum(t.x, lo);
}
// The pair rounded as its exact sum would be for a float store, or truncated for an integer.
uvec2 enc_pair(vec2 v) {
  if (nbx_is_float(ODT)) return nbx_encF(ODT, v.x + v.y);
  float t = trunc(v.x);
  if (t == v.x) {  // hi is whole: lo decides which side of it the exact value lies
    if (v.y < 0.0 && v.x > 0.0) t -= 1.0;
    if (v.y > 0.0 && v.x < 0.0) t += 1.0;
  }
  return nbx_encF(ODT, t);
}

void range_item(uint i) {
  const uint off = P.offsets.x + i * P.out_strides[0].x;
  const bool upper = LINSPACE != 0 && i >= P.head.w;  // the half counted down from end
  const uint k = upper ? P.offsets.w - i : i;
  if (MODE == 1) {
    store(off, nbx_encI(ODT, int(P.start.z + k * P.step.z)));  // wraps like the host's int64
  } else if (MODE == 3) {
    vec2 base = upper ? uintBitsToFloat(P.end_.zw) : uintBitsToFloat(P.start.zw);
    store(off, enc_pair(pair_axpy(base, uintBitsToFloat(P.step.zw), k, upper ? -1.0 : 1.0)));
  }
#if NBX_I64
  else if (MODE == 2) {
    uint64_t v = pack64(P.start.xy) + uint64_t(k) * pack64(P.step.xy);
    store(off, nbx_encL(ODT, int64_t(v)));
  }
#endif
#if NBX_F64
  else if (MODE == 4) {
    precise double t = double(k) * packDouble2x32(P.step.xy);
    precise double v = upper ? packDouble2x32(P.end_.xy) - t : packDouble2x32(P.start.xy) + t;
    store(off, nbx_encD(ODT, v));
  }
#endif
}

void triangle_item(uint e) {
  uint o = P.offsets.x, s = P.offsets.y, rest = e;
  int row = 0, col = 0;
  for (int d = int(P.head.y) - 1; d >= 0; --d) {
    uint n = P.sizes[d >> 2][d & 3];
    uint c = rest % n;
    rest /= n;
    o += c * P.out_strides[d >> 2][d & 3];
    s += c * P.in_strides[d >> 2][d & 3];
    if (d == int(P.head.y) - 1) col = int(c);
    if (d == int(P.head.y) - 2) row = int(c);
  }
  const int diff = col - row, diag = int(P.offsets.z);
  const bool keep = TRIU != 0 ? diff >= diag : diff <= diag;
  int sz = nbx_esize(ODT);
  if (sz == 1) o8.v[o] = keep ? i8.v[s] : uint8_t(0u);
  else if (sz == 2) o16.v[o] = keep ? i16.v[s] : uint16_t(0u);
  else if (sz == 4) o32.v[o] = keep ? i32.v[s] : 0u;
  else o64.v[o] = keep ? i64.v[s] : uvec2(0u);
}

void eye_item(uint e) {
  const uint cols = P.sizes[0].y, row = e / cols, col = e % cols;
  store(P.offsets.x + row * P.out_strides[0].x + col * P.out_strides[0].y,
        row == col ? P.start.xy : uvec2(0u));
}

void main() {
  const uint n = P.head.x, step = P.head.z;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    if (MODE == 0) triangle_item(i);
    else if (MODE == 5) eye_item(i);
    else range_item(i);
  }
}
