// The reference normalizations: layer_norm, rms_norm, group_norm (statistics per row) and
// batch_norm in inference (running statistics). float64 statistics, biased variance.
#include <cmath>
#include <string>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_values.hpp"
#include "core/errors.hpp"

namespace nbx::host {
namespace {

struct NormBuffers {
  std::byte* out;
  const std::byte* in;
  const std::byte* weight;
  const std::byte* bias;
  const std::byte* running_mean;
  const std::byte* running_var;
};

const std::byte* optional_buffer(std::span<const KernelBuffer> b, std::size_t i) {
  return i < b.size() ? static_cast<const std::byte*>(b[i].memory.handle) : nullptr;
}

// The channel (index into weight/bias/statistics) of element k of row r.
std::int64_t channel_of(const abi::NormParams& p, std::int64_t r, std::int64_t k) {
  switch (p.op) {
    case abi::kNorm_group_norm:
      return (r % p.groups) * (p.channels / p.groups) + k / p.inner;
    case abi::kNorm_batch_norm:
      return k / p.inner;
    default:
      return k;
  }
}

}  // namespace

void run_family(const abi::NormParams& p, std::span<const KernelBuffer> buffers) {
  if (buffers.size() < 2 || (p.op == abi::kNorm_batch_norm && buffers.size() < 6))
    throw InvalidArgument(
        "norm", "norm: malformed launch (" + std::to_string(buffers.size()) + " buffers).");
  const NormBuffers b{static_cast<std::byte*>(buffers[0].memory.handle),
                      static_cast<const std::byte*>(buffers[1].memory.handle),
                      p.has_weight ? optional_buffer(buffers, 2) : nullptr,
                      p.has_bias ? optional_buffer(buffers, 3) : nullptr,
                      optional_buffer(buffers, 4),
                      optional_buffer(buffers, 5)};
  const auto in_dtype = static_cast<DType>(p.in_dtype), out_dtype = static_cast<DType>(p.out_dtype);
  const auto param_dtype = static_cast<DType>(p.param_dtype);
  const double n = static_cast<double>(p.row_len);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const std::int64_t base = r * p.row_len;
    double mean = 0, inv_std = 1;
    if (p.op == abi::kNorm_rms_norm) {
      double sq = 0;
      for (std::int64_t k = 0; k < p.row_len; ++k) {
        const double v = as_f(load(b.in, in_dtype, base + k));
        sq += v * v;
      }
      inv_std = 1.0 / std::sqrt(sq / n + p.eps);
    } else if (p.op != abi::kNorm_batch_norm) {
      for (std::int64_t k = 0; k < p.row_len; ++k) mean += as_f(load(b.in, in_dtype, base + k));
      mean /= n;
      double m2 = 0;
      for (std::int64_t k = 0; k < p.row_len; ++k) {
        const double d = as_f(load(b.in, in_dtype, base + k)) - mean;
        m2 += d * d;
      }
      inv_std = 1.0 / std::sqrt(m2 / n + p.eps);
    }
    for (std::int64_t k = 0; k < p.row_len; ++k) {
      const std::int64_t c = channel_of(p, r, k);
      double y;
      const double v = as_f(load(b.in, in_dtype, base + k));
      if (p.op == abi::kNorm_batch_norm) {
        const double rm = as_f(load(b.running_mean, param_dtype, c));
        const double rv = as_f(load(b.running_var, param_dtype, c));
        y = (v - rm) / std::sqrt(rv + p.eps);
      } else {
        y = (v - mean) * inv_std;
      }
      if (b.weight) y *= as_f(load(b.weight, param_dtype, c));
      if (b.bias) y += as_f(load(b.bias, param_dtype, c));
      store(b.out, out_dtype, base + k, from_double(y));
    }
  }
}

}  // namespace nbx::host
