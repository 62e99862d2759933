// The runner's calls for the rotary family's ops (torch_diff_ops_rotary.py has the PyTorch
// side): q, k, positions, cos_sin_cache; attrs rotary_dim and style ("neox" or "gptj").
#include "tests/torch/torch_diff_ops.hpp"

namespace nbx::torch_diff {

namespace {

using A = const CaseArgs&;
using D = const Device&;

ops::RotaryStyle style_of(A a) {
  return a.text("style") == "neox" ? ops::RotaryStyle::kRotateHalf : ops::RotaryStyle::kInterleaved;
}

}  // namespace

const std::map<std::string, OpCall>& rotary_op_table() {
  static const std::map<std::string, OpCall> table = {
      {"rotary_embedding",
       [](A a, D) -> Outputs {
         const ops::RotaryResult r = ops::rotary_embedding(a.t(0), a.t(1), a.t(2), a.t(3),
                                                           a.integer("rotary_dim"), style_of(a));
         return {r.q, *r.k};
       }},
      // In place through the operands' views: the outputs are those views.
      {"rotary_embedding_",
       [](A a, D) -> Outputs {
         ops::rotary_embedding_(a.t(0), a.t(1), a.t(2), a.t(3), a.integer("rotary_dim"),
                                style_of(a));
         return {a.t(0), a.t(1)};
       }},
  };
  return table;
}

}  // namespace nbx::torch_diff
