// The runner's calls for the MoE ops (torch_diff_ops_moe.py has the PyTorch side):
// grouped_matmul (a, b, offsets; attr layout "nk" or "kn"), moe_route (logits; top_k,
// renormalize), moe_permute (expert ids; num_experts), moe_combine (expert_out, weights,
// inverse), fused_moe (hidden, router_logits, w13, w2; top_k, renormalize).
#include "core/ops/moe.hpp"
#include "tests/torch/torch_diff_ops.hpp"

namespace nbx::torch_diff {

namespace {

using A = const CaseArgs&;
using D = const Device&;

}  // namespace

const std::map<std::string, OpCall>& moe_op_table() {
  static const std::map<std::string, OpCall> table = {
      {"grouped_matmul",
       [](A a, D) -> Outputs {
         const auto layout =
             a.text("layout") == "nk" ? ops::GroupedWeights::kNK : ops::GroupedWeights::kKN;
         return {ops::grouped_matmul(a.t(0), a.t(1), a.t(2), layout)};
       }},
      {"moe_route",
       [](A a, D) -> Outputs {
         const ops::MoeRouting r =
             ops::moe_route(a.t(0), a.integer("top_k"), a.flag("renormalize"));
         return {r.weights, r.expert_ids};
       }},
      {"moe_permute",
       [](A a, D) -> Outputs {
         const ops::MoePermutation p = ops::moe_permute(a.t(0), a.integer("num_experts"));
         return {p.order, p.group_offsets, p.inverse};
       }},
      {"moe_combine", [](A a, D) -> Outputs { return {ops::moe_combine(a.t(0), a.t(1), a.t(2))}; }},
      {"fused_moe",
       [](A a, D) -> Outputs {
         return {ops::fused_moe(a.t(0), a.t(1), a.t(2), a.t(3), a.integer("top_k"),
                                a.flag("renormalize"))};
       }},
  };
  return table;
}

}  // namespace nbx::torch_diff
