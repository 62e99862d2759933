// The host "rotary" kernel (abi::RotaryParams): every pair of every q and k head of a token
// rotated by the cache row its position picks, in float64, rounded once to the dtype. A bad
// position throws DeviceFault at once (decoded by the rotary family, as the GPU backends'
// fault records are), before any element of that token is touched.
#include <cstring>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_scratch.hpp"
#include "backends/host/host_values.hpp"
#include "core/errors.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::host {
namespace {

struct Heads {
  std::byte* base;
  std::int64_t first, count, head_stride, dim_stride;
};

// Rotates the pairs of `heads` heads from element `first` with the row's cos and sin.
void rotate(const abi::RotaryParams& p, const Heads& h, const double* cos, const double* sin) {
  const DType t = DType(p.dtype);
  const std::int64_t half = p.rotary_dim / 2;
  for (std::int64_t head = 0; head < h.count; ++head) {
    const std::int64_t at = h.first + head * h.head_stride;
    for (std::int64_t i = 0; i < half; ++i) {
      const std::int64_t d1 = p.style == abi::kRotaryHalf ? i : 2 * i;
      const std::int64_t d2 = p.style == abi::kRotaryHalf ? i + half : 2 * i + 1;
      const std::int64_t e1 = at + d1 * h.dim_stride, e2 = at + d2 * h.dim_stride;
      const double x1 = as_f(load(h.base, t, e1)), x2 = as_f(load(h.base, t, e2));
      store(h.base, t, e1, from_double(x1 * cos[i] - x2 * sin[i]));
      store(h.base, t, e2, from_double(x2 * cos[i] + x1 * sin[i]));
    }
  }
}

}  // namespace

void run_family(const abi::RotaryParams& p, std::span<const KernelBuffer> buffers) {
  if (p.tokens == 0 || p.q_heads + p.k_heads == 0) return;
  auto* q = static_cast<std::byte*>(buffers[0].memory.handle);
  auto* k = static_cast<std::byte*>(buffers[1].memory.handle);
  const auto* pos = static_cast<const std::byte*>(buffers[2].memory.handle);
  const auto* cache = static_cast<const std::byte*>(buffers[3].memory.handle);
  const DType ct = DType(p.cache_dtype), pt = DType(p.pos_dtype);
  const std::int64_t half = p.rotary_dim / 2;
  const Scratch<double> cos(half), sin(half);  // launch scratch: within the memory cap

  // An odometer over the token dims, each operand's token offset kept alongside.
  std::int64_t coord[abi::kMaxDims] = {};
  std::int64_t qo = p.q_offset, ko = p.k_offset, po = p.pos_offset;
  for (std::int64_t token = 0; token < p.tokens; ++token) {
    const std::int64_t position = as_i(load(pos, pt, po));
    if (position < 0 || position >= p.max_position) {
      const abi::FaultRecord r{abi::kFaultIndexOutOfRange, abi::fault_op(abi::kFamily_rotary, p.op),
                               position, p.max_position, token};
      throw fault_error(r, "host", "host");
    }
    const std::int64_t row = p.cache_offset + position * p.cache_row_stride;
    for (std::int64_t i = 0; i < half; ++i) {
      cos[std::size_t(i)] = as_f(load(cache, ct, row + i * p.cache_col_stride));
      sin[std::size_t(i)] = as_f(load(cache, ct, row + (half + i) * p.cache_col_stride));
    }
    rotate(p, {q, qo, p.q_heads, p.q_head_stride, p.q_dim_stride}, cos.data(), sin.data());
    if (p.has_k)
      rotate(p, {k, ko, p.k_heads, p.k_head_stride, p.k_dim_stride}, cos.data(), sin.data());
    for (int d = p.token_ndim - 1; d >= 0; --d) {
      qo += p.q_token_strides[d], ko += p.k_token_strides[d], po += p.pos_strides[d];
      if (++coord[d] < p.token_sizes[d]) break;
      coord[d] = 0;
      qo -= p.q_token_strides[d] * p.token_sizes[d];
      ko -= p.k_token_strides[d] * p.token_sizes[d];
      po -= p.pos_strides[d] * p.token_sizes[d];
    }
  }
}

}  // namespace nbx::host
