// The runner's calls for the losses (torch_diff_ops_loss.py has the PyTorch side): an absent
// weight or pos_weight operand is std::nullopt, the reduction its name.
#include "core/ops/loss.hpp"
#include "tests/torch/torch_diff_ops.hpp"

namespace nbx::torch_diff {

namespace {

using A = const CaseArgs&;
using D = const Device&;

}  // namespace

const std::map<std::string, OpCall>& loss_op_table() {
  static const std::map<std::string, OpCall> table = {
      {"cross_entropy",
       [](A a, D) -> Outputs {
         return {ops::cross_entropy(a.t(0), a.t(1), a.opt_t(2), a.integer("ignore_index"),
                                    a.text("reduction"), a.real("label_smoothing"))};
       }},
      {"nll_loss",
       [](A a, D) -> Outputs {
         return {ops::nll_loss(a.t(0), a.t(1), a.opt_t(2), a.integer("ignore_index"),
                               a.text("reduction"))};
       }},
      {"mse_loss",
       [](A a, D) -> Outputs { return {ops::mse_loss(a.t(0), a.t(1), a.text("reduction"))}; }},
      {"l1_loss",
       [](A a, D) -> Outputs { return {ops::l1_loss(a.t(0), a.t(1), a.text("reduction"))}; }},
      {"smooth_l1_loss",
       [](A a, D) -> Outputs {
         return {ops::smooth_l1_loss(a.t(0), a.t(1), a.text("reduction"), a.real("beta"))};
       }},
      {"binary_cross_entropy_with_logits",
       [](A a, D) -> Outputs {
         return {ops::binary_cross_entropy_with_logits(a.t(0), a.t(1), a.opt_t(2),
                                                       a.text("reduction"), a.opt_t(3))};
       }},
      {"kl_div",
       [](A a, D) -> Outputs {
         return {ops::kl_div(a.t(0), a.t(1), a.text("reduction"), a.flag("log_target"))};
       }},
  };
  return table;
}

}  // namespace nbx::torch_diff
