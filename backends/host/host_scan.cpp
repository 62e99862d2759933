// The reference semantics of the inclusive scans (PyTorch's), computed in float64 / int64;
// logcumsumexp by PyTorch's own step (log_add_exp), in float64.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_values.hpp"
#include "core/errors.hpp"

namespace nbx::host {
namespace {

bool is_nan(const Value& v) {
  return v.is_float && std::isnan(v.f);
}

// The offset of row `r` (row-major over the outer dims) in an operand with these strides.
std::int64_t row_offset(const abi::ScanParams& p, std::int64_t r, std::int64_t base,
                        const std::int64_t* strides) {
  std::int64_t off = base;
  for (int d = p.outer_ndim - 1; d >= 0; --d) {
    const std::int64_t size = p.outer_sizes[d];
    off += (r % size) * strides[d];
    r /= size;
  }
  return off;
}

// cummax/cummin, as PyTorch's cummax_cummin_helper: the running extreme takes an element
// that is NaN, or that compares >= (cummax) / <= (cummin) with a non-NaN running value. So
// ties move the index to the later element, a NaN sticks, and a later NaN takes the index.
bool takes_over(const Value& cur, const Value& best, bool want_max) {
  if (is_nan(cur)) return true;
  if (is_nan(best)) return false;
  if (cur.is_float || best.is_float)
    return want_max ? as_f(cur) >= as_f(best) : as_f(cur) <= as_f(best);
  return want_max ? cur.i >= best.i : cur.i <= best.i;
}

// log(exp(x) + exp(y)), PyTorch's _log_add_exp_helper (logcumsumexp's step, y the running
// value): log1p(exp(min - max)) + max, NaN propagating, except that two equal infinities
// give that infinity (where min - max would be NaN).
double log_add_exp(double x, double y) {
  const double lo = std::isnan(y) ? y : std::min(x, y);
  const double hi = std::isnan(y) ? y : std::max(x, y);
  if (lo != hi || std::isfinite(lo)) return std::log1p(std::exp(lo - hi)) + hi;
  return x;
}

}  // namespace

void run_family(const abi::ScanParams& p, std::span<const KernelBuffer> buffers) {
  const bool extreme = p.op == abi::kScan_cummax || p.op == abi::kScan_cummin;
  const std::size_t want = extreme ? 3 : 2;
  if (p.op < abi::kScan_cumsum || p.op > abi::kScan_logcumsumexp || buffers.size() != want ||
      p.outer_ndim < 0 || p.outer_ndim > abi::kMaxDims)
    throw InvalidArgument("scan", "scan: malformed launch (op " + std::to_string(p.op) + ", " +
                                      std::to_string(buffers.size()) + " buffers, " +
                                      std::to_string(p.outer_ndim) + " outer dims).");
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const auto* in = static_cast<const std::byte*>(buffers[1].memory.handle);
  auto* idx = extreme ? static_cast<std::byte*>(buffers[2].memory.handle) : nullptr;
  const auto in_dtype = static_cast<DType>(p.in_dtype);
  const auto out_dtype = static_cast<DType>(p.out_dtype);
  const bool fl = is_floating(static_cast<DType>(p.accumulate_dtype));

  for (std::int64_t r = 0; r < p.rows; ++r) {
    const std::int64_t in_base = row_offset(p, r, p.in_offset, p.in_outer_strides);
    const std::int64_t out_base = row_offset(p, r, p.out_offset, p.out_outer_strides);
    const std::int64_t idx_base =
        extreme ? row_offset(p, r, p.index_offset, p.index_outer_strides) : 0;
    double f = p.op == abi::kScan_cumprod ? 1.0 : p.op == abi::kScan_logcumsumexp ? -INFINITY : 0.0;
    std::uint64_t i = p.op == abi::kScan_cumprod ? 1 : 0;  // wraps like int64 two's complement
    Value best{};
    std::int64_t best_at = 0;
    for (std::int64_t k = 0; k < p.row_len; ++k) {
      const Value v = load(in, in_dtype, in_base + k * p.in_row_stride);
      const std::int64_t o = out_base + k * p.out_row_stride;
      switch (p.op) {
        case abi::kScan_cumsum:
          fl ? void(f += as_f(v)) : void(i += static_cast<std::uint64_t>(as_i(v)));
          store(out, out_dtype, o, fl ? from_double(f) : from_int(static_cast<std::int64_t>(i)));
          break;
        case abi::kScan_cumprod:
          fl ? void(f *= as_f(v)) : void(i *= static_cast<std::uint64_t>(as_i(v)));
          store(out, out_dtype, o, fl ? from_double(f) : from_int(static_cast<std::int64_t>(i)));
          break;
        case abi::kScan_logcumsumexp:
          f = log_add_exp(as_f(v), f);
          store(out, out_dtype, o, from_double(f));
          break;
        default:
          if (k == 0 || takes_over(v, best, p.op == abi::kScan_cummax)) {
            best = v;
            best_at = k;
          }
          store(out, out_dtype, o, best);
          store(idx, DType::kInt64, idx_base + k * p.index_row_stride, from_int(best_at));
          break;
      }
    }
  }
}

}  // namespace nbx::host
