#include "core/ops/elementwise_launch.hpp"

#include <cstring>
#include <mutex>
#include <string>

#include "core/backend.hpp"
#include "core/ops/inplace_write.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops::detail {
namespace {

abi::ElementwiseOperand strided_operand(const Tensor& t, const Shape& out_shape, const char* op) {
  abi::ElementwiseOperand o{};
  o.offset = t.offset();
  o.dtype = static_cast<std::int32_t>(t.dtype());
  const Strides st = broadcast_strides(t.shape(), t.strides(), out_shape, op);
  for (int d = 0; d < st.size(); ++d) o.strides[d] = st[d];
  return o;
}

void fill_and_launch(const Device& device, const ElementwiseLaunch& launch, const Tensor& out) {
  const std::string op_name(launch.op_name);
  abi::ElementwiseParams p{};
  p.op = launch.op;
  p.num_inputs = static_cast<std::int32_t>(launch.inputs.size());
  p.ndim = out.dim();
  p.compute_dtype = static_cast<std::int32_t>(launch.compute_dtype);
  p.numel = out.numel();
  for (int d = 0; d < out.dim(); ++d) p.sizes[d] = out.shape()[d];
  for (int k = 0; k < 3; ++k) p.attrs[k] = launch.attrs[static_cast<std::size_t>(k)];
  p.out = strided_operand(out, out.shape(), op_name.c_str());

  // The flat path is legal when every tensor walks memory exactly like the output.
  bool flat = out.is_contiguous();
  KernelBuffer buffers[1 + abi::kMaxElementwiseInputs] = {};
  buffers[0] = {out.storage()->memory(), true};
  for (std::size_t k = 0; k < launch.inputs.size(); ++k) {
    const LaunchInput& in = launch.inputs[k];
    abi::ElementwiseOperand& o = p.in[k];
    if (!in.tensor.defined()) {
      o.is_scalar = 1;
      o.scalar = in.scalar;
      o.dtype = static_cast<std::int32_t>(launch.compute_dtype);
      continue;
    }
    if (!(in.tensor.device() == device))
      throw InvalidArgument(op_name, op_name + ": an operand lives on " + in.tensor.device().str() +
                                         " but the op runs on " + device.str() +
                                         "; move it with .to(device) first.");
    o = strided_operand(in.tensor, out.shape(), op_name.c_str());
    flat = flat && in.tensor.shape() == out.shape() && in.tensor.is_contiguous();
    buffers[k + 1] = {in.tensor.storage()->memory(), false};
  }
  p.contiguous = flat ? 1 : 0;
  if (p.numel == 0) return;

  KernelLaunch kl;
  kl.family = KernelFamily::kElementwise;
  kl.buffers = std::span<const KernelBuffer>(buffers, 1 + launch.inputs.size());
  kl.params = std::as_bytes(std::span<const abi::ElementwiseParams>(&p, 1));
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  // The batching rule of plan_elementwise_variant (what `nbx explain` shows), without
  // building its explanation on every launch.
  p.variant = elementwise_variant_for(ctx.backend_device(), p.numel);
  ctx.backend_device().launch(kl);
}

// The inputs' broadcast shape, after refusing by name a dtype the device cannot hold.
Shape checked_out_shape(const Device& device, const ElementwiseLaunch& launch) {
  Shape out_shape;
  bool first = true;
  for (const LaunchInput& in : launch.inputs) {
    if (!in.tensor.defined()) continue;
    out_shape =
        first ? in.tensor.shape()
              : broadcast_shapes(out_shape, in.tensor.shape(), std::string(launch.op_name).c_str());
    first = false;
  }
  require_dtype_support(launch.op_name, launch.out_dtype, device);
  require_dtype_support(launch.op_name, launch.compute_dtype, device);
  for (const LaunchInput& in : launch.inputs)
    if (in.tensor.defined()) require_dtype_support(launch.op_name, in.tensor.dtype(), device);
  return out_shape;
}

}  // namespace

abi::ScalarValue scalar_value(const Scalar& s) {
  return s.is_floating() ? abi::ScalarValue{s.to_double(), s.to_int()}
                         : abi::ScalarValue{static_cast<double>(s.to_int()), s.to_int()};
}

void require_dtype_support(std::string_view op, DType dtype, const Device& device) {
  require_dtype_support(op, dtype, device.capabilities(), device.str(), device.display_name());
}

void require_dtype_support(std::string_view op, DType dtype, const Capabilities& caps,
                           const std::string& device_id, const std::string& device_name) {
  const char* missing = nullptr;
  std::string source;
  switch (dtype) {
    case DType::kFloat64:
      if (!caps.fp64.value) missing = "fp64", source = caps.fp64.source;
      break;
    case DType::kFloat16:
      if (!caps.fp16.value) missing = "fp16", source = caps.fp16.source;
      break;
    case DType::kBFloat16:
      if (caps.bf16.value == Bf16Support::kNone) missing = "bf16", source = caps.bf16.source;
      break;
    case DType::kInt64:
      if (!caps.int64.value) missing = "int64", source = caps.int64.source;
      break;
    case DType::kInt8:
    case DType::kUInt8:
      if (!caps.int8.value) missing = "int8", source = caps.int8.source;
      break;
    default:
      break;
  }
  if (!missing) return;
  const std::string name(op);
  throw Unsupported(name, device_id, missing,
                    name + " on " + device_name + ": " + std::string(dtype_name(dtype)) +
                        " tensors need the '" + missing +
                        "' capability, which this device does not have (" + source + "); refused.");
}

Tensor launch_elementwise(const Device& device, const ElementwiseLaunch& launch) {
  Tensor out = Tensor::empty(checked_out_shape(device, launch), launch.out_dtype, device);
  fill_and_launch(device, launch, out);
  return out;
}

Tensor launch_elementwise(const Device& device, const ElementwiseLaunch& launch,
                          const OutputView& out) {
  const Tensor& dst = out.tensor;
  check_destination(out.form, dst, checked_out_shape(device, launch), launch.out_dtype, device,
                    /*exact_dtype=*/false, out.in_place);
  require_no_internal_overlap(out.form, dst);
  bool through_temporary = dst.dtype() != launch.out_dtype;
  for (const LaunchInput& in : launch.inputs) {
    if (!in.tensor.defined()) continue;
    require_no_partial_overlap(out.form, dst, in.tensor);
    through_temporary = through_temporary || overlap_of(dst, in.tensor) == Overlap::kMayOverlap;
  }
  if (through_temporary) {
    copy_into(out.form, dst, launch_elementwise(device, launch));
    return dst;
  }
  fill_and_launch(device, launch, dst);
  return dst;
}

void launch_elementwise_into(const Device& device, const ElementwiseLaunch& launch,
                             const Tensor& out) {
  fill_and_launch(device, launch, out);
}

}  // namespace nbx::ops::detail
