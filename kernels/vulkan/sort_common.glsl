// What the sort shaders share (nbx::abi::SortParams; vk_sort.cpp fills the
// block): the uniform block, the bindings, element reads and writes of ITEM bytes through
// aliased views (8-byte elements and int64 indices as word pairs: no 64-bit shader types),
// and the row offsets.
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITEM = 4u;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;     // x rows, y row_len, z outer_ndim, w workgroups in the grid
  uvec4 key;      // x bits, y kind (0 unsigned/bool, 1 signed, 2 floating), z mantissa, w descending
  uvec4 strides;  // x input row stride, y values row stride, z indices row stride
  uvec4 offsets;  // x input, y values, z indices
  uvec4 misc;     // rows: x segment, y log2(segment), z tile; select: x k;
                  // onesweep: x tiles per row, y pass, z histogram tiles per workgroup
  uvec4 sizes[2];
  uvec4 in_strides[2];
  uvec4 values_strides[2];
  uvec4 indices_strides[2];
} P;

layout(set = 0, binding = 1) writeonly buffer V8 { uint8_t v[]; } v8;
layout(set = 0, binding = 1) writeonly buffer V16 { uint16_t v[]; } v16;
layout(set = 0, binding = 1) writeonly buffer V32 { uint v[]; } v32;
layout(set = 0, binding = 1) writeonly buffer V64 { uvec2 v[]; } v64;
layout(set = 0, binding = 2) writeonly buffer Indices { uvec2 v[]; } indices;
layout(set = 0, binding = 3) readonly buffer S8 { uint8_t v[]; } s8;
layout(set = 0, binding = 3) readonly buffer S16 { uint16_t v[]; } s16;
layout(set = 0, binding = 3) readonly buffer S32 { uint v[]; } s32;
layout(set = 0, binding = 3) readonly buffer S64 { uvec2 v[]; } s64;

uint at(uvec4 a[2], uint d) { return a[d >> 2][d & 3u]; }

uvec2 read_input(uint e) {
  if (ITEM == 1u) return uvec2(uint(s8.v[e]), 0u);
  if (ITEM == 2u) return uvec2(uint(s16.v[e]), 0u);
  if (ITEM == 4u) return uvec2(s32.v[e], 0u);
  return s64.v[e];
}

// Element `dv` of the values copied from the input's element `src`, bit for bit.
void write_out_value(uint dv, uint src) {
  if (ITEM == 1u) v8.v[dv] = s8.v[src];
  else if (ITEM == 2u) v16.v[dv] = s16.v[src];
  else if (ITEM == 4u) v32.v[dv] = s32.v[src];
  else v64.v[dv] = s64.v[src];
}

// The sorted element `j` of a row: its value copied from the input's element `from`.
void write_out(uvec3 row, uint j, uint from) {
  write_out_value(row.y + j * P.strides.y, row.x + from * P.strides.x);
  indices.v[row.z + j * P.strides.z] = uvec2(from, 0u);
}

// The first element of row `r` in the input, the values and the indices.
uvec3 row_offsets(uint r) {
  uvec3 o = P.offsets.xyz;
  for (uint d = P.head.z; d-- > 0u;) {
    const uint size = at(P.sizes, d);
    const uint c = r % size;
    r /= size;
    o += c * uvec3(at(P.in_strides, d), at(P.values_strides, d), at(P.indices_strides, d));
  }
  return o;
}

uvec2 key_of(uvec3 row, uint j) {
  return sort_key(read_input(row.x + j * P.strides.x), P.key.x, P.key.y, P.key.z, P.key.w != 0u);
}

// The element's bits (lo, hi) back from its key where the key determines them — the inverse
// of sort_key for P.key's dtype: every key but a float's NaN key (payload and sign not kept)
// and zero key (-0 or +0). False for those: the caller copies the element by position.
bool element_of_key(uvec2 key, out uvec2 raw) {
  const uint bits = P.key.x, kind = P.key.y;
  raw = uvec2(0u);
  if (bits == 64u) {
    if (P.key.w != 0u) key = ~key;
    if (kind == 2u) {
      if (key == uvec2(0xffffffffu) || key == uvec2(0u, 0x80000000u)) return false;
      raw = (key.y & 0x80000000u) != 0u ? uvec2(key.x, key.y ^ 0x80000000u) : ~key;
    } else {
      raw = kind == 1u ? uvec2(key.x, key.y ^ 0x80000000u) : key;
    }
    return true;
  }
  const uint mask = bits == 32u ? 0xffffffffu : (1u << bits) - 1u;
  const uint sign = 1u << (bits - 1u);
  uint k = P.key.w != 0u ? ~key.x & mask : key.x;
  if (kind == 2u) {
    if (k == mask || k == sign) return false;
    k = (k & sign) != 0u ? k ^ sign : ~k & mask;
  } else if (kind == 1u) {
    k ^= sign;
  }
  raw = uvec2(k, 0u);
  return true;
}

// Element `dv` of the values set to the bits `raw`.
void write_value(uint dv, uvec2 raw) {
  if (ITEM == 1u) v8.v[dv] = uint8_t(raw.x);
  else if (ITEM == 2u) v16.v[dv] = uint16_t(raw.x);
  else if (ITEM == 4u) v32.v[dv] = raw.x;
  else v64.v[dv] = raw;
}
