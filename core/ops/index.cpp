// The index-read wrappers (index.hpp): each op's checks and shapes, then one "gather"
// launch through strides — no copy of input, index or a broadcast operand — and the plan
// `nbx explain` shows.
#include "core/ops/index.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/plan.hpp"

namespace nbx::ops {
namespace {

std::string shape_text(const Shape& s) {
  return to_string(s);
}

// The plan every index read makes: the dtypes it can hold, the one variant, bounds on device.
ElementPlan plan_gather(std::string_view op, DType input, DType index, const Shape& out_shape,
                        const PlanTarget& target) {
  const std::string name(op);
  if (index != DType::kInt32 && index != DType::kInt64)
    throw InvalidArgument(name, name + ": indices must be int32 or int64, got " +
                                    std::string(dtype_name(index)) + ".");
  detail::require_dtype_support(name, input, target.caps, target.device_id, target.device_name);
  detail::require_dtype_support(name, index, target.caps, target.device_id, target.device_name);
  if (static_cast<int>(out_shape.size()) > abi::kMaxDims)
    throw InvalidArgument(name, name + ": the output has " + std::to_string(out_shape.size()) +
                                    " dims; at most " + std::to_string(abi::kMaxDims) +
                                    " are supported.");
  ElementPlan plan;
  plan.out_shape = out_shape;
  plan.input_dtype = input;
  plan.out_dtype = input;
  plan.compute_dtype = input;
  plan.variant = abi::kGatherStrided;
  plan.choices.push_back({"variant", variant_name(KernelFamily::kGather, abi::kGatherStrided), "",
                          "",
                          "one output element per thread, input, index and output read through "
                          "their strides (no copy of a view or a broadcast operand)."});
  plan.choices.push_back({"index_dtype", std::string(dtype_name(index)), "", "",
                          "indices are read as stored; elements are copied bit for bit."});
  plan.choices.push_back(
      {"bounds", "device fault channel", "", "",
       op == "take" ? "an index outside [-n, n) is recorded on the device and raised as "
                      "DeviceFault at the next synchronize; negative ones count from the end."
                    : "an index outside [0, n) is recorded on the device and raised as "
                      "DeviceFault at the next synchronize; nothing out of range is read."});
  return plan;
}

void require_tensors(const char* op, const Tensor& input, const Tensor& index) {
  if (!input.defined() || !index.defined())
    throw InvalidArgument(op, std::string(op) + ": a tensor is undefined.");
  if (input.device() != index.device())
    throw InvalidArgument(op, std::string(op) + ": the input is on " + input.device().str() +
                                  " and the index on " + index.device().str() +
                                  "; both must be on one device.");
}

// The launch shared by every op: output element (c0, …) of `out` reads index
// index_offset + Σ ck · index_strides[k] and input src_offset + Σ ck · src_strides[k] +
// index · src_index_stride.
struct GatherForm {
  std::vector<std::int64_t> src_strides, index_strides, index_positions;
  std::int64_t src_index_stride = 0;
  std::int64_t bound = 0;
};

Tensor run_gather(const char* name, abi::GatherOp op, const Tensor& input, const Tensor& index,
                  const Shape& out_shape, const GatherForm& form) {
  const Device& device = input.device();
  const ElementPlan plan = plan_gather(name, input.dtype(), index.dtype(), out_shape,
                                       {device.capabilities(), device.str(), device.display_name(),
                                        &device.context().backend_device()});
  Tensor out = Tensor::empty(out_shape, input.dtype(), device);
  if (out.numel() == 0) return out;

  abi::GatherParams p{};
  p.op = op;
  p.dtype = static_cast<std::int32_t>(input.dtype());
  p.index_dtype = static_cast<std::int32_t>(index.dtype());
  p.ndim = static_cast<std::int32_t>(out_shape.size());
  p.wrap_negative = op == abi::kGather_take ? 1 : 0;
  p.variant = plan.variant;
  p.numel = out.numel();
  p.bound = form.bound;
  p.out_offset = out.offset();
  p.src_offset = input.offset();
  p.src_index_stride = form.src_index_stride;
  p.index_offset = index.offset();
  for (int k = 0; k < p.ndim; ++k) {
    p.sizes[k] = out_shape[k];
    p.out_strides[k] = out.strides()[k];
    p.src_strides[k] = form.src_strides[k];
    p.index_strides[k] = form.index_strides[k];
    p.index_positions[k] = form.index_positions[k];
  }
  KernelBuffer buffers[3] = {{out.storage()->memory(), true},
                             {input.storage()->memory(), false},
                             {index.storage()->memory(), false}};
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kernel_launch(p, buffers));
  return out;
}

// Row-major strides of `shape` (the flat position of an index element).
std::vector<std::int64_t> positions_of(const Shape& shape) {
  const Strides s = contiguous_strides(shape);
  return {s.begin(), s.end()};
}

}  // namespace

Tensor index_select(const Tensor& input, std::int64_t dim, const Tensor& index) {
  require_tensors("index_select", input, index);
  if (index.dim() > 1)
    throw InvalidArgument("index_select", "index_select: the index must be a vector or 0-d, got " +
                                              shape_text(index.shape()) + ".");
  const int d = wrap_dim(dim, input.dim(), "index_select");
  const std::int64_t n = index.numel();
  GatherForm f;
  Shape out_shape;
  if (input.dim() == 0) {  // PyTorch: the output stays 0-d, read through exactly one index
    if (n != 1)
      throw InvalidArgument(
          "index_select",
          "index_select: a 0-d input takes exactly one index, got " + std::to_string(n) + ".");
    f.bound = 1;  // no dims: the one index is read at the index's offset
  } else {
    out_shape = input.shape();
    out_shape[d] = n;
    f.bound = input.shape()[d];
    f.src_index_stride = input.strides()[d];
    f.src_strides.assign(input.strides().begin(), input.strides().end());
    f.src_strides[d] = 0;
    f.index_strides.assign(out_shape.size(), 0);
    f.index_positions.assign(out_shape.size(), 0);
    f.index_strides[d] = index.dim() == 1 ? index.strides()[0] : 0;
    f.index_positions[d] = 1;
  }
  return run_gather("index_select", abi::kGather_index_select, input, index, out_shape, f);
}

namespace {

Tensor gather_as(const char* name, abi::GatherOp op, const Tensor& input, std::int64_t dim,
                 const Tensor& index) {
  // PyTorch counts a 0-d tensor as 1-d here (ensure_nonempty_dim): a 0-d index of a 1-d
  // input, or a 1-d index of a 0-d input, reads along dim 0.
  const bool vector_and_scalar =
      std::max(index.dim(), input.dim()) == 1 && std::min(index.dim(), input.dim()) == 0;
  if (index.dim() != input.dim() && !vector_and_scalar)
    throw InvalidArgument(name, std::string(name) + ": the index has " +
                                    std::to_string(index.dim()) + " dims and the input " +
                                    std::to_string(input.dim()) + "; they must match.");
  const int d = wrap_dim(dim, input.dim(), name);
  if (index.numel() > 0)
    for (int k = 0; k < input.dim(); ++k)
      if (k != d && index.shape()[k] > input.shape()[k])
        throw InvalidArgument(name, std::string(name) + ": the index " + shape_text(index.shape()) +
                                        " is larger than the input " + shape_text(input.shape()) +
                                        " in dim " + std::to_string(k) + " (only dim " +
                                        std::to_string(d) + " may differ).");
  GatherForm f;
  f.bound = input.dim() == 0 ? 1 : input.shape()[d];
  f.src_strides.assign(input.strides().begin(), input.strides().end());
  if (input.dim() > 0) {
    f.src_index_stride = input.strides()[d];
    f.src_strides[d] = 0;
  }
  f.src_strides.resize(std::size_t(index.dim()), 0);  // one per output dim (the index's)
  f.index_strides.assign(index.strides().begin(), index.strides().end());
  f.index_positions = positions_of(index.shape());
  return run_gather(name, op, input, index, index.shape(), f);
}

}  // namespace

Tensor gather(const Tensor& input, std::int64_t dim, const Tensor& index) {
  require_tensors("gather", input, index);
  return gather_as("gather", abi::kGather_gather, input, dim, index);
}

Tensor take_along_dim(const Tensor& input, const Tensor& indices, std::optional<std::int64_t> dim) {
  const char* name = "take_along_dim";
  require_tensors(name, input, indices);
  if (!dim)
    return gather_as(name, abi::kGather_take_along_dim, input.reshape({-1}), 0,
                     indices.reshape({-1}));
  if (indices.dim() != input.dim())
    throw InvalidArgument(name, std::string(name) + ": the input has " +
                                    std::to_string(input.dim()) + " dims and the indices " +
                                    std::to_string(indices.dim()) + "; they must match.");
  const int d = wrap_dim(*dim, input.dim(), name);
  if (input.dim() == 0) return gather_as(name, abi::kGather_take_along_dim, input, 0, indices);
  // PyTorch's rule: broadcast in every dim but d, where indices keep their size and the
  // input its own.
  Shape in_shape = input.shape();
  in_shape[d] = indices.shape()[d];
  Shape both = broadcast_shapes(in_shape, indices.shape(), name);
  const Tensor idx = indices.expand(both);
  both[d] = input.shape()[d];
  return gather_as(name, abi::kGather_take_along_dim, input.expand(both), d, idx);
}

Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<std::int64_t> padding_idx, std::optional<double> max_norm) {
  const char* name = "embedding";
  require_tensors(name, weight, indices);
  if (weight.dim() != 2)
    throw InvalidArgument(
        name, "embedding: the weight must be 2-d, got " + shape_text(weight.shape()) + ".");
  const std::int64_t rows = weight.shape()[0];
  if (padding_idx && (*padding_idx >= rows || *padding_idx < -rows))
    throw InvalidArgument(name, "embedding: padding_idx " + std::to_string(*padding_idx) +
                                    " must be within [-" + std::to_string(rows) + ", " +
                                    std::to_string(rows) + ").");
  if (max_norm) {
    const Device& dev = weight.device();
    throw Unsupported(name, dev.str(), "embedding.max_norm",
                      "embedding on " + dev.display_name() +
                          ": max_norm renormalises the weight in place, which nbxtensor does "
                          "not implement; renormalise the rows first. Refused.");
  }
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64)
    throw InvalidArgument(name, "embedding: indices must be int32 or int64, got " +
                                    std::string(dtype_name(indices.dtype())) + ".");
  Shape out_shape = indices.shape();
  out_shape.push_back(weight.shape()[1]);
  GatherForm f;
  f.bound = rows;
  f.src_index_stride = weight.strides()[0];
  f.src_strides.assign(out_shape.size(), 0);
  f.src_strides.back() = weight.strides()[1];
  f.index_strides.assign(indices.strides().begin(), indices.strides().end());
  f.index_strides.push_back(0);
  f.index_positions = positions_of(indices.shape());
  f.index_positions.push_back(0);
  return run_gather(name, abi::kGather_embedding, weight, indices, out_shape, f);
}

Tensor take(const Tensor& input, const Tensor& index) {
  require_tensors("take", input, index);
  // The flat order of a strided input is not one stride: read a contiguous copy of a view.
  const Tensor flat = input.contiguous();
  GatherForm f;
  f.bound = flat.numel();
  f.src_index_stride = 1;
  f.src_strides.assign(index.shape().size(), 0);
  f.index_strides.assign(index.strides().begin(), index.strides().end());
  f.index_positions = positions_of(index.shape());
  return run_gather("take", abi::kGather_take, flat, index, index.shape(), f);
}

namespace detail {

// Operands: the input (dtype, shape) and the index (dtype, shape). index_select and
// embedding index dim 0, gather and take_along_dim the last dim.
void explain_gather(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const Shape& in = call.shapes[0];
  const Shape& idx = call.shapes.size() > 1 ? call.shapes[1] : call.shapes[0];
  Shape out_shape = idx;
  if (entry.code == abi::kGather_index_select) {
    out_shape = in;  // a 0-d input stays 0-d
    if (!in.empty()) out_shape[0] = numel(idx);
  } else if (entry.code == abi::kGather_embedding && in.size() == 2) {
    out_shape.push_back(in[1]);
  }
  const ElementPlan plan =
      plan_gather(entry.name, call.dtypes[0], call.dtypes[1], out_shape, call.target);
  out.output = std::string(dtype_name(plan.out_dtype)) + " " + to_string(out_shape);
  out.kernel = "gather (op " + entry.table_op + ", " + std::to_string(numel(out_shape)) +
               " elements; variant " + plan.choices[0].value + ")";
  out.choices = plan.choices;
}

}  // namespace detail

}  // namespace nbx::ops
