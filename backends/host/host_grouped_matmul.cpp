// The host "grouped_matmul" kernel (abi::GroupedMatmulParams): the reference. The offsets are
// checked first, in entry order (the first bad entry is the fault, as the GPU kernels report
// it), then each group's rows are multiplied by its b in float64 and rounded once.

#include "backends/host/host_backend.hpp"
#include "backends/host/host_scratch.hpp"
#include "backends/host/host_values.hpp"
#include "core/errors.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::host {

void run_family(const abi::GroupedMatmulParams& p, std::span<const KernelBuffer> buffers) {
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const auto* a = static_cast<const std::byte*>(buffers[1].memory.handle);
  const auto* b = static_cast<const std::byte*>(buffers[2].memory.handle);
  const auto* offsets = static_cast<const std::byte*>(buffers[3].memory.handle);
  const DType t = DType(p.dtype), ot = DType(p.offsets_dtype);

  const Scratch<std::int64_t> bounds(p.groups + 1);  // launch scratch: within the memory cap
  for (std::int64_t e = 0; e <= p.groups; ++e) {
    const std::int64_t v = as_i(load(offsets, ot, p.offsets_offset + e * p.offsets_stride));
    const std::int64_t low = e == 0 ? 0 : bounds[std::size_t(e - 1)];
    const std::int64_t high = e == p.groups ? p.rows : v;
    if (v < low || v > p.rows || (e == 0 && v != 0) || v != high) {
      const abi::FaultRecord r{abi::kFaultIndexOutOfRange,
                               abi::fault_op(abi::kFamily_grouped_matmul, p.op), v, p.rows, e};
      throw fault_error(r, "host", "host");
    }
    bounds[std::size_t(e)] = v;
  }
  if (p.n == 0) return;

  const Scratch<double> row(p.k);
  for (std::int64_t e = 0; e < p.groups; ++e) {
    const std::int64_t weights = p.b_offset + e * p.b_group_stride;
    for (std::int64_t r = bounds[std::size_t(e)]; r < bounds[std::size_t(e + 1)]; ++r) {
      for (std::int64_t k = 0; k < p.k; ++k)
        row[std::size_t(k)] =
            as_f(load(a, t, p.a_offset + r * p.a_row_stride + k * p.a_col_stride));
      for (std::int64_t n = 0; n < p.n; ++n) {
        double acc = 0;
        const std::int64_t w = weights + n * p.b_n_stride;
        for (std::int64_t k = 0; k < p.k; ++k)
          acc += row[std::size_t(k)] * as_f(load(b, t, w + k * p.b_k_stride));
        store(out, DType(p.out_dtype), p.out_offset + r * p.out_row_stride + n * p.out_col_stride,
              from_double(acc));
      }
    }
  }
}

}  // namespace nbx::host
