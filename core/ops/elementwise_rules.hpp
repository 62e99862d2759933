// What each elementwise op accepts and returns: the dtype rules, as a table.
// Internal to core/ops.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/capabilities.hpp"
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
  kFloat64,        // float_power: operands cast to float64, the result float64
  kBoolOfFloat,    // isclose: bool, computed in the promoted float (integers: default float)
};

struct OpRule {
  std::string_view name;
  abi::ElementwiseOp op;
  int arity;
  Domain domain;
  ResultKind result;
};

// The dtype decisions of one elementwise call: what operands promote to, what the output
// is, what tensor inputs are cast to before the kernel, and what the kernel computes in.
struct ElementwiseTypes {
  DType common = DType::kFloat32;  // PyTorch's result_type of the operands
  DType out_dtype = DType::kFloat32;
  DType input_dtype = DType::kFloat32;    // tensor inputs are cast (a copy) to this first
  DType compute_dtype = DType::kFloat32;  // the math: float32 for half types
  bool integer_division = false;          // keeps integers; widens inside the kernel
  bool widened_through_float32 = false;   // no fp64: exact only below 2^24, checked at run time
};

// Decides the types, refusing by name what the device cannot do. Pure: no tensors, so
// `nbx explain` runs it for absent architectures. Throws InvalidArgument for a dtype outside
// the op's domain, Unsupported (naming the capability) for a dtype the device lacks.
ElementwiseTypes plan_elementwise_types(const OpRule& rule, std::span<const PromotionOperand> promo,
                                        std::optional<DType> forced_common,
                                        const Capabilities& caps, const std::string& device_id,
                                        const std::string& device_name, std::string_view name);

// The rule for an op code; throws Internal for a code without one.
const OpRule& rule_for(abi::ElementwiseOp op);
std::span<const OpRule> all_rules();
// The rule named `name` ("add", "gelu_tanh", …), or nullptr.
const OpRule* rule_named(std::string_view name);
// The gated products (glu, silu_and_mul, gelu_and_mul, gelu_tanh_and_mul; glu.hpp): binary
// table ops whose public op takes one fused tensor and passes its two halves.
bool takes_fused_halves(abi::ElementwiseOp op);

}  // namespace nbx::ops::detail
