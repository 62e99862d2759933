#include "core/dtype.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "core/errors.hpp"

namespace nbx {
namespace {

constexpr std::array<std::string_view, kNumDTypes> kNames = {
    "bool",  "int8",    "uint8",    "int16",   "int32",
    "int64", "float16", "bfloat16", "float32", "float64"};

// Rank within a category, for "the larger one wins".
int float_rank(DType t) {
  switch (t) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return 1;
    case DType::kFloat32:
      return 2;
    default:
      return 3;
  }
}

// PyTorch's `combine_categories`: a lower-priority participant only matters when it brings
// a higher category than what the higher-priority participants settled on.
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_floating(*higher)) return higher;
  if (*higher == DType::kBool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}

}  // namespace

std::string_view dtype_name(DType t) {
  const auto i = static_cast<std::size_t>(t);
  if (i >= kNames.size()) throw Internal("dtype value " + std::to_string(i) + " is not a DType.");
  return kNames[i];
}

DType parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  static constexpr std::pair<std::string_view, DType> kAliases[] = {
      {"b1", DType::kBool},       {"i8", DType::kInt8},       {"u8", DType::kUInt8},
      {"i16", DType::kInt16},     {"short", DType::kInt16},   {"i32", DType::kInt32},
      {"int", DType::kInt32},     {"i64", DType::kInt64},     {"long", DType::kInt64},
      {"f16", DType::kFloat16},   {"half", DType::kFloat16},  {"bf16", DType::kBFloat16},
      {"f32", DType::kFloat32},   {"float", DType::kFloat32}, {"f64", DType::kFloat64},
      {"double", DType::kFloat64}};
  for (const auto& [alias, t] : kAliases)
    if (alias == name) return t;
  throw InvalidArgument("parse_dtype", "'" + std::string(name) +
                                           "' is not a dtype name (expected one of bool, int8, "
                                           "uint8, int16, int32, int64, float16, bfloat16, "
                                           "float32, float64).");
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;
  if (fa) {
    // float16 and bfloat16 have no common 16-bit type.
    if (float_rank(a) == 1 && float_rank(b) == 1) return DType::kFloat32;
    return float_rank(a) >= float_rank(b) ? a : b;
  }
  // Both integers. uint8 meets a signed type: the signed type must hold 0..255.
  if (a == DType::kUInt8 || b == DType::kUInt8) {
    const DType s = a == DType::kUInt8 ? b : a;
    return s == DType::kInt8 ? DType::kInt16 : s;
  }
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

DType result_type(std::span<const PromotionOperand> operands) {
  if (operands.empty())
    throw InvalidArgument("result_type", "result_type needs at least one operand.");
  std::optional<DType> dim_result, zero_dim_result, scalar_result;
  for (const PromotionOperand& op : operands) {
    std::optional<DType>* slot = op.kind == OperandKind::kTensor          ? &dim_result
                                 : op.kind == OperandKind::kZeroDimTensor ? &zero_dim_result
                                                                          : &scalar_result;
    DType t = op.dtype;
    // A Python-style scalar is "weak": it participates only as its category's default.
    if (op.kind == OperandKind::kScalar)
      t = is_floating(t) ? kDefaultFloat : (t == DType::kBool ? DType::kBool : DType::kInt64);
    *slot = *slot ? promote_types(**slot, t) : t;
  }
  return *combine_categories(dim_result, combine_categories(zero_dim_result, scalar_result));
}

}  // namespace nbx
