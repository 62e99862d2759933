// The host "attention" kernel (abi::AttentionParams): each query row's scores against the
// keys that take part, their softmax and the weighted sum of the values, in float64, rounded
// once to the dtype. Every variant computes the same rows (the reference the GPU variants are
// checked against); split_kv's workspace is the backends' scratch and is not needed here.
#include <algorithm>
#include <cmath>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_scratch.hpp"
#include "backends/host/host_values.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::host {

void run_family(const abi::AttentionParams& p, std::span<const KernelBuffer> buffers) {
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const auto* q = static_cast<const std::byte*>(buffers[1].memory.handle);
  const auto* k = static_cast<const std::byte*>(buffers[2].memory.handle);
  const auto* v = static_cast<const std::byte*>(buffers[3].memory.handle);
  const DType t = DType(p.dtype);
  const std::int64_t group = p.q_heads / p.kv_heads;
  // Launch scratch (within the memory cap): kv_len may be an expanded dim of any size.
  const Scratch<double> qrow(p.head_dim), weight(p.kv_len), acc(p.value_dim);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.q_heads; ++h) {
      const std::int64_t hk = h / group;
      const std::int64_t kb = p.k_offset + b * p.k_strides[0] + hk * p.k_strides[1];
      const std::int64_t vb = p.v_offset + b * p.v_strides[0] + hk * p.v_strides[1];
      for (std::int64_t i = 0; i < p.q_len; ++i) {
        const std::int64_t qb =
            p.q_offset + b * p.q_strides[0] + h * p.q_strides[1] + i * p.q_strides[2];
        for (std::int64_t d = 0; d < p.head_dim; ++d)
          qrow[std::size_t(d)] = as_f(load(q, t, qb + d * p.q_strides[3]));
        // Keys 0 .. seen-1 take part (all of them without causal).
        const std::int64_t seen =
            p.causal ? std::clamp<std::int64_t>(i + p.causal_shift + 1, 0, p.kv_len) : p.kv_len;
        double max = -INFINITY;
        for (std::int64_t j = 0; j < seen; ++j) {
          double s = 0;
          for (std::int64_t d = 0; d < p.head_dim; ++d)
            s += qrow[std::size_t(d)] *
                 as_f(load(k, t, kb + j * p.k_strides[2] + d * p.k_strides[3]));
          weight[std::size_t(j)] = s * p.scale;
          max = std::max(max, weight[std::size_t(j)]);
        }
        double sum = 0;
        for (std::int64_t j = 0; j < seen; ++j) {
          // A row of -inf scores (inf inputs) is NaN, as PyTorch's softmax gives.
          weight[std::size_t(j)] = std::exp(weight[std::size_t(j)] - max);
          sum += weight[std::size_t(j)];
        }
        std::fill(acc.begin(), acc.end(), 0.0);
        for (std::int64_t j = 0; j < seen; ++j)
          for (std::int64_t e = 0; e < p.value_dim; ++e)
            acc[std::size_t(e)] += weight[std::size_t(j)] *
                                   as_f(load(v, t, vb + j * p.v_strides[2] + e * p.v_strides[3]));
        const std::int64_t ob =
            p.out_offset + b * p.out_strides[0] + h * p.out_strides[1] + i * p.out_strides[2];
        for (std::int64_t e = 0; e < p.value_dim; ++e)
          store(out, t, ob + e * p.out_strides[3],
                from_double(seen == 0 ? 0.0 : acc[std::size_t(e)] / sum));
      }
    }
}

}  // namespace nbx::host
