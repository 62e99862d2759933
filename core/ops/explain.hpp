// `nbx explain`: the decision a wrapper takes for given dtypes and shapes on a device —
// promoted and compute dtypes, widening, kernel variant, tiles, and the capability keys
// behind each — or its refusal, without running anything. It covers every public op (the
// catalog, op_catalog.hpp) and calls the same planner functions the ops call (plan.hpp,
// linalg.hpp, elementwise_rules.hpp), so it cannot drift from what the ops do.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ops/plan.hpp"
#include "core/shape.hpp"

namespace nbx::ops {

struct OpExplanation {
  std::string op;
  std::string family;               // the kernel family that runs it ("scan")
  std::string device;               // "cuda:0 (NVIDIA H200)" or "arch nvidia/sm_70"
  std::vector<std::string> inputs;  // "float16 [4096, 4096]"
  std::string output;               // "float32 [4096, 4096]"; "" when refused
  std::string kernel;               // kernel family and variant
  std::vector<PlanChoice> choices;
  bool refused = false;
  std::string refusal;             // the refusal's full message
  std::string refused_capability;  // for Unsupported; "" for an InvalidArgument
};

// What some ops take beyond dtypes and shapes. Reductions, scans, softmax and the
// layer/rms norms work over the last dim.
struct ExplainArgs {
  std::int64_t groups = 1;  // group_norm's num_groups
  bool causal = false;      // scaled_dot_product_attention's is_causal
};

// `dtypes` and `shapes` describe the operands in the op's order (one shape may serve all);
// the catalog entry's operand_names says what they are (a cast's second dtype is its
// target; full, arange and linspace take the output's dtype and shape). Throws
// InvalidArgument for an unknown op or a wrong operand count; refusals of the op itself
// are reported in the result, not thrown.
OpExplanation explain(std::string_view op, const std::vector<DType>& dtypes,
                      const std::vector<Shape>& shapes, const PlanTarget& target,
                      const ExplainArgs& args = {});

// `e` as `nbx explain --json` prints it (README, "JSON output"): schema "nbx.explain/1", op,
// family, device, inputs, refused, then output, kernel and choices (what, value, capability,
// source, reason) — or refusal and capability.
std::string explanation_to_json(const OpExplanation& e, int indent = 2);

// Every op explain knows (the catalog's names), sorted.
std::vector<std::string> explainable_ops();

}  // namespace nbx::ops
