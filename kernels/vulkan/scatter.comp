#version 450
// Kernel family "scatter" (nbx::abi::ScatterParams; semantics backends/host/host_scatter.cpp),
// its four variants chosen by the specialization constant VARIANT:
//  0 atomic — one iteration element per invocation: its index read and checked against
//    [0, bound) ([-bound, bound) with WRAP), then one atomic read-modify-write of the
//    destination element with the source element by REDUCE. 1- and 2-byte elements are
//    compare-and-swap loops on their enclosing 32-bit word (never a plain store: the word's
//    other bytes belong to other invocations), 4-byte ones native atomics (int32 add, max,
//    min; assign as an exchange; float32 add in NBX_FADD builds: GL_EXT_shader_atomic_float) or
//    compare-and-swap loops on the bit pattern, 8-byte ones the same in 64 bits (NBX_A64 builds
//    only: GL_EXT_shader_atomic_int64).
//  1 sorted — one sorted position per invocation; a segment's first position folds its run
//    of equal keys, in order, from the destination's value and stores the result once (1- and
//    2-byte elements still by compare-and-swap on the word: neighbours belong to other
//    segments).
//  2 keys — the destination offset of every iteration element (int64, -1 for a bad index),
//    optionally added to the key already there.
//  3 partitioned — by PASS: count the elements per bucket of destinations, partition them as
//    (offset, bits) pairs into their buckets' ranges, apply the pairs in order with the atomic
//    variant's read-modify-write (elements of at most 4 bytes; not in the 64-bit builds).
// Per-step semantics of REDUCE: assign stores the source's bits; add and mul wrap for
// integers, are or / and for bool, are float32 arithmetic rounded to the dtype each step for
// float16/bfloat16, native for float32 and float64 (float64 only in NBX_F64 builds); max and
// min compare exactly (vk_compare.glsl: integers with their signedness, floats as IEEE) and a
// NaN source always wins. A bad index (or sorted key, or order entry) goes to the fault record
// (the first one wins) and writes nothing.
//
// No 64-bit types outside NBX_A64 / NBX_F64 code: int64 indices, keys and order entries are
// word pairs, int64 arithmetic is done on (lo, hi). All offsets and strides are in elements of
// their own buffer and fit the 32-bit index path (backends/vulkan/vk_scatter.cpp).
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#if NBX_A64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#endif
#if NBX_FADD
#extension GL_EXT_shader_atomic_float : require
#endif

#include "nbx_vk_codes.glsl"
// vk_codec.glsl's float16/bfloat16 rounding; its integer decoders name a compute dtype.
#define CDT DT_FLOAT32
#define kNaN uintBitsToFloat(0x7fc00000u)
#include "vk_codec.glsl"
#include "sort_keys.glsl"
#include "vk_compare.glsl"

const int kFaultIndexOutOfRange = 1;  // abi::kFaultIndexOutOfRange
const uint kAtomic = 0u, kSorted = 1u, kKeys = 2u, kPartitioned = 3u;  // abi::ScatterVariant
const uint kPassCount = 0u, kPassPartition = 1u, kPassApply = 2u;     // abi::ScatterPass
const uint kAssign = 0u, kAdd = 1u, kMul = 2u, kMax = 3u, kMin = 4u;  // abi::ScatterReduce

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITEM = 4u;  // element size in bytes (keys: 8)
layout(constant_id = 2) const uint WIDE = 1u;  // int64 indices
layout(constant_id = 3) const uint WRAP = 0u;
layout(constant_id = 4) const uint VARIANT = 0u;
layout(constant_id = 5) const uint REDUCE = 0u;
layout(constant_id = 6) const int DT = DT_FLOAT32;
layout(constant_id = 7) const uint ACC = 0u;   // keys: accumulate_keys
layout(constant_id = 8) const uint PASS = 0u;  // partitioned: abi::ScatterPass

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;     // x numel, y ndim, z invocations in the grid, w bound
  uvec4 offsets;  // x out, y src, z index (sorted: keys), w key_offset (keys: the keys; sorted:
                  // order; partitioned: the bucket shift)
  uvec4 misc;     // x the fault record's op (abi::fault_op), y index_scale; partitioned: z
                  // buckets, w parts
  uvec4 sizes[2];  // [d / 4][d % 4]
  uvec4 out_strides[2];
  uvec4 src_strides[2];
  uvec4 index_strides[2];
  uvec4 positions[2];
} P;

// The destination (keys: the int64 keys as word pairs), read and written concurrently.
layout(set = 0, binding = 1) coherent buffer O32 { uint v[]; } o32;
layout(set = 0, binding = 1) coherent buffer O32I { int v[]; } o32i;
layout(set = 0, binding = 1) coherent buffer O64 { uvec2 v[]; } o64;
#if NBX_FADD
layout(set = 0, binding = 1) coherent buffer O32F { float v[]; } o32f;
#endif
#if NBX_A64
layout(set = 0, binding = 1) coherent buffer O64A { uint64_t v[]; } o64a;
layout(set = 0, binding = 1) coherent buffer O64I { int64_t v[]; } o64i;
#endif
layout(set = 0, binding = 2) readonly buffer S8 { uint8_t v[]; } s8;
layout(set = 0, binding = 2) readonly buffer S16 { uint16_t v[]; } s16;
layout(set = 0, binding = 2) readonly buffer S32 { uint v[]; } s32;
layout(set = 0, binding = 2) readonly buffer S64 { uvec2 v[]; } s64;
layout(set = 0, binding = 3) readonly buffer Index { uint v[]; } idx;
layout(set = 0, binding = 4) readonly buffer Order { uint v[]; } ord;
layout(set = 0, binding = 7) coherent buffer Fault { uint w[8]; } fault_rec;

uint at(uvec4 a[2], uint d) { return a[d >> 2][d & 3u]; }

void record_fault(uvec2 index, uint bound, uint position) {
  if (atomicCompSwap(fault_rec.w[0], 0u, uint(kFaultIndexOutOfRange)) == 0u) {
    fault_rec.w[1] = P.misc.x;
    fault_rec.w[2] = index.x;  // 64-bit little-endian
    fault_rec.w[3] = index.y;
    fault_rec.w[4] = bound;
    fault_rec.w[5] = 0u;
    fault_rec.w[6] = position;
    fault_rec.w[7] = 0u;
  }
}

const uint kMask = ITEM == 1u ? 0xffu : ITEM == 2u ? 0xffffu : 0xffffffffu;

uvec2 load_src(uint s) {
  if (ITEM == 1u) return uvec2(uint(s8.v[s]), 0u);
  if (ITEM == 2u) return uvec2(uint(s16.v[s]), 0u);
  if (ITEM == 4u) return uvec2(s32.v[s], 0u);
  return s64.v[s];
}

// The enclosing word of a 1- or 2-byte element and the element's bit offset in it.
uint word_of(uint d) { return ITEM == 1u ? d >> 2 : d >> 1; }
uint shift_of(uint d) { return ITEM == 1u ? (d & 3u) * 8u : (d & 1u) * 16u; }

// max: isnan(src) ? src : (out < src ? src : out); min: isnan(src) ? src : (src < out ? src : out).
uvec2 extremum(uvec2 a, uvec2 b) {
  const uvec2 ka = nbx_cmp_key(DT, a), kb = nbx_cmp_key(DT, b);
  if (nbx_key_nan(DT, kb)) return b;
  if (nbx_key_nan(DT, ka)) return a;
  const bool take = REDUCE == kMax ? nbx_key_less(ka, kb) : nbx_key_less(kb, ka);
  return take ? b : a;
}

// The new bits of a destination element of at most 4 bytes from its bits `a` and the
// source's `b` (both zero-extended), masked to the element.
uint combine32(uint a, uint b) {
  if (REDUCE == kAssign) return b;
  if (REDUCE == kMax || REDUCE == kMin) return extremum(uvec2(a, 0u), uvec2(b, 0u)).x;
  if (DT == DT_BOOL) {
    const bool x = a != 0u, y = b != 0u;
    return (REDUCE == kAdd ? (x || y) : (x && y)) ? 1u : 0u;
  }
  if (DT == DT_FLOAT32 || DT == DT_FLOAT16 || DT == DT_BFLOAT16) {
    const float x = nbx_decF(DT, uvec2(a, 0u)), y = nbx_decF(DT, uvec2(b, 0u));
    return nbx_encF(DT, REDUCE == kAdd ? x + y : x * y).x;
  }
  // Integers: the low bits of the sum / product are the wrapped result of either signedness.
  return (REDUCE == kAdd ? a + b : a * b) & kMask;
}

// The same for 8-byte elements (int64, float64) as (lo, hi).
uvec2 combine64(uvec2 a, uvec2 b) {
  if (REDUCE == kAssign) return b;
  if (REDUCE == kMax || REDUCE == kMin) return extremum(a, b);
  if (DT == DT_INT64) {
    uint hi, lo;
    if (REDUCE == kAdd) {
      lo = uaddCarry(a.x, b.x, hi);
      return uvec2(lo, a.y + b.y + hi);
    }
    umulExtended(a.x, b.x, hi, lo);
    return uvec2(lo, hi + a.x * b.y + a.y * b.x);
  }
#if NBX_F64
  const double x = packDouble2x32(a), y = packDouble2x32(b);
  return unpackDouble2x32(REDUCE == kAdd ? x + y : x * y);
#else
  return b;  // unreachable: vk_scatter.cpp takes an _f64 build for float64 add and mul
#endif
}

uvec2 combine(uvec2 a, uvec2 b) {
  return ITEM == 8u ? combine64(a, b) : uvec2(combine32(a.x, b.x), 0u);
}

// The atomic variant's read-modify-write of destination element d with source bits b.
void update_atomic(uint d, uvec2 b) {
  if (ITEM == 1u || ITEM == 2u) {
    const uint w = word_of(d), sh = shift_of(d);
    uint cur = o32.v[w];
    bool exact = false;  // cur came from an atomic, so an unchanged element needs no write
    for (;;) {
      const uint old = (cur >> sh) & kMask;
      const uint now = combine32(old, b.x);
      if (exact && now == old) return;
      const uint prev = atomicCompSwap(o32.v[w], cur, (cur & ~(kMask << sh)) | (now << sh));
      if (prev == cur) return;
      cur = prev;
      exact = true;
    }
  } else if (ITEM == 4u) {
    if (REDUCE == kAssign) {
      atomicExchange(o32.v[d], b.x);
      return;
    }
    if (DT == DT_INT32 && REDUCE == kAdd) {
      atomicAdd(o32.v[d], b.x);
      return;
    }
#if NBX_FADD
    if (DT == DT_FLOAT32 && REDUCE == kAdd) {  // VK_EXT_shader_atomic_float
      atomicAdd(o32f.v[d], uintBitsToFloat(b.x));
      return;
    }
#endif
    if (DT == DT_INT32 && REDUCE == kMax) {
      atomicMax(o32i.v[d], int(b.x));
      return;
    }
    if (DT == DT_INT32 && REDUCE == kMin) {
      atomicMin(o32i.v[d], int(b.x));
      return;
    }
    uint cur = o32.v[d];
    bool exact = false;
    for (;;) {
      const uint now = combine32(cur, b.x);
      if (exact && now == cur) return;
      const uint prev = atomicCompSwap(o32.v[d], cur, now);
      if (prev == cur) return;
      cur = prev;
      exact = true;
    }
  } else {
#if NBX_A64
    const uint64_t src = pack64(b);
    if (REDUCE == kAssign) {
      atomicExchange(o64a.v[d], src);
      return;
    }
    if (DT == DT_INT64 && REDUCE == kAdd) {
      atomicAdd(o64a.v[d], src);
      return;
    }
    if (DT == DT_INT64 && REDUCE == kMax) {
      atomicMax(o64i.v[d], int64_t(src));
      return;
    }
    if (DT == DT_INT64 && REDUCE == kMin) {
      atomicMin(o64i.v[d], int64_t(src));
      return;
    }
    uint64_t cur = o64a.v[d];
    bool exact = false;
    for (;;) {
      const uint64_t now = pack64(combine64(unpack32(cur), b));
      if (exact && now == cur) return;
      const uint64_t prev = atomicCompSwap(o64a.v[d], cur, now);
      if (prev == cur) return;
      cur = prev;
      exact = true;
    }
#endif
    // Without NBX_A64 nothing: vk_scatter.cpp refuses 8-byte atomic scatters on such builds'
    // devices ("scatter.atomic64") and takes scatter_a64 elsewhere.
  }
}

uvec2 load_out(uint d) {
  if (ITEM == 1u || ITEM == 2u) return uvec2((o32.v[word_of(d)] >> shift_of(d)) & kMask, 0u);
  if (ITEM == 4u) return uvec2(o32.v[d], 0u);
  return o64.v[d];
}

// The sorted variant's one store of its segment's result: no other invocation writes the
// element, but a 1- or 2-byte one shares its word with other segments' elements.
void store_out(uint d, uvec2 r) {
  if (ITEM == 1u || ITEM == 2u) {
    const uint w = word_of(d), sh = shift_of(d);
    uint cur = o32.v[w];
    for (;;) {
      const uint prev = atomicCompSwap(o32.v[w], cur, (cur & ~(kMask << sh)) | (r.x << sh));
      if (prev == cur) return;
      cur = prev;
    }
  } else if (ITEM == 4u) {
    o32.v[d] = r.x;
  } else {
    o64.v[d] = r;
  }
}

// Element `i` of the int64 index (sorted: keys) and order buffers as (lo, hi).
uvec2 index_at(uint i) { return uvec2(idx.v[2u * i], idx.v[2u * i + 1u]); }
uvec2 order_at(uint i) { return uvec2(ord.v[2u * i], ord.v[2u * i + 1u]); }

// The sorted variant at sorted position j.
void sorted(uint j) {
  const uint n = P.head.x, bound = P.head.w, keys = P.offsets.z;
  const uvec2 key = index_at(keys + j);
  if (j > 0u && index_at(keys + j - 1u) == key) return;  // not the segment's first
  if (key.y != 0u || key.x >= bound) {
    record_fault(key, bound, j);
    return;
  }
  const uint d = P.offsets.x + key.x, ndim = P.head.y;
  uvec2 acc = load_out(d);
  bool any = false;
  for (uint t = j; t < n; ++t) {
    if (t > j && index_at(keys + t) != key) break;
    const uvec2 e = order_at(P.offsets.w + t);
    if (e.y != 0u || e.x >= n) {
      record_fault(e, n, t);
      continue;
    }
    uint rest = e.x, s = P.offsets.y;
    for (uint k = ndim; k-- > 0u;) {
      const uint size = at(P.sizes, k);
      s += (rest % size) * at(P.src_strides, k);
      rest /= size;
    }
    acc = combine(acc, load_src(s));
    any = true;
  }
  if (any) store_out(d, acc);
}

// Iteration element e's destination offset relative to out (o), its source element (s),
// its index element (x) and its position (pos). The outermost coordinate is what is left of
// e (e < numel): no division for it.
void locate(uint e, out uint o, out uint s, out uint x, out uint pos) {
  uint rest = e;
  o = 0u, s = P.offsets.y, x = P.offsets.z, pos = 0u;
  const uint ndim = P.head.y;
  for (uint k = ndim; k-- > 1u;) {
    const uint size = at(P.sizes, k);
    const uint c = rest % size;
    rest /= size;
    o += c * at(P.out_strides, k);
    s += c * at(P.src_strides, k);
    x += c * at(P.index_strides, k);
    pos += c * at(P.positions, k);
  }
  if (ndim > 0u) {
    o += rest * at(P.out_strides, 0u);
    s += rest * at(P.src_strides, 0u);
    x += rest * at(P.index_strides, 0u);
    pos += rest * at(P.positions, 0u);
  }
}

// The index at x as (lo, hi) words, checked as gather.comp does (bound <= 2^31 - 1): true
// with i in [0, bound), or false after recording the fault (when `record`).
bool checked_index(uint x, uint pos, bool record, out uint i) {
  const uint bound = P.head.w;
  const uint lo = WIDE == 1u ? idx.v[2u * x] : idx.v[x];
  const uint hi = WIDE == 1u ? idx.v[2u * x + 1u] : (int(lo) < 0 ? 0xffffffffu : 0u);
  i = 0u;
  if (hi == 0u && lo < bound) {
    i = lo;
    return true;
  }
  if (WRAP == 1u && hi == 0xffffffffu && int(lo) < 0 && int(lo) >= -int(bound)) {
    i = lo + bound;
    return true;
  }
  if (record) record_fault(uvec2(lo, hi), bound, pos);
  return false;
}

// ---- partitioned (abi::kScatterPartitioned): the atomics bucket by bucket ----
// The elements in misc.w runs ("parts") of ceil(numel / parts), a workgroup a part; the
// counts and starts bucket-major (b · parts + part). The count pass writes the counts to
// binding 1; the partition pass reads the starts at binding 4 and writes the pairs to
// binding 1; the apply pass reads the pairs at binding 3. offsets.w is the bucket shift,
// misc.z the number of buckets (a bad index's bucket).
#if !NBX_A64 && !NBX_F64
const uint kSlots = 1025u;  // abi::kScatterMaxBuckets + 1
const uint kItems = 8u;     // elements an invocation holds in the partition pass
const uint kBadPair = 0xffffffffu;
shared uint sh_next[kSlots];
shared uint sh_hist[kSlots];

// Element e's relative destination offset (kBadPair for a bad index), its source element and
// its bucket.
uint bucket_of(uint e, bool record, out uint rel, out uint s) {
  uint o, x, pos, i;
  locate(e, o, s, x, pos);
  if (!checked_index(x, pos, record, i)) {
    rel = kBadPair;
    return P.misc.z;
  }
  rel = o + i * P.misc.y;
  return rel >> P.offsets.w;
}

// The elements [lo, hi) of this workgroup's part.
void part_range(out uint lo, out uint hi) {
  const uint n = P.head.x, len = (n + P.misc.w - 1u) / P.misc.w;
  lo = gl_WorkGroupID.x * len;
  hi = min(lo + len, n);
}

// Count: the part's histogram in shared memory, stored as its column of the counts.
void count_pass() {
  const uint slots = P.misc.z + 1u, lid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  for (uint b = lid; b < slots; b += wg) sh_hist[b] = 0u;
  barrier();
  uint lo, hi;
  part_range(lo, hi);
  for (uint e = lo + lid; e < hi; e += wg) {
    uint rel, s;
    atomicAdd(sh_hist[bucket_of(e, true, rel, s)], 1u);
  }
  barrier();
  for (uint b = lid; b < slots; b += wg) o32.v[b * P.misc.w + gl_WorkGroupID.x] = sh_hist[b];
}

// Partition: the part's next slot in every bucket from the starts; tile by tile, ranks within
// the buckets by shared atomics, the pairs stored at next + rank, next advanced by the tile's
// counts. No global atomics.
void partition_pass() {
  const uint slots = P.misc.z + 1u, lid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  const uint n = P.head.x;
  for (uint b = lid; b < slots; b += wg) {
    sh_next[b] = ord.v[b * P.misc.w + gl_WorkGroupID.x];
    sh_hist[b] = 0u;
  }
  barrier();
  uint lo, hi;
  part_range(lo, hi);
  const uint tile = wg * kItems;
  for (uint t0 = lo; t0 < hi; t0 += tile) {
    uint rel[kItems], bucket[kItems], rank[kItems], bits[kItems];
    for (uint u = 0u; u < kItems; ++u) {
      const uint e = t0 + u * wg + lid;
      bucket[u] = kBadPair;  // past the part's end
      if (e < hi) {
        uint s;
        bucket[u] = bucket_of(e, false, rel[u], s);
        bits[u] = load_src(s).x;
      }
    }
    for (uint u = 0u; u < kItems; ++u)
      if (bucket[u] != kBadPair) rank[u] = atomicAdd(sh_hist[bucket[u]], 1u);
    barrier();
    for (uint u = 0u; u < kItems; ++u) {
      if (bucket[u] == kBadPair) continue;
      const uint slot = sh_next[bucket[u]] + rank[u];
      if (slot < n) {  // starts that are not the counts' prefix write nothing outside
        o32.v[2u * slot] = rel[u];
        o32.v[2u * slot + 1u] = bits[u];
      }
    }
    barrier();  // every slot read before it advances
    for (uint u = 0u; u < kItems; ++u)
      if (bucket[u] != kBadPair && rank[u] == 0u) {
        sh_next[bucket[u]] += sh_hist[bucket[u]];
        sh_hist[bucket[u]] = 0u;
      }
    barrier();
  }
}

// Apply: the pairs in order, each combined as the atomic variant does.
void apply_pass() {
  for (uint j = gl_GlobalInvocationID.x; j < P.head.x; j += P.head.z) {
    const uint offset = idx.v[2u * j];
    if (offset != kBadPair) update_atomic(P.offsets.x + offset, uvec2(idx.v[2u * j + 1u], 0u));
  }
}
#endif

void main() {
#if !NBX_A64 && !NBX_F64
  if (VARIANT == kPartitioned) {
    if (PASS == kPassCount)
      count_pass();
    else if (PASS == kPassPartition)
      partition_pass();
    else
      apply_pass();
    return;
  }
#endif
  const uint n = P.head.x;
  for (uint e = gl_GlobalInvocationID.x; e < n; e += P.head.z) {
    if (VARIANT == kSorted) {
      sorted(e);
      continue;
    }
    uint o, s, x, pos, i;
    locate(e, o, s, x, pos);
    const bool ok = checked_index(x, pos, true, i);
    if (VARIANT == kKeys) {
      // key_offset + e as a word pair; -1 for a bad index or a key already -1.
      const uint kw = 2u * (P.offsets.w + e);
      uvec2 key = uvec2(0xffffffffu);
      if (ok) {
        const uint delta = o + i * P.misc.y;
        key = uvec2(delta, 0u);
        if (ACC == 1u) {
          // Added in 64 bits: the key already there is any int64 an earlier pass wrote.
          const uvec2 old = uvec2(o32.v[kw], o32.v[kw + 1u]);
          if (old == uvec2(0xffffffffu)) {
            key = old;
          } else {
            uint carry;
            key.x = uaddCarry(old.x, delta, carry);
            key.y = old.y + carry;
          }
        }
      }
      o32.v[kw] = key.x;
      o32.v[kw + 1u] = key.y;
      continue;
    }
    if (ok) update_atomic(P.offsets.x + o + i * P.misc.y, load_src(s));
  }
}
