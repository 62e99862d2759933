#version 450
// Kernel family "join" (nbx::abi::JoinParams; the CUDA twin: kernels/gpu/join_kernels.cu):
// cat's inputs copied bit for bit into their slices of the output, up to five inputs a
// dispatch (bindings 2-6; backends/vulkan/vk_join.cpp cuts a launch into dispatches). Each
// input has its own run of workgroups, as many as its size needs, so one dispatch covers them
// all with no partial last workgroup wave per input; a workgroup finds its input from the
// first-block numbers (uniform across it) and takes UNROLL words an invocation, loaded before
// any is stored.
//  - FLAT = 1 (kJoinFlat): each input is rows of contiguous UNIT-byte words (the widest of
//    16/8/4/2/1 that divides every row start and row of the dispatch's inputs: vk_join.cpp);
//    a word's row by one division unless the rows lie end to end in both operands.
//  - FLAT = 0 (kJoinStrided): UNIT-byte elements through any strides, coordinates from the
//    input's sizes (the output's, with its extent along dim).
// Offsets and strides in the uniform block are in UNIT words, all within 32 bits.
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint UNIT = 16u;  // bytes a word
layout(constant_id = 2) const uint FLAT = 1u;
const uint UNROLL = 8u;
const uint kMaxInputs = 5u;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;  // x inputs, y blocks in all, z workgroups in the grid, w ndim (strided)
  uvec4 misc;  // x dim (strided), y the output's row stride (flat), z rows (flat)
  uvec4 sizes[2];  // strided: the output's sizes [d / 4][d % 4]
  uvec4 out_strides[2];
  uvec4 info[5];   // input k: x first block, y words (flat) / elements (strided), z row words
                   // (flat) / extent along dim (strided), w its row stride (flat)
  uvec4 place[5];  // input k: x its first word, y the output word its first word goes to,
                   // z 1 where its rows lie end to end in both operands (flat)
  uvec4 strides[10];  // input k's strides (strided): [2k + d / 4][d % 4]
} P;

layout(set = 0, binding = 1) writeonly buffer O8 { uint8_t v[]; } o8;
layout(set = 0, binding = 1) writeonly buffer O16 { uint16_t v[]; } o16;
layout(set = 0, binding = 1) writeonly buffer O32 { uint v[]; } o32;
layout(set = 0, binding = 1) writeonly buffer O64 { uvec2 v[]; } o64;
layout(set = 0, binding = 1) writeonly buffer O128 { uvec4 v[]; } o128;
// Each input binding seen as arrays of every word width (one is used: UNIT).
#define NBX_INPUT(B, N)                                                  \
  layout(set = 0, binding = B) readonly buffer N##_8 { uint8_t v[]; } N##8;    \
  layout(set = 0, binding = B) readonly buffer N##_16 { uint16_t v[]; } N##16; \
  layout(set = 0, binding = B) readonly buffer N##_32 { uint v[]; } N##32;     \
  layout(set = 0, binding = B) readonly buffer N##_64 { uvec2 v[]; } N##64;    \
  layout(set = 0, binding = B) readonly buffer N##_128 { uvec4 v[]; } N##128;
NBX_INPUT(2, a)
NBX_INPUT(3, b)
NBX_INPUT(4, c)
NBX_INPUT(5, d)
NBX_INPUT(6, e)

// A word of any width from input N, carried as a uvec4 (the unused lanes are zero).
// Statements, not ?:, so no width but UNIT's is ever loaded; (N##8) in parentheses: "8.v"
// would be one preprocessing number.
#define NBX_READ_FN(N)                                              \
  uvec4 read_##N(uint s) {                                          \
    if (UNIT == 1u) return uvec4(uint((N##8).v[s]), 0u, 0u, 0u);    \
    if (UNIT == 2u) return uvec4(uint((N##16).v[s]), 0u, 0u, 0u);   \
    if (UNIT == 4u) return uvec4((N##32).v[s], 0u, 0u, 0u);         \
    if (UNIT == 8u) return uvec4((N##64).v[s], 0u, 0u);             \
    return (N##128).v[s];                                           \
  }
NBX_READ_FN(a)
NBX_READ_FN(b)
NBX_READ_FN(c)
NBX_READ_FN(d)
NBX_READ_FN(e)

void write_word(uint o, uvec4 w) {
  if (UNIT == 1u) o8.v[o] = uint8_t(w.x);
  else if (UNIT == 2u) o16.v[o] = uint16_t(w.x);
  else if (UNIT == 4u) o32.v[o] = w.x;
  else if (UNIT == 8u) o64.v[o] = w.xy;
  else o128.v[o] = w;
}

uint at(uvec4 a[2], uint d) { return a[d >> 2][d & 3u]; }
uint stride_of(uint k, uint d) { return P.strides[2u * k + (d >> 2)][d & 3u]; }

// Word t of input k: its word in the input (s) and in the output (o).
void locate_flat(uint k, uint t, out uint s, out uint o) {
  const uint row_words = P.info[k].z;
  if (P.place[k].z == 1u) {
    s = P.place[k].x + t;
    o = P.place[k].y + t;
    return;
  }
  const uint r = t / row_words, col = t - r * row_words;
  s = P.place[k].x + r * P.info[k].w + col;
  o = P.place[k].y + r * P.misc.y + col;
}

void locate_strided(uint k, uint e, out uint s, out uint o) {
  s = P.place[k].x;
  o = P.place[k].y;
  uint rest = e;
  const uint ndim = P.head.w, dim = P.misc.x;
  for (uint d = ndim - 1u; d > 0u; --d) {
    const uint size = d == dim ? P.info[k].z : at(P.sizes, d);
    const uint q = rest / size, coord = rest - q * size;
    rest = q;
    s += coord * stride_of(k, d);
    o += coord * at(P.out_strides, d);
  }
  s += rest * stride_of(k, 0u);
  o += rest * at(P.out_strides, 0u);
}

// Block b of input k (its UNROLL words an invocation), the input's binding N: a copy of the
// body per binding, so no load sits under a branch on k (uniform, but one a word kept the
// loads of an invocation from being issued together).
#define NBX_COPY_BLOCK(N)                                                               \
  {                                                                                     \
    const uint count = P.info[k].y, first = (b - P.info[k].x) * per_block;              \
    uvec4 w[UNROLL];                                                                    \
    uint o[UNROLL];                                                                     \
    [[unroll]] for (uint j = 0u; j < UNROLL; ++j) {                                     \
      const uint t = first + j * wg + gl_LocalInvocationID.x;                           \
      uint s, to;                                                                       \
      if (FLAT == 1u)                                                                   \
        locate_flat(k, min(t, count - 1u), s, to);                                      \
      else                                                                              \
        locate_strided(k, min(t, count - 1u), s, to);                                   \
      w[j] = read_##N(s);                                                               \
      o[j] = t < count ? to : 0xffffffffu;                                              \
    }                                                                                   \
    [[unroll]] for (uint j = 0u; j < UNROLL; ++j)                                       \
      if (o[j] != 0xffffffffu) write_word(o[j], w[j]);                                  \
  }

void main() {
  const uint wg = gl_WorkGroupSize.x, per_block = wg * UNROLL;
  for (uint b = gl_WorkGroupID.x; b < P.head.y; b += P.head.z) {
    uint k = 0u;
    while (k + 1u < P.head.x && b >= P.info[k + 1u].x) ++k;
    // Every load issued, unconditionally (a word past the input's end reads its last word),
    // before any store: loads under a branch each were issued one at a time (the CUDA select
    // kernel's lesson, kernels/gpu/sort_select_kernels.cu).
    switch (k) {
      case 0u: NBX_COPY_BLOCK(a) break;
      case 1u: NBX_COPY_BLOCK(b) break;
      case 2u: NBX_COPY_BLOCK(c) break;
      case 3u: NBX_COPY_BLOCK(d) break;
      default: NBX_COPY_BLOCK(e) break;
    }
  }
}
