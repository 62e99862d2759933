// Casts, contiguous copies and copies between devices.
#include <cstring>
#include <vector>

#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"

namespace nbx::ops {
namespace {

Tensor copy_kernel(const Tensor& x, DType out_dtype, const char* name) {
  detail::ElementwiseLaunch launch;
  launch.op_name = name;
  launch.op = abi::kOp_copy;
  launch.out_dtype = out_dtype;
  launch.compute_dtype = out_dtype;
  launch.inputs.push_back({x, {}});
  return detail::launch_elementwise(x.device(), launch);
}

}  // namespace

Tensor cast(const Tensor& x, DType dtype) {
  if (!x.defined()) throw InvalidArgument("cast", "cast: the tensor is undefined.");
  return copy_kernel(x, dtype, "cast");
}

Tensor copy(const Tensor& x) {
  if (!x.defined()) throw InvalidArgument("copy", "copy: the tensor is undefined.");
  return copy_kernel(x, x.dtype(), "copy");
}

Tensor to_device(const Tensor& x, const Device& device) {
  if (!x.defined()) throw InvalidArgument("to", "to: the tensor is undefined.");
  detail::require_dtype_support("to", x.dtype(), device);
  const Tensor src = x.contiguous();
  Tensor out = Tensor::empty(src.shape(), src.dtype(), device);
  const std::size_t bytes = static_cast<std::size_t>(src.numel()) * src.itemsize();
  if (bytes == 0) return out;
  const std::size_t src_off = static_cast<std::size_t>(src.offset()) * src.itemsize();
  // The host backend's memory handle is a plain pointer (backends/host/README.md), so the
  // vendor side of a transfer copies straight from or into it.
  if (src.device().is_host()) {
    const auto* p = static_cast<const std::byte*>(src.storage()->memory().handle) + src_off;
    DeviceContext& ctx = device.context();
    std::lock_guard lock(ctx.launch_mutex());
    ctx.backend_device().copy_from_host(out.storage()->memory(), 0, p, bytes);
    return out;
  }
  if (device.is_host()) {
    src.copy_to_host(out.storage()->memory().handle);
    return out;
  }
  std::vector<std::byte> staging(bytes);
  src.copy_to_host(staging.data());
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().copy_from_host(out.storage()->memory(), 0, staging.data(), bytes);
  return out;
}

}  // namespace nbx::ops
