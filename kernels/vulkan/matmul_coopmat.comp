#version 450
// Kernel family "matmul", variant cooperative matrix (nbx::abi::kMatmulCoopMatrix):
//   out[b] = alpha * A[b] @ B[b] + beta * addend[b]
// for float16 A and B, float32 accumulation, float16 or float32 output; the same uniform
// block, strides and batches as matmul.comp (backends/vulkan/vk_matmul.cpp translates it).
//
// Written with GL_NV_cooperative_matrix: Debian's glslc (glslang 11/12) has no
// GL_KHR_cooperative_matrix. The fragment shape lM x lN x lK is a specialization constant
// taken from the device's own list of float16 x float16 -> float32 subgroup shapes
// (vk_coopmat_query.cpp); the workgroup tile is 128 x 128 x 32, eight subgroups in a 2 x 4
// grid, each owning a 64 x 32 block of accumulators. A and B go through shared memory as
// float16 (row-major, rows padded by 8 halves = 16 bytes so every fragment row starts
// 16-byte aligned); the next k tile's raw words load into registers while the current one
// multiplies. The epilogue stores each accumulator fragment to a per-subgroup scratch and
// applies alpha, beta and the addend element by element, rounding once.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_NV_cooperative_matrix : require

#include "nbx_vk_codes.glsl"

layout(local_size_x_id = 0) in;  // 8 subgroups
layout(constant_id = 1) const uint lM = 16;
layout(constant_id = 2) const uint lN = 16;
layout(constant_id = 3) const uint lK = 16;
layout(constant_id = 4) const int ODT = DT_FLOAT32;
layout(constant_id = 5) const int XDT = DT_FLOAT16;  // addend
layout(constant_id = 6) const bool USE_ADDEND = false;
layout(constant_id = 7) const bool A_WALK_K = true;  // as in matmul.comp
layout(constant_id = 8) const bool B_WALK_K = false;
layout(constant_id = 9) const bool A_VEC = false;  // 8 halves (16 bytes) per load
layout(constant_id = 10) const bool B_VEC = false;
layout(constant_id = 11) const uint NT = 256;  // invocations: 8 x the subgroup size
layout(constant_id = 12) const int CDT = DT_FLOAT32;  // read by vk_codec.glsl

const uint TM = 128, TN = 128, TK = 32;
const uint WM = 64, WN = 32;  // one subgroup's block: 2 x 4 subgroups cover the tile
const uint CR = WM / lM, CC = WN / lN;
const uint AST = TK + 8, BST = TN + 8;  // shared row strides in halves
const uint EA = TM * TK / NT, EB = TK * TN / NT;  // halves each invocation loads per tile

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 dims;
  uvec4 misc;
  uvec4 bsizes[2];
  uvec4 bstrides[8];
  uvec4 strides[2];
  uvec4 offsets;
  uvec4 scal;
  uvec4 scal32;
} P;

layout(set = 0, binding = 1) writeonly buffer Out16 { uint16_t v[]; } out_u16;
layout(set = 0, binding = 1) writeonly buffer Out32 { uint v[]; } out_u32;
layout(set = 0, binding = 2) readonly buffer A16 { uint16_t v[]; } a_u16;
layout(set = 0, binding = 2) readonly buffer A128 { uvec4 v[]; } a_u128;
layout(set = 0, binding = 3) readonly buffer B16 { uint16_t v[]; } b_u16;
layout(set = 0, binding = 3) readonly buffer B128 { uvec4 v[]; } b_u128;
layout(set = 0, binding = 4) readonly buffer C16 { uint16_t v[]; } c_u16;
layout(set = 0, binding = 4) readonly buffer C32 { uint v[]; } c_u32;

#define kNaN uintBitsToFloat(0x7fc00000u)
#include "vk_codec.glsl"

shared float16_t As[TM * AST];
shared float16_t Bs[TK * BST];
shared float Cs[8 * 256];  // one lM x lN float32 fragment per subgroup (lM * lN <= 256)

// Raw words of the next tile: one half per slot (vector loads: 4 words per 8 halves).
uint rawA[EA];
uint rawB[EB];

uint bsize(uint d) { return P.bsizes[d >> 2][d & 3u]; }
uint bstride(uint q, uint d) { return P.bstrides[2u * q + (d >> 2)][d & 3u]; }

void load_a(uint abase, uint m0, uint k0) {
  const uint M = P.dims.x, K = P.dims.z, rs = P.strides[0].x, cs = P.strides[0].y;
  if (A_VEC) {
    for (uint q = 0; q < EA / 8; ++q) {
      const uint L = gl_LocalInvocationIndex + NT * q;
      const uint m = A_WALK_K ? L / (TK / 8) : 8 * (L % (TM / 8));
      const uint kk = A_WALK_K ? 8 * (L % (TK / 8)) : L / (TM / 8);
      const uint row = m0 + m, col = k0 + kk;
      const uvec4 w = (row < M && col < K) ? a_u128.v[(abase + row * rs + col * cs) >> 3] : uvec4(0u);
      rawA[4 * q] = w.x, rawA[4 * q + 1] = w.y, rawA[4 * q + 2] = w.z, rawA[4 * q + 3] = w.w;
    }
    return;
  }
  for (uint e = 0; e < EA; ++e) {
    const uint L = gl_LocalInvocationIndex + NT * e;
    const uint m = A_WALK_K ? L / TK : L % TM;
    const uint kk = A_WALK_K ? L % TK : L / TM;
    const uint row = m0 + m, col = k0 + kk;
    rawA[e] = (row < M && col < K) ? uint(a_u16.v[abase + row * rs + col * cs]) : 0u;
  }
}

void load_b(uint bbase, uint k0, uint n0) {
  const uint N = P.dims.y, K = P.dims.z, rs = P.strides[0].z, cs = P.strides[0].w;
  if (B_VEC) {
    for (uint q = 0; q < EB / 8; ++q) {
      const uint L = gl_LocalInvocationIndex + NT * q;
      const uint n = B_WALK_K ? L / (TK / 8) : 8 * (L % (TN / 8));
      const uint kk = B_WALK_K ? 8 * (L % (TK / 8)) : L / (TN / 8);
      const uint row = k0 + kk, col = n0 + n;
      const uvec4 w = (row < K && col < N) ? b_u128.v[(bbase + row * rs + col * cs) >> 3] : uvec4(0u);
      rawB[4 * q] = w.x, rawB[4 * q + 1] = w.y, rawB[4 * q + 2] = w.z, rawB[4 * q + 3] = w.w;
    }
    return;
  }
  for (uint e = 0; e < EB; ++e) {
    const uint L = gl_LocalInvocationIndex + NT * e;
    const uint n = B_WALK_K ? L / TK : L % TN;
    const uint kk = B_WALK_K ? L % TK : L / TN;
    const uint row = k0 + kk, col = n0 + n;
    rawB[e] = (row < K && col < N) ? uint(b_u16.v[bbase + row * rs + col * cs]) : 0u;
  }
}

// As[m][kk] and Bs[kk][n] from the staged words (same element order as the loads).
void store_tiles() {
  if (A_VEC) {
    for (uint q = 0; q < EA / 8; ++q) {
      const uint L = gl_LocalInvocationIndex + NT * q;
      const uint m = A_WALK_K ? L / (TK / 8) : 8 * (L % (TM / 8));
      const uint kk = A_WALK_K ? 8 * (L % (TK / 8)) : L / (TM / 8);
      for (uint c = 0; c < 8; ++c) {
        const float16_t h = unpackFloat2x16(rawA[4 * q + c / 2])[c & 1u];
        As[A_WALK_K ? m * AST + kk + c : (m + c) * AST + kk] = h;
      }
    }
  } else {
    for (uint e = 0; e < EA; ++e) {
      const uint L = gl_LocalInvocationIndex + NT * e;
      const uint m = A_WALK_K ? L / TK : L % TM;
      const uint kk = A_WALK_K ? L % TK : L / TM;
      As[m * AST + kk] = unpackFloat2x16(rawA[e]).x;
    }
  }
  if (B_VEC) {
    for (uint q = 0; q < EB / 8; ++q) {
      const uint L = gl_LocalInvocationIndex + NT * q;
      const uint n = B_WALK_K ? L / (TK / 8) : 8 * (L % (TN / 8));
      const uint kk = B_WALK_K ? 8 * (L % (TK / 8)) : L / (TN / 8);
      for (uint c = 0; c < 8; ++c) {
        const float16_t h = unpackFloat2x16(rawB[4 * q + c / 2])[c & 1u];
        Bs[B_WALK_K ? (kk + c) * BST + n : kk * BST + n + c] = h;
      }
    }
  } else {
    for (uint e = 0; e < EB; ++e) {
      const uint L = gl_LocalInvocationIndex + NT * e;
      const uint n = B_WALK_K ? L / TK : L % TN;
      const uint kk = B_WALK_K ? L % TK : L / TN;
      Bs[kk * BST + n] = unpackFloat2x16(rawB[e]).x;
    }
  }
}

void main() {
  const uint M = P.dims.x, N = P.dims.y, K = P.dims.z, batch = P.dims.w;
  const uint ndim = P.misc.x, tiles_m = P.misc.y, tiles_n = P.misc.z;
  const uint ktiles = (K + TK - 1u) / TK;
  const float alpha = uintBitsToFloat(P.scal32.x), beta = uintBitsToFloat(P.scal32.y);
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint wm0 = (sg / 4u) * WM, wn0 = (sg % 4u) * WN;
  const uint scratch = sg * 256u;

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
        const uint m0 = tm * TM, n0 = tn * TN;
        fcoopmatNV<32, gl_ScopeSubgroup, lM, lN> acc[CR * CC];
        for (uint r = 0; r < CR * CC; ++r) acc[r] = fcoopmatNV<32, gl_ScopeSubgroup, lM, lN>(0.0);
        if (ktiles > 0u) {
          load_a(abase, m0, 0u);
          load_b(bbase, 0u, n0);
        }
        for (uint t = 0u; t < ktiles; ++t) {
          barrier();
          store_tiles();
          barrier();
          if (t + 1u < ktiles) {
            load_a(abase, m0, (t + 1u) * TK);
            load_b(bbase, (t + 1u) * TK, n0);
          }
          for (uint k = 0; k < TK; k += lK) {
            fcoopmatNV<16, gl_ScopeSubgroup, lM, lK> fa[CR];
            for (uint i = 0; i < CR; ++i)
              coopMatLoadNV(fa[i], As, (wm0 + i * lM) * AST + k, AST, false);
            for (uint j = 0; j < CC; ++j) {
              fcoopmatNV<16, gl_ScopeSubgroup, lK, lN> fb;
              coopMatLoadNV(fb, Bs, k * BST + wn0 + j * lN, BST, false);
              for (uint i = 0; i < CR; ++i) acc[i * CC + j] = coopMatMulAddNV(fa[i], fb, acc[i * CC + j]);
            }
          }
        }
        // Epilogue, one fragment at a time through this subgroup's scratch.
        for (uint i = 0; i < CR; ++i) {
          for (uint j = 0; j < CC; ++j) {
            coopMatStoreNV(acc[i * CC + j], Cs, scratch, lN, false);
            memoryBarrierShared();
            subgroupBarrier();
            for (uint x = lane; x < lM * lN; x += gl_SubgroupSize) {
              const uint row = m0 + wm0 + i * lM + x / lN, col = n0 + wn0 + j * lN + x % lN;
              if (row >= M || col >= N) continue;
              float v = alpha * Cs[scratch + x];
              if (USE_ADDEND) {
                const uint ci = cbase + row * P.strides[1].z + col * P.strides[1].w;
                const uint raw = nbx_esize(XDT) == 2 ? uint(c_u16.v[ci]) : c_u32.v[ci];
                v = fma(beta, nbx_decF(XDT, uvec2(raw, 0u)), v);
              }
              const uint w = nbx_encF(ODT, v).x;
              const uint oi = obase + row * P.strides[1].x + col * P.strides[1].y;
              if (nbx_esize(ODT) == 2)
                out_u16.v[oi] = uint16_t(w);
              else
                out_u32.v[oi] = w;
            }
            memoryBarrierShared();
            subgroupBarrier();  // the scratch is read before the next fragment overwrites it
          }
        }
      }
    }
  }
}
