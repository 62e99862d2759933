// The runner's call for scaled_dot_product_attention (torch_diff_ops_attention.py has the
// PyTorch side): the mask, when the case has one, is operand 3; "causal_lower_right" is
// PyTorch's causal_lower_right bias, nbx's CausalAlignment::kBottomRight.
#include "core/ops/attention.hpp"
#include "tests/torch/torch_diff_ops.hpp"

namespace nbx::torch_diff {

const std::map<std::string, OpCall>& attention_op_table() {
  static const std::map<std::string, OpCall> table = {
      {"scaled_dot_product_attention",
       [](const CaseArgs& a, const Device&) -> Outputs {
         const std::string mask = a.text("mask");
         const bool tensor_mask = mask == "bool" || mask == "additive";
         return {ops::scaled_dot_product_attention(
             a.t(0), a.t(1), a.t(2), tensor_mask ? std::optional<Tensor>(a.t(3)) : std::nullopt,
             mask.rfind("causal", 0) == 0, a.opt_real("scale"), a.flag("gqa"),
             mask == "causal_lower_right" ? ops::CausalAlignment::kBottomRight
                                          : ops::CausalAlignment::kTopLeft)};
       }},
  };
  return table;
}

}  // namespace nbx::torch_diff
