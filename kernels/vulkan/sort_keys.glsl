// The sort family's key (nbx::abi::SortParams; the same transform as
// backends/host/host_sort.cpp): an element's bits, read as (lo, hi) words, become an unsigned
// key of BITS bits in the same words whose order is PyTorch's sort order — integers by value,
// floats by value with -0 equal to +0 and every NaN equal and above +inf — inverted when
// descending. `kind` 0 unsigned or bool, 1 signed, 2 floating with `mantissa` bits.
// No 64-bit shader types: a 64-bit key is compared as (hi, lo).

uvec2 sort_key(uvec2 raw, uint bits, uint kind, uint mantissa, bool descending) {
  if (bits == 64u) {
    uint lo = raw.x, hi = raw.y;
    if (kind == 2u) {
      const uint mag_hi = hi & 0x7fffffffu;
      if ((mag_hi & 0x7ff00000u) == 0x7ff00000u && ((mag_hi & 0xfffffu) | lo) != 0u) {
        lo = 0xffffffffu;  // every NaN, above +inf
        hi = 0xffffffffu;
      } else if (mag_hi == 0u && lo == 0u) {
        hi = 0x80000000u;  // -0 as +0
      } else if ((hi & 0x80000000u) != 0u) {
        lo = ~lo;
        hi = ~hi;
      } else {
        hi |= 0x80000000u;
      }
    } else if (kind == 1u) {
      hi ^= 0x80000000u;
    }
    return descending ? uvec2(~lo, ~hi) : uvec2(lo, hi);
  }
  const uint mask = bits == 32u ? 0xffffffffu : (1u << bits) - 1u;
  const uint sign = 1u << (bits - 1u);
  uint key = raw.x & mask;
  if (kind == 2u) {
    const uint exponent = (mask >> (mantissa + 1u)) << mantissa;
    const uint magnitude = key & ~sign;
    if ((magnitude & exponent) == exponent && (magnitude & ~exponent) != 0u)
      key = mask;
    else if (magnitude == 0u)
      key = sign;
    else
      key = (key & sign) != 0u ? (~key & mask) : (key | sign);
  } else if (kind == 1u) {
    key ^= sign;
  }
  return uvec2(descending ? (~key & mask) : key, 0u);
}

// (key, position) pairs in order: a before b.
bool pair_less(uvec2 ka, uint pa, uvec2 kb, uint pb) {
  if (ka.y != kb.y) return ka.y < kb.y;
  if (ka.x != kb.x) return ka.x < kb.x;
  return pa < pb;
}
