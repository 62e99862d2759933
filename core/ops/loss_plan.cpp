// The losses' plans: PyTorch's argument checks (its words where it has them, with the
// values) and result dtypes and shapes, from dtypes and shapes only (loss_detail.hpp).
#include <cmath>
#include <string>

#include "core/errors.hpp"
#include "core/ops/loss_detail.hpp"
#include "core/ops/reduce.hpp"

namespace nbx::ops::detail {
namespace {

std::string str(DType t) {
  return std::string(dtype_name(t));
}

[[noreturn]] void refuse(std::string_view op, const std::string& why) {
  throw InvalidArgument(std::string(op), std::string(op) + ": " + why);
}

[[noreturn]] void refuse_dtype(std::string_view op, DType t, const char* why) {
  throw InvalidArgument(std::string(op), std::string(op) + " is not defined for " + str(t) +
                                             " inputs (" + why + ").");
}

Shape without(const Shape& s, int dim) {
  Shape out;
  for (int d = 0; d < s.size(); ++d)
    if (d != dim) out.push_back(s[d]);
  return out;
}

bool is_class_index(DType t) {
  return t == DType::kInt64 || t == DType::kInt32 || t == DType::kUInt8;
}

// The class-index target's shape against the input's (PyTorch's nll_loss_nd and
// F.nll_loss checks).
void check_class_target(std::string_view op, const Shape& in, const Shape& t) {
  if (in.size() == 1) {
    if (t.size() != 0)
      refuse(op, "size mismatch (got input: " + to_string(in) + ", target: " + to_string(t) +
                     "): a [C] input takes a 0-d target.");
    return;
  }
  if (t.size() == 0 || in[0] != t[0])
    refuse(op, "Expected input batch_size (" + std::to_string(in[0]) +
                   ") to match target batch_size (" + (t.size() ? std::to_string(t[0]) : "0") +
                   "); input " + to_string(in) + ", target " + to_string(t) + ".");
  if (in.size() == 2 && t.size() != 1)
    refuse(op, "0D or 1D target tensor expected, multi-target not supported (target " +
                   to_string(t) + " for input " + to_string(in) + ").");
  if (in.size() > 2 && !(t == without(in, 1)))
    refuse(op, "Expected target size " + to_string(without(in, 1)) + ", got " + to_string(t) +
                   " (input " + to_string(in) + ").");
}

Shape reduced(LossReduction r, const Shape& elements) {
  return r == LossReduction::kNone ? elements : Shape{};
}

}  // namespace

LossReduction parse_loss_reduction(std::string_view op, std::string_view reduction,
                                   bool batchmean) {
  if (reduction == "none") return LossReduction::kNone;
  if (reduction == "mean") return LossReduction::kMean;
  if (reduction == "sum") return LossReduction::kSum;
  if (reduction == "batchmean" && batchmean) return LossReduction::kBatchMean;
  refuse(op, std::string(reduction) + " is not a valid value for reduction (none, mean, sum" +
                 (batchmean ? ", batchmean" : "") + ").");
}

std::string_view reduction_name(LossReduction r) {
  switch (r) {
    case LossReduction::kNone:
      return "none";
    case LossReduction::kMean:
      return "mean";
    case LossReduction::kSum:
      return "sum";
    case LossReduction::kBatchMean:
      return "batchmean";
  }
  return "";
}

DType loss_compute_dtype(DType t) {
  return is_half_type(t) ? DType::kFloat32 : t;
}

ClassLossPlan plan_class_loss(std::string_view op, const OperandSpec& input,
                              const OperandSpec& target, const std::optional<OperandSpec>& weight,
                              std::int64_t ignore_index, LossReduction reduction,
                              double label_smoothing) {
  if (reduction == LossReduction::kBatchMean) parse_loss_reduction(op, "batchmean");
  if (!is_floating(input.dtype))
    refuse_dtype(op, input.dtype,
                 "it takes floating dtypes, as PyTorch's log_softmax and nll_loss");
  if (input.shape.size() == 0)
    refuse(op, "Expected 1 or more dimensions (got 0): the input is 0-d.");
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0))
    refuse(op, "label_smoothing must be between 0.0 and 1.0. Got: " +
                   std::to_string(label_smoothing) + ".");
  ClassLossPlan plan;
  plan.class_dim = input.shape.size() == 1 ? 0 : 1;
  plan.classes = input.shape[plan.class_dim];
  // PyTorch takes a target of the input's shape as class probabilities (cross_entropy only).
  plan.probabilities = op == "cross_entropy" && target.shape == input.shape;
  if (weight && (weight->shape.size() != 1 || weight->shape[0] != plan.classes))
    refuse(op, "weight tensor should be defined either for all " + std::to_string(plan.classes) +
                   " classes or no classes but got weight tensor of shape: " +
                   to_string(weight->shape) + ".");
  if (plan.probabilities) {
    if (!is_floating(target.dtype))
      refuse(op, "Expected floating point type for target with class probabilities, got " +
                     str(target.dtype) + ".");
    if (ignore_index >= 0)
      refuse(op, "ignore_index is not supported for floating point target (ignore_index " +
                     std::to_string(ignore_index) + ").");
    plan.out_dtype = promote_types(input.dtype, target.dtype);
    if (weight) plan.out_dtype = promote_types(plan.out_dtype, weight->dtype);
    plan.elements = without(input.shape, plan.class_dim);
  } else {
    if (!is_class_index(target.dtype))
      refuse(op, "the target holds class indices (int64, int32 or uint8), got " +
                     str(target.dtype) + " (a floating target must have the input's shape " +
                     to_string(input.shape) + " to hold class probabilities).");
    // PyTorch's nll_loss takes its legacy uint8 targets for [C] and [N, C] inputs only.
    if (target.dtype == DType::kUInt8 && input.shape.size() > 2)
      throw InvalidArgument(std::string(op),
                            std::string(op) + " is not defined for uint8 targets of a " +
                                to_string(input.shape) +
                                " input: expected scalar type Long but found Byte (PyTorch "
                                "takes uint8 for [C] and [N, C] inputs only; int64 or int32).");
    check_class_target(op, input.shape, target.shape);
    if (weight && weight->dtype != input.dtype)
      refuse(op, "expected scalar type " + str(input.dtype) + " but found " + str(weight->dtype) +
                     " for the weight (it takes the input's dtype, as PyTorch).");
    plan.out_dtype = input.dtype;
    plan.elements = target.shape;
  }
  plan.compute_dtype = loss_compute_dtype(plan.out_dtype);
  plan.output = reduced(reduction, plan.elements);
  return plan;
}

PointwiseLossPlan plan_pointwise_loss(std::string_view op, const OperandSpec& input,
                                      const OperandSpec& target, LossReduction reduction,
                                      const std::optional<OperandSpec>& weight,
                                      const std::optional<OperandSpec>& pos_weight) {
  const std::string name(op);
  PointwiseLossPlan plan;
  const bool bce = op == "binary_cross_entropy_with_logits";
  if (reduction == LossReduction::kBatchMean && op != "kl_div")
    parse_loss_reduction(op, "batchmean");
  if (bce) {
    if (!(target.shape == input.shape))
      refuse(op, "Target size (" + to_string(target.shape) + ") must be the same as input size (" +
                     to_string(input.shape) + ").");
    if (!is_floating(input.dtype))
      refuse_dtype(op, input.dtype, "it takes floating dtypes, as PyTorch's log_sigmoid");
    // PyTorch writes (1 − y)·x … into 1 − y: the result takes the target's dtype.
    if (!is_floating(target.dtype))
      refuse(op, "the result takes the target's dtype, which must be floating: result type " +
                     str(promote_types(input.dtype, target.dtype)) +
                     " can't be cast to the desired output type " + str(target.dtype) + ".");
    for (const auto* w : {&weight, &pos_weight}) {
      if (!*w) continue;
      const char* what = w == &weight ? "weight" : "pos_weight";
      if (!(broadcast_shapes((*w)->shape, input.shape, name.c_str()) == input.shape))
        refuse(op, std::string("the ") + what + " " + to_string((*w)->shape) +
                       " does not broadcast to the input's shape " + to_string(input.shape) + ".");
      if ((*w)->dtype == DType::kBool)
        refuse(op, std::string("the ") + what + " is bool; it takes numbers.");
    }
    plan.elements = input.shape;
    plan.out_dtype = target.dtype;
    plan.compute_dtype = loss_compute_dtype(promote_types(input.dtype, target.dtype));
    plan.output = reduced(reduction, plan.elements);
    return plan;
  }
  plan.elements = broadcast_shapes(input.shape, target.shape, name.c_str());
  // F.mse_loss, l1_loss and smooth_l1_loss broadcast their operands first, so a 0-d one
  // promotes as a tensor; kl_div does not, and a 0-d operand yields to a dimensioned one of
  // its category (torch.result_type).
  const auto kind = [](const OperandSpec& o) {
    return o.shape.size() ? OperandKind::kTensor : OperandKind::kZeroDimTensor;
  };
  const PromotionOperand both[] = {{input.dtype, kind(input)}, {target.dtype, kind(target)}};
  const DType promoted =
      op == "kl_div" ? result_type(both) : promote_types(input.dtype, target.dtype);
  if (op == "kl_div") {
    if (!is_floating(input.dtype) || !is_floating(target.dtype))
      refuse(op, "Integral inputs not supported (input " + str(input.dtype) + ", target " +
                     str(target.dtype) + ").");
  } else if (op == "l1_loss") {
    if (input.dtype == DType::kBool && target.dtype == DType::kBool)
      refuse(op, "Subtraction, the `-` operator, with two bool tensors is not supported.");
    if (!is_floating(promoted) && reduction == LossReduction::kMean)
      refuse(op,
             "mean(): could not infer output dtype. Input dtype must be either a floating "
             "point or complex dtype. Got: " +
                 str(promoted) + " (reduction none and sum take integers).");
  } else if (!is_floating(promoted)) {  // mse_loss, smooth_l1_loss
    refuse_dtype(op, promoted, "it takes floating dtypes");
  }
  plan.compute_dtype = loss_compute_dtype(promoted);
  plan.out_dtype =
      !is_floating(promoted) && reduction == LossReduction::kSum ? DType::kInt64 : promoted;
  plan.output = reduced(reduction, plan.elements);
  return plan;
}

void require_loss_operand(std::string_view op, const Tensor& t, const char* what,
                          const Device& device) {
  if (!t.defined()) refuse(op, std::string("the ") + what + " is undefined.");
  if (!(t.device() == device))
    refuse(op, std::string("the ") + what + " is on " + t.device().str() + ", the input on " +
                   device.str() + "; all operands must be on one device.");
}

Tensor reduce_loss(const Tensor& elements, LossReduction r, DType out, std::int64_t batch) {
  Tensor total;
  switch (r) {
    case LossReduction::kNone:
      return elements.to(out);
    case LossReduction::kSum:
      total = sum(elements);
      break;
    case LossReduction::kMean:
      total = mean(elements);  // 0/0 = NaN over no elements, as PyTorch
      break;
    case LossReduction::kBatchMean:
      total = sum(elements) / Scalar(static_cast<double>(batch));
      break;
  }
  return total.to(out);
}

}  // namespace nbx::ops::detail
