// The runner's calls for the shape ops (torch_diff_ops_shape.py has the PyTorch side): a list
// input is the case's first `n` operands, a list output is the outputs.
#include "tests/torch/torch_diff_ops.hpp"

namespace nbx::torch_diff {

namespace {

using A = const CaseArgs&;
using D = const Device&;

ops::TensorList operands(A a) {
  ops::TensorList xs;
  for (std::int64_t i = 0; i < a.integer("n"); ++i) xs.push_back(a.t(static_cast<std::size_t>(i)));
  return xs;
}

}  // namespace

const std::map<std::string, OpCall>& shape_op_table() {
  static const std::map<std::string, OpCall> table = {
      {"cat", [](A a, D) -> Outputs { return {ops::cat(operands(a), a.integer("dim"))}; }},
      {"cat_out",
       [](A a, D d) -> Outputs {
         return {ops::cat_out(make_out(a, d), operands(a), a.integer("dim"))};
       }},
      {"stack", [](A a, D) -> Outputs { return {ops::stack(operands(a), a.integer("dim"))}; }},
      {"stack_out",
       [](A a, D d) -> Outputs {
         return {ops::stack_out(make_out(a, d), operands(a), a.integer("dim"))};
       }},
      {"split",
       [](A a, D) -> Outputs {
         return a.has("sizes") ? ops::split(a.t(0), a.ints("sizes"), a.integer("dim"))
                               : ops::split(a.t(0), a.integer("size"), a.integer("dim"));
       }},
      {"chunk",
       [](A a, D) -> Outputs { return ops::chunk(a.t(0), a.integer("chunks"), a.integer("dim")); }},
      {"meshgrid",
       [](A a, D) -> Outputs { return ops::meshgrid(operands(a), a.text("indexing")); }},
      {"repeat", [](A a, D) -> Outputs { return {ops::repeat(a.t(0), a.ints("repeats"))}; }},
      {"tile", [](A a, D) -> Outputs { return {ops::tile(a.t(0), a.ints("dims"))}; }},
      {"repeat_interleave",
       [](A a, D) -> Outputs {
         if (a.has("repeats"))
           return {ops::repeat_interleave(a.t(0), a.integer("repeats"), a.opt_integer("dim"))};
         return {ops::repeat_interleave(a.t(0), a.t(1), a.opt_integer("dim"))};
       }},
      {"flip", [](A a, D) -> Outputs { return {ops::flip(a.t(0), a.ints("dims"))}; }},
      {"roll",
       [](A a, D) -> Outputs { return {ops::roll(a.t(0), a.ints("shifts"), a.ints("dims"))}; }},
      {"rot90",
       [](A a, D) -> Outputs { return {ops::rot90(a.t(0), a.integer("k"), a.ints("dims"))}; }},
      {"pixel_shuffle",
       [](A a, D) -> Outputs { return {ops::pixel_shuffle(a.t(0), a.integer("factor"))}; }},
      {"pixel_unshuffle",
       [](A a, D) -> Outputs { return {ops::pixel_unshuffle(a.t(0), a.integer("factor"))}; }},
      {"diagonal",
       [](A a, D) -> Outputs {
         return {ops::diagonal(a.t(0), a.integer("offset"), a.integer("dim1"), a.integer("dim2"))};
       }},
      {"diag_embed",
       [](A a, D) -> Outputs {
         return {
             ops::diag_embed(a.t(0), a.integer("offset"), a.integer("dim1"), a.integer("dim2"))};
       }},
      {"trace", [](A a, D) -> Outputs { return {ops::trace(a.t(0))}; }},
      {"narrow_copy",
       [](A a, D) -> Outputs {
         return {
             ops::narrow_copy(a.t(0), a.integer("dim"), a.integer("start"), a.integer("length"))};
       }},
      {"unfold",
       [](A a, D) -> Outputs {
         return {ops::unfold(a.t(0), a.integer("dim"), a.integer("size"), a.integer("step"))};
       }},
      {"tril_indices",
       [](A a, D d) -> Outputs {
         return {ops::tril_indices(a.integer("row"), a.integer("col"), a.integer("offset"), d)};
       }},
      {"triu_indices",
       [](A a, D d) -> Outputs {
         return {ops::triu_indices(a.integer("row"), a.integer("col"), a.integer("offset"), d)};
       }},
      {"pad",
       [](A a, D) -> Outputs {
         return {ops::pad(a.t(0), a.ints("pads"), ops::pad_mode_named(a.text("mode")),
                          a.scalar("value"))};
       }},
  };
  return table;
}

}  // namespace nbx::torch_diff
