#version 450
// Kernel family "reduce" (nbx::abi::ReduceParams, op codes core/reduce_op_list.inc,
// semantics backends/host/host_reduce.cpp; kernels/gpu/reduce_kernels.cu is the same
// algorithm for CUDA/HIP).
//
// TILE lanes of a workgroup (a power of two, at most the workgroup) reduce one row: lane l
// folds the elements k = l, l + TILE, ... into a state, then the lanes combine states
// through a shared-memory tree in a fixed order, so results are deterministic and the same
// on every subgroup size. A workgroup holds WG / TILE rows; the grid loops over rows with a
// uniform trip count so that every barrier is reached by the whole workgroup.
//
// Built once per accumulate class (NBX_CLS_F float32 for float16/bfloat16/float32,
// NBX_CLS_D float64, NBX_CLS_I int32 for bool..int32, NBX_CLS_L int64); op, dtypes and the
// norm order's kind are specialization constants. Float sums are compensated (TwoSum, as
// kernels/gpu/compensated_sum.cuh): compensation stops once the sum is inf or NaN.
// Indices, counts and offsets are 32-bit: the backend refuses rows past 2^31 - 1 elements
// and buffers past maxStorageBufferRange.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#if NBX_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

#include "nbx_vk_codes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int OP = 0;
layout(constant_id = 2) const int CDT = DT_FLOAT32;  // accumulate dtype
layout(constant_id = 3) const int IDT = DT_FLOAT32;
layout(constant_id = 4) const int ODT = DT_FLOAT32;
layout(constant_id = 5) const int NORM_KIND = 2;  // p: 0 → 0, 1 → 1, 2 → 2, 3 → +inf, 4 → -inf, 5 other
// 0: one pass. Long rows with few of them split over workgroups in two dispatches:
// 1 reduces chunk c of row r into partial state r * splits + c of the scratch buffer,
// 2 combines each row's partial states (in chunk order, so results stay deterministic).
layout(constant_id = 6) const int STAGE = 0;
// Elements a lane loads before it folds them (1 or 4; vk_reduce.cpp takes 4): the results are
// the same bit for bit (the same fold order).
layout(constant_id = 7) const uint UNROLL = 4u;

// core/reduce_op_list.inc (kernel ABI codes, never renumbered).
const int R_SUM = 0, R_PROD = 1, R_MEAN = 2, R_AMAX = 3, R_AMIN = 4, R_ARGMAX = 5,
          R_ARGMIN = 6, R_MAX_IDX = 7, R_MIN_IDX = 8, R_VAR = 9, R_STD = 10, R_NORM = 11,
          R_LSE = 12, R_ANY = 13, R_ALL = 14, R_COUNT = 15, R_AMINMAX = 16, R_NANSUM = 17,
          R_NANMEAN = 18, R_VAR_MEAN = 19, R_STD_MEAN = 20;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;           // x rows, y row_len, z kept dims, w reduced dims
  uvec4 grid;           // x TILE, y rows per grid step, z rounds, w reduced stride (1 dim)
  uvec4 offsets;        // x input, y output, z index output
  uvec4 out_sizes[2];   // [d / 4][d % 4]
  uvec4 red_sizes[2];
  uvec4 in_kept[2];     // input strides along the kept dims
  uvec4 in_red[2];      // input strides along the reduced dims
  uvec4 out_strides[2];
  uvec4 idx_strides[2];
  uvec4 attr;           // xy p (float64 bits), z p (float32), w 1/p (float32)
  uvec4 attr2;          // xy 1/p (float64 bits), zw denominator of var (float64 bits)
  uvec4 attr3;          // x denominator of var (float32)
  uvec4 split;          // x chunks per row, y chunk length, z work items (rows * chunks),
                        // w lanes rows-per-group apart (slot_of)
} P;

#define NBX_BUFFER(B, Q, N)                                                       \
  layout(set = 0, binding = B) Q buffer N##_b8 { uint8_t v[]; } N##_u8;            \
  layout(set = 0, binding = B) Q buffer N##_b16 { uint16_t v[]; } N##_u16;         \
  layout(set = 0, binding = B) Q buffer N##_b32 { uint v[]; } N##_u32;             \
  layout(set = 0, binding = B) Q buffer N##_b64 { uvec2 v[]; } N##_u64;

NBX_BUFFER(1, writeonly, bo)
NBX_BUFFER(2, readonly, bi)
// The index output (int64 words), or the second output of aminmax (the maxima) and
// var_mean/std_mean (the means), of the output's dtype.
NBX_BUFFER(3, writeonly, bx)
// Partial states of stages 1 and 2: [2i] value and compensation bits, [2i + 1].x the index.
layout(set = 0, binding = 4) buffer Scratch { uvec4 v[]; } scratch;

#define kNaN uintBitsToFloat(0x7fc00000u)
#define kInf uintBitsToFloat(0x7f800000u)

#if NBX_F64
#include "vk_math64.glsl"
#endif
#if NBX_CLS_F
#include "vk_math.glsl"
#endif
#include "vk_codec.glsl"

// ---- the accumulate class ----
#if NBX_CLS_F
#define C float
#define C0 0.0
#define C1 1.0
C dec(uvec2 r) { return nbx_decF(IDT, r); }
uvec2 enc(C v) { return nbx_encF(ODT, v); }
bool finite_c(C x) { return !isnan(x) && !isinf(x); }
bool nan_c(C x) { return isnan(x); }
uvec2 bits_of(C x) { return uvec2(floatBitsToUint(x), 0u); }
C from_bits(uvec2 b) { return uintBitsToFloat(b.x); }
#elif NBX_CLS_D
#define C double
#define C0 0.0LF
#define C1 1.0LF
C dec(uvec2 r) { return nbx_decD(IDT, r); }
uvec2 enc(C v) { return nbx_encD(ODT, v); }
bool finite_c(C x) { return !isnan(x) && !isinf(x); }
bool nan_c(C x) { return isnan(x); }
uvec2 bits_of(C x) { return unpackDouble2x32(x); }
C from_bits(uvec2 b) { return packDouble2x32(b); }
#elif NBX_CLS_I
#define C int
#define C0 0
#define C1 1
C dec(uvec2 r) { return nbx_decI(IDT, r); }
uvec2 enc(C v) { return nbx_encI(ODT, v); }
bool finite_c(C x) { return true; }
bool nan_c(C x) { return false; }
uvec2 bits_of(C x) { return uvec2(uint(x), 0u); }
C from_bits(uvec2 b) { return int(b.x); }
#elif NBX_CLS_L
#define C int64_t
#define C0 0l
#define C1 1l
C dec(uvec2 r) { return nbx_decL(IDT, r); }
uvec2 enc(C v) { return nbx_encL(ODT, v); }
bool finite_c(C x) { return true; }
bool nan_c(C x) { return false; }
uvec2 bits_of(C x) { return unpack32(uint64_t(x)); }
C from_bits(uvec2 b) { return int64_t(pack64(b)); }
#else
#error "define one of NBX_CLS_F, NBX_CLS_D, NBX_CLS_I, NBX_CLS_L"
#endif

#if NBX_CLS_F || NBX_CLS_D
const bool kFloat = true;
#else
const bool kFloat = false;
#endif

// Everything a reduction carries: the value, the compensation of a float sum, and the
// index of an extreme (-1: an empty partial) or a count. aminmax keeps the maximum in v,
// the minimum in comp (idx -1: empty); nanmean counts its non-NaN elements in idx.
struct State {
  C v;
  C comp;
  int idx;
};

shared C sh_v[gl_WorkGroupSize.x];
shared C sh_c[gl_WorkGroupSize.x];
shared int sh_i[gl_WorkGroupSize.x];

void add_comp(inout State a, C x, C xc) {
#if NBX_CLS_F || NBX_CLS_D
  precise C s = a.v + x;
  precise C bb = s - a.v;
  precise C err = (a.v - (s - bb)) + (x - bb);
  if (finite_c(s)) a.comp = a.comp + (xc + err);
  a.v = s;
#else
  a.v = a.v + x;  // wraps like two's complement, as the host's uint64 sum
#endif
}

C total(State s) {
  if (kFloat) return finite_c(s.v) ? s.v + s.comp : s.v;
  return s.v;
}

bool want_max() { return OP == R_AMAX || OP == R_ARGMAX || OP == R_MAX_IDX; }
bool with_mean() { return OP == R_VAR_MEAN || OP == R_STD_MEAN; }
bool var_like() { return OP == R_VAR || OP == R_STD || with_mean(); }
bool extreme_op() { return OP >= R_AMAX && OP <= R_MIN_IDX; }
bool inf_norm() { return OP == R_NORM && (NORM_KIND == 3 || NORM_KIND == 4); }

State identity() {
  State s = State(C0, C0, -1);
  if (OP == R_PROD || OP == R_ALL) s.v = C1;
  if (OP == R_COUNT || OP == R_NANMEAN) s.idx = 0;
#if NBX_CLS_F || NBX_CLS_D
  if (OP == R_NORM && NORM_KIND == 4) s.v = C(kInf);
  if (OP == R_LSE) s.v = C(-kInf);
#endif
  return s;
}

// The first NaN wins; otherwise the larger (smaller) value, then the smaller index.
bool better_extreme(C v, int i, C bv, int bi) {
  if (bi < 0) return i >= 0;
  if (i < 0) return false;
  bool vn = nan_c(v), bn = nan_c(bv);
  if (vn || bn) return vn && (!bn || i < bi);
  if (v == bv) return i < bi;
  return want_max() ? v > bv : v < bv;
}

// NaN propagates; else the larger (`larger`) or smaller value.
C pick(C a, C b, bool larger) {
  if (nan_c(a)) return a;
  if (nan_c(b)) return b;
  return (larger == (b > a)) ? b : a;
}

// Combines b into a. `sum_pass` is the second pass of var/std/logsumexp (a plain sum).
State combine(State a, State b, bool sum_pass) {
  if (sum_pass || OP == R_SUM || OP == R_MEAN || OP == R_NANSUM || var_like() ||
      (OP == R_NORM && !inf_norm())) {
    add_comp(a, b.v, b.comp);
  } else if (OP == R_NANMEAN) {
    add_comp(a, b.v, b.comp);
    a.idx += b.idx;
  } else if (OP == R_AMINMAX) {
    if (b.idx < 0) return a;
    if (a.idx < 0) return b;
    a.v = pick(a.v, b.v, true);
    a.comp = pick(a.comp, b.comp, false);
  } else if (OP == R_PROD) {
    a.v = a.v * b.v;  // int64 products wrap, as the host's uint64 product
  } else if (extreme_op()) {
    if (better_extreme(b.v, b.idx, a.v, a.idx)) a = b;
  } else if (OP == R_NORM) {
    a.v = pick(a.v, b.v, NORM_KIND == 3);
  } else if (OP == R_LSE) {
    a.v = pick(a.v, b.v, true);  // pass 1: the maximum
  } else if (OP == R_ANY) {
    a.v = (a.v != C0 || b.v != C0) ? C1 : C0;
  } else if (OP == R_ALL) {
    a.v = (a.v != C0 && b.v != C0) ? C1 : C0;
  } else {  // count_nonzero: the count is exact in idx
    a.idx += b.idx;
  }
  return a;
}

// One element x at row position k folded into a lane's state.
State fold(State s, C x, int k) {
  State e = State(x, C0, k);
  if (OP == R_ANY || OP == R_ALL) {
    e.v = x != C0 ? C1 : C0;  // NaN is true
  } else if (OP == R_COUNT) {
    e.idx = x != C0 ? 1 : 0;
  } else if (OP == R_NANSUM || OP == R_NANMEAN) {
    e.idx = nan_c(x) ? 0 : 1;
    if (nan_c(x)) e.v = C0;
  } else if (OP == R_AMINMAX) {
    e.comp = x;
  } else if (OP == R_NORM) {
#if NBX_CLS_F || NBX_CLS_D
    C a = abs(x);
    if (NORM_KIND == 0) e.v = a != C0 ? C1 : C0;
    else if (NORM_KIND == 2) e.v = a * a;
    else if (NORM_KIND == 5) {
#if NBX_CLS_F
      e.v = nbx_pow(a, uintBitsToFloat(P.attr.z));
#else
      e.v = nbx_pow_d(a, packDouble2x32(P.attr.xy));
#endif
    } else e.v = isnan(x) ? x : a;  // p = 1, ±inf
#endif
  }
  return combine(s, e, false);
}

uint dim4(uvec4 a[2], int d) { return a[d >> 2][d & 3]; }

// The row's base offset in the input, and the output/index offsets, of kept position r.
uvec3 row_offsets(uint r) {
  uvec3 o = uvec3(P.offsets.x, P.offsets.y, P.offsets.z);
  for (int d = int(P.head.z) - 1; d >= 0; --d) {
    uint n = dim4(P.out_sizes, d);
    uint c = r % n;
    r /= n;
    o += c * uvec3(dim4(P.in_kept, d), dim4(P.out_strides, d), dim4(P.idx_strides, d));
  }
  return o;
}

C element(uint base, uint k) {
  uint off = base;
  if (P.head.w == 1u) {
    off += k * P.grid.w;
  } else {
    for (int d = int(P.head.w) - 1; d >= 0; --d) {
      uint n = dim4(P.red_sizes, d);
      off += (k % n) * dim4(P.in_red, d);
      k /= n;
    }
  }
  int s = nbx_esize(IDT);
  uvec2 r = s == 1 ? uvec2(uint(bi_u8.v[off]), 0u)
          : s == 2 ? uvec2(uint(bi_u16.v[off]), 0u)
          : s == 4 ? uvec2(bi_u32.v[off], 0u) : bi_u64.v[off];
  return dec(r);
}

// The lanes of each row combine their states; every invocation gets its row's result.
// Where lane `lane` of row slot `slot` sits in the workgroup. Rows side by side in memory
// (a reduction over an outer dim) put a row's lanes rows-per-group apart, so invocations
// next to each other read elements next to each other (split.w = 1); otherwise a row's
// lanes are adjacent (elements next to each other along the row).
uint rows_per_group() { return gl_WorkGroupSize.x / P.grid.x; }
uint slot_of(uint t) { return P.split.w != 0u ? t % rows_per_group() : t / P.grid.x; }
uint lane_of(uint t) { return P.split.w != 0u ? t / rows_per_group() : t & (P.grid.x - 1u); }
uint pos_of(uint slot, uint lane) {
  return P.split.w != 0u ? lane * rows_per_group() + slot : slot * P.grid.x + lane;
}

State group_reduce(State s, bool sum_pass) {
  const uint t = gl_LocalInvocationID.x, tile = P.grid.x, lane = lane_of(t), slot = slot_of(t);
  sh_v[t] = s.v;
  sh_c[t] = s.comp;
  sh_i[t] = s.idx;
  barrier();
  for (uint half_ = tile >> 1; half_ > 0u; half_ >>= 1) {
    if (lane < half_) {
      State a = State(sh_v[t], sh_c[t], sh_i[t]);
      const uint u = pos_of(slot, lane + half_);
      State b = State(sh_v[u], sh_c[u], sh_i[u]);
      a = combine(a, b, sum_pass);
      sh_v[t] = a.v;
      sh_c[t] = a.comp;
      sh_i[t] = a.idx;
    }
    barrier();
  }
  const uint r0 = pos_of(slot, 0u);
  State r = State(sh_v[r0], sh_c[r0], sh_i[r0]);
  barrier();  // the arrays are reused by the next pass
  return r;
}

// x / n where n may be 0 (an empty row, a correction ≥ n): the IEEE quotient, which some
// drivers do not give for a zero divisor.
C quotient(C x, C n) {
#if NBX_CLS_F || NBX_CLS_D
  if (n == C0) return (isnan(x) || x == C0) ? C(kNaN) : x > C0 ? C(kInf) : C(-kInf);
#endif
  return x / n;
}

void store_out(uint off, uvec2 bits) {
  int s = nbx_esize(ODT);
  if (s == 1) bo_u8.v[off] = uint8_t(bits.x);
  else if (s == 2) bo_u16.v[off] = uint16_t(bits.x);
  else if (s == 4) bo_u32.v[off] = bits.x;
  else bo_u64.v[off] = bits;
}
// The second output (aminmax's maxima, var_mean/std_mean's means), of the output's dtype.
void store_second(uint off, uvec2 bits) {
  int s = nbx_esize(ODT);
  if (s == 1) bx_u8.v[off] = uint8_t(bits.x);
  else if (s == 2) bx_u16.v[off] = uint16_t(bits.x);
  else if (s == 4) bx_u32.v[off] = bits.x;
  else bx_u64.v[off] = bits;
}

uvec2 int64_bits(int v) { return uvec2(uint(v), v < 0 ? 0xffffffffu : 0u); }

State load_partial(uint i) {
  const uvec4 vc = scratch.v[2u * i];
  return State(from_bits(vc.xy), from_bits(vc.zw), int(scratch.v[2u * i + 1u].x));
}

// Elements in chunk c of a split row.
uint chunk_len(uint c) { return min(P.split.y, P.head.y - c * P.split.y); }

void main() {
  const uint tile = P.grid.x, lane = lane_of(gl_LocalInvocationID.x);
  const uint row_len = P.head.y, splits = P.split.x;
  const uint first_item = gl_WorkGroupID.x * rows_per_group() + slot_of(gl_LocalInvocationID.x);
  for (uint round_ = 0u; round_ < P.grid.z; ++round_) {
    // A work item is a row (stages 0, 2) or one chunk of a row (stage 1).
    const uint item = first_item + round_ * P.grid.y;
    const bool live = item < P.split.z;
    const uint row = live ? (STAGE == 1 ? item / splits : item) : 0u;
    const uvec3 o = row_offsets(row);
    const bool two_pass = var_like() || OP == R_LSE;
    C mean_ = C0;  // var_mean/std_mean's second output
    // The elements [k0, k1) this work item reduces (stage 1: one chunk of the row).
    const uint k0 = STAGE == 1 ? (item % splits) * P.split.y : 0u;
    const uint k1 = STAGE == 1 ? min(k0 + P.split.y, row_len) : row_len;
    State s = identity();
    if (live && STAGE == 2) {
      for (uint c = lane; c < splits; c += tile) {
        const State b = load_partial(row * splits + c);
        // var/std partials are (chunk mean, chunk sum of squared deviations): pass 1 sums
        // the chunks' sums n_c * mean_c.
        if (two_pass && OP != R_LSE) add_comp(s, C(chunk_len(c)) * b.v, C0);
        else s = combine(s, b, false);
      }
    } else if (live) {
      // With UNROLL 4, four elements loaded before any is folded (more loads in flight a lane:
      // the fold's state chains the iterations, so the compiler may not overlap them), folded
      // in the same order as one at a time.
      uint k = k0 + lane;
      for (; UNROLL == 4u && k + 3u * tile < k1; k += 4u * tile) {
        const C x0 = element(o.x, k), x1 = element(o.x, k + tile);
        const C x2 = element(o.x, k + 2u * tile), x3 = element(o.x, k + 3u * tile);
        s = fold(s, x0, int(k));
        s = fold(s, x1, int(k + tile));
        s = fold(s, x2, int(k + 2u * tile));
        s = fold(s, x3, int(k + 3u * tile));
      }
      for (; k < k1; k += tile) s = fold(s, element(o.x, k), int(k));
    }
    s = group_reduce(s, false);
#if NBX_CLS_F || NBX_CLS_D
    // Second passes: var/std sum squared deviations from the mean (two passes, as the
    // host); logsumexp sums exp(x - max), shifted by the maximum unless it is infinite.
    // Stage 1 keeps each chunk's (mean or maximum, second-pass sum); stage 2 combines them
    // exactly: Σ(x - mean)² = Σ_c [q_c + n_c (mean_c - mean)²], Σ exp(x - M) =
    // Σ_c q_c exp(shift_c - M).
    if (two_pass) {
      const bool lse = OP == R_LSE;
      const uint n = STAGE == 2 ? row_len : k1 - k0;
      const C m = lse ? s.v : quotient(total(s), C(n));
      mean_ = m;
      const C shift = (lse && isinf(m)) ? C0 : m;
      State t = State(C0, C0, -1);
      if (live && STAGE == 2) {
        for (uint c = lane; c < splits; c += tile) {
          const State b = load_partial(row * splits + c);
          if (!lse) {
            precise C d = b.v - m;
            add_comp(t, b.comp + C(chunk_len(c)) * d * d, C0);
          } else if (b.comp != C0) {  // an all -inf chunk adds nothing (0 * exp(..) may be NaN)
            const C shift_c = isinf(b.v) ? C0 : b.v;
#if NBX_CLS_F
            add_comp(t, b.comp * nbx_exp(shift_c - shift), C0);
#else
            add_comp(t, b.comp * nbx_exp_d(shift_c - shift), C0);
#endif
          }
        }
      } else if (live) {
        for (uint k = k0 + lane; k < k1; k += tile) {
          precise C d = element(o.x, k) - shift;
#if NBX_CLS_F
          add_comp(t, lse ? nbx_exp(d) : d * d, C0);
#else
          add_comp(t, lse ? nbx_exp_d(d) : d * d, C0);
#endif
        }
      }
      t = group_reduce(t, true);
      if (STAGE == 1) {
        s = State(m, total(t), -1);
      } else {
#if NBX_CLS_F
        s.v = lse ? (isnan(m) ? m : nbx_log(total(t)) + shift) : total(t);
#else
        s.v = lse ? (isnan(m) ? m : nbx_log_d(total(t)) + shift) : total(t);
#endif
      }
    }
#endif
    if (STAGE == 1) {
      if (live && lane == 0u) {
        scratch.v[2u * item] = uvec4(bits_of(s.v), bits_of(s.comp));
        scratch.v[2u * item + 1u] = uvec4(uint(s.idx), 0u, 0u, 0u);
      }
      continue;
    }
    if (!live || lane != 0u) continue;
    if (OP == R_ARGMAX || OP == R_ARGMIN) {
      store_out(o.y, int64_bits(max(s.idx, 0)));
    } else if (OP == R_MAX_IDX || OP == R_MIN_IDX) {
      store_out(o.y, enc(s.v));
      bx_u64.v[o.z] = int64_bits(max(s.idx, 0));
    } else if (OP == R_AMINMAX) {
      store_out(o.y, enc(s.comp));
      store_second(o.z, enc(s.v));
    } else if (OP == R_COUNT) {
      store_out(o.y, int64_bits(s.idx < 0 ? 0 : s.idx));
    } else if (OP == R_SUM) {
      store_out(o.y, enc(total(s)));
    } else if (OP == R_MEAN) {
      store_out(o.y, enc(quotient(total(s), C(row_len))));
    } else if (OP == R_NANSUM) {
      store_out(o.y, enc(total(s)));
    } else if (OP == R_NANMEAN) {
      store_out(o.y, enc(quotient(total(s), C(s.idx))));
#if NBX_CLS_F || NBX_CLS_D
    } else if (var_like()) {
#if NBX_CLS_F
      C v = quotient(s.v, uintBitsToFloat(P.attr3.x));
#else
      C v = quotient(s.v, packDouble2x32(P.attr2.zw));
#endif
      store_out(o.y, enc(OP == R_STD || OP == R_STD_MEAN ? sqrt(v) : v));
      if (with_mean()) store_second(o.z, enc(mean_));
    } else if (OP == R_NORM) {
      C v = inf_norm() ? s.v : total(s);
      if (NORM_KIND == 2) v = sqrt(v);
#if NBX_CLS_F
      if (NORM_KIND == 5) v = nbx_pow(v, uintBitsToFloat(P.attr.w));
#else
      if (NORM_KIND == 5) v = nbx_pow_d(v, packDouble2x32(P.attr2.xy));
#endif
      store_out(o.y, enc(v));
#endif
    } else {
      store_out(o.y, enc(s.v));  // prod, amax, amin, logsumexp, any, all
    }
  }
}
