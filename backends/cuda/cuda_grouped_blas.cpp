// grouped_matmul's "blas" variant (kernels/gpu/vendor_launch.hpp): the group offsets read
// back to the host (one stream synchronisation: what a PyTorch loop over experts does too),
// checked, then one cuBLASLt product a non-empty group through matmul.blas's own path
// (launch_matmul_vendor_blas), each group a row range of a and out and one expert of b.
// Offsets that do not partition the rows run the tiled kernel instead, which records the
// device fault the family promises and writes nothing.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cuda/cuda_errors.hpp"
#include "core/dtype.hpp"
#include "kernels/gpu/matmul_launch.hpp"
#include "kernels/gpu/vendor_launch.hpp"

namespace nbx::gpu {
namespace {

// The offsets array as int64 (one strided copy back, then the stream's work drained).
std::vector<std::int64_t> read_offsets(const abi::GroupedMatmulParams& p, const GpuLaunch& l) {
  const std::size_t width = p.offsets_dtype == std::int32_t(DType::kInt32) ? 4 : 8;
  const std::size_t count = std::size_t(p.groups + 1);
  std::vector<unsigned char> raw(count * width);
  const auto* base = static_cast<const unsigned char*>(l.buffers[3].address) +
                     p.offsets_offset * std::int64_t(width);
  const auto stream = static_cast<cudaStream_t>(l.stream);
  cuda::check(cudaMemcpy2DAsync(raw.data(), width, base, std::size_t(p.offsets_stride) * width,
                                width, count, cudaMemcpyDeviceToHost, stream),
              "cudaMemcpy2DAsync(grouped_matmul offsets)", *l.device_name);
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(grouped_matmul offsets)",
              *l.device_name);
  std::vector<std::int64_t> offsets(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (width == 4) {
      std::int32_t v;
      std::memcpy(&v, raw.data() + i * 4, 4);
      offsets[i] = v;
    } else {
      std::memcpy(&offsets[i], raw.data() + i * 8, 8);
    }
  }
  return offsets;
}

bool partitions(const std::vector<std::int64_t>& offsets, std::int64_t rows) {
  if (offsets.front() != 0 || offsets.back() != rows) return false;
  for (std::size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] < offsets[i - 1]) return false;
  return true;
}

}  // namespace

ElementwiseLaunchResult launch_grouped_matmul_vendor(const abi::GroupedMatmulParams& p,
                                                     const GpuLaunch& l) {
  if (p.rows == 0 || p.n == 0) return {};
  // Offsets with a negative stride would need a different copy; the family admits only the
  // strides its views allow, and a stride 0 array of groups + 1 equal values is no partition
  // unless rows is 0 (returned above).
  const std::vector<std::int64_t> offsets = read_offsets(p, l);
  if (!partitions(offsets, p.rows)) {
    abi::GroupedMatmulParams tiled = p;
    tiled.variant = abi::kGroupedMatmulTiled;
    tiled.num_stages = 0;
    return launch_family(tiled, l);
  }
  const MatmulDevice device{l.device_index, *l.device_name, l.shared_memory_per_block};
  const BoundBuffer buffers[4] = {l.buffers[0], l.buffers[1], l.buffers[2], {}};
  ElementwiseLaunchResult last;
  for (std::int64_t e = 0; e < p.groups; ++e) {
    const std::int64_t start = offsets[std::size_t(e)], rows = offsets[std::size_t(e) + 1] - start;
    if (rows == 0) continue;
    abi::MatmulParams m{};
    m.a_dtype = p.dtype, m.out_dtype = p.out_dtype;
    m.accumulate_dtype = std::int32_t(DType::kFloat32);
    m.variant = abi::kMatmulVendorBlas;
    m.m = rows, m.n = p.n, m.k = p.k, m.batch = 1;
    m.a_offset = p.a_offset + start * p.a_row_stride;
    m.a_row_stride = p.a_row_stride, m.a_col_stride = p.a_col_stride;
    // b[e] as the k x n matrix of the product.
    m.b_offset = p.b_offset + e * p.b_group_stride;
    m.b_row_stride = p.b_k_stride, m.b_col_stride = p.b_n_stride;
    m.out_offset = p.out_offset + start * p.out_row_stride;
    m.out_row_stride = p.out_row_stride, m.out_col_stride = p.out_col_stride;
    m.alpha = 1.0, m.beta = 0.0;
    last = launch_matmul_vendor_blas(m, buffers, 4, device, l.stream);
    if (last.error != 0) return last;
  }
  return last;
}

}  // namespace nbx::gpu
