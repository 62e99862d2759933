// The sort family's keys on CUDA/HIP (kernel ABI: abi::SortParams): the order-preserving
// transform of an element's bits into an unsigned key, its inverse where the key determines
// the bits, and the row offsets every sort kernel starts from. Shared by the rows, radix and
// onesweep kernels so all three order keys exactly alike.
#pragma once

#include "kernels/gpu/elementwise_kernels.cuh"

namespace nbx::gpu::sort {

using u32 = unsigned;
using u64 = unsigned long long;

NBX_GPU_INLINE bool is_float_dtype(int dtype) {
  return dtype == kFloat16 || dtype == kBFloat16 || dtype == kFloat32 || dtype == kFloat64;
}
NBX_GPU_INLINE int mantissa_bits(int dtype) {
  return dtype == kFloat16 ? 10 : dtype == kBFloat16 ? 7 : dtype == kFloat32 ? 23 : 52;
}

// The family's key of one element's bits (the low `bits` bits of `raw`): integers by value,
// floats by value with -0 as +0 and every NaN one key above +inf; `descending` inverts it.
// Computed in T, an unsigned type of at least `bits` bits: 32-bit keys in 32-bit arithmetic
// (half the instructions of 64-bit words, which the select filter's one read notices).
template <typename T>
NBX_GPU_INLINE T sort_key_in(T raw, int dtype, int bits, bool descending) {
  const T mask = bits == int(8 * sizeof(T)) ? T(~T(0)) : T((T(1) << bits) - 1);
  const T sign = T(1) << (bits - 1);
  T key = raw & mask;
  if (is_float_dtype(dtype)) {
    const int mantissa = mantissa_bits(dtype);
    const T exponent = T(mask >> (mantissa + 1)) << mantissa;
    const T magnitude = key & ~sign;
    if ((magnitude & exponent) == exponent && (magnitude & ~exponent) != 0)
      key = mask;  // every NaN, above +inf
    else if (magnitude == 0)
      key = sign;  // -0 as +0
    else
      key = (key & sign) ? ~key & mask : key | sign;
  } else if (dtype != kBool && dtype != kUInt8) {
    key ^= sign;
  }
  return descending ? T(~key & mask) : key;
}
NBX_GPU_INLINE u64 sort_key(u64 raw, int dtype, int bits, bool descending) {
  return sort_key_in<u64>(raw, dtype, bits, descending);
}

// The element's bits back from its key, where the key determines them: every key but a
// float's NaN key (payload and sign not kept) and zero key (-0 or +0). Returns false for
// those; the caller copies the element from the input instead, so values stay bit for bit.
NBX_GPU_INLINE bool element_of_key(u64 key, int dtype, int bits, bool descending, u64& raw) {
  const u64 mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  const u64 sign = 1ull << (bits - 1);
  if (descending) key = ~key & mask;
  if (is_float_dtype(dtype)) {
    if (key == mask || key == sign) return false;
    raw = (key & sign) ? key ^ sign : ~key & mask;
  } else {
    raw = dtype != kBool && dtype != kUInt8 ? key ^ sign : key;
  }
  return true;
}

template <typename Elem>
NBX_GPU_INLINE u64 raw_bits(Elem v) {
  return u64(v);  // Elem is the unsigned type of the element's size
}

struct RowOffsets {
  i64 in, values, indices;
};

// Where row `row` (row-major over the outer sizes) starts in the input, values and indices.
NBX_GPU_INLINE RowOffsets row_offsets(const abi::SortParams& p, i64 row) {
  RowOffsets o{p.in_offset, p.values_offset, p.indices_offset};
  for (int d = p.outer_ndim - 1; d >= 0; --d) {
    const i64 c = next_coordinate(row, p.outer_sizes[d]);
    o.in += c * p.in_outer_strides[d];
    o.values += c * p.values_outer_strides[d];
    o.indices += c * p.indices_outer_strides[d];
  }
  return o;
}

// Place `to` of a sorted row: the value of key `key` (rebuilt from the key where the key
// determines it, else copied from the input's element `from`, so values stay bit for bit) and
// its index `from`.
template <typename Elem>
NBX_GPU_INLINE void write_sorted(const abi::SortParams& p, const RowOffsets& o, Elem* values,
                                 long long* indices, const Elem* in, u64 key, u32 from, u32 to) {
  u64 raw;
  const Elem v = element_of_key(key, p.dtype, p.key_bits, p.descending != 0, raw)
                     ? Elem(raw)
                     : in[o.in + i64(from) * p.in_row_stride];
  values[o.values + i64(to) * p.values_row_stride] = v;
  indices[o.indices + i64(to) * p.indices_row_stride] = from;
}

// The key and element types of a key width, for with_key_types.
template <typename KeyType, typename ElemType>
struct KeyTypes {
  using Key = KeyType;    // 32 bits for keys of up to 32, else 64
  using Elem = ElemType;  // the unsigned type of the element's size
};

// Calls f(KeyTypes<Key, Elem>{}) for a launch's key width: each variant's launcher is one
// template over the two types.
template <typename F>
void with_key_types(int key_bits, F&& f) {
  switch (key_bits) {
    case 8:
      return f(KeyTypes<u32, unsigned char>{});
    case 16:
      return f(KeyTypes<u32, unsigned short>{});
    case 32:
      return f(KeyTypes<u32, unsigned>{});
    default:
      return f(KeyTypes<u64, unsigned long long>{});
  }
}

}  // namespace nbx::gpu::sort
