// scaled_dot_product_attention in the explain catalog, family "attention": the rules and the
// plan the op runs (attention_plan.cpp). Operands: query, key, value and an optional mask
// (bool or additive); ExplainArgs::causal is is_causal; key heads fewer than the query's are
// grouped-query attention (enable_gqa).
#include <optional>
#include <string>

#include "core/families/kernel_family.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/attention.hpp"
#include "core/ops/explain_families.hpp"

namespace nbx::ops::detail {
namespace {

void explain_attention(const OpEntry& e, const ExplainCall& call, OpExplanation& out) {
  const auto& t = call.dtypes;
  const auto& s = call.shapes;
  std::optional<DType> mask_dtype;
  std::optional<Shape> mask_shape;
  if (t.size() > 3) mask_dtype = t[3], mask_shape = s[3];
  const auto kind = attention_mask_kind(t[0], t[1], t[2], mask_dtype, call.args.causal);
  const auto heads = [](const Shape& x) { return x.size() >= 3 ? x[x.size() - 3] : 1; };
  const bool gqa = heads(s[0]) != heads(s[1]);
  const AttentionShapes shapes = attention_shapes(s[0], s[1], s[2], mask_shape, kind, gqa);
  const AttentionPlan plan = plan_attention(e.name, t[0], shapes.dims, call.target);
  out.output = std::string(dtype_name(plan.out_dtype)) + " " + to_string(shapes.out);
  out.choices = plan.choices;
  if (plan.path == AttentionPath::kMath) {
    out.kernel = "attention.math (matmul, masked softmax, matmul; " +
                 std::to_string(plan.chunk_rows) + " query rows a step)";
    return;
  }
  // A fused path is the attention family's launch: its variant is what the backend runs.
  const std::string variant = attention_path_name(plan.path);
  out.kernel =
      "attention (op scaled_dot_product_attention, variant " + variant + ", " +
      (plan.path == AttentionPath::kCudnn ? std::string("tiles chosen by cuDNN's engine")
                                          : std::to_string(plan.block_rows) + " query rows x " +
                                                std::to_string(plan.block_keys) + " keys a step") +
      (plan.path == AttentionPath::kSplitKv
           ? ", " + std::to_string(plan.splits) + " key chunks, then a combine pass"
           : std::string()) +
      ")";
  out.choices.push_back({"variant",
                         variant_name(KernelFamily::kAttention, attention_variant(plan.path)), "",
                         "", "the path above."});
}

}  // namespace

void add_attention_ops(std::vector<OpEntry>& ops) {
  OpEntry sdpa;
  sdpa.name = "scaled_dot_product_attention";
  sdpa.family = "attention";
  sdpa.table_op = "scaled_dot_product_attention";
  sdpa.operands = 3;
  sdpa.optional_operands = 1;
  sdpa.operand_names =
      "query [.., Hq, L, E]; key [.., Hk, S, E]; value [.., Hk, S, Ev]; attn_mask (bool or "
      "additive); --causal for is_causal; Hk < Hq is grouped-query attention";
  sdpa.example_dtypes = {DType::kBFloat16, DType::kBFloat16, DType::kBFloat16};
  sdpa.example_shapes = {{2, 8, 128, 64}, {2, 2, 128, 64}, {2, 2, 128, 64}};
  sdpa.explain = explain_attention;
  ops.push_back(std::move(sdpa));
}

}  // namespace nbx::ops::detail
