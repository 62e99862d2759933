// Casts, contiguous copies and copies between devices.
#include <cstring>
#include <string>
#include <vector>

#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/plan.hpp"

namespace nbx::ops {
namespace {

Tensor copy_kernel(const Tensor& x, DType out_dtype, const char* name) {
  const Device& device = x.device();
  const ElementPlan plan = plan_cast(name, x.dtype(), out_dtype, x.shape(),
                                     {device.capabilities(), device.str(), device.display_name()});
  detail::ElementwiseLaunch launch;
  launch.op_name = name;
  launch.op = abi::kOp_copy;
  launch.out_dtype = plan.out_dtype;
  launch.compute_dtype = plan.compute_dtype;
  launch.inputs.push_back({x, {}});
  return detail::launch_elementwise(device, launch);
}

// Which conversion rule a cast applies (elementwise.hpp: cast).
std::string conversion_rule(DType from, DType to) {
  if (from == to) return "the same dtype: a plain copy.";
  if (to == DType::kBool) return "any value to bool is x != 0.";
  if (from == DType::kBool) return "false and true become 0 and 1.";
  const bool from_float = is_floating(from), to_float = is_floating(to);
  if (from_float && !to_float)
    return "floats truncate toward zero; NaN gives 0 and values beyond the target's range "
           "saturate (nbx defines what PyTorch leaves undefined).";
  if (!from_float && !to_float) {
    // Only a wider signed type holds every value (uint8 into int16 …).
    const bool holds = dtype_size(to) > dtype_size(from) && to != DType::kUInt8;
    return holds ? "exact: the target holds every value."
                 : "integers wrap (two's complement) where the target cannot hold them.";
  }
  if (!from_float) {
    const char* exact_below = to == DType::kFloat64   ? "2^53"
                              : to == DType::kFloat32 ? "2^24"
                              : to == DType::kFloat16 ? "2^11"
                                                      : "2^8";
    return std::string("integers round to the nearest float (exact below ") + exact_below + ").";
  }
  return dtype_size(to) > dtype_size(from)
             ? "exact: the target holds every value."
             : "rounds to nearest even; values beyond the target's range become infinite.";
}

}  // namespace

ElementPlan plan_cast(std::string_view op, DType from, DType to, const Shape& shape,
                      const PlanTarget& target) {
  for (DType t : {from, to})
    detail::require_dtype_support(op, t, target.caps, target.device_id, target.device_name);
  ElementPlan plan;
  plan.out_shape = shape;
  plan.input_dtype = from;
  plan.out_dtype = plan.compute_dtype = to;
  plan.choices.push_back({"out_dtype", std::string(dtype_name(to)), "", "",
                          from == to ? "a copy keeps the dtype." : "the requested dtype."});
  plan.choices.push_back({"conversion",
                          std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)), "",
                          "", conversion_rule(from, to)});
  return plan;
}

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
  // Two devices of one backend: its own route (a peer copy, or its pinned staging) where it
  // has one; both launch mutexes taken together (std::scoped_lock orders them).
  DeviceContext& src_ctx = src.device().context();
  DeviceContext& ctx = device.context();
  if (ctx.backend_device().peer_route(src_ctx.backend_device()) != PeerRoute::kNone) {
    std::scoped_lock both(ctx.launch_mutex(), src_ctx.launch_mutex());
    ctx.backend_device().copy_from_peer(out.storage()->memory(), 0, src_ctx.backend_device(),
                                        src.storage()->memory(), src_off, bytes);
    return out;
  }
  // Otherwise (two backends: cuda:0 and vulkan:0) through host memory.
  std::vector<std::byte> staging(bytes);
  src.copy_to_host(staging.data());
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().copy_from_host(out.storage()->memory(), 0, staging.data(), bytes);
  return out;
}

}  // namespace nbx::ops
