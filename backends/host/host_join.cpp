// The host "join" kernel (abi::JoinParams): every input copied bit for bit into its slice of
// the output along the cat dim. The reference gives both variants one meaning; the flat one
// (rows of contiguous elements, join_family.cpp) is a memcpy a row.
#include <cstring>

#include "backends/host/host_backend.hpp"
#include "core/dtype.hpp"

namespace nbx::host {

void run_family(const abi::JoinParams& p, std::span<const KernelBuffer> buffers) {
  const std::int64_t item = std::int64_t(dtype_size(DType(p.dtype)));
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  for (int k = 0; k < p.count; ++k) {
    const abi::JoinInput& in = p.inputs[k];
    const auto* src = static_cast<const std::byte*>(buffers[1 + k].memory.handle);
    std::int64_t sizes[abi::kMaxDims];
    std::int64_t n = 1;
    for (int d = 0; d < p.ndim; ++d) {
      sizes[d] = d == p.dim ? in.extent : p.sizes[d];
      n *= sizes[d];
    }
    if (n == 0) continue;
    const std::int64_t out_base = p.out_offset + in.at * p.out_strides[p.dim];
    if (p.variant == abi::kJoinFlat) {
      const std::int64_t bytes = in.extent * item;
      for (std::int64_t r = 0; r < sizes[0]; ++r)
        std::memcpy(out + (out_base + r * p.out_strides[0]) * item,
                    src + (in.offset + r * in.strides[0]) * item, std::size_t(bytes));
      continue;
    }
    // An odometer over the input's coordinates, both offsets kept alongside.
    std::int64_t coord[abi::kMaxDims] = {};
    std::int64_t o = out_base, s = in.offset;
    for (std::int64_t e = 0; e < n; ++e) {
      std::memcpy(out + o * item, src + s * item, std::size_t(item));
      for (int d = p.ndim - 1; d >= 0; --d) {
        o += p.out_strides[d], s += in.strides[d];
        if (++coord[d] < sizes[d]) break;
        coord[d] = 0;
        o -= p.out_strides[d] * sizes[d], s -= in.strides[d] * sizes[d];
      }
    }
  }
}

}  // namespace nbx::host
