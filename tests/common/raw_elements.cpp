#include "tests/common/raw_elements.hpp"

#include <cstring>

#include "core/half.hpp"

namespace nbx::testing {
namespace {

template <class T>
void put(std::byte* data, std::int64_t index, T v) {
  std::memcpy(data + index * std::int64_t(sizeof(T)), &v, sizeof(T));
}

}  // namespace

void store_element(std::byte* data, DType t, std::int64_t index, double f, std::int64_t i) {
  switch (t) {
    case DType::kBool:
      return put<std::uint8_t>(data, index, i != 0);
    case DType::kInt8:
      return put(data, index, std::int8_t(i));
    case DType::kUInt8:
      return put(data, index, std::uint8_t(i));
    case DType::kInt16:
      return put(data, index, std::int16_t(i));
    case DType::kInt32:
      return put(data, index, std::int32_t(i));
    case DType::kInt64:
      return put(data, index, i);
    case DType::kFloat16:
      return put(data, index, double_to_half_bits(f));
    case DType::kBFloat16:
      return put(data, index, double_to_bf16_bits(f));
    case DType::kFloat32:
      return put(data, index, float(f));
    case DType::kFloat64:
      return put(data, index, f);
  }
}

}  // namespace nbx::testing
