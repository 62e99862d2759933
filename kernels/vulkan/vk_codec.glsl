// Element codecs: the raw bits of one stored element (uvec2: low word, high word) to and
// from the value of each compute class, for every nbx::DType.
//
// Classes: F = float32 arithmetic (float16, bfloat16, float32; bf16 is emulated this way),
// I = int32 arithmetic (bool, int8, uint8, int16, int32), D = float64 (NBX_F64 builds),
// L = int64 (NBX_I64 builds). Narrowing follows the team contract: float -> integer
// truncates toward zero, NaN -> 0, saturates at the target's range; integer -> integer
// wraps; float -> float16/bfloat16 rounds to nearest even, once.

int nbx_esize(int dt) {
  if (dt == DT_BOOL || dt == DT_INT8 || dt == DT_UINT8) return 1;
  if (dt == DT_INT16 || dt == DT_FLOAT16 || dt == DT_BFLOAT16) return 2;
  if (dt == DT_INT64 || dt == DT_FLOAT64) return 8;
  return 4;
}

bool nbx_is_float(int dt) {
  return dt == DT_FLOAT16 || dt == DT_BFLOAT16 || dt == DT_FLOAT32 || dt == DT_FLOAT64;
}

// float32 -> float16 bits, round to nearest even (packHalf2x16 leaves rounding open).
uint nbx_f32_to_f16(float f) {
  uint x = floatBitsToUint(f);
  uint sign = (x >> 16) & 0x8000u;
  uint ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (ax < 0x38800000u) {  // below 2^-14: a subnormal half; the scaled value is < 1024
    return sign | uint(roundEven(uintBitsToFloat(ax) * 16777216.0));
  }
  uint m = ax + 0xfffu + ((ax >> 13) & 1u);
  return sign | ((m - 0x38000000u) >> 13);
}

uint nbx_f32_to_bf16(float f) {
  uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return ((x >> 16) & 0x8000u) | 0x7fc0u;
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

int nbx_sat_int(float t, float lo, float hi_excl, int lo_i, int hi_i) {
  if (isnan(t)) return 0;
  if (t >= hi_excl) return hi_i;
  if (t <= lo) return lo_i;
  return int(trunc(t));
}

float nbx_decF(int dt, uvec2 r) {
  if (dt == DT_FLOAT32) return uintBitsToFloat(r.x);
  if (dt == DT_BFLOAT16) return uintBitsToFloat(r.x << 16);
  if (dt == DT_FLOAT16) return unpackHalf2x16(r.x).x;
  if (dt == DT_BOOL) return r.x != 0u ? 1.0 : 0.0;
  if (dt == DT_UINT8) return float(r.x & 0xffu);
  if (dt == DT_INT8) return float(bitfieldExtract(int(r.x), 0, 8));
  if (dt == DT_INT16) return float(bitfieldExtract(int(r.x), 0, 16));
  if (dt == DT_INT32) return float(int(r.x));
#if NBX_F64
  if (dt == DT_FLOAT64) return float(packDouble2x32(r));
#endif
#if NBX_I64
  if (dt == DT_INT64) return float(int64_t(pack64(r)));
#endif
  return kNaN;
}

uvec2 nbx_encF(int dt, float v) {
  if (dt == DT_FLOAT32) return uvec2(floatBitsToUint(v), 0u);
  if (dt == DT_BFLOAT16) return uvec2(nbx_f32_to_bf16(v), 0u);
  if (dt == DT_FLOAT16) return uvec2(nbx_f32_to_f16(v), 0u);
  if (dt == DT_BOOL) return uvec2(v != 0.0 ? 1u : 0u, 0u);
  if (dt == DT_UINT8) return uvec2(uint(nbx_sat_int(v, 0.0, 256.0, 0, 255)), 0u);
  if (dt == DT_INT8) return uvec2(uint(nbx_sat_int(v, -128.0, 128.0, -128, 127)), 0u);
  if (dt == DT_INT16) return uvec2(uint(nbx_sat_int(v, -32768.0, 32768.0, -32768, 32767)), 0u);
  if (dt == DT_INT32) {
    return uvec2(uint(nbx_sat_int(v, -2147483648.0, 2147483648.0, int(0x80000000u), 0x7fffffff)), 0u);
  }
#if NBX_F64
  if (dt == DT_FLOAT64) return unpackDouble2x32(double(v));
#endif
#if NBX_I64
  if (dt == DT_INT64) {
    if (isnan(v)) return uvec2(0u);
    if (v >= 9.223372036854775808e18) return uvec2(0xffffffffu, 0x7fffffffu);
    if (v <= -9.223372036854775808e18) return uvec2(0u, 0x80000000u);
    return unpack32(uint64_t(int64_t(v)));
  }
#endif
  return uvec2(0u);
}

int nbx_decI(int dt, uvec2 r) {
  if (dt == DT_INT32) return int(r.x);
  if (dt == DT_BOOL) return r.x != 0u ? 1 : 0;
  if (dt == DT_UINT8) return int(r.x & 0xffu);
  if (dt == DT_INT8) return bitfieldExtract(int(r.x), 0, 8);
  if (dt == DT_INT16) return bitfieldExtract(int(r.x), 0, 16);
  if (dt == DT_INT64) return int(r.x);  // wraps, like every integer narrowing
  // A float read as bool is truthiness (NaN is true); otherwise the saturating cast.
  if (nbx_is_float(dt) && CDT == DT_BOOL) return nbx_decF(dt, r) != 0.0 ? 1 : 0;
  if (nbx_is_float(dt)) return nbx_sat_int(nbx_decF(dt, r), -2147483648.0, 2147483648.0,
                                            int(0x80000000u), 0x7fffffff);
  return 0;
}

uvec2 nbx_encI(int dt, int v) {
  if (dt == DT_BOOL) return uvec2(v != 0 ? 1u : 0u, 0u);
  if (dt == DT_INT64) return uvec2(uint(v), v < 0 ? 0xffffffffu : 0u);
  if (dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_BFLOAT16) return nbx_encF(dt, float(v));
#if NBX_F64
  if (dt == DT_FLOAT64) return unpackDouble2x32(double(v));
#endif
  return uvec2(uint(v), 0u);  // the store keeps the low 8/16/32 bits: wraps
}

#if NBX_F64
double nbx_decD(int dt, uvec2 r) {
  if (dt == DT_FLOAT64) return packDouble2x32(r);
#if NBX_I64
  if (dt == DT_INT64) return double(int64_t(pack64(r)));
#endif
  if (nbx_is_float(dt)) return double(nbx_decF(dt, r));
  return double(nbx_decI(dt, r));
}

// double -> float with round-to-odd, so a second rounding to 16 bits rounds only once.
float nbx_f64_to_f32_odd(double d) {
  float f = float(d);
  if (isnan(f) || isinf(f) || double(f) == d) return f;
  uint b = floatBitsToUint(f);
  if ((b & 1u) == 0u) b = abs(double(f)) > abs(d) ? b - 1u : b + 1u;
  return uintBitsToFloat(b);
}

int nbx_sat_int_d(double t, double lo, double hi_excl, int lo_i, int hi_i) {
  if (isnan(t)) return 0;
  if (t >= hi_excl) return hi_i;
  if (t <= lo) return lo_i;
  return int(trunc(t));
}

uvec2 nbx_encD(int dt, double v) {
  if (dt == DT_FLOAT64) return unpackDouble2x32(v);
  if (dt == DT_FLOAT32) return uvec2(floatBitsToUint(float(v)), 0u);
  if (dt == DT_BFLOAT16) return uvec2(nbx_f32_to_bf16(nbx_f64_to_f32_odd(v)), 0u);
  if (dt == DT_FLOAT16) return uvec2(nbx_f32_to_f16(nbx_f64_to_f32_odd(v)), 0u);
  if (dt == DT_BOOL) return uvec2(v != 0.0LF ? 1u : 0u, 0u);
  if (dt == DT_UINT8) return uvec2(uint(nbx_sat_int_d(v, 0.0LF, 256.0LF, 0, 255)), 0u);
  if (dt == DT_INT8) return uvec2(uint(nbx_sat_int_d(v, -128.0LF, 128.0LF, -128, 127)), 0u);
  if (dt == DT_INT16) {
    return uvec2(uint(nbx_sat_int_d(v, -32768.0LF, 32768.0LF, -32768, 32767)), 0u);
  }
  if (dt == DT_INT32) {
    return uvec2(uint(nbx_sat_int_d(v, -2147483648.0LF, 2147483648.0LF, int(0x80000000u),
                                    0x7fffffff)), 0u);
  }
#if NBX_I64
  if (dt == DT_INT64) {
    if (isnan(v)) return uvec2(0u);
    if (v >= 9.223372036854775808e18LF) return uvec2(0xffffffffu, 0x7fffffffu);
    if (v <= -9.223372036854775808e18LF) return uvec2(0u, 0x80000000u);
    return unpack32(uint64_t(int64_t(v)));
  }
#endif
  return uvec2(0u);
}
#endif

#if NBX_I64
int64_t nbx_decL(int dt, uvec2 r) {
  if (dt == DT_INT64) return int64_t(pack64(r));
#if NBX_F64
  if (dt == DT_FLOAT64) {
    double d = packDouble2x32(r);
    if (isnan(d)) return 0l;
    if (d >= 9.223372036854775808e18LF) return 0x7fffffffffffffffl;
    if (d <= -9.223372036854775808e18LF) return int64_t(0x8000000000000000ul);
    return int64_t(d);
  }
#endif
  if (nbx_is_float(dt)) {
    float f = nbx_decF(dt, r);
    if (isnan(f)) return 0l;
    if (f >= 9.223372036854775808e18) return 0x7fffffffffffffffl;
    if (f <= -9.223372036854775808e18) return int64_t(0x8000000000000000ul);
    return int64_t(f);
  }
  return int64_t(nbx_decI(dt, r));
}

uvec2 nbx_encL(int dt, int64_t v) {
  if (dt == DT_INT64) return unpack32(uint64_t(v));
  if (dt == DT_BOOL) return uvec2(v != 0l ? 1u : 0u, 0u);
#if NBX_F64
  if (dt == DT_FLOAT64) return unpackDouble2x32(double(v));
#endif
  if (dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_BFLOAT16) return nbx_encF(dt, float(v));
  return uvec2(uint(v & 0xffffffffl), 0u);  // wraps
}
#endif
