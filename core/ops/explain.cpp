#include "core/ops/explain.hpp"

#include <algorithm>
#include <functional>

#include "core/errors.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_rules.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/reduce.hpp"

namespace nbx::ops {
namespace {

std::string describe(DType t, const Shape& s) {
  return std::string(dtype_name(t)) + " " + to_string(s);
}
std::string name_of(DType t) {
  return std::string(dtype_name(t));
}

void explain_elementwise(const detail::OpRule& rule, const std::vector<DType>& dtypes,
                         const std::vector<Shape>& shapes, const PlanTarget& target,
                         OpExplanation& out) {
  const bool has_condition = rule.op == abi::kOp_where;
  std::vector<PromotionOperand> promo;
  Shape out_shape = shapes[0];
  bool same_shapes = true;
  for (std::size_t k = 0; k < dtypes.size(); ++k) {
    out_shape = broadcast_shapes(out_shape, shapes[k], out.op.c_str());
    same_shapes = same_shapes && shapes[k] == shapes[0];
    if (has_condition && k == 0) continue;
    promo.push_back(
        {dtypes[k], shapes[k].empty() ? OperandKind::kZeroDimTensor : OperandKind::kTensor});
  }
  const detail::ElementwiseTypes t = detail::plan_elementwise_types(
      rule, promo, std::nullopt, target.caps, target.device_id, target.device_name, out.op);
  out.output = describe(t.out_dtype, out_shape);
  out.kernel = same_shapes
                   ? "elementwise (flat: operands contiguous at the output's shape)"
                   : "elementwise (strided: broadcast operands read through stride 0, no copies)";
  out.choices.push_back(
      {"promoted_dtype", name_of(t.common), "", "", "PyTorch's result_type of the operands."});
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
    out.choices.push_back({"compute_dtype", name_of(t.compute_dtype),
                           t.input_dtype == DType::kBFloat16 ? "bf16" : "",
                           t.input_dtype == DType::kBFloat16 ? target.caps.bf16.source : "",
                           is_half_type(t.input_dtype)
                               ? "16-bit floats are stored as 16 bits and computed in float32."
                               : "computed in the input dtype."});
  }
}

Shape without_last(const Shape& s) {
  Shape r = s;
  if (!r.empty()) r.erase(r.size() - 1);
  return r;
}

void explain_rows(std::string_view op, const std::vector<DType>& dtypes,
                  const std::vector<Shape>& shapes, const PlanTarget& target, OpExplanation& out) {
  const Shape& s = shapes[0];
  const std::int64_t row_len = s.empty() ? 1 : s[s.size() - 1];
  RowPlan plan;
  const auto names = reduction_op_names();
  if (std::find(names.begin(), names.end(), op) != names.end()) {
    plan = plan_reduce(op, dtypes[0], std::nullopt, row_len, target);
    out.output = describe(plan.out_dtype, without_last(s));
    out.kernel = "reduce (over the last dim; rows of " + std::to_string(row_len) + ")";
  } else if (op == "softmax" || op == "log_softmax") {
    plan = plan_softmax(op, dtypes[0], row_len, target);
    out.output = describe(plan.out_dtype, s);
    out.kernel = "softmax (over the last dim)";
  } else {
    plan = plan_norm(op, dtypes[0], row_len, target);
    out.output = describe(plan.out_dtype, s);
    out.kernel = "norm (over the last dim)";
  }
  out.choices = plan.choices;
}

void explain_matmul(const std::vector<DType>& dtypes, const std::vector<Shape>& shapes,
                    const PlanTarget& target, OpExplanation& out) {
  if (dtypes.size() != 2 || dtypes[0] != dtypes[1])
    throw InvalidArgument(out.op, out.op + ": explain takes two operands of one dtype.");
  const Shape out_shape = matmul_shape(shapes[0], shapes[1]);
  const MatmulPlan plan = plan_matmul(dtypes[0], target.caps, out.op, target.device);
  out.output = describe(plan.out_dtype, out_shape);
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

bool is_row_op(std::string_view op) {
  static const std::vector<std::string> row_ops = [] {
    std::vector<std::string> v = reduction_op_names();
    for (const char* o : {"softmax", "log_softmax", "layer_norm", "rms_norm"}) v.emplace_back(o);
    return v;
  }();
  return std::find(row_ops.begin(), row_ops.end(), op) != row_ops.end();
}

}  // namespace

OpExplanation explain(std::string_view op, const std::vector<DType>& dtypes,
                      const std::vector<Shape>& shapes_in, const PlanTarget& target) {
  OpExplanation out;
  out.op = std::string(op);
  out.device = target.device_name;
  if (dtypes.empty())
    throw InvalidArgument("explain", "explain " + out.op + ": give at least one --dtype.");
  std::vector<Shape> shapes = shapes_in;
  if (shapes.empty()) shapes.push_back(Shape{});
  if (shapes.size() == 1) shapes.resize(dtypes.size(), shapes[0]);
  if (shapes.size() != dtypes.size())
    throw InvalidArgument("explain", "explain " + out.op + ": " + std::to_string(dtypes.size()) +
                                         " dtypes but " + std::to_string(shapes.size()) +
                                         " shapes.");
  for (std::size_t k = 0; k < dtypes.size(); ++k)
    out.inputs.push_back(describe(dtypes[k], shapes[k]));

  const detail::OpRule* rule = detail::rule_named(op);
  const bool matmul = op == "matmul" || op == "mm" || op == "bmm";
  if (!rule && !is_row_op(op) && !matmul)
    throw InvalidArgument("explain", "explain: '" + out.op + "' is not an op explain knows.");
  if (rule && static_cast<int>(dtypes.size()) != rule->arity)
    throw InvalidArgument("explain", "explain " + out.op + ": the op takes " +
                                         std::to_string(rule->arity) + " tensor operands, " +
                                         std::to_string(dtypes.size()) + " given.");
  try {
    if (rule)
      explain_elementwise(*rule, dtypes, shapes, target, out);
    else if (matmul)
      explain_matmul(dtypes, shapes, target, out);
    else
      explain_rows(op, dtypes, shapes, target, out);
  } catch (const Unsupported& e) {
    out.refused = true;
    out.refusal = e.what();
    out.refused_capability = e.capability();
  } catch (const InvalidArgument& e) {
    out.refused = true;
    out.refusal = e.what();
  }
  return out;
}

std::vector<std::string> explainable_ops() {
  std::vector<std::string> ops;
  for (const detail::OpRule& r : detail::all_rules())
    if (r.op != abi::kOp_copy) ops.emplace_back(r.name);
  for (const std::string& r : reduction_op_names()) ops.push_back(r);
  for (const char* o : {"softmax", "log_softmax", "layer_norm", "rms_norm", "matmul", "mm", "bmm"})
    ops.emplace_back(o);
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace nbx::ops
