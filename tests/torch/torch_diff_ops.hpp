// The runner's op table: op name (the manifest's "op") → the nbx call. One line per op;
// the driver's table (torch_diff_ops.py) holds the same names with the PyTorch call.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/torch/torch_diff_case.hpp"

namespace nbx::torch_diff {

using Outputs = std::vector<Tensor>;
using OpCall = std::function<Outputs(const CaseArgs&, const Device&)>;

const std::map<std::string, OpCall>& op_table();
// The in-place and out= forms (torch_diff_ops_inplace.cpp).
const std::map<std::string, OpCall>& inplace_op_table();
// The shape ops (torch_diff_ops_shape.cpp).
const std::map<std::string, OpCall>& shape_op_table();
// The sort family's ops (torch_diff_ops_sort.cpp).
const std::map<std::string, OpCall>& sort_op_table();
// The index writes (torch_diff_ops_index_write.cpp).
const std::map<std::string, OpCall>& index_write_op_table();
// scaled_dot_product_attention (torch_diff_ops_attention.cpp).
const std::map<std::string, OpCall>& attention_op_table();
// The rotary family's ops (torch_diff_ops_rotary.cpp).
const std::map<std::string, OpCall>& rotary_op_table();
const std::map<std::string, OpCall>& moe_op_table();  // torch_diff_ops_moe.cpp
// The losses (torch_diff_ops_loss.cpp).
const std::map<std::string, OpCall>& loss_op_table();
// An out= tensor of 7s of the case's out_shape, out_dtype and out_layout (contiguous, or a
// transposed view), as torch_diff_ops_inplace.py's make_out.
Tensor make_out(const CaseArgs& a, const Device& d);

}  // namespace nbx::torch_diff
