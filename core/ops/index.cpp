// The index-read wrappers (index.hpp): each op's checks and shapes, then one "gather"
// launch through strides — no copy of input, index or a broadcast operand — and the plan
// `nbx explain` shows. The ops and explain build the launch's block with the same functions
// (the forms below, gather_block), so both choose the variant on the same block.
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
#include "core/ops/variant_plan.hpp"

namespace nbx::ops {
namespace {

std::string shape_text(const Shape& s) {
  return to_string(s);
}

// The plan every index read makes: the dtypes it can hold, bounds on device. The variant is
// chosen on the launch's block (choose_gather_variant).
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

// A tensor's shape and strides as the forms read them (explain passes contiguous ones).
struct Layout {
  Shape shape;
  Strides strides;
};
Layout layout_of(const Tensor& t) {
  return {t.shape(), t.strides()};
}
Layout contiguous_layout(const Shape& s) {
  return {s, contiguous_strides(s)};
}

// The launch shared by every op: output element (c0, …) of shape out_shape reads index
// index_offset + Σ ck · index_strides[k] and input src_offset + Σ ck · src_strides[k] +
// index · src_index_stride.
struct GatherForm {
  Shape out_shape;
  std::vector<std::int64_t> src_strides, index_strides, index_positions;
  std::int64_t src_index_stride = 0;
  std::int64_t bound = 0;
};

// Row-major strides of `shape` (the flat position of an index element).
std::vector<std::int64_t> positions_of(const Shape& shape) {
  const Strides s = contiguous_strides(shape);
  return {s.begin(), s.end()};
}

GatherForm index_select_form(const Layout& in, std::int64_t dim, const Layout& index) {
  if (index.shape.size() > 1)
    throw InvalidArgument("index_select", "index_select: the index must be a vector or 0-d, got " +
                                              shape_text(index.shape) + ".");
  const int d = wrap_dim(dim, in.shape.size(), "index_select");
  const std::int64_t n = numel(index.shape);
  GatherForm f;
  if (in.shape.empty()) {  // PyTorch: the output stays 0-d, read through exactly one index
    if (n != 1)
      throw InvalidArgument(
          "index_select",
          "index_select: a 0-d input takes exactly one index, got " + std::to_string(n) + ".");
    f.bound = 1;  // no dims: the one index is read at the index's offset
    return f;
  }
  f.out_shape = in.shape;
  f.out_shape[d] = n;
  f.bound = in.shape[d];
  f.src_index_stride = in.strides[d];
  f.src_strides.assign(in.strides.begin(), in.strides.end());
  f.src_strides[std::size_t(d)] = 0;
  f.index_strides.assign(std::size_t(f.out_shape.size()), 0);
  f.index_positions.assign(std::size_t(f.out_shape.size()), 0);
  f.index_strides[std::size_t(d)] = index.shape.size() == 1 ? index.strides[0] : 0;
  f.index_positions[std::size_t(d)] = 1;
  return f;
}

GatherForm gather_form(const char* name, const Layout& in, std::int64_t dim, const Layout& index) {
  const int in_dim = in.shape.size(), index_dim = index.shape.size();
  // PyTorch counts a 0-d tensor as 1-d here (ensure_nonempty_dim): a 0-d index of a 1-d
  // input, or a 1-d index of a 0-d input, reads along dim 0.
  const bool vector_and_scalar =
      std::max(index_dim, in_dim) == 1 && std::min(index_dim, in_dim) == 0;
  if (index_dim != in_dim && !vector_and_scalar)
    throw InvalidArgument(name, std::string(name) + ": the index has " + std::to_string(index_dim) +
                                    " dims and the input " + std::to_string(in_dim) +
                                    "; they must match.");
  const int d = wrap_dim(dim, in_dim, name);
  if (numel(index.shape) > 0)
    for (int k = 0; k < in_dim; ++k)
      if (k != d && index.shape[k] > in.shape[k])
        throw InvalidArgument(name, std::string(name) + ": the index " + shape_text(index.shape) +
                                        " is larger than the input " + shape_text(in.shape) +
                                        " in dim " + std::to_string(k) + " (only dim " +
                                        std::to_string(d) + " may differ).");
  GatherForm f;
  f.out_shape = index.shape;
  f.bound = in_dim == 0 ? 1 : in.shape[d];
  f.src_strides.assign(in.strides.begin(), in.strides.end());
  if (in_dim > 0) {
    f.src_index_stride = in.strides[d];
    f.src_strides[std::size_t(d)] = 0;
  }
  f.src_strides.resize(std::size_t(index_dim), 0);  // one per output dim (the index's)
  f.index_strides.assign(index.strides.begin(), index.strides.end());
  f.index_positions = positions_of(index.shape);
  return f;
}

// take_along_dim with a dim: PyTorch's rule broadcasts input and indices in every dim but d,
// where the indices keep their size and the input its own; then a gather along d.
GatherForm take_along_dim_form(const Layout& in, std::int64_t dim, const Layout& indices) {
  const char* name = "take_along_dim";
  if (indices.shape.size() != in.shape.size())
    throw InvalidArgument(name, std::string(name) + ": the input has " +
                                    std::to_string(in.shape.size()) + " dims and the indices " +
                                    std::to_string(indices.shape.size()) + "; they must match.");
  const int d = wrap_dim(dim, in.shape.size(), name);
  if (in.shape.empty()) return gather_form(name, in, 0, indices);
  Shape in_shape = in.shape;
  in_shape[d] = indices.shape[d];
  Shape both = broadcast_shapes(in_shape, indices.shape, name);
  const Layout idx{both, broadcast_strides(indices.shape, indices.strides, both, name)};
  both[d] = in.shape[d];
  const Layout input{both, broadcast_strides(in.shape, in.strides, both, name)};
  return gather_form(name, input, d, idx);
}

void require_embedding_weight(const Shape& weight) {
  if (weight.size() != 2)
    throw InvalidArgument("embedding",
                          "embedding: the weight must be 2-d, got " + shape_text(weight) + ".");
}

GatherForm embedding_form(const Layout& indices, const Layout& weight) {
  require_embedding_weight(weight.shape);
  GatherForm f;
  f.out_shape = indices.shape;
  f.out_shape.push_back(weight.shape[1]);
  f.bound = weight.shape[0];
  f.src_index_stride = weight.strides[0];
  f.src_strides.assign(std::size_t(f.out_shape.size()), 0);
  f.src_strides.back() = weight.strides[1];
  f.index_strides.assign(indices.strides.begin(), indices.strides.end());
  f.index_strides.push_back(0);
  f.index_positions = positions_of(indices.shape);
  f.index_positions.push_back(0);
  return f;
}

// take reads a contiguous input of `elements` elements as if flattened.
GatherForm take_form(std::int64_t elements, const Layout& index) {
  GatherForm f;
  f.out_shape = index.shape;
  f.bound = elements;
  f.src_index_stride = 1;
  f.src_strides.assign(std::size_t(index.shape.size()), 0);
  f.index_strides.assign(index.strides.begin(), index.strides.end());
  f.index_positions = positions_of(index.shape);
  return f;
}

// Drops dims of size 1 and merges each dim into the one outside it where every operand
// steps across both as one (outer stride = inner stride × inner size, the index positions
// too): fewer coordinates to decode and longer rows for the rows variant, the same elements
// in the same row-major order (so the same first bad index and the same positions).
void coalesce(abi::GatherParams& p) {
  abi::GatherParams q = p;
  int n = 0;
  for (int d = 0; d < p.ndim; ++d) {
    if (p.sizes[d] == 1) continue;
    if (n > 0) {
      const int m = n - 1;
      const std::int64_t size = p.sizes[d];
      const auto joins = [&](const std::int64_t* outer, const std::int64_t* inner) {
        return outer[m] == inner[d] * size;
      };
      if (joins(q.out_strides, p.out_strides) && joins(q.src_strides, p.src_strides) &&
          joins(q.index_strides, p.index_strides) && joins(q.index_positions, p.index_positions)) {
        q.sizes[m] *= size;
        q.out_strides[m] = p.out_strides[d];
        q.src_strides[m] = p.src_strides[d];
        q.index_strides[m] = p.index_strides[d];
        q.index_positions[m] = p.index_positions[d];
        continue;
      }
    }
    q.sizes[n] = p.sizes[d];
    q.out_strides[n] = p.out_strides[d];
    q.src_strides[n] = p.src_strides[d];
    q.index_strides[n] = p.index_strides[d];
    q.index_positions[n] = p.index_positions[d];
    ++n;
  }
  for (int d = n; d < abi::kMaxDims; ++d)
    q.sizes[d] = q.out_strides[d] = q.src_strides[d] = q.index_strides[d] = q.index_positions[d] =
        0;
  q.ndim = n;
  p = q;
}

// The launch's parameter block (variant still unset), its dims coalesced where it has
// elements (an empty launch runs nothing and keeps its shape).
abi::GatherParams gather_block(abi::GatherOp op, DType dtype, DType index_dtype,
                               const GatherForm& f, const Strides& out_strides,
                               std::int64_t out_offset, std::int64_t src_offset,
                               std::int64_t index_offset) {
  abi::GatherParams p{};
  p.op = op;
  p.dtype = static_cast<std::int32_t>(dtype);
  p.index_dtype = static_cast<std::int32_t>(index_dtype);
  p.ndim = static_cast<std::int32_t>(f.out_shape.size());
  p.wrap_negative = op == abi::kGather_take ? 1 : 0;
  p.numel = numel(f.out_shape);
  p.bound = f.bound;
  p.out_offset = out_offset;
  p.src_offset = src_offset;
  p.src_index_stride = f.src_index_stride;
  p.index_offset = index_offset;
  for (int k = 0; k < p.ndim; ++k) {
    const auto i = std::size_t(k);
    p.sizes[k] = f.out_shape[k];
    p.out_strides[k] = out_strides[k];
    p.src_strides[k] = f.src_strides[i];
    p.index_strides[k] = f.index_strides[i];
    p.index_positions[k] = f.index_positions[i];
  }
  if (p.numel > 0) coalesce(p);
  return p;
}

// The rows variant where its contract serves the block (gather_family.cpp) and the target
// offers it (CUDA/HIP, Vulkan), else strided; writes it into `p` and says what the kernel
// does.
void choose_gather_variant(abi::GatherParams& p, const PlanTarget& target,
                           std::vector<PlanChoice>& choices) {
  const int candidates[] = {abi::kGatherRows, abi::kGatherStrided};
  const int v = choose_variant(p, candidates, target, choices);
  if (v != abi::kGatherRows) {
    choices.push_back({"copy", "element by element", "", "",
                       "input, index and output read through their strides (no copy of a view "
                       "or a broadcast operand); CUDA/HIP: 4 elements a thread per step, their "
                       "indices then their inputs loaded before any is stored, 32-bit offsets "
                       "where every operand's reach fits."});
    return;
  }
  const std::int64_t len = p.sizes[p.ndim - 1], rows = p.numel / len;
  const std::int64_t bytes = len * std::int64_t(dtype_size(DType(p.dtype)));
  choices.push_back(
      {"copy", "rows", "", "",
       std::to_string(rows) + (rows == 1 ? " row of " : " rows of ") + std::to_string(len) +
           " elements (" + std::to_string(bytes) +
           " bytes), each one contiguous copy of the input row its index picks" +
           (target.caps.backend == "vulkan"
                ? std::string(": a power of two of invocations a row, up to the workgroup "
                              "(gather_rows.comp), several rows a workgroup, in the widest "
                              "of 16/8/4/2/1-byte words that divides the row's bytes and every "
                              "row start (its offset in the buffer's binding).")
                : std::string(": up to 32 threads a row (a slice of 8 copy units each, for "
                              "long rows), several a block, the index read and checked once "
                              "per group; 16-byte units where the row's bytes and every row "
                              "start (buffer address + offset · itemsize) are 16-byte "
                              "aligned, else 8-, 4-, 2- or 1-byte units."))});
}

Tensor run_gather(const char* name, abi::GatherOp op, const Tensor& input, const Tensor& index,
                  const GatherForm& form) {
  const Device& device = input.device();
  const PlanTarget target{device.capabilities(), device.str(), device.display_name(),
                          &device.context().backend_device()};
  ElementPlan plan = plan_gather(name, input.dtype(), index.dtype(), form.out_shape, target);
  Tensor out = Tensor::empty(form.out_shape, input.dtype(), device);
  if (out.numel() == 0) return out;
  abi::GatherParams p = gather_block(op, input.dtype(), index.dtype(), form, out.strides(),
                                     out.offset(), input.offset(), index.offset());
  choose_gather_variant(p, target, plan.choices);
  KernelBuffer buffers[3] = {{out.storage()->memory(), true},
                             {input.storage()->memory(), false},
                             {index.storage()->memory(), false}};
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kernel_launch(p, buffers));
  return out;
}

}  // namespace

Tensor index_select(const Tensor& input, std::int64_t dim, const Tensor& index) {
  require_tensors("index_select", input, index);
  return run_gather("index_select", abi::kGather_index_select, input, index,
                    index_select_form(layout_of(input), dim, layout_of(index)));
}

Tensor gather(const Tensor& input, std::int64_t dim, const Tensor& index) {
  require_tensors("gather", input, index);
  return run_gather("gather", abi::kGather_gather, input, index,
                    gather_form("gather", layout_of(input), dim, layout_of(index)));
}

Tensor take_along_dim(const Tensor& input, const Tensor& indices, std::optional<std::int64_t> dim) {
  const char* name = "take_along_dim";
  require_tensors(name, input, indices);
  if (!dim) {
    const Tensor flat = input.reshape({-1}), flat_indices = indices.reshape({-1});
    return run_gather(name, abi::kGather_take_along_dim, flat, flat_indices,
                      gather_form(name, layout_of(flat), 0, layout_of(flat_indices)));
  }
  return run_gather(name, abi::kGather_take_along_dim, input, indices,
                    take_along_dim_form(layout_of(input), *dim, layout_of(indices)));
}

Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<std::int64_t> padding_idx, std::optional<double> max_norm) {
  const char* name = "embedding";
  require_tensors(name, weight, indices);
  require_embedding_weight(weight.shape());
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
  return run_gather(name, abi::kGather_embedding, weight, indices,
                    embedding_form(layout_of(indices), layout_of(weight)));
}

Tensor take(const Tensor& input, const Tensor& index) {
  require_tensors("take", input, index);
  // The flat order of a strided input is not one stride: read a contiguous copy of a view.
  const Tensor flat = input.contiguous();
  return run_gather("take", abi::kGather_take, flat, index,
                    take_form(flat.numel(), layout_of(index)));
}

namespace detail {

// Operands: the input (dtype, shape) and the index (dtype, shape), both contiguous.
// index_select and embedding index dim 0, gather and take_along_dim the last dim.
void explain_gather(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const Layout in = contiguous_layout(call.shapes[0]);
  const Layout idx = contiguous_layout(call.shapes.size() > 1 ? call.shapes[1] : call.shapes[0]);
  const std::int64_t last = in.shape.empty() ? 0 : in.shape.size() - 1;
  GatherForm f;
  switch (entry.code) {
    case abi::kGather_index_select:
      f = index_select_form(in, 0, idx);
      break;
    case abi::kGather_gather:
      f = gather_form(entry.name.c_str(), in, last, idx);
      break;
    case abi::kGather_take_along_dim:
      f = take_along_dim_form(in, last, idx);
      break;
    case abi::kGather_embedding:
      f = embedding_form(idx, in);
      break;
    default:
      f = take_form(numel(in.shape), idx);
      break;
  }
  ElementPlan plan =
      plan_gather(entry.name, call.dtypes[0], call.dtypes[1], f.out_shape, call.target);
  abi::GatherParams p = gather_block(abi::GatherOp(entry.code), call.dtypes[0], call.dtypes[1], f,
                                     contiguous_strides(f.out_shape), 0, 0, 0);
  choose_gather_variant(p, call.target, plan.choices);
  std::string variant;
  for (const PlanChoice& c : plan.choices)
    if (c.what == "variant") variant = c.value;
  out.output = std::string(dtype_name(plan.out_dtype)) + " " + to_string(f.out_shape);
  out.kernel = "gather (op " + entry.table_op + ", " + std::to_string(numel(f.out_shape)) +
               " elements; variant " + variant + ")";
  out.choices = plan.choices;
}

}  // namespace detail

}  // namespace nbx::ops
