// The host "scatter" and "search" kernels (abi::ScatterParams, abi::SearchParams): the
// reference every backend is checked against. Iteration elements are visited in row-major
// order, so a duplicate destination takes its writes in that order — the order the sorted
// (deterministic) variant reproduces on every backend. Each step rounds to the dtype, as
// PyTorch's own kernels do (float16 accumulations round per element). A bad index throws
// DeviceFault at once, decoded by the scatter family, before anything is written for it.
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_values.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::host {
namespace {

std::int64_t read_index(const std::byte* base, std::int32_t dtype, std::int64_t at) {
  if (dtype == std::int32_t(DType::kInt64)) {
    std::int64_t v;
    std::memcpy(&v, base + at * 8, 8);
    return v;
  }
  std::int32_t v;
  std::memcpy(&v, base + at * 4, 4);
  return v;
}

[[noreturn]] void index_fault(const abi::ScatterParams& p, std::int64_t index, std::int64_t bound,
                              std::int64_t position) {
  const abi::FaultRecord r{abi::kFaultIndexOutOfRange, abi::fault_op(abi::kFamily_scatter, p.op),
                           index, bound, position};
  throw fault_error(r, "host", "host");
}

// The destination's new value: `reduce` of the old one and the source (ScatterReduce).
Value combine(std::int32_t reduce, const Value& out, const Value& src) {
  if (src.is_float) {
    switch (reduce) {
      case abi::kScatterAdd:
        return from_double(out.f + src.f);
      case abi::kScatterMul:
        return from_double(out.f * src.f);
      case abi::kScatterMax:  // std::max(out, src), a NaN source winning: PyTorch's CPU rule
        return std::isnan(src.f) ? src : (out.f < src.f ? src : out);
      case abi::kScatterMin:
        return std::isnan(src.f) ? src : (src.f < out.f ? src : out);
      default:
        return src;
    }
  }
  const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  switch (reduce) {  // integers wrap (the store narrows); bool: add is or, mul is and
    case abi::kScatterAdd:
      return from_int(static_cast<std::int64_t>(u(out.i) + u(src.i)));
    case abi::kScatterMul:
      return from_int(static_cast<std::int64_t>(u(out.i) * u(src.i)));
    case abi::kScatterMax:
      return out.i < src.i ? src : out;
    case abi::kScatterMin:
      return src.i < out.i ? src : out;
    default:
      return src;
  }
}

// Offsets of iteration element coordinates, kept alongside an odometer.
struct Odometer {
  const abi::ScatterParams& p;
  std::int64_t coord[abi::kMaxDims] = {};
  std::int64_t out = 0, src = 0, index = 0, position = 0;

  explicit Odometer(const abi::ScatterParams& params) : p(params) {}
  void next() {
    for (int d = p.ndim - 1; d >= 0; --d) {
      out += p.out_strides[d], src += p.src_strides[d], index += p.index_strides[d];
      position += p.index_positions[d];
      if (++coord[d] < p.sizes[d]) return;
      coord[d] = 0;
      out -= p.out_strides[d] * p.sizes[d], src -= p.src_strides[d] * p.sizes[d];
      index -= p.index_strides[d] * p.sizes[d], position -= p.index_positions[d] * p.sizes[d];
    }
  }
};

// The checked index of the element the odometer is at (wrapped once where the op wraps).
std::int64_t checked_index(const abi::ScatterParams& p, const std::byte* index,
                           const Odometer& at) {
  const std::int64_t raw = read_index(index, p.index_dtype, p.index_offset + at.index);
  std::int64_t i = raw;
  if (p.wrap_negative && i < 0 && i >= -p.bound) i += p.bound;
  if (i < 0 || i >= p.bound) index_fault(p, raw, p.bound, at.position);
  return i;
}

// The source offset of iteration element e.
std::int64_t source_offset(const abi::ScatterParams& p, std::int64_t e) {
  std::int64_t s = p.src_offset;
  for (int d = p.ndim - 1; d >= 0; --d) {
    s += (e % p.sizes[d]) * p.src_strides[d];
    e /= p.sizes[d];
  }
  return s;
}

void run_sorted(const abi::ScatterParams& p, std::span<const KernelBuffer> buffers) {
  const DType t = DType(p.dtype);
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const auto* src = static_cast<const std::byte*>(buffers[1].memory.handle);
  const auto* keys = static_cast<const std::byte*>(buffers[2].memory.handle);
  const auto* order = static_cast<const std::byte*>(buffers[3].memory.handle);
  const std::int32_t i64 = std::int32_t(DType::kInt64);
  for (std::int64_t j = 0; j < p.numel;) {
    const std::int64_t key = read_index(keys, i64, p.index_offset + j);
    if (key < 0 || key >= p.bound) index_fault(p, key, p.bound, j);
    Value acc = load(out, t, p.out_offset + key);
    for (; j < p.numel && read_index(keys, i64, p.index_offset + j) == key; ++j) {
      const std::int64_t e = read_index(order, i64, p.key_offset + j);
      if (e < 0 || e >= p.numel) index_fault(p, e, p.numel, j);
      acc = combine(p.reduce, acc, load(src, t, source_offset(p, e)));
      store(out, t, p.out_offset + key, acc);  // rounds each step, as the other variants do
      acc = load(out, t, p.out_offset + key);
    }
  }
}

// The partitioned variant's three passes, in iteration order (so each bucket's pairs, and
// the result, keep the sequential order of the other variants here).
void run_partitioned(const abi::ScatterParams& p, std::span<const KernelBuffer> buffers) {
  const DType t = DType(p.dtype);
  const auto word = [](const std::byte* base, std::int64_t at) {
    std::uint32_t v;
    std::memcpy(&v, base + at * 4, 4);
    return v;
  };
  const auto put = [](std::byte* base, std::int64_t at, std::uint32_t v) {
    std::memcpy(base + at * 4, &v, 4);
  };
  if (p.pass == abi::kPassApply) {
    auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
    const auto* pairs = static_cast<const std::byte*>(buffers[2].memory.handle);
    for (std::int64_t j = 0; j < p.numel; ++j) {
      const std::uint32_t offset = word(pairs, 2 * j);
      if (offset == 0xffffffffu) continue;
      // The source bits as stored (little-endian: the element's bytes come first).
      const Value s = load(pairs + (2 * j + 1) * 4, t, 0);
      const std::int64_t d = p.out_offset + offset;
      store(out, t, d, p.reduce == abi::kScatterAssign ? s : combine(p.reduce, load(out, t, d), s));
    }
    return;
  }
  auto* first = static_cast<std::byte*>(buffers[0].memory.handle);  // counts, or the pairs
  const auto* src = static_cast<const std::byte*>(buffers[1].memory.handle);
  const auto* index = static_cast<const std::byte*>(buffers[2].memory.handle);
  const std::size_t item = dtype_size(t);
  const std::int64_t part_len = (p.numel + p.parts - 1) / p.parts;
  // The partition pass's next slot of each (bucket, part), from the starts.
  std::vector<std::uint32_t> next;
  if (p.pass == abi::kPassPartition) {
    const auto* starts = static_cast<const std::byte*>(buffers[3].memory.handle);
    next.resize(std::size_t((p.buckets + 1) * p.parts));
    for (std::size_t k = 0; k < next.size(); ++k) next[k] = word(starts, std::int64_t(k));
  } else {
    for (std::int64_t k = 0; k < (p.buckets + 1) * p.parts; ++k) put(first, k, 0);
  }
  Odometer at(p);
  for (std::int64_t e = 0; e < p.numel; ++e, at.next()) {
    const std::int64_t offset = at.out + checked_index(p, index, at) * p.index_scale;
    const std::int64_t entry = (offset >> p.bucket_shift) * p.parts + e / part_len;
    if (p.pass == abi::kPassCount) {
      put(first, entry, word(first, entry) + 1);
      continue;
    }
    const std::uint32_t slot = next[std::size_t(entry)]++;
    std::uint32_t bits = 0;
    std::memcpy(&bits, src + (p.src_offset + at.src) * std::int64_t(item), item);
    put(first, 2 * std::int64_t(slot), std::uint32_t(offset));
    put(first, 2 * std::int64_t(slot) + 1, bits);
  }
}

}  // namespace

void run_family(const abi::ScatterParams& p, std::span<const KernelBuffer> buffers) {
  if (p.numel == 0) return;
  if (p.variant == abi::kScatterSorted) return run_sorted(p, buffers);
  if (p.variant == abi::kScatterPartitioned) return run_partitioned(p, buffers);
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const auto* src = static_cast<const std::byte*>(buffers[1].memory.handle);
  const auto* index = static_cast<const std::byte*>(buffers[2].memory.handle);
  Odometer at(p);
  if (p.variant == abi::kScatterKeys) {
    auto* keys = reinterpret_cast<std::byte*>(out);
    for (std::int64_t e = 0; e < p.numel; ++e, at.next()) {
      const std::int64_t i = checked_index(p, index, at);
      std::int64_t key = 0;
      if (p.accumulate_keys) std::memcpy(&key, keys + (p.key_offset + e) * 8, 8);
      if (key != -1) key += at.out + i * p.index_scale;
      std::memcpy(keys + (p.key_offset + e) * 8, &key, 8);
    }
    return;
  }
  const DType t = DType(p.dtype);
  for (std::int64_t e = 0; e < p.numel; ++e, at.next()) {
    const std::int64_t d = p.out_offset + at.out + checked_index(p, index, at) * p.index_scale;
    const Value s = load(src, t, p.src_offset + at.src);
    store(out, t, d, p.reduce == abi::kScatterAssign ? s : combine(p.reduce, load(out, t, d), s));
  }
}

void run_family(const abi::SearchParams& p, std::span<const KernelBuffer> buffers) {
  if (p.numel == 0) return;
  const DType t = DType(p.dtype);
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const auto* seq = static_cast<const std::byte*>(buffers[1].memory.handle);
  const auto* values = static_cast<const std::byte*>(buffers[2].memory.handle);
  std::int64_t coord[abi::kMaxDims] = {};
  std::int64_t o = p.out_offset, v = p.values_offset, r = p.seq_offset;
  for (std::int64_t n = 0; n < p.numel; ++n) {
    const Value x = load(values, t, v);
    std::int64_t start = 0, end = p.seq_len;
    while (start < end) {  // PyTorch's loop: NaN compares false on either side
      const std::int64_t mid = start + ((end - start) >> 1);
      const Value m = load(seq, t, r + mid * p.seq_stride);
      const bool right_of = x.is_float ? (p.right ? !(m.f > x.f) : !(m.f >= x.f))
                                       : (p.right ? !(m.i > x.i) : !(m.i >= x.i));
      if (right_of)
        start = mid + 1;
      else
        end = mid;
    }
    store(out, DType(p.out_dtype), o, from_int(start));
    for (int d = p.ndim - 1; d >= 0; --d) {
      o += p.out_strides[d], v += p.values_strides[d], r += p.seq_strides[d];
      if (++coord[d] < p.sizes[d]) break;
      coord[d] = 0;
      o -= p.out_strides[d] * p.sizes[d], v -= p.values_strides[d] * p.sizes[d];
      r -= p.seq_strides[d] * p.sizes[d];
    }
  }
}

}  // namespace nbx::host
