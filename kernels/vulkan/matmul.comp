#version 450
// Kernel family "matmul", variant tiled (nbx::abi::kMatmulTiled):
//   out[b] = alpha * A[b] @ B[b] + beta * addend[b]
// over broadcast batches and arbitrary row/column strides (a transposed operand is just
// swapped strides), every dtype the wrapper sends.
//
// One workgroup of 256 invocations (a 16 x 16 grid) computes a TM x TN tile of one batch
// entry; each invocation a RM x RN register micro-tile (RM = TM / 16, RN = TN / 16: 8 x 8 for
// the 128 x 128 tile) at rows ty + 16 i and columns tx + 16 j, so neighbouring invocations
// read neighbouring shared-memory words and write neighbouring output columns. A and B
// arrive in TM x TK and TK x TN tiles through shared memory, already decoded to the
// accumulate type; while one tile is multiplied, the next one's raw words are in flight
// into registers (decoded only when stored, so the loads do not stall the products).
//
// Built once per compute class: NBX_CLS_F (float16/bfloat16/float32 operands, float32
// accumulation; half types are read as 16-bit words, no shaderFloat16 needed), NBX_CLS_I
// (int8..int32: int32 arithmetic, which wraps exactly like the narrower dtypes once the
// store truncates), NBX_CLS_D (float64) and NBX_CLS_L (int64). Tiles, dtypes, the load
// walks and the addend are specialization constants; parameters arrive in a uniform
// block translated by backends/vulkan/vk_matmul.cpp (32-bit sizes, strides, offsets: the
// backend refuses operands past 2^31 elements).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#if NBX_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

#include "nbx_vk_codes.glsl"

layout(local_size_x_id = 0) in;  // 256, the 16 x 16 grid
layout(constant_id = 1) const int TM = 64;
layout(constant_id = 2) const int TN = 64;
layout(constant_id = 3) const int TK = 16;
layout(constant_id = 4) const int IDT = DT_FLOAT32;  // A and B
layout(constant_id = 5) const int ODT = DT_FLOAT32;
layout(constant_id = 6) const int XDT = DT_FLOAT32;  // addend
layout(constant_id = 7) const bool USE_ADDEND = false;  // has an addend and beta != 0
// Which dim of a tile consecutive invocations walk when loading: k (A's column stride,
// B's row stride is the smaller one) or the other. Walking the unit-stride dim coalesces.
layout(constant_id = 8) const bool A_WALK_K = true;
layout(constant_id = 9) const bool B_WALK_K = false;
// Four consecutive elements per load along the walked dim (unit stride, 4-aligned).
layout(constant_id = 10) const bool A_VEC = false;
layout(constant_id = 11) const bool B_VEC = false;
layout(constant_id = 12) const int CDT = DT_FLOAT32;  // read by vk_codec.glsl

const int kThreads = 256;
const int RM = TM / 16;
const int RN = TN / 16;
const int EA = TM * TK / kThreads;  // A elements each invocation loads per tile
const int EB = TK * TN / kThreads;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 dims;         // m, n, k, batch
  uvec4 misc;         // batch ndim, tiles along m, tiles along n
  uvec4 bsizes[2];    // batch sizes[d / 4][d % 4]
  uvec4 bstrides[8];  // operand q (0 A, 1 B, 2 out, 3 addend): bstrides[2q + d / 4][d % 4]
  uvec4 strides[2];   // A row, A col, B row, B col | out row, out col, addend row, addend col
  uvec4 offsets;      // element offsets: A, B, out, addend
  uvec4 scal;         // 64-bit payloads (D, L): xy alpha, zw beta
  uvec4 scal32;       // 32-bit payloads (F: float bits, I: int32): x alpha, y beta
} P;

layout(set = 0, binding = 1) writeonly buffer Out8 { uint8_t v[]; } out_u8;
layout(set = 0, binding = 1) writeonly buffer Out16 { uint16_t v[]; } out_u16;
layout(set = 0, binding = 1) writeonly buffer Out32 { uint v[]; } out_u32;
layout(set = 0, binding = 1) writeonly buffer Out64 { uvec2 v[]; } out_u64;
#define NBX_IN_BUFFER(B, N)                                                    \
  layout(set = 0, binding = B) readonly buffer N##8 { uint8_t v[]; } N##_u8;    \
  layout(set = 0, binding = B) readonly buffer N##16 { uint16_t v[]; } N##_u16; \
  layout(set = 0, binding = B) readonly buffer N##32 { uint v[]; } N##_u32;     \
  layout(set = 0, binding = B) readonly buffer N##64 { uvec2 v[]; } N##_u64;    \
  layout(set = 0, binding = B) readonly buffer N##128 { uvec4 v[]; } N##_u128;
NBX_IN_BUFFER(2, a)
NBX_IN_BUFFER(3, b)
NBX_IN_BUFFER(4, c)

#define kNaN uintBitsToFloat(0x7fc00000u)
#include "vk_codec.glsl"

#if NBX_CLS_F
#define ACC float
#define RAW uint
#define RAW0 0u
#define DEC(dt, r) nbx_decF(dt, uvec2(r, 0u))
#define ENC(dt, v) nbx_encF(dt, v)
#define MAD(a, b, c) fma(a, b, c)
#define ZERO 0.0
#elif NBX_CLS_I
#define ACC int
#define RAW uint
#define RAW0 0u
#define DEC(dt, r) nbx_decI(dt, uvec2(r, 0u))
#define ENC(dt, v) nbx_encI(dt, v)
#define MAD(a, b, c) ((a) * (b) + (c))
#define ZERO 0
#elif NBX_CLS_D
#define ACC double
#define RAW uvec2
#define RAW0 uvec2(0u)
#define DEC(dt, r) nbx_decD(dt, r)
#define ENC(dt, v) nbx_encD(dt, v)
#define MAD(a, b, c) fma(a, b, c)
#define ZERO 0.0LF
#elif NBX_CLS_L
#define ACC int64_t
#define RAW uvec2
#define RAW0 uvec2(0u)
#define DEC(dt, r) nbx_decL(dt, r)
#define ENC(dt, v) nbx_encL(dt, v)
#define MAD(a, b, c) ((a) * (b) + (c))
#define ZERO 0l
#else
#error "define one of NBX_CLS_F, NBX_CLS_I, NBX_CLS_D, NBX_CLS_L"
#endif

// k-major tiles: As[kk][m], Bs[kk][n], so one k step reads a column of A and a row of B.
shared ACC As[TK * TM];
shared ACC Bs[TK * TN];

// The raw words of the next tile, one slot per element (vector loads fill 4 * esize / 4
// words of each group of four slots).
RAW rawA[EA];
RAW rawB[EB];

uint bsize(uint d) { return P.bsizes[d >> 2][d & 3u]; }
uint bstride(uint q, uint d) { return P.bstrides[2u * q + (d >> 2)][d & 3u]; }

// One element's raw bits (zero-extended) at element index i of input N.
#if NBX_CLS_D || NBX_CLS_L
#define NBX_FETCH(N, i)                                                        \
  (nbx_esize(IDT) == 1 ? uvec2(uint(N##_u8.v[i]), 0u)                          \
   : nbx_esize(IDT) == 2 ? uvec2(uint(N##_u16.v[i]), 0u)                       \
   : nbx_esize(IDT) == 4 ? uvec2(N##_u32.v[i], 0u) : N##_u64.v[i])
#else
#define NBX_FETCH(N, i)                                                        \
  (nbx_esize(IDT) == 1 ? uint(N##_u8.v[i]) : nbx_esize(IDT) == 2 ? uint(N##_u16.v[i]) \
                                                                 : N##_u32.v[i])
#endif

// Element `c` of the vector whose words start at slot s (vector loads, 1/2/4-byte types).
#define NBX_VEC_ELEM(arr, s, c)                                                \
  (nbx_esize(IDT) == 4   ? arr[(s) + (c)]                                        \
   : nbx_esize(IDT) == 2 ? ((arr[(s) + ((c) >> 1)] >> (16 * ((c) & 1))) & 0xffffu) \
                         : ((arr[(s)] >> (8 * (c))) & 0xffu))

// Loads the raw words of A's tile (rows m0.., columns k0..) into rawA.
void load_a(uint abase, uint m0, uint k0) {
  const uint M = P.dims.x, K = P.dims.z;
  const uint rs = P.strides[0].x, cs = P.strides[0].y;
#if !(NBX_CLS_D || NBX_CLS_L)
  if (A_VEC) {
    for (int q = 0; q < EA / 4; ++q) {
      const uint L = gl_LocalInvocationIndex + uint(kThreads * q);
      const uint m = A_WALK_K ? L / uint(TK / 4) : 4u * (L % uint(TM / 4));
      const uint kk = A_WALK_K ? 4u * (L % uint(TK / 4)) : L / uint(TM / 4);
      const uint row = m0 + m, col = k0 + kk;
      const bool inside = row < M && col < K;  // a whole vector is in or out (4 | walked size)
      const uint v = inside ? (abase + row * rs + col * cs) >> 2 : 0u;
      if (nbx_esize(IDT) == 4) {
        const uvec4 w = inside ? a_u128.v[v] : uvec4(0u);
        rawA[4 * q] = w.x, rawA[4 * q + 1] = w.y, rawA[4 * q + 2] = w.z, rawA[4 * q + 3] = w.w;
      } else if (nbx_esize(IDT) == 2) {
        const uvec2 w = inside ? a_u64.v[v] : uvec2(0u);
        rawA[4 * q] = w.x, rawA[4 * q + 1] = w.y;
      } else {
        rawA[4 * q] = inside ? a_u32.v[v] : 0u;
      }
    }
    return;
  }
#endif
  for (int e = 0; e < EA; ++e) {
    const uint L = gl_LocalInvocationIndex + uint(kThreads * e);
    const uint m = A_WALK_K ? L / uint(TK) : L % uint(TM);
    const uint kk = A_WALK_K ? L % uint(TK) : L / uint(TM);
    const uint row = m0 + m, col = k0 + kk;
    rawA[e] = (row < M && col < K) ? NBX_FETCH(a, abase + row * rs + col * cs) : RAW0;
  }
}

void load_b(uint bbase, uint k0, uint n0) {
  const uint N = P.dims.y, K = P.dims.z;
  const uint rs = P.strides[0].z, cs = P.strides[0].w;
#if !(NBX_CLS_D || NBX_CLS_L)
  if (B_VEC) {
    for (int q = 0; q < EB / 4; ++q) {
      const uint L = gl_LocalInvocationIndex + uint(kThreads * q);
      const uint n = B_WALK_K ? L / uint(TK / 4) : 4u * (L % uint(TN / 4));
      const uint kk = B_WALK_K ? 4u * (L % uint(TK / 4)) : L / uint(TN / 4);
      const uint row = k0 + kk, col = n0 + n;
      const bool inside = row < K && col < N;
      const uint v = inside ? (bbase + row * rs + col * cs) >> 2 : 0u;
      if (nbx_esize(IDT) == 4) {
        const uvec4 w = inside ? b_u128.v[v] : uvec4(0u);
        rawB[4 * q] = w.x, rawB[4 * q + 1] = w.y, rawB[4 * q + 2] = w.z, rawB[4 * q + 3] = w.w;
      } else if (nbx_esize(IDT) == 2) {
        const uvec2 w = inside ? b_u64.v[v] : uvec2(0u);
        rawB[4 * q] = w.x, rawB[4 * q + 1] = w.y;
      } else {
        rawB[4 * q] = inside ? b_u32.v[v] : 0u;
      }
    }
    return;
  }
#endif
  for (int e = 0; e < EB; ++e) {
    const uint L = gl_LocalInvocationIndex + uint(kThreads * e);
    const uint n = B_WALK_K ? L / uint(TK) : L % uint(TN);
    const uint kk = B_WALK_K ? L % uint(TK) : L / uint(TN);
    const uint row = k0 + kk, col = n0 + n;
    rawB[e] = (row < K && col < N) ? NBX_FETCH(b, bbase + row * rs + col * cs) : RAW0;
  }
}

// Decodes the staged words into the shared tiles (same element order as the loads).
void store_tiles() {
#if !(NBX_CLS_D || NBX_CLS_L)
  if (A_VEC) {
    for (int q = 0; q < EA / 4; ++q) {
      const uint L = gl_LocalInvocationIndex + uint(kThreads * q);
      const uint m = A_WALK_K ? L / uint(TK / 4) : 4u * (L % uint(TM / 4));
      const uint kk = A_WALK_K ? 4u * (L % uint(TK / 4)) : L / uint(TM / 4);
      for (int c = 0; c < 4; ++c) {
        const ACC x = DEC(IDT, NBX_VEC_ELEM(rawA, 4 * q, c));
        As[A_WALK_K ? (kk + c) * TM + m : kk * TM + m + c] = x;
      }
    }
  }
  if (B_VEC) {
    for (int q = 0; q < EB / 4; ++q) {
      const uint L = gl_LocalInvocationIndex + uint(kThreads * q);
      const uint n = B_WALK_K ? L / uint(TK / 4) : 4u * (L % uint(TN / 4));
      const uint kk = B_WALK_K ? 4u * (L % uint(TK / 4)) : L / uint(TN / 4);
      for (int c = 0; c < 4; ++c) {
        const ACC x = DEC(IDT, NBX_VEC_ELEM(rawB, 4 * q, c));
        Bs[B_WALK_K ? (kk + c) * TN + n : kk * TN + n + c] = x;
      }
    }
  }
#endif
  if (!A_VEC) {
    for (int e = 0; e < EA; ++e) {
      const uint L = gl_LocalInvocationIndex + uint(kThreads * e);
      const uint m = A_WALK_K ? L / uint(TK) : L % uint(TM);
      const uint kk = A_WALK_K ? L % uint(TK) : L / uint(TM);
      As[kk * TM + m] = DEC(IDT, rawA[e]);
    }
  }
  if (!B_VEC) {
    for (int e = 0; e < EB; ++e) {
      const uint L = gl_LocalInvocationIndex + uint(kThreads * e);
      const uint n = B_WALK_K ? L / uint(TK) : L % uint(TN);
      const uint kk = B_WALK_K ? L % uint(TK) : L / uint(TN);
      Bs[kk * TN + n] = DEC(IDT, rawB[e]);
    }
  }
}

void main() {
  const uint M = P.dims.x, N = P.dims.y, K = P.dims.z, batch = P.dims.w;
  const uint ndim = P.misc.x, tiles_m = P.misc.y, tiles_n = P.misc.z;
  const uint tx = gl_LocalInvocationIndex % 16u, ty = gl_LocalInvocationIndex / 16u;
  const uint ktiles = (K + uint(TK) - 1u) / uint(TK);
#if NBX_CLS_F
  const float alpha = uintBitsToFloat(P.scal32.x), beta = uintBitsToFloat(P.scal32.y);
#elif NBX_CLS_I
  const int alpha = int(P.scal32.x), beta = int(P.scal32.y);
#elif NBX_CLS_D
  const double alpha = packDouble2x32(P.scal.xy), beta = packDouble2x32(P.scal.zw);
#else
  const int64_t alpha = int64_t(pack64(P.scal.xy)), beta = int64_t(pack64(P.scal.zw));
#endif

  // Grid-stride over (batch, tile row, tile column): the grid is capped at 65535 per dim.
  for (uint e = gl_WorkGroupID.z; e < batch; e += gl_NumWorkGroups.z) {
    uint abase = P.offsets.x, bbase = P.offsets.y, obase = P.offsets.z, cbase = P.offsets.w;
    uint rest = e;
    for (uint d = ndim; d-- > 0u;) {
      const uint i = rest % bsize(d);
      rest /= bsize(d);
      abase += i * bstride(0u, d);
      bbase += i * bstride(1u, d);
      obase += i * bstride(2u, d);
      cbase += i * bstride(3u, d);
    }
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        const uint m0 = tm * uint(TM), n0 = tn * uint(TN);
        ACC acc[RM * RN];
        for (int r = 0; r < RM * RN; ++r) acc[r] = ZERO;
        if (ktiles > 0u) {
          load_a(abase, m0, 0u);
          load_b(bbase, 0u, n0);
        }
        for (uint t = 0u; t < ktiles; ++t) {
          barrier();  // the previous tile's products are done with As/Bs
          store_tiles();
          barrier();
          if (t + 1u < ktiles) {  // in flight while this tile multiplies
            load_a(abase, m0, (t + 1u) * uint(TK));
            load_b(bbase, (t + 1u) * uint(TK), n0);
          }
          for (int kk = 0; kk < TK; ++kk) {
            ACC av[RM], bv[RN];
            for (int i = 0; i < RM; ++i) av[i] = As[kk * TM + int(ty) + 16 * i];
            for (int j = 0; j < RN; ++j) bv[j] = Bs[kk * TN + int(tx) + 16 * j];
            for (int i = 0; i < RM; ++i)
              for (int j = 0; j < RN; ++j) acc[i * RN + j] = MAD(av[i], bv[j], acc[i * RN + j]);
          }
        }
        // alpha * acc (+ beta * addend), rounded once into the output dtype.
        for (int i = 0; i < RM; ++i) {
          const uint row = m0 + ty + uint(16 * i);
          if (row >= M) continue;
          for (int j = 0; j < RN; ++j) {
            const uint col = n0 + tx + uint(16 * j);
            if (col >= N) continue;
            ACC v = alpha * acc[i * RN + j];
            if (USE_ADDEND) {
              const uint ci = cbase + row * P.strides[1].z + col * P.strides[1].w;
              const uvec2 raw = nbx_esize(XDT) == 1   ? uvec2(uint(c_u8.v[ci]), 0u)
                                : nbx_esize(XDT) == 2 ? uvec2(uint(c_u16.v[ci]), 0u)
                                : nbx_esize(XDT) == 4 ? uvec2(c_u32.v[ci], 0u)
                                                      : c_u64.v[ci];
#if NBX_CLS_D || NBX_CLS_L
              v = MAD(beta, DEC(XDT, raw), v);
#else
              v = MAD(beta, DEC(XDT, raw.x), v);
#endif
            }
            const uvec2 w = ENC(ODT, v);
            const uint oi = obase + row * P.strides[1].x + col * P.strides[1].y;
            const int os = nbx_esize(ODT);
            if (os == 1)
              out_u8.v[oi] = uint8_t(w.x);
            else if (os == 2)
              out_u16.v[oi] = uint16_t(w.x);
            else if (os == 4)
              out_u32.v[oi] = w.x;
            else
              out_u64.v[oi] = w;
          }
        }
      }
    }
  }
}
