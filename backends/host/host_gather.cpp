// The host "gather" kernel (abi::GatherParams): every output element copies, bit for bit,
// the input element its index picks. A bad index throws DeviceFault at once, decoded by the
// gather family as the GPU backends' fault records are, before that element is touched.
#include <cstring>

#include "backends/host/host_backend.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::host {

void run_family(const abi::GatherParams& p, std::span<const KernelBuffer> buffers) {
  if (p.numel == 0) return;
  const std::size_t item = dtype_size(DType(p.dtype));
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const auto* src = static_cast<const std::byte*>(buffers[1].memory.handle);
  const auto* index = static_cast<const std::byte*>(buffers[2].memory.handle);
  const bool wide = p.index_dtype == std::int32_t(DType::kInt64);

  // An odometer over the output's coordinates, each operand's offset kept alongside.
  std::int64_t coord[abi::kMaxDims] = {};
  std::int64_t o = p.out_offset, s = p.src_offset, x = p.index_offset, pos = 0;
  for (std::int64_t n = 0; n < p.numel; ++n) {
    std::int64_t i;
    if (wide) {
      std::memcpy(&i, index + x * 8, 8);
    } else {
      std::int32_t v;
      std::memcpy(&v, index + x * 4, 4);
      i = v;
    }
    if (p.wrap_negative && i < 0 && i >= -p.bound) i += p.bound;
    if (i < 0 || i >= p.bound) {
      const abi::FaultRecord r{abi::kFaultIndexOutOfRange, abi::fault_op(abi::kFamily_gather, p.op),
                               i, p.bound, pos};
      throw fault_error(r, "host", "host");
    }
    std::memcpy(out + o * std::int64_t(item),
                src + (s + i * p.src_index_stride) * std::int64_t(item), item);
    for (int d = p.ndim - 1; d >= 0; --d) {
      o += p.out_strides[d], s += p.src_strides[d], x += p.index_strides[d];
      pos += p.index_positions[d];
      if (++coord[d] < p.sizes[d]) break;
      coord[d] = 0;
      o -= p.out_strides[d] * p.sizes[d], s -= p.src_strides[d] * p.sizes[d];
      x -= p.index_strides[d] * p.sizes[d], pos -= p.index_positions[d] * p.sizes[d];
    }
  }
}

}  // namespace nbx::host
