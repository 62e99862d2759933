// The losses (loss.hpp) in the explain catalog, family "loss": no kernel of their own, so each
// entry says which pieces run (reductions, gathers, elementwise ops), the result's dtype and
// shape for the default reduction (mean) and the dtype they compute in — from the same plans
// the ops make (loss_plan.cpp).
#include <string>

#include "core/errors.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/loss_detail.hpp"

namespace nbx::ops::detail {
namespace {

std::string described(DType t, const Shape& s) {
  return std::string(dtype_name(t)) + " " + to_string(s);
}

std::optional<OperandSpec> operand(const ExplainCall& call, std::size_t k) {
  if (call.dtypes.size() <= k) return std::nullopt;
  return OperandSpec{call.dtypes[k], call.shapes[k]};
}

void explain_loss(const OpEntry& e, const ExplainCall& call, OpExplanation& out) {
  const std::string& n = e.name;
  for (DType t : call.dtypes)
    require_dtype_support(n, t, call.target.caps, call.target.device_id, call.target.device_name);
  const OperandSpec input{call.dtypes[0], call.shapes[0]}, target{call.dtypes[1], call.shapes[1]};
  const LossReduction mean = LossReduction::kMean;
  std::string runs, why;
  DType out_dtype, compute;
  Shape shape;
  if (n == "cross_entropy" || n == "nll_loss") {
    const ClassLossPlan p = plan_class_loss(n, input, target, operand(call, 2), -100, mean);
    out_dtype = p.out_dtype, compute = p.compute_dtype, shape = p.output;
    if (p.probabilities) {
      runs =
          "logsumexp (reduce family) over the class dim, the input minus it, products with "
          "the target (and weight), sum (reduce family)";
      why =
          "class probabilities (a floating target of the input's shape): "
          "−Σ_c w[c]·y[c]·(x[c] − logsumexp(x)); mean divides by N·d1·….";
    } else {
      runs = std::string(n == "cross_entropy" ? "logsumexp (reduce family) per row, " : "") +
             "where (ignored targets → class 0), gather (gather family) of one value per row" +
             (operand(call, 2) ? ", index_select of the weights" : "") +
             ", elementwise ops, sum (reduce family)";
      why = "class indices: " +
            std::string(n == "cross_entropy" ? "w[t]·(logsumexp(x) − x[t])" : "−w[t]·x[t]") +
            "; no log_softmax of the input's size is made (label smoothing adds one row sum). "
            "A target outside [0, C) that is not ignore_index faults in gather (DeviceFault); "
            "mean divides by Σ w[t] over kept targets (NaN when all are ignored).";
    }
  } else {
    const PointwiseLossPlan p =
        plan_pointwise_loss(n, input, target, mean, operand(call, 2), operand(call, 3));
    out_dtype = p.out_dtype, compute = p.compute_dtype, shape = p.output;
    runs = "elementwise ops, mean (reduce family)";
    if (n == "mse_loss") why = "(x − y)², x and y broadcast together.";
    if (n == "l1_loss") why = "|x − y|, x and y broadcast together.";
    if (n == "smooth_l1_loss") why = "beta 1: where(|d| < beta, 0.5·d²/beta, |d| − 0.5·beta).";
    if (n == "kl_div") why = "xlogy(t, t) − t·x (log_target: exp(t)·(t − x)).";
    if (n == "binary_cross_entropy_with_logits")
      why =
          "(1 − y)·x + (1 + (p − 1)·y)·(max(−x, 0) + log1p(exp(−|x|))), times weight; the "
          "result takes the target's dtype.";
  }
  require_dtype_support(n, compute, call.target.caps, call.target.device_id,
                        call.target.device_name);
  out.output = described(out_dtype, shape);
  out.kernel = "loss (composition): " + runs;
  out.choices.push_back({"runs", runs, "", "", why});
  out.choices.push_back({"compute_dtype", std::string(dtype_name(compute)), "", "",
                         compute == out_dtype || !is_floating(out_dtype)
                             ? "the result's dtype."
                             : "float16/bfloat16 compute in float32 and round once."});
  out.choices.push_back({"out_dtype", std::string(dtype_name(out_dtype)), "", "",
                         "reduction mean (the default; none keeps the elements' shape)."});
}

OpEntry entry(const char* name, const char* operands, std::vector<DType> dtypes,
              std::vector<Shape> shapes, int optional) {
  OpEntry e;
  e.name = name;
  e.family = "loss";
  e.table_op = "composition";
  e.operands = 2;
  e.optional_operands = optional;
  e.operand_names = operands;
  e.example_dtypes = std::move(dtypes);
  e.example_shapes = std::move(shapes);
  e.explain = explain_loss;
  return e;
}

}  // namespace

void add_loss_ops(std::vector<OpEntry>& ops) {
  const Shape rows{64, 1000}, batch{64};
  const DType f32 = DType::kFloat32, i64 = DType::kInt64;
  const char* classes =
      "input [N, C] (or [C], [N, C, d…]); target (int64/int32 class indices [N], or floating "
      "probabilities of the input's shape); weight [C] (optional)";
  ops.push_back(entry("cross_entropy", classes, {f32, i64}, {rows, batch}, 1));
  ops.push_back(entry("nll_loss", classes, {f32, i64}, {rows, batch}, 1));
  const char* pair = "input; target (broadcast together)";
  ops.push_back(entry("mse_loss", pair, {f32, f32}, {rows, rows}, 0));
  ops.push_back(entry("l1_loss", pair, {f32, f32}, {rows, rows}, 0));
  ops.push_back(entry("smooth_l1_loss", pair, {f32, f32}, {rows, rows}, 0));
  ops.push_back(entry("kl_div", pair, {f32, f32}, {rows, rows}, 0));
  ops.push_back(entry("binary_cross_entropy_with_logits",
                      "input; target (the input's shape); weight; pos_weight (both optional, "
                      "broadcast to the input)",
                      {f32, f32}, {rows, rows}, 2));
}

}  // namespace nbx::ops::detail
