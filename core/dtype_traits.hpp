// C++ element types for host buffers, and which DType each stands for.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/dtype.hpp"
#include "core/half.hpp"

namespace nbx {

// 16-bit floats as host values: the bits, with conversions through double.
struct Half {
  std::uint16_t bits = 0;
  static Half from(double v) { return {double_to_half_bits(v)}; }
  double value() const { return half_bits_to_double(bits); }
};
struct BFloat16 {
  std::uint16_t bits = 0;
  static BFloat16 from(double v) { return {double_to_bf16_bits(v)}; }
  double value() const { return bf16_bits_to_double(bits); }
};

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
template <>
struct DTypeOf<std::int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<std::uint8_t> {
  static constexpr DType value = DType::kUInt8;
};
template <>
struct DTypeOf<std::int16_t> {
  static constexpr DType value = DType::kInt16;
};
template <>
struct DTypeOf<std::int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<std::int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<Half> {
  static constexpr DType value = DType::kFloat16;
};
template <>
struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::kBFloat16;
};
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};

template <class T>
inline constexpr DType dtype_of = DTypeOf<std::remove_cv_t<T>>::value;

}  // namespace nbx
