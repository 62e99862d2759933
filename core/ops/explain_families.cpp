// The explain function of each kernel family: the op's own planner, its decisions written
// out. Nothing here decides anything the op does not decide the same way.
#include "core/ops/explain_families.hpp"

#include <optional>
#include <string>

#include "core/errors.hpp"
#include "core/ops/elementwise_rules.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops::detail {
namespace {

std::string name_of(DType t) {
  return std::string(dtype_name(t));
}
std::string describe(DType t, const Shape& s) {
  return name_of(t) + " " + to_string(s);
}

Shape without_last(const Shape& s) {
  Shape r = s;
  if (!r.empty()) r.erase(r.size() - 1);
  return r;
}
std::int64_t last_dim(const Shape& s) {
  return s.empty() ? 1 : s[s.size() - 1];
}
std::string rows_text(std::int64_t rows, std::int64_t row_len) {
  return std::to_string(rows) + (rows == 1 ? " row of " : " rows of ") + std::to_string(row_len);
}

// "family (details; variant v)": the variant is whatever the plan chose under "variant", so
// a planner that gains variants shows them here without a change.
std::string kernel_text(const std::string& family, const std::string& details,
                        const std::vector<PlanChoice>& choices) {
  std::string text = family + " (" + details;
  for (const PlanChoice& c : choices)
    if (c.what == "variant") text += "; variant " + c.value;
  return text + ")";
}

void append(std::vector<PlanChoice>& to, const std::vector<PlanChoice>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// The variant, chosen by the ops' own choose_variant on the parameter block the op builds for
// a contiguous input reduced, normalized or softmaxed over its last dim.
void choose_row_variant(KernelFamily family, const RowPlan& plan, std::int32_t op,
                        std::int64_t rows, std::int64_t row_len, const PlanTarget& target,
                        std::vector<PlanChoice>& choices) {
  const auto in = std::int32_t(plan.input_dtype), out = std::int32_t(plan.out_dtype),
             acc = std::int32_t(plan.accumulate_dtype);
  if (family == KernelFamily::kReduce) {
    abi::ReduceParams p{};
    p.op = op, p.in_dtype = in, p.out_dtype = out, p.accumulate_dtype = acc;
    p.out_ndim = 1, p.red_ndim = 1, p.rows = rows, p.row_len = row_len;
    p.out_sizes[0] = rows, p.red_sizes[0] = row_len;
    p.in_kept_strides[0] = row_len, p.in_red_strides[0] = 1, p.out_strides[0] = 1;
    p.row_tile = plan.row_tile;
    const int candidates[] = {abi::kReduceRows, abi::kReduceGeneral};
    choose_variant(p, candidates, target, choices);
  } else if (family == KernelFamily::kSoftmax) {
    abi::SoftmaxParams p{};
    p.op = op, p.in_dtype = p.out_dtype = in, p.accumulate_dtype = acc;
    p.outer_ndim = 1, p.rows = rows, p.row_len = row_len, p.outer_sizes[0] = rows;
    p.in_outer_strides[0] = p.out_outer_strides[0] = row_len;
    p.in_row_stride = p.out_row_stride = 1;
    p.row_tile = plan.row_tile;
    const int candidates[] = {abi::kSoftmaxRows, plan.variant};
    choose_variant(p, candidates, target, choices);
  } else {
    abi::NormParams p{};
    p.op = op, p.in_dtype = p.out_dtype = p.param_dtype = in, p.accumulate_dtype = acc;
    p.rows = rows, p.row_len = row_len, p.row_tile = plan.row_tile;
    const int candidates[] = {abi::kNormRows, abi::kNormGeneral};
    choose_variant(p, candidates, target, choices);
  }
}

// The compute dtype of an elementwise plan that does not widen: bf16 names its capability.
PlanChoice compute_choice(const ElementwiseTypes& t, const PlanTarget& target,
                          const char* half_reason) {
  const bool bf16 = t.input_dtype == DType::kBFloat16;
  return {"compute_dtype", name_of(t.compute_dtype), bf16 ? "bf16" : "",
          bf16 ? target.caps.bf16.source : "",
          is_half_type(t.input_dtype) ? half_reason : "computed in the input dtype."};
}

}  // namespace

// Families with one variant on every backend name it, so every op's explanation says
// which variant runs.
void name_single_variant(OpExplanation& out) {
  for (const PlanChoice& c : out.choices)
    if (c.what == "variant") return;
  const std::optional<KernelFamily> f = family_named(out.family);
  if (!f || family_spec(*f).variants.size() != 1) return;
  out.choices.push_back({"variant", variant_name(*f, 0), "", "",
                         "the family's one variant, on every backend that offers it."});
}

void explain_elementwise(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const OpRule& rule = rule_for(static_cast<abi::ElementwiseOp>(entry.code));
  const std::string& name = entry.name;
  // masked_fill(x, mask) runs where(mask, value, x) and keeps x's dtype.
  const bool masked_fill = name == "masked_fill";
  const int condition = masked_fill ? 1 : (rule.op == abi::kOp_where ? 0 : -1);
  if (condition >= 0 && call.dtypes[condition] != DType::kBool)
    throw InvalidArgument(name, name + ": the condition/mask must be a bool tensor, not " +
                                    name_of(call.dtypes[condition]) + ".");
  Shape out_shape = call.shapes[0];
  bool same_shapes = true;
  for (const Shape& s : call.shapes) {
    out_shape = broadcast_shapes(out_shape, s, name.c_str());
    same_shapes = same_shapes && s == call.shapes[0];
  }
  if (masked_fill && !(out_shape == call.shapes[0]))
    throw InvalidArgument(name, name + ": the mask of shape " + to_string(call.shapes[1]) +
                                    " must broadcast to the tensor's shape " +
                                    to_string(call.shapes[0]) + ", not grow it to " +
                                    to_string(out_shape) + ".");
  std::vector<PromotionOperand> promo;
  for (std::size_t k = 0; k < call.dtypes.size(); ++k) {
    if (static_cast<int>(k) == condition) continue;
    promo.push_back({call.dtypes[k],
                     call.shapes[k].empty() ? OperandKind::kZeroDimTensor : OperandKind::kTensor});
  }
  const PlanTarget& target = call.target;
  const ElementwiseTypes t = plan_elementwise_types(
      rule, promo, masked_fill ? std::optional<DType>(call.dtypes[0]) : std::nullopt, target.caps,
      target.device_id, target.device_name, name);
  out.output = describe(t.out_dtype, out_shape);
  out.kernel = same_shapes ? "elementwise (op " + entry.table_op +
                                 "; flat: operands contiguous at the output's shape)"
                           : "elementwise (op " + entry.table_op +
                                 "; strided: broadcast operands read through stride 0, no copies)";
  out.choices.push_back({"promoted_dtype", name_of(t.common), "", "",
                         masked_fill ? "masked_fill keeps the tensor's dtype (PyTorch)."
                                     : "PyTorch's result_type of the operands."});
  if (t.input_dtype != t.common || t.integer_division)
    out.choices.push_back({"input_dtype", name_of(t.input_dtype), "", "",
                           t.integer_division
                               ? "integer operands stay integers; the kernel widens them."
                               : "operands are cast (one copy) before the kernel."});
  out.choices.push_back(
      {"out_dtype", name_of(t.out_dtype), "", "", "the op's result rule (PyTorch)."});
  if (t.integer_division) {
    out.choices.push_back(
        {"compute_dtype", name_of(t.compute_dtype), "fp64", target.caps.fp64.source,
         t.widened_through_float32
             ? "no fp64: integer true division widens through float32, exact below 2^24; "
               "operands at or above 2^24 are refused by name at run time."
             : "integer true division widens through float64 (exact below 2^53)."});
  } else {
    out.choices.push_back(
        compute_choice(t, target, "16-bit floats are stored as 16 bits and computed in float32."));
  }
  abi::ElementwiseParams p{};
  p.numel = numel(out_shape);
  plan_elementwise_variant(p, target, out.choices);
  out.kernel.pop_back();  // ")"
  out.kernel += "; variant " + variant_name(KernelFamily::kElementwise, p.variant) + ")";
}

void explain_gated(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const std::string& name = entry.name;
  const Shape halves = plan_halves(name, call.shapes[0], -1);
  // Two halves of one tensor: two operands of x's dtype and the output's shape.
  const OpRule& rule = rule_for(static_cast<abi::ElementwiseOp>(entry.code));
  const PromotionOperand promo[] = {{call.dtypes[0], OperandKind::kTensor},
                                    {call.dtypes[0], OperandKind::kTensor}};
  const PlanTarget& target = call.target;
  const ElementwiseTypes t = plan_elementwise_types(rule, promo, std::nullopt, target.caps,
                                                    target.device_id, target.device_name, name);
  out.output = describe(t.out_dtype, halves);
  out.choices.push_back({"split", "halves of the last dim", "", "",
                         "a = x[..., :d] and b = x[..., d:] are two views of x (strides, an "
                         "offset of d elements): no copy, one launch."});
  out.choices.push_back(
      {"out_dtype", name_of(t.out_dtype), "", "", "x's dtype (floating dtypes only, as PyTorch)."});
  out.choices.push_back(
      compute_choice(t, target, "16-bit floats compute in float32 and round once at the end."));
  abi::ElementwiseParams p{};
  p.numel = numel(halves);
  plan_elementwise_variant(p, target, out.choices);
  out.kernel = "elementwise (op " + entry.table_op +
               "; strided: the halves read through x's strides; variant " +
               variant_name(KernelFamily::kElementwise, p.variant) + ")";
}

void explain_cast(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const DType from = call.dtypes[0];
  const DType to = call.dtypes.size() > 1 ? call.dtypes[1] : from;
  const Shape& shape = call.shapes[0];
  if (call.dtypes.size() > 1) out.inputs = {describe(from, shape), "target dtype " + name_of(to)};
  if (entry.name == "to" && from == to) {
    out.output = describe(from, shape);
    out.kernel = "none (to() with the tensor's own dtype returns the tensor itself)";
    out.choices.push_back({"copy", "none", "", "", "Tensor::to makes no copy for its own dtype."});
    return;
  }
  // Tensor::to(dtype) is ops::cast: its refusals are named "cast".
  ElementPlan plan =
      plan_cast(entry.name == "copy" ? "copy" : "cast", from, to, shape, call.target);
  abi::ElementwiseParams p{};
  p.numel = numel(shape);
  plan_elementwise_variant(p, call.target, plan.choices);
  out.output = describe(plan.out_dtype, plan.out_shape);
  out.kernel = kernel_text("elementwise",
                           "op copy; one element in, one out, the input read through its strides",
                           plan.choices);
  out.choices = plan.choices;
}

void explain_creation(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const std::string& name = entry.name;
  const DType dtype = call.dtypes[0];
  const Shape& shape = call.shapes[0];
  const PlanTarget& target = call.target;
  ElementPlan plan;
  std::string family = "fill", details = "op " + name;
  const bool like = name == "zeros_like" || name == "ones_like" || name == "full_like";
  if (name == "full" || name == "fill" || like) {
    if (name == "full") out.inputs = {"none: makes " + describe(dtype, shape)};
    plan = plan_full(name, shape, dtype, target);
    abi::ElementwiseParams p{};
    p.numel = numel(shape);
    plan_elementwise_variant(p, target, plan.choices);
    family = "elementwise";
    details = "op copy of one host scalar into every element";
  } else if (name == "triu" || name == "tril") {
    plan = plan_triangle(name, shape, dtype, target);
    details += ", over the last two dims";
  } else if (name == "eye") {
    out.inputs = {"none: makes " + describe(dtype, shape)};
    if (shape.size() != 2)
      throw InvalidArgument(
          name, "explain eye: give the output's shape as [n, m] (got " + to_string(shape) + ").");
    plan = plan_eye(shape[0], shape[1], dtype, target);
  } else if (name == "empty_like" || name == "empty_strided") {
    out.inputs = {name == "empty_like" ? "like: " + describe(dtype, shape)
                                       : "none: makes " + describe(dtype, shape)};
    plan = plan_full(name, shape, dtype, target);
    plan.choices.pop_back();  // no value is written
    family = "none";
    details = "an allocation only; the elements are uninitialized";
  } else {
    out.inputs = {"none: makes " + describe(dtype, shape)};
    if (shape.size() != 1)
      throw InvalidArgument(name, "explain " + name +
                                      ": give the output's length as a 1-d shape (got " +
                                      to_string(shape) + ").");
    const std::int64_t n = shape[0];
    // explain has no bounds: it plans the range 0 … n by 1 (0 … 1 for linspace).
    if (name == "arange") {
      const bool integers = !is_floating(dtype);
      plan = integers ? plan_arange(Scalar(0), Scalar(n), Scalar(1), dtype, target)
                      : plan_arange(Scalar(0.0), Scalar(static_cast<double>(n)), Scalar(1.0), dtype,
                                    target);
      out.choices.push_back(
          {"bounds",
           integers ? "0, " + std::to_string(n) + ", 1" : "0.0, " + std::to_string(n) + ".0, 1.0",
           "", "",
           "explain's stand-in for start, end and step; integer bounds with "
           "a floating dtype are computed as integers instead (PyTorch)."});
    } else {
      plan = plan_linspace(Scalar(0.0), Scalar(1.0), n, dtype, target);
      out.choices.push_back(
          {"bounds", "0.0, 1.0", "", "", "explain's stand-in for start and end."});
    }
  }
  out.output = describe(plan.out_dtype, plan.out_shape);
  out.kernel = kernel_text(family, details, plan.choices);
  append(out.choices, plan.choices);
}

void explain_reduce(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const Shape& s = call.shapes[0];
  const RowPlan plan =
      plan_reduce(entry.name, call.dtypes[0], std::nullopt, last_dim(s), call.target);
  const Shape kept = without_last(s);
  RowPlan chosen = plan;
  choose_row_variant(KernelFamily::kReduce, plan, entry.code, numel(kept), last_dim(s), call.target,
                     chosen.choices);
  out.output = describe(plan.out_dtype, kept);
  if (entry.code == abi::kReduce_max_with_index || entry.code == abi::kReduce_min_with_index)
    out.output += " and int64 " + to_string(kept) + " (indices)";
  out.kernel = kernel_text(
      "reduce",
      "op " + entry.table_op + " over the last dim; " + rows_text(numel(kept), last_dim(s)),
      chosen.choices);
  out.choices = chosen.choices;
}

void explain_scan(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const Shape& s = call.shapes[0];
  RowPlan plan = plan_scan(entry.name, call.dtypes[0], std::nullopt, last_dim(s), call.target);
  // The layout, planned on the block the op builds for a contiguous input scanned along its
  // last dim.
  abi::ScanParams p{};
  p.op = entry.code, p.outer_ndim = 1, p.rows = numel(without_last(s)), p.row_len = last_dim(s);
  p.outer_sizes[0] = p.rows;
  p.in_outer_strides[0] = p.out_outer_strides[0] = p.row_len;
  p.in_row_stride = p.out_row_stride = 1;
  if (p.rows > 0 && p.row_len > 0) plan_scan_variant(p, call.target, plan.choices);
  out.output = describe(plan.out_dtype, s);
  if (entry.code == abi::kScan_cummax || entry.code == abi::kScan_cummin)
    out.output += " and int64 " + to_string(s) + " (indices)";
  out.kernel = kernel_text("scan",
                           "op " + entry.table_op + ", inclusive along the last dim; " +
                               rows_text(numel(without_last(s)), last_dim(s)),
                           plan.choices);
  out.choices = plan.choices;
}

void explain_softmax(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const Shape& s = call.shapes[0];
  RowPlan plan = plan_softmax(entry.name, call.dtypes[0], last_dim(s), call.target);
  choose_row_variant(KernelFamily::kSoftmax, plan, entry.code, numel(without_last(s)), last_dim(s),
                     call.target, plan.choices);
  out.output = describe(plan.out_dtype, s);
  out.kernel = kernel_text("softmax",
                           "op " + entry.table_op + " over the last dim; " +
                               rows_text(numel(without_last(s)), last_dim(s)),
                           plan.choices);
  out.choices = plan.choices;
}

void explain_norm(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const Shape& s = call.shapes[0];
  Shape normalized;  // layer/rms norm: over the last dim
  if (!s.empty()) normalized.push_back(s[s.size() - 1]);
  const NormRows rows = norm_rows(entry.name, call.dtypes[0], s, normalized, call.args.groups);
  RowPlan plan = plan_norm(entry.name, call.dtypes[0], rows.row_len, call.target);
  choose_row_variant(KernelFamily::kNorm, plan, entry.code, rows.rows, rows.row_len, call.target,
                     plan.choices);
  out.output = describe(plan.out_dtype, s);
  std::string details = "op " + entry.table_op + "; " + rows_text(rows.rows, rows.row_len);
  if (entry.code == abi::kNorm_group_norm)
    details += ", " + std::to_string(rows.groups) + " groups of " +
               std::to_string(rows.channels / rows.groups) + " channels";
  else if (entry.code == abi::kNorm_batch_norm)
    details += ", running statistics of " + std::to_string(rows.channels) + " channels";
  else
    details += " over the last dim";
  out.kernel = kernel_text("norm", details, plan.choices);
  out.choices = plan.choices;
}

void explain_matmul(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const ProductPlan product = plan_product(entry.name, call.dtypes, call.shapes, call.target);
  const MatmulPlan& plan = product.matmul;
  out.output = describe(plan.out_dtype, product.out_shape);
  if (plan.variant == abi::kMatmulVendorBlas)
    out.kernel = "matmul.blas (vendor BLAS: cuBLASLt)";
  else if (plan.variant == abi::kMatmulCoopMatrix)
    out.kernel = "matmul.coopmat (cooperative matrix)";
  else
    out.kernel = "matmul (tiled " + std::to_string(plan.tile_m) + "x" +
                 std::to_string(plan.tile_n) + "x" + std::to_string(plan.tile_k) + ", " +
                 std::to_string(plan.num_stages) + " stages)";
  out.choices = plan.choices;
}

}  // namespace nbx::ops::detail
