// cross_entropy and nll_loss (loss.hpp): class-index targets through one logsumexp per row
// and one gathered logit per row (gather checks the indices on the device: a bad target is
// the gather family's fault, never a host round trip), class-probability targets through
// log_softmax's definition x − logsumexp(x). Ignored targets read class 0 and are masked
// out with where, so they never fault.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/index.hpp"
#include "core/ops/loss.hpp"
#include "core/ops/loss_detail.hpp"
#include "core/ops/reduce_detail.hpp"

namespace nbx::ops {
namespace {

using detail::ClassLossPlan;
using detail::LossReduction;

struct ClassLossCall {
  std::string_view op;
  const Tensor& input;
  const Tensor& target;
  const std::optional<Tensor>& weight;
  std::int64_t ignore_index;
  LossReduction reduction;
  double label_smoothing;
  bool logits;  // cross_entropy: the input holds logits, not log-probabilities
};

ClassLossPlan checked_plan(const ClassLossCall& c) {
  const std::string op(c.op);
  if (!c.input.defined()) throw InvalidArgument(op, op + ": the input is undefined.");
  const Device& device = c.input.device();
  detail::require_loss_operand(c.op, c.target, "target", device);
  if (c.weight) detail::require_loss_operand(c.op, *c.weight, "weight", device);
  std::optional<detail::OperandSpec> weight;
  if (c.weight) weight = detail::OperandSpec{c.weight->dtype(), c.weight->shape()};
  const ClassLossPlan plan = detail::plan_class_loss(
      c.op, {c.input.dtype(), c.input.shape()}, {c.target.dtype(), c.target.shape()}, weight,
      c.ignore_index, c.reduction, c.label_smoothing);
  for (DType t : {c.input.dtype(), c.target.dtype(), plan.compute_dtype, plan.out_dtype})
    detail::require_dtype_support(c.op, t, device);
  return plan;
}

// weight [C] viewed to broadcast along the class dim of an input of rank `rank`.
Tensor class_weights_view(const Tensor& w, int class_dim, int rank) {
  Shape s{w.size(0)};
  for (int d = class_dim + 1; d < rank; ++d) s.push_back(1);
  return w.reshape(s);
}

// Which targets count: target != ignore_index (all of them when the index is beyond the
// target dtype's range, where no element can equal it).
Tensor kept_targets(const Tensor& target, std::int64_t ignore_index) {
  const bool fits = target.dtype() == DType::kInt64 ||
                    (ignore_index >= std::numeric_limits<std::int32_t>::min() &&
                     ignore_index <= std::numeric_limits<std::int32_t>::max());
  if (!fits) return Tensor::ones(target.shape(), DType::kBool, target.device());
  return ne(target, Scalar(ignore_index));
}

// logsumexp over the class dim in `cd` (float32 for half inputs, read in place), NaN where it
// is +inf: a row holding +inf has no finite log-probabilities, and PyTorch's log_softmax
// (x − max − log Σ e^(x − max), ∞ − ∞ in it) makes the whole row NaN.
Tensor class_logsumexp(const Tensor& input, int dim, bool keepdim, DType cd) {
  const Tensor lse = detail::logsumexp_float32(input, {dim}, keepdim).to(cd);
  return where(isposinf(lse), std::numeric_limits<double>::quiet_NaN(), lse);
}

// C = 0: no class exists, so any kept target is out of range. gather cannot say so without
// an index it may read; the targets are read back (one synchronize) to find the first one.
void refuse_classes_of_none(std::string_view op, const Tensor& target, const Tensor& kept) {
  const std::vector<bool> k = kept.contiguous().to_host<bool>();
  const std::vector<std::int64_t> t = target.to(DType::kInt64).contiguous().to_host<std::int64_t>();
  for (std::size_t i = 0; i < k.size(); ++i)
    if (k[i])
      throw DeviceFault("gather", target.device().str(), t[i], 0, static_cast<std::int64_t>(i),
                        std::string(op) + " on " + target.device().display_name() +
                            ": gather: index " + std::to_string(t[i]) +
                            " is out of range [0, 0) at position " + std::to_string(i) +
                            " (the input has no class).");
}

Tensor class_index_loss(const ClassLossCall& c, const ClassLossPlan& plan) {
  const DType cd = plan.compute_dtype;
  const int dim = plan.class_dim;
  // uint8 targets (PyTorch's legacy class indices) gather as int32.
  const Tensor target = c.target.dtype() == DType::kUInt8 ? c.target.to(DType::kInt32) : c.target;
  const Tensor kept = kept_targets(target, c.ignore_index);
  if (plan.classes == 0 && target.numel() > 0) refuse_classes_of_none(c.op, target, kept);
  const Tensor safe = where(kept, target, 0);  // ignored → class 0: read, never faults
  // One logsumexp pass per row; with C = 0 it is −inf and nothing is gathered (every target
  // is ignored: refuse_classes_of_none).
  Tensor lse, picked;
  if (c.logits) lse = class_logsumexp(c.input, dim, false, cd);
  if (plan.classes == 0) {
    picked = Tensor::zeros(target.shape(), cd, target.device());
  } else {
    // The input's gather first, so a bad target is reported by it (the host stops there).
    picked = gather(c.input, dim, safe.unsqueeze(dim)).squeeze(dim).to(cd);
    if (c.logits) picked = sub(picked, lse);
  }
  // picked is log p[t]; PyTorch's element is −w[t]·log p[t], 0 where ignored.
  Tensor w_t;
  Tensor nll;
  if (c.weight && plan.classes > 0) {
    w_t = index_select(c.weight->to(cd), 0, safe.reshape({-1})).reshape(target.shape());
    nll = neg(mul(w_t, picked));
    w_t = where(kept, w_t, 0);
  } else {
    nll = neg(picked);
    w_t = kept.to(cd);
  }
  Tensor loss = where(kept, nll, 0);
  if (c.label_smoothing > 0) {
    // −Σ_c w[c]·log p[c] = Σ_c w[c]·(lse − x[c]) = lse·Σw − Σ_c w[c]·x[c]: one row sum of the
    // input (of w·x with a weight), not a log_softmax of the input's size.
    Tensor row_sum, weight_sum;
    if (c.weight) {
      const Tensor w = c.weight->to(cd);
      row_sum = sum(mul(c.input, class_weights_view(w, dim, c.input.dim())), {dim});
      weight_sum = sum(w);
    } else {
      row_sum = detail::sum_float32(c.input, {dim}).to(cd);
      weight_sum =
          Tensor::full({}, Scalar(static_cast<double>(plan.classes)), cd, c.input.device());
    }
    const Tensor smooth = where(kept, sub(mul(lse, weight_sum), row_sum), 0);
    const double eps = c.label_smoothing, classes = static_cast<double>(plan.classes);
    loss = add(mul(loss, 1.0 - eps), mul(smooth, eps / classes));
  }
  if (c.reduction == LossReduction::kMean)  // Σ loss / Σ w[t] over kept targets: 0/0 is NaN
    return div(sum(loss), sum(w_t)).to(plan.out_dtype);
  return detail::reduce_loss(loss, c.reduction, plan.out_dtype);
}

Tensor class_probability_loss(const ClassLossCall& c, const ClassLossPlan& plan) {
  const DType cd = plan.compute_dtype, out = plan.out_dtype;
  const int dim = plan.class_dim;
  // The target is as large as the input, so log_softmax's N·C values cost nothing extra here.
  // A result wider than the input (a wider target or weight) sees PyTorch's log_softmax in
  // the input's own dtype (log_softmax(x, dim, x.dtype)); a half result is float32 throughout.
  const DType in = c.input.dtype(), in_compute = detail::loss_compute_dtype(in);
  Tensor log_p = sub(c.input, class_logsumexp(c.input, dim, true, in_compute));
  log_p = (in == out ? log_p : log_p.to(in)).to(cd);
  // Smoothing of a narrower target happens in its dtype too (PyTorch: target·(1 − ε) + ε/C).
  const DType td = c.target.dtype();
  Tensor y = td == out ? c.target.to(cd) : c.target;
  if (c.label_smoothing > 0)
    y = add(mul(y, 1.0 - c.label_smoothing), c.label_smoothing / static_cast<double>(plan.classes));
  Tensor terms = mul(log_p, y.to(cd));  // PyTorch's order: input · target · weight
  if (c.weight) terms = mul(terms, class_weights_view(c.weight->to(cd), dim, c.input.dim()));
  if (c.reduction == LossReduction::kNone) return neg(sum(terms, {dim})).to(out);
  const Tensor total = neg(sum(terms));
  if (c.reduction == LossReduction::kSum) return total.to(out);
  // mean: over the N·d1·… elements; none at all gives NaN (0/0), as PyTorch.
  const std::int64_t n = plan.classes ? c.input.numel() / plan.classes : 0;
  return div(total, static_cast<double>(n)).to(out);
}

Tensor class_loss(const ClassLossCall& c) {
  const ClassLossPlan plan = checked_plan(c);
  return plan.probabilities ? class_probability_loss(c, plan) : class_index_loss(c, plan);
}

}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                     std::int64_t ignore_index, std::string_view reduction,
                     double label_smoothing) {
  const LossReduction r = detail::parse_loss_reduction("cross_entropy", reduction);
  return class_loss(
      {"cross_entropy", input, target, weight, ignore_index, r, label_smoothing, true});
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                std::int64_t ignore_index, std::string_view reduction) {
  const LossReduction r = detail::parse_loss_reduction("nll_loss", reduction);
  return class_loss({"nll_loss", input, target, weight, ignore_index, r, 0.0, false});
}

}  // namespace nbx::ops
