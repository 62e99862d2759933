// What each elementwise op accepts and returns: the dtype rules, as a table.
// Internal to core/ops.
#pragma once

#include <span>
#include <string_view>

#include "core/dtype.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::ops::detail {

// Which operand dtypes (after promotion) an op is defined for.
enum class Domain {
  kAll,             // every dtype
  kNoBool,          // numbers only (PyTorch refuses e.g. neg and sub on bool)
  kIntegralOrBool,  // bitwise and/or/xor/not
  kIntegral,        // shifts
  kFloating,        // activations: no integer kernel in PyTorch either
};

// The output dtype given the promoted operand dtype.
enum class ResultKind {
  kPromoted,       // the promoted dtype
  kBool,           // comparisons, logical ops, isnan …
  kFloatPromoted,  // integers and bool become the default float (exp, sin, div …)
};

struct OpRule {
  std::string_view name;
  abi::ElementwiseOp op;
  int arity;
  Domain domain;
  ResultKind result;
};

// The rule for an op code; throws Internal for a code without one.
const OpRule& rule_for(abi::ElementwiseOp op);
std::span<const OpRule> all_rules();

}  // namespace nbx::ops::detail
