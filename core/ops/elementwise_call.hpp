// One elementwise table op on tensor operands, through the elementwise wrappers' promotion,
// dtype rules and launch (core/ops/elementwise.cpp), for op wrappers in other files
// (glu.cpp). Internal to core/ops.
#pragma once

#include <string_view>

#include "core/kernel_abi.hpp"
#include "core/tensor.hpp"

namespace nbx::ops::detail {

// Runs `op` on a and b (any views, read through their strides), errors named `name`.
Tensor run_binary_op(abi::ElementwiseOp op, const Tensor& a, const Tensor& b,
                     std::string_view name);

}  // namespace nbx::ops::detail
