// Exact comparisons of stored elements of dtype `dt` (a DT_* code of nbx_vk_codes.glsl),
// shared by scatter.comp (max/min) and search.comp: the raw bits, read as (lo, hi) words
// zero-extended from the element's size, go through sort_keys.glsl's order-preserving key,
// so every dtype compares on integer keys — floats as IEEE (-0 equal to +0, NaN unordered),
// integers by value with their signedness (bool and uint8 unsigned), int64 and float64 as
// word pairs. No float arithmetic, hence no 64-bit shader types and no subnormal flushing
// by a driver: a bfloat16 or float32 subnormal compares as itself on every device.
// Needs sort_keys.glsl and nbx_vk_codes.glsl included first.

uint nbx_cmp_bits(int dt) {
  if (dt == DT_BOOL || dt == DT_INT8 || dt == DT_UINT8) return 8u;
  if (dt == DT_INT16 || dt == DT_FLOAT16 || dt == DT_BFLOAT16) return 16u;
  if (dt == DT_INT64 || dt == DT_FLOAT64) return 64u;
  return 32u;
}

bool nbx_cmp_floating(int dt) {
  return dt == DT_FLOAT16 || dt == DT_BFLOAT16 || dt == DT_FLOAT32 || dt == DT_FLOAT64;
}

// The key of `raw`: unsigned, compared as (hi, lo); every NaN maps to all ones, which no
// other value reaches (+inf is below it).
uvec2 nbx_cmp_key(int dt, uvec2 raw) {
  const uint kind = nbx_cmp_floating(dt) ? 2u : (dt == DT_BOOL || dt == DT_UINT8 ? 0u : 1u);
  const uint mantissa = dt == DT_FLOAT16    ? 10u
                        : dt == DT_BFLOAT16 ? 7u
                        : dt == DT_FLOAT32  ? 23u
                                            : 52u;
  return sort_key(raw, nbx_cmp_bits(dt), kind, mantissa, false);
}

// Whether a key is a NaN's.
bool nbx_key_nan(int dt, uvec2 k) {
  if (!nbx_cmp_floating(dt)) return false;
  const uint bits = nbx_cmp_bits(dt);
  if (bits == 64u) return k == uvec2(0xffffffffu);
  return k.x == (bits == 32u ? 0xffffffffu : (1u << bits) - 1u);
}

// Keys of non-NaN values: a < b.
bool nbx_key_less(uvec2 a, uvec2 b) {
  return a.y != b.y ? a.y < b.y : a.x < b.x;
}

bool nbx_is_nan_bits(int dt, uvec2 raw) {
  return nbx_key_nan(dt, nbx_cmp_key(dt, raw));
}

// IEEE a < b of the elements' values: false when either is NaN.
bool nbx_less_bits(int dt, uvec2 a, uvec2 b) {
  const uvec2 ka = nbx_cmp_key(dt, a), kb = nbx_cmp_key(dt, b);
  return !nbx_key_nan(dt, ka) && !nbx_key_nan(dt, kb) && nbx_key_less(ka, kb);
}
