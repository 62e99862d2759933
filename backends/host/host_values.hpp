// Loading and storing one element of any dtype on the host, shared by the host kernels.
// Floats load as double, integers and bool as int64; stores round once to the target
// (float→integer truncates toward zero, NaN → 0, out of range saturates; integer
// narrowing wraps; any → bool is x != 0).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.hpp"
#include "core/scalar.hpp"

namespace nbx::host {

struct Value {
  bool is_float;
  double f;
  std::int64_t i;
};

inline Value from_double(double v) {
  return {true, v, 0};
}
inline Value from_int(std::int64_t v) {
  return {false, 0, v};
}
inline double as_f(const Value& v) {
  return v.is_float ? v.f : static_cast<double>(v.i);
}
inline std::int64_t as_i(const Value& v) {
  return v.is_float ? saturating_cast<std::int64_t>(v.f) : v.i;
}
inline bool truthy(const Value& v) {
  return v.is_float ? v.f != 0 : v.i != 0;
}

// Element `index` (in elements, not bytes) of a buffer of dtype `t`.
Value load(const std::byte* base, DType t, std::int64_t index);
void store(std::byte* base, DType t, std::int64_t index, const Value& v);

}  // namespace nbx::host
