// Element types, their names and sizes, and PyTorch's type-promotion rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nbx {

// The numeric values are part of the kernel ABI (kernel_abi.hpp, GLSL defines): append only.
enum class DType : std::int32_t {
  kBool = 0,
  kInt8 = 1,
  kUInt8 = 2,
  kInt16 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kFloat16 = 6,
  kBFloat16 = 7,
  kFloat32 = 8,
  kFloat64 = 9,
};
inline constexpr int kNumDTypes = 10;

inline constexpr DType kAllDTypes[kNumDTypes] = {
    DType::kBool,  DType::kInt8,    DType::kUInt8,    DType::kInt16,   DType::kInt32,
    DType::kInt64, DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

// Short aliases in the style of the user API: nbx::float32, nbx::bfloat16 …
inline constexpr DType bool_ = DType::kBool;
inline constexpr DType int8 = DType::kInt8;
inline constexpr DType uint8 = DType::kUInt8;
inline constexpr DType int16 = DType::kInt16;
inline constexpr DType int32 = DType::kInt32;
inline constexpr DType int64 = DType::kInt64;
inline constexpr DType float16 = DType::kFloat16;
inline constexpr DType bfloat16 = DType::kBFloat16;
inline constexpr DType float32 = DType::kFloat32;
inline constexpr DType float64 = DType::kFloat64;

// The dtype a float Python-style scalar (or an integer true division) produces.
inline constexpr DType kDefaultFloat = DType::kFloat32;

// Bytes per element. Inline: kernels on the host call it per element.
constexpr std::size_t dtype_size(DType t) {
  constexpr std::size_t kSizes[kNumDTypes] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  const auto i = static_cast<std::size_t>(t);
  return i < static_cast<std::size_t>(kNumDTypes) ? kSizes[i] : 0;
}
std::string_view dtype_name(DType t);  // "float32", "bfloat16", "bool", …
// Accepts canonical names and common aliases ("f32", "bf16", "half", "int", "long").
// Throws InvalidArgument naming the string.
DType parse_dtype(std::string_view name);

constexpr bool is_floating(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 ||
         t == DType::kFloat64;
}
constexpr bool is_integral(DType t, bool include_bool) {
  return (t >= DType::kInt8 && t <= DType::kInt64) || (include_bool && t == DType::kBool);
}
constexpr bool is_signed(DType t) {
  return t != DType::kBool && t != DType::kUInt8;
}
// 16-bit floats: stored in 16 bits, computed in float32 on GPUs.
constexpr bool is_half_type(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16;
}

// PyTorch's promote_types: the smallest dtype both values fit in
// (uint8+int8 → int16, float16+bfloat16 → float32, int64+float16 → float16).
DType promote_types(DType a, DType b);

// One operand of a type-promotion question. PyTorch ranks three kinds of participant:
// tensors with dimensions, 0-d tensors, and "weak" host scalars (Python numbers). A lower
// rank only decides the result when it brings a higher category (bool < integer < float).
enum class OperandKind { kTensor, kZeroDimTensor, kScalar };
struct PromotionOperand {
  DType dtype;  // for kScalar: kBool, kInt64 (an integer) or kFloat64 (a floating number)
  OperandKind kind;
};

// torch.result_type over any number of operands. Throws InvalidArgument on an empty list.
DType result_type(std::span<const PromotionOperand> operands);

}  // namespace nbx
