// The host "sort" kernel (abi::SortParams): the reference order every backend reproduces.
// Each row's elements become (key, position) pairs, the key the family's order-preserving
// transform (core/kernel_abi_families.hpp), and are sorted by both, so ties keep their input
// order; the values are then copied bit for bit from the input. Both variants run this (the
// variants differ only in how a GPU lays the work out).
#include <algorithm>
#include <cstring>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_scratch.hpp"
#include "core/dtype.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::host {
namespace {

// The transform of one element's bits (the low `bits` bits of `raw`): an unsigned key whose
// order is PyTorch's sort order; `descending` inverts it within the key's bits.
std::uint64_t sort_key(std::uint64_t raw, DType t, int bits, bool descending) {
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits) - 1;
  const std::uint64_t sign = std::uint64_t(1) << (bits - 1);
  std::uint64_t key = raw & mask;
  if (is_floating(t)) {
    const int mantissa = t == DType::kFloat16    ? 10
                         : t == DType::kBFloat16 ? 7
                         : t == DType::kFloat32  ? 23
                                                 : 52;
    const std::uint64_t exponent = (mask >> (mantissa + 1)) << mantissa;
    const std::uint64_t magnitude = key & ~sign;
    if ((magnitude & exponent) == exponent && (magnitude & ~exponent) != 0)
      key = mask;  // every NaN, above +inf
    else if (magnitude == 0)
      key = sign;  // -0 sorts as +0
    else
      key = (key & sign) ? ~key & mask : key | sign;
  } else if (t != DType::kBool && t != DType::kUInt8) {
    key ^= sign;  // two's complement: flipping the sign bit orders by value
  }
  return descending ? ~key & mask : key;
}

}  // namespace

void run_family(const abi::SortParams& p, std::span<const KernelBuffer> buffers) {
  if (p.rows == 0 || p.row_len == 0) return;
  const DType t = DType(p.dtype);
  const std::size_t item = dtype_size(t);
  auto* values = static_cast<std::byte*>(buffers[0].memory.handle);
  auto* indices = static_cast<std::int64_t*>(buffers[1].memory.handle);
  const auto* in = static_cast<const std::byte*>(buffers[2].memory.handle);

  const Scratch<std::pair<std::uint64_t, std::int64_t>> row(p.row_len);  // within the memory cap
  for (std::int64_t r = 0; r < p.rows; ++r) {
    // The row's offsets in each operand, from its coordinates over the outer dims.
    std::int64_t rest = r, src = p.in_offset, dv = p.values_offset, di = p.indices_offset;
    for (int d = p.outer_ndim - 1; d >= 0; --d) {
      const std::int64_t c = rest % p.outer_sizes[d];
      rest /= p.outer_sizes[d];
      src += c * p.in_outer_strides[d];
      dv += c * p.values_outer_strides[d];
      di += c * p.indices_outer_strides[d];
    }
    for (std::int64_t j = 0; j < p.row_len; ++j) {
      std::uint64_t raw = 0;
      std::memcpy(&raw, in + (src + j * p.in_row_stride) * std::int64_t(item), item);
      row[std::size_t(j)] = {sort_key(raw, t, p.key_bits, p.descending != 0), j};
    }
    std::sort(row.begin(), row.end());
    // sort writes whole rows, topk its first k.
    for (std::int64_t j = 0; j < p.k; ++j) {
      const std::int64_t from = row[std::size_t(j)].second;
      std::memcpy(values + (dv + j * p.values_row_stride) * std::int64_t(item),
                  in + (src + from * p.in_row_stride) * std::int64_t(item), item);
      indices[di + j * p.indices_row_stride] = from;
    }
  }
}

}  // namespace nbx::host
