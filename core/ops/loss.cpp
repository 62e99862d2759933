// The pointwise losses (mse_loss, l1_loss, smooth_l1_loss, binary_cross_entropy_with_logits,
// kl_div): each a handful of elementwise ops over the operands cast to the compute dtype
// (float32 for half types, so every intermediate keeps float32 and the result is rounded
// once), then the reduction (loss_plan.cpp). No kernel of their own.
#include "core/ops/loss.hpp"

#include <cmath>
#include <string>

#include "core/errors.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/loss_detail.hpp"

namespace nbx::ops {
namespace {

using detail::LossReduction;

detail::OperandSpec spec(const Tensor& t) {
  return {t.dtype(), t.shape()};
}

std::optional<detail::OperandSpec> spec(const std::optional<Tensor>& t) {
  if (!t) return std::nullopt;
  return spec(*t);
}

// Defined operands on the input's device, dtypes the device holds; returns the plan.
detail::PointwiseLossPlan checked_plan(std::string_view op, const Tensor& input,
                                       const Tensor& target, LossReduction reduction,
                                       const std::optional<Tensor>& weight = {},
                                       const std::optional<Tensor>& pos_weight = {}) {
  if (!input.defined())
    throw InvalidArgument(std::string(op), std::string(op) + ": the input is undefined.");
  const Device& device = input.device();
  detail::require_loss_operand(op, target, "target", device);
  if (weight) detail::require_loss_operand(op, *weight, "weight", device);
  if (pos_weight) detail::require_loss_operand(op, *pos_weight, "pos_weight", device);
  const detail::PointwiseLossPlan plan = detail::plan_pointwise_loss(
      op, spec(input), spec(target), reduction, spec(weight), spec(pos_weight));
  for (DType t : {input.dtype(), target.dtype(), plan.compute_dtype, plan.out_dtype})
    detail::require_dtype_support(op, t, device);
  return plan;
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, std::string_view reduction) {
  const LossReduction r = detail::parse_loss_reduction("mse_loss", reduction);
  const auto plan = checked_plan("mse_loss", input, target, r);
  const Tensor d = sub(input.to(plan.compute_dtype), target.to(plan.compute_dtype));
  return detail::reduce_loss(mul(d, d), r, plan.out_dtype);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction) {
  const LossReduction r = detail::parse_loss_reduction("l1_loss", reduction);
  const auto plan = checked_plan("l1_loss", input, target, r);
  // Integers (none and sum only: the plan refused mean) subtract in their promoted dtype,
  // wrapping as PyTorch's; sum gives int64.
  const Tensor d = sub(input.to(plan.compute_dtype), target.to(plan.compute_dtype));
  return detail::reduce_loss(abs(d), r, plan.out_dtype);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction,
                      double beta) {
  const LossReduction r = detail::parse_loss_reduction("smooth_l1_loss", reduction);
  if (!(beta >= 0))
    throw InvalidArgument("smooth_l1_loss",
                          "smooth_l1_loss does not support negative values for beta (beta " +
                              std::to_string(beta) + ").");
  const auto plan = checked_plan("smooth_l1_loss", input, target, r);
  const Tensor z = abs(sub(input.to(plan.compute_dtype), target.to(plan.compute_dtype)));
  if (beta == 0) return detail::reduce_loss(z, r, plan.out_dtype);  // l1, as PyTorch
  // PyTorch's kernel: z < beta ? 0.5 z² / beta : z − 0.5 beta, in that order of operations.
  const Tensor quadratic = div(mul(mul(z, 0.5), z), beta);
  return detail::reduce_loss(where(lt(z, beta), quadratic, sub(z, 0.5 * beta)), r, plan.out_dtype);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight,
                                        std::string_view reduction,
                                        const std::optional<Tensor>& pos_weight) {
  const char* op = "binary_cross_entropy_with_logits";
  const LossReduction r = detail::parse_loss_reduction(op, reduction);
  const auto plan = checked_plan(op, input, target, r, weight, pos_weight);
  const DType c = plan.compute_dtype, out = plan.out_dtype, in = input.dtype();
  const Tensor x = input.to(c), y = target.to(c);
  // −log σ(x) = log(1 + e^−x) = max(−x, 0) + log1p(e^−|x|): no exp overflows, and log1p keeps
  // the small terms (PyTorch's log_sigmoid computes the same). A result wider than the input
  // sees it, and its product with pos_weight's factor, in the input's dtype (PyTorch's
  // log_sigmoid(x) and its in-place mul_); a half result is float32 throughout.
  const auto as_input = [&](const Tensor& t) { return in == out ? t : t.to(in).to(c); };
  const Tensor xi = input.to(detail::loss_compute_dtype(in));
  const Tensor softplus_neg_x = as_input(add(clamp_min(neg(xi), 0), log1p(exp(neg(abs(xi))))));
  Tensor log_term = softplus_neg_x;
  if (pos_weight)
    log_term = as_input(mul(add(mul(sub(pos_weight->to(c), 1), y), 1), softplus_neg_x));
  Tensor loss = add(mul(sub(1, y), x), log_term);
  if (weight) loss = mul(loss, weight->to(c));
  return detail::reduce_loss(loss, r, plan.out_dtype);
}

Tensor kl_div(const Tensor& input, const Tensor& target, std::string_view reduction,
              bool log_target) {
  const LossReduction r = detail::parse_loss_reduction("kl_div", reduction, true);
  const auto plan = checked_plan("kl_div", input, target, r);
  const DType c = plan.compute_dtype;
  const Tensor x = input.to(c), t = target.to(c);
  // PyTorch's: xlogy(t, t) − t·x is 0 where t is 0 (unless x is infinite or NaN). A result
  // wider than the target sees xlogy(t, t) and exp(t) in the target's dtype, as PyTorch; a
  // half result is float32 throughout.
  const Tensor own = target.dtype() == plan.out_dtype ? t : target;
  const Tensor loss =
      log_target ? mul(exp(own).to(c), sub(t, x)) : sub(xlogy(own, own).to(c), mul(t, x));
  // batchmean: the sum over input.size(0) (PyTorch's F.kl_div; a 0-d input: the sum).
  return detail::reduce_loss(loss, r, plan.out_dtype, input.dim() ? input.size(0) : 1);
}

}  // namespace nbx::ops
