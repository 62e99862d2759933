// The runner's calls for the in-place (op_) and out= forms (torch_diff_ops_inplace.py has
// the PyTorch side): in-place forms write into the case's first operand, a view built on the
// device, and return it; out= forms write into a tensor of 7s of the case's out_shape,
// out_dtype and out_layout (contiguous, or a transposed view).
#include "tests/torch/torch_diff_ops.hpp"

#include <vector>

namespace nbx::torch_diff {

Tensor make_out(const CaseArgs& a, const Device& d) {
  const Shape shape = a.shape("out_shape");
  const DType dtype = a.dtype("out_dtype");
  if (a.text("out_layout") != "transposed") return ops::full(shape, 7, dtype, d);
  Shape reversed;
  std::vector<std::int64_t> order;
  for (std::int64_t i = shape.size() - 1; i >= 0; --i) {
    reversed.push_back(shape[i]);
    order.push_back(i);
  }
  return ops::full(reversed, 7, dtype, d).permute(order);
}

namespace {

using A = const CaseArgs&;
using D = const Device&;
using ops::TensorOrScalar;

OpCall in_place(Tensor (*f)(const Tensor&, const TensorOrScalar&)) {
  return [f](A a, D) -> Outputs { return {f(a.t(0), a.ts(1))}; };
}
OpCall in_place_alpha(Tensor (*f)(const Tensor&, const TensorOrScalar&, Scalar)) {
  return [f](A a, D) -> Outputs { return {f(a.t(0), a.ts(1), a.scalar("alpha"))}; };
}
OpCall in_place_unary(Tensor (*f)(const Tensor&)) {
  return [f](A a, D) -> Outputs { return {f(a.t(0))}; };
}

}  // namespace

const std::map<std::string, OpCall>& inplace_op_table() {
  static const std::map<std::string, OpCall> table = {
      {"add_", in_place_alpha(ops::add_)},
      {"sub_", in_place_alpha(ops::sub_)},
      {"mul_", in_place(ops::mul_)},
      {"div_", in_place(ops::div_)},
      {"clamp_min_", in_place(ops::clamp_min_)},
      {"copysign_", in_place(ops::copysign_)},
      {"exp_", in_place_unary(ops::exp_)},
      {"neg_", in_place_unary(ops::neg_)},
      {"sigmoid_", in_place_unary(ops::sigmoid_)},
      // ---- out= ----
      {"add_out",
       [](A a, D d) -> Outputs {
         return {ops::add_out(make_out(a, d), a.t(0), a.ts(1), a.scalar("alpha"))};
       }},
      {"exp_out", [](A a, D d) -> Outputs { return {ops::exp_out(make_out(a, d), a.t(0))}; }},
      {"sum_out",
       [](A a, D d) -> Outputs {
         return {ops::sum_out(make_out(a, d), a.t(0), a.ints("dims"), a.flag("keepdim"))};
       }},
      {"matmul_out",
       [](A a, D d) -> Outputs { return {ops::matmul_out(make_out(a, d), a.t(0), a.t(1))}; }},
  };
  return table;
}

}  // namespace nbx::torch_diff
