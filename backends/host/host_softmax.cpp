// The reference softmax family: softmax / log_softmax of scale * x over rows, with an
// optional mask (true = excluded). Computed in float64 with the max-shift PyTorch uses, so
// the special cases follow PyTorch's: a row containing +inf or only -inf gives NaN.
#include <cmath>
#include <string>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_scratch.hpp"
#include "backends/host/host_values.hpp"
#include "core/errors.hpp"

namespace nbx::host {
namespace {

// Row-major walk over the outer (non-softmax) dims, carrying three strided offsets.
struct OuterWalk {
  const abi::SoftmaxParams& p;
  std::int64_t idx[abi::kMaxDims] = {};
  std::int64_t in, out, mask;
  explicit OuterWalk(const abi::SoftmaxParams& params)
      : p(params), in(params.in_offset), out(params.out_offset), mask(params.mask_offset) {}
  void next() {
    for (int d = p.outer_ndim - 1; d >= 0; --d) {
      in += p.in_outer_strides[d];
      out += p.out_outer_strides[d];
      mask += p.mask_outer_strides[d];
      if (++idx[d] < p.outer_sizes[d]) return;
      in -= p.in_outer_strides[d] * p.outer_sizes[d];
      out -= p.out_outer_strides[d] * p.outer_sizes[d];
      mask -= p.mask_outer_strides[d] * p.outer_sizes[d];
      idx[d] = 0;
    }
  }
};

}  // namespace

void run_family(const abi::SoftmaxParams& p, std::span<const KernelBuffer> buffers) {
  if (buffers.size() != (p.has_mask ? 3u : 2u) || p.outer_ndim < 0 || p.outer_ndim > abi::kMaxDims)
    throw InvalidArgument("softmax", "softmax: malformed launch (" +
                                         std::to_string(buffers.size()) + " buffers, " +
                                         std::to_string(p.outer_ndim) + " outer dims).");
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const auto* in = static_cast<const std::byte*>(buffers[1].memory.handle);
  const auto* mask = p.has_mask ? static_cast<const std::byte*>(buffers[2].memory.handle) : nullptr;
  const auto in_dtype = static_cast<DType>(p.in_dtype), out_dtype = static_cast<DType>(p.out_dtype);
  const bool log = p.op == abi::kSoftmax_log_softmax;
  const Scratch<double> x(p.row_len);  // launch scratch: within the memory cap
  const Scratch<bool> excluded(p.row_len);
  OuterWalk walk(p);
  for (std::int64_t r = 0; r < p.rows; ++r, walk.next()) {
    double m = -INFINITY;
    bool any_kept = false;
    for (std::int64_t k = 0; k < p.row_len; ++k) {
      const auto i = static_cast<std::size_t>(k);
      excluded[i] = mask && truthy(load(mask, DType::kBool, walk.mask + k * p.mask_row_stride));
      x[i] = p.scale * as_f(load(in, in_dtype, walk.in + k * p.in_row_stride));
      if (excluded[i]) continue;
      any_kept = true;
      m = (std::isnan(x[i]) || std::isnan(m)) ? NAN : std::max(m, x[i]);
    }
    double sum = 0;
    for (std::int64_t k = 0; k < p.row_len; ++k)
      if (!excluded[static_cast<std::size_t>(k)])
        sum += std::exp(x[static_cast<std::size_t>(k)] - m);
    for (std::int64_t k = 0; k < p.row_len; ++k) {
      const auto i = static_cast<std::size_t>(k);
      double y;
      if (excluded[i] || !any_kept)
        y = log ? -INFINITY : 0.0;
      else
        y = log ? (x[i] - m) - std::log(sum) : std::exp(x[i] - m) / sum;
      store(out, out_dtype, walk.out + k * p.out_row_stride, from_double(y));
    }
  }
}

}  // namespace nbx::host
