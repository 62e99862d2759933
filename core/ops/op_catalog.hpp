// The public ops, one entry each, as `nbx explain` knows them. Derived from the op tables,
// not kept by hand: core/elementwise_op_list.inc and core/reduce_op_list.inc through their
// X-macros, the families' op enums of core/kernel_abi_families.hpp (through switches the
// compiler checks for completeness), and the matmul family's forms (product_forms()).
// A few public ops are other forms of a table op and are added beside it: cast, to, full
// and fill run the elementwise copy; masked_fill runs where; scaled_masked_softmax runs
// softmax.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ops/explain.hpp"

namespace nbx::ops {

struct OpEntry;

// One explain request, operands already paired (one shape per dtype).
struct ExplainCall {
  const std::vector<DType>& dtypes;
  const std::vector<Shape>& shapes;
  const PlanTarget& target;
  const ExplainArgs& args;
};

// Fills `out` (op, family, device and inputs already set) with the plan the op makes.
// Throws what the op's planner throws (InvalidArgument, Unsupported): explain() reports it.
using ExplainFn = void (*)(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);

struct OpEntry {
  std::string name;           // the public op: "gelu", "max", "cumsum", "addmm"
  std::string family;         // the kernel family that runs it: "elementwise", "reduce", …
  std::string table_op;       // the op-table entry it runs: "gelu_erf", "max_with_index"
  int code = 0;               // that entry's op code in its family (matmul forms: 0)
  int operands = 1;           // dtypes (with shapes) explain takes
  int optional_operands = 0;  // more it also takes (linear's bias)
  std::string operand_names;  // "input; m1; m2", "x; target dtype"
  std::vector<DType> example_dtypes;  // a call devices plan without refusing: tests, --list
  std::vector<Shape> example_shapes;
  ExplainFn explain = nullptr;
};

// Every public op, sorted by name; built once, thread-safe.
std::span<const OpEntry> op_catalog();
// The entry named `name`, or nullptr.
const OpEntry* find_op(std::string_view name);

}  // namespace nbx::ops
