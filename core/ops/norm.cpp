#include "core/ops/norm.hpp"

#include <mutex>
#include <string>
#include <vector>

#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/plan.hpp"
#include "core/ops/tiling.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops {
namespace {

double machine_epsilon(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 0.0009765625;  // 2^-10
    case DType::kBFloat16:
      return 0.0078125;  // 2^-7
    case DType::kFloat32:
      return 1.1920928955078125e-07;  // 2^-23
    default:
      return 2.220446049250313e-16;  // 2^-52
  }
}

// A per-channel or per-element parameter, checked against the shape it must have and
// brought to the input's dtype and layout.
Tensor prepare_param(const char* op, const char* what, const Tensor& p, const Shape& expected,
                     const Tensor& x) {
  if (!p.defined()) throw InvalidArgument(op, std::string(op) + ": " + what + " is undefined.");
  if (!(p.shape() == expected))
    throw InvalidArgument(op, std::string(op) + ": " + what + " has shape " + to_string(p.shape()) +
                                  " but must have shape " + to_string(expected) + ".");
  if (!(p.device() == x.device()))
    throw InvalidArgument(op, std::string(op) + ": " + what + " lives on " + p.device().str() +
                                  ", the input on " + x.device().str() + ".");
  return p.to(x.dtype()).contiguous();
}

struct NormCall {
  const char* name;
  abi::NormOp op;
  Tensor x;
  std::int64_t rows, row_len, channels = 0, inner = 1, groups = 1;
  double eps;
  std::optional<Tensor> weight, bias, running_mean, running_var;
};

Tensor launch(NormCall& c) {
  const Device& device = c.x.device();
  const PlanTarget target{device.capabilities(), device.str(), device.display_name(),
                          &device.context().backend_device()};
  const RowPlan plan = plan_norm(c.name, c.x.dtype(), c.row_len, target);
  const DType acc = plan.accumulate_dtype;
  abi::NormParams p{};
  p.op = c.op;
  p.in_dtype = p.out_dtype = p.param_dtype = static_cast<std::int32_t>(c.x.dtype());
  p.accumulate_dtype = static_cast<std::int32_t>(acc);
  p.has_weight = c.weight.has_value();
  p.has_bias = c.bias.has_value();
  p.rows = c.rows;
  p.row_len = c.row_len;
  p.channels = c.channels;
  p.inner = c.inner;
  p.groups = c.groups;
  p.eps = c.eps;
  p.row_tile = plan.row_tile;
  std::vector<PlanChoice> choices;
  const int candidates[] = {abi::kNormRows, abi::kNormGeneral};
  choose_variant(p, candidates, target, choices);
  Tensor out = Tensor::empty(c.x.shape(), c.x.dtype(), device);
  if (out.numel() == 0) return out;
  auto mem = [](const std::optional<Tensor>& t) {
    return t ? KernelBuffer{t->storage()->memory(), false} : KernelBuffer{};
  };
  const KernelBuffer buffers[6] = {{out.storage()->memory(), true},
                                   {c.x.storage()->memory(), false},
                                   mem(c.weight),
                                   mem(c.bias),
                                   mem(c.running_mean),
                                   mem(c.running_var)};
  KernelLaunch kl;
  kl.family = KernelFamily::kNorm;
  kl.buffers = std::span<const KernelBuffer>(buffers, c.op == abi::kNorm_batch_norm ? 6 : 4);
  kl.params = std::as_bytes(std::span<const abi::NormParams>(&p, 1));
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kl);
  return out;
}

// The kernel indexes every buffer from element 0: offsets are removed by a copy.
Tensor zero_offset_contiguous(const Tensor& t) {
  return (t.is_contiguous() && t.offset() == 0) ? t : t.clone();
}

// The input, checked as norm_rows() checks it, with its rows; offsets removed by a copy.
NormCall make_call(const char* name, abi::NormOp op, const Tensor& x_in,
                   const Shape& normalized_shape, std::int64_t groups, double eps) {
  if (!x_in.defined()) throw InvalidArgument(name, std::string(name) + ": the input is undefined.");
  const NormRows r = norm_rows(name, x_in.dtype(), x_in.shape(), normalized_shape, groups);
  NormCall c{name, op, zero_offset_contiguous(x_in)};
  c.rows = r.rows, c.row_len = r.row_len, c.channels = r.channels;
  c.inner = r.inner, c.groups = r.groups;
  c.eps = eps;
  return c;
}

std::optional<Tensor> param(const char* op, const char* what, const std::optional<Tensor>& p,
                            const Shape& expected, const Tensor& x) {
  if (!p) return std::nullopt;
  return zero_offset_contiguous(prepare_param(op, what, *p, expected, x));
}

}  // namespace

NormRows norm_rows(std::string_view op, DType in, const Shape& x, const Shape& normalized_shape,
                   std::int64_t groups) {
  const std::string name(op);
  const bool trailing = op == "layer_norm" || op == "rms_norm";
  if (!trailing && op != "group_norm" && op != "batch_norm")
    throw InvalidArgument(name, "'" + name + "' is not a normalization.");
  // PyTorch refuses an empty normalized_shape (harden: it normalized each element alone).
  if (trailing && normalized_shape.size() == 0)
    throw InvalidArgument(name, name + ": normalized_shape must have at least one dim (got []).");
  if (!is_floating(in))
    throw InvalidArgument(name, name + " is not defined for " + std::string(dtype_name(in)) +
                                    " tensors (it takes floating dtypes).");
  const int min_dims = trailing ? normalized_shape.size() : 2;
  if (x.size() < min_dims)
    throw InvalidArgument(name, name + ": the input of shape " + to_string(x) + " needs at least " +
                                    std::to_string(min_dims) + " dims.");
  NormRows r;
  if (trailing) {
    const int lead = x.size() - normalized_shape.size();
    for (int i = 0; i < normalized_shape.size(); ++i)
      if (x[lead + i] != normalized_shape[i])
        throw InvalidArgument(name, name + ": normalized_shape " + to_string(normalized_shape) +
                                        " does not match the trailing dims of the input's shape " +
                                        to_string(x) + ".");
    r.row_len = numel(normalized_shape);
    r.rows = r.row_len ? numel(x) / r.row_len : 0;
    return r;
  }
  const std::int64_t n = x[0];
  r.channels = x[1];
  // The product of the dims after [N, C]: computed, not divided out (N or C may be 0).
  for (int d = 2; d < x.size(); ++d) r.inner *= x[d];
  if (op == "batch_norm") {
    r.rows = n;
    r.row_len = r.channels * r.inner;
    return r;
  }
  if (groups <= 0 || r.channels % groups != 0)
    throw InvalidArgument(name, name + ": " + std::to_string(r.channels) +
                                    " channels cannot be split into " + std::to_string(groups) +
                                    " groups.");
  r.groups = groups;
  r.rows = n * groups;
  r.row_len = (r.channels / groups) * r.inner;
  return r;
}

RowPlan plan_norm(std::string_view op, DType in, std::int64_t row_len, const PlanTarget& target) {
  RowPlan plan =
      detail::plan_float_rows(op, in, row_len, target, "statistics in float32 for half types.");
  plan.choices.push_back(detail::row_tile_choice(target.caps, row_len, plan.row_tile));
  return plan;
}

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps) {
  NormCall c = make_call("layer_norm", abi::kNorm_layer_norm, x, normalized_shape, 1, eps);
  c.weight = param("layer_norm", "weight", weight, normalized_shape, c.x);
  c.bias = param("layer_norm", "bias", bias, normalized_shape, c.x);
  return launch(c);
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const std::optional<Tensor>& weight,
                std::optional<double> eps) {
  NormCall c = make_call("rms_norm", abi::kNorm_rms_norm, x, normalized_shape, 1, 0);
  c.eps = eps.value_or(machine_epsilon(c.x.dtype()));
  c.weight = param("rms_norm", "weight", weight, normalized_shape, c.x);
  return launch(c);
}

Tensor group_norm(const Tensor& x, std::int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  NormCall c = make_call("group_norm", abi::kNorm_group_norm, x, {}, num_groups, eps);
  c.weight = param("group_norm", "weight", weight, {c.channels}, c.x);
  c.bias = param("group_norm", "bias", bias, {c.channels}, c.x);
  return launch(c);
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps) {
  NormCall c = make_call("batch_norm", abi::kNorm_batch_norm, x, {}, 1, eps);
  const Shape ch{c.channels};
  c.running_mean = param("batch_norm", "running_mean", running_mean, ch, c.x);
  c.running_var = param("batch_norm", "running_var", running_var, ch, c.x);
  c.weight = param("batch_norm", "weight", weight, ch, c.x);
  c.bias = param("batch_norm", "bias", bias, ch, c.x);
  return launch(c);
}

}  // namespace nbx::ops
