// What the suite runs: the op table (how each public op is called, which values its
// operands take) and the input layouts every cell is tried with.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/ops/elementwise.hpp"
#include "tests/conformance/conformance_values.hpp"

namespace nbx::conformance {

using Operands = std::span<const ops::TensorOrScalar>;

struct OpSpec {
  std::string_view name;  // as in ops::elementwise_op_names()
  int arity;
  ValueKind kinds[3];
  bool scalar_last;       // the last operand may be a host scalar (the "scalar" layout)
  bool value_is_scalar;   // masked_fill: the last operand is a scalar (or a 0-d tensor)
  bool integer_division;  // floor_divide, remainder: integer zero divisors fault
  // Calls the public op. `dtype` is the cell's input dtype, `to` cast's target.
  Tensor (*call)(Operands operands, DType dtype, DType to);
};

// Every op of ops::elementwise_op_names(), "cast" included; nullptr for an unknown name.
std::span<const OpSpec> op_specs();
const OpSpec* find_op_spec(std::string_view name);

// The shapes and views a cell's operands are given.
enum class Layout {
  kDivisionByZero,  // integer floor_divide/remainder with zero divisors: DeviceFault expected
  kContiguous,      // [257]
  kZeroDim,         // []
  kZeroSize,        // [3, 0]
  kBroadcast,       // [5,1,7] with [3,1] and [1,7]; unary: a [1,7] expanded to [6,7]
  kTransposed,      // [9,13] transposed, next to a contiguous [13,9]
  kSliced,          // [6,40][1:6:2, 2:38:3]: an offset and steps in both dims
  kZeroDimOperand,  // operand 1 is a device-resident 0-d tensor
  kHostScalar,      // the last operand is a host scalar
};
std::string_view layout_name(Layout layout);
// The layouts a cell runs, in order (the fault case first, so the cases after it show
// that the device stayed usable).
// `quick`: the views, broadcasts, 0-d operands and scalars only for float32 and int32.
std::vector<Layout> layouts_for(const OpSpec& op, DType dtype, bool quick);

struct CaseInputs {
  std::vector<ops::TensorOrScalar> reference;  // on the host, contiguous
  std::vector<ops::TensorOrScalar> device;     // on the device under test, in the layout
};
// Draws the operands' values and builds both sides from the same bytes.
CaseInputs make_inputs(const OpSpec& op, DType dtype, Layout layout, Rng& rng,
                       const Device& device);

}  // namespace nbx::conformance
