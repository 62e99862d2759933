// Joining and splitting (shape.hpp): cat and stack write their inputs into their slices of
// the output by "join" launches, every input of the output's dtype at once (up to 16 a
// launch; join_plan.hpp), an input of another dtype by an elementwise copy that casts it;
// split, chunk and meshgrid are views.
#include <mutex>
#include <string>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/inplace_write.hpp"
#include "core/ops/join_plan.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/shape_detail.hpp"

namespace nbx::ops {
namespace {

// The inputs checked (defined, one device) and the output's dtype and shape.
struct CatPlan {
  DType dtype;
  Shape shape;
  int dim = 0;  // wrapped; unused when every input was skipped
};

CatPlan plan_cat(const char* op, const TensorList& tensors, std::int64_t dim) {
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    if (!t.defined())
      throw InvalidArgument(
          op, std::string(op) + ": tensor number " + std::to_string(k) + " is undefined.");
    if (!(t.device() == tensors[0].device()))
      throw InvalidArgument(op, std::string(op) +
                                    ": Expected all tensors to be on the same device, but found "
                                    "at least two devices, " +
                                    tensors[0].device().str() + " and " + t.device().str() + ".");
    shapes.push_back(t.shape());
    dtypes.push_back(t.dtype());
  }
  CatPlan p{detail::cat_dtype(op, dtypes), detail::cat_shape(op, shapes, dim)};
  for (const Tensor& t : tensors)
    if (!(t.dim() == 1 && t.shape()[0] == 0)) {
      p.dim = wrap_dim(dim, t.dim(), op);
      break;
    }
  return p;
}

detail::JoinOperand operand_of(const Tensor& t) {
  return {t.shape(), t.strides(), t.offset(), t.dtype()};
}

// Each non-skipped input written into its slice of `out` along the plan's dim: the join
// launches of the plan, then the casts.
void write_cat(const char* op, const CatPlan& p, const Tensor& out, const TensorList& tensors) {
  if (out.numel() == 0) return;
  std::vector<const Tensor*> parts;
  std::vector<detail::JoinOperand> operands;
  std::vector<std::int64_t> at;
  std::int64_t next = 0;
  for (const Tensor& t : tensors) {
    if (t.dim() == 1 && t.shape()[0] == 0) continue;
    parts.push_back(&t);
    operands.push_back(operand_of(t));
    at.push_back(next);
    next += t.shape()[p.dim];
  }
  const Device& device = out.device();
  DeviceContext& ctx = device.context();
  const PlanTarget target{device.capabilities(), device.str(), device.display_name(),
                          &ctx.backend_device()};
  const detail::JoinPlan plan = detail::plan_join(operand_of(out), operands, at, p.dim, target);
  if (!plan.launches.empty()) detail::require_dtype_support(op, out.dtype(), device);
  for (std::size_t l = 0; l < plan.launches.size(); ++l) {
    std::vector<KernelBuffer> buffers{{out.storage()->memory(), true}};
    for (int k : plan.inputs[l])
      buffers.push_back({parts[std::size_t(k)]->storage()->memory(), false});
    std::lock_guard lock(ctx.launch_mutex());
    ctx.backend_device().launch(kernel_launch(plan.launches[l], buffers));
  }
  for (int k : plan.casts) {
    const Tensor& t = *parts[std::size_t(k)];
    out.narrow(p.dim, at[std::size_t(k)], t.shape()[p.dim]).copy_(t);
  }
}

// The inputs of stack, each unsqueezed at the new dim (returned in `d`, wrapped).
TensorList unsqueezed(const char* op, const TensorList& tensors, std::int64_t dim, int& d) {
  if (tensors.empty())
    throw InvalidArgument(op, std::string(op) + ": stack expects a non-empty TensorList.");
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    detail::require_defined_input(op, tensors[k]);
    if (!(tensors[k].shape() == tensors[0].shape()))
      throw InvalidArgument(
          op, std::string(op) + ": stack expects each tensor to be equal size, but got " +
                  to_string(tensors[0].shape()) + " at entry 0 and " +
                  to_string(tensors[k].shape()) + " at entry " + std::to_string(k) + ".");
  }
  d = wrap_dim(dim, tensors[0].dim() + 1, op);
  TensorList out;
  for (const Tensor& t : tensors) out.push_back(t.unsqueeze(d));
  return out;
}

}  // namespace

Tensor cat(const TensorList& tensors, std::int64_t dim) {
  const CatPlan p = plan_cat("cat", tensors, dim);
  const Tensor out = Tensor::empty(p.shape, p.dtype, tensors[0].device());
  write_cat("cat", p, out, tensors);
  return out;
}

Tensor cat_out(const Tensor& out, const TensorList& tensors, std::int64_t dim) {
  const CatPlan p = plan_cat("cat_out", tensors, dim);
  detail::check_destination("cat_out", out, p.shape, p.dtype, tensors[0].device(), false);
  detail::require_no_internal_overlap("cat_out", out);
  // PyTorch refuses an input that shares memory with out (assert_no_overlap); nbx refuses
  // any input whose bytes meet out's, since the slices written first could be read later.
  for (std::size_t k = 0; k < tensors.size(); ++k)
    if (detail::overlap_of(out, tensors[k]) != detail::Overlap::kNone)
      throw InvalidArgument("cat_out",
                            "cat_out: unsupported operation: the input tensors cannot refer to "
                            "any of the output memory locations. Found overlap in input tensor " +
                                std::to_string(k) + ".");
  write_cat("cat_out", p, out, tensors);
  return out;
}

Tensor stack(const TensorList& tensors, std::int64_t dim) {
  int d = 0;
  const TensorList parts = unsqueezed("stack", tensors, dim, d);
  return cat(parts, d);
}

Tensor stack_out(const Tensor& out, const TensorList& tensors, std::int64_t dim) {
  int d = 0;
  const TensorList parts = unsqueezed("stack_out", tensors, dim, d);
  return cat_out(out, parts, d);
}

TensorList split(const Tensor& x, std::int64_t split_size, std::int64_t dim) {
  detail::require_defined_input("split", x);
  if (x.dim() == 0)
    throw InvalidArgument("split", "split: split expects at least a 1-dimensional tensor.");
  if (split_size < 0)
    throw InvalidArgument("split",
                          "split: split expects split_size be non-negative, but got "
                          "split_size=" +
                              std::to_string(split_size) + ".");
  const int d = wrap_dim(dim, x.dim(), "split");
  const std::int64_t n = x.shape()[d];
  if (split_size == 0 && n != 0)
    throw InvalidArgument("split",
                          "split: split_size can only be 0 if dimension size is 0, but got "
                          "dimension size of " +
                              std::to_string(n) + ".");
  TensorList out;
  if (n == 0) return {x.narrow(d, 0, 0)};  // PyTorch: one empty piece
  for (std::int64_t at = 0; at < n; at += split_size)
    out.push_back(x.narrow(d, at, std::min(split_size, n - at)));
  return out;
}

TensorList split(const Tensor& x, const IntList& split_sizes, std::int64_t dim) {
  detail::require_defined_input("split", x);
  if (x.dim() == 0)
    throw InvalidArgument("split", "split: split expects at least a 1-dimensional tensor.");
  const int d = wrap_dim(dim, x.dim(), "split");
  std::int64_t total = 0;
  for (std::int64_t s : split_sizes) {
    if (s < 0)
      throw InvalidArgument("split",
                            "split: split_with_sizes expects split_sizes have only non-negative "
                            "entries, but got split_sizes=" +
                                detail::list_text(split_sizes) + ".");
    total += s;
  }
  if (total != x.shape()[d])
    throw InvalidArgument("split",
                          "split: split_with_sizes expects split_sizes to sum exactly to " +
                              std::to_string(x.shape()[d]) + " (input tensor's size at dimension " +
                              std::to_string(d) +
                              "), but got split_sizes=" + detail::list_text(split_sizes) + ".");
  TensorList out;
  std::int64_t at = 0;
  for (std::int64_t s : split_sizes) out.push_back(x.narrow(d, at, s)), at += s;
  return out;
}

TensorList chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim) {
  detail::require_defined_input("chunk", x);
  if (x.dim() == 0)
    throw InvalidArgument("chunk", "chunk: chunk expects at least a 1-dimensional tensor.");
  if (chunks <= 0)
    throw InvalidArgument("chunk", "chunk: chunk expects `chunks` to be greater than 0, got: " +
                                       std::to_string(chunks) + ".");
  const int d = wrap_dim(dim, x.dim(), "chunk");
  const std::int64_t n = x.shape()[d];
  // PyTorch: pieces of ceil(n / chunks); a size-0 dim keeps the count of (empty) chunks.
  if (n == 0) return split(x, IntList(static_cast<std::size_t>(chunks), 0), d);
  return split(x, (n + chunks - 1) / chunks, d);
}

TensorList meshgrid(const TensorList& tensors, std::string_view indexing) {
  const char* op = "meshgrid";
  if (tensors.empty())
    throw InvalidArgument(op, "meshgrid: torch.meshgrid: Expected at least one tensor.");
  if (indexing != "ij" && indexing != "xy")
    throw InvalidArgument(op,
                          "meshgrid: torch.meshgrid: indexing must be one of \"xy\" or "
                          "\"ij\", but received: " +
                              std::string(indexing) + ".");
  Shape grid;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    detail::require_defined_input(op, t);
    if (t.dim() > 1)
      throw InvalidArgument(op,
                            "meshgrid: torch.meshgrid: Expected 0D or 1D tensor in the "
                            "tensor list but got: " +
                                t.str() + ".");
    if (t.dtype() != tensors[0].dtype())
      throw InvalidArgument(op,
                            "meshgrid: torch.meshgrid: Expected all tensors in the tensor "
                            "list to have the same dtype.");
    if (!(t.device() == tensors[0].device()))
      throw InvalidArgument(op,
                            "meshgrid: torch.meshgrid: Expected all tensors in the tensor "
                            "list to have the same device.");
    grid.push_back(t.numel());
  }
  // "xy": the first two inputs take each other's place in the grid, as PyTorch's swap.
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  if (swap) std::swap(grid[0], grid[1]);
  TensorList out;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    int at = static_cast<int>(k);
    if (swap && k < 2) at = 1 - at;
    Shape along(std::vector<std::int64_t>(tensors.size(), 1));
    along[at] = grid[at];
    out.push_back(tensors[k].reshape(along).expand(grid));
  }
  return out;
}

}  // namespace nbx::ops
