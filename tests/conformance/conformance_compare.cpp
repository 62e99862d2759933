// Element-by-element comparison of a device result with the host reference.
#include "tests/conformance/conformance_compare.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/errors.hpp"
#include "core/half.hpp"

namespace nbx::conformance {
namespace {

template <class T>
T read(const void* data, std::int64_t index) {
  T v;
  std::memcpy(&v, static_cast<const std::byte*>(data) + index * std::int64_t(sizeof(T)), sizeof v);
  return v;
}

// Spacing of a binary float format with `mantissa_bits` explicit bits whose smallest
// normal exponent is `min_exp`, at |x|.
double ulp_of_format(double x, int mantissa_bits, int min_exp) {
  x = std::fabs(x);
  int e = x > 0 ? std::ilogb(x) : min_exp;
  if (e < min_exp) e = min_exp;  // subnormals share the smallest normal's spacing
  return std::ldexp(1.0, e - mantissa_bits);
}

}  // namespace

Element load_element(const void* data, DType dtype, std::int64_t index) {
  switch (dtype) {
    case DType::kBool:
      return {false, 0, read<std::uint8_t>(data, index)};
    case DType::kInt8:
      return {false, 0, read<std::int8_t>(data, index)};
    case DType::kUInt8:
      return {false, 0, read<std::uint8_t>(data, index)};
    case DType::kInt16:
      return {false, 0, read<std::int16_t>(data, index)};
    case DType::kInt32:
      return {false, 0, read<std::int32_t>(data, index)};
    case DType::kInt64:
      return {false, 0, read<std::int64_t>(data, index)};
    case DType::kFloat16:
      return {true, half_bits_to_double(read<std::uint16_t>(data, index)), 0};
    case DType::kBFloat16:
      return {true, bf16_bits_to_double(read<std::uint16_t>(data, index)), 0};
    case DType::kFloat32:
      return {true, read<float>(data, index), 0};
    case DType::kFloat64:
      return {true, read<double>(data, index), 0};
  }
  throw Internal("conformance: unknown dtype in load_element.");
}

std::string format_element(const Element& e) {
  if (!e.is_float) return std::to_string(e.i);
  if (std::isnan(e.f)) return "nan";
  if (std::isinf(e.f)) return e.f > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", e.f);
  return buf;
}

double ulp_at(double x, DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return ulp_of_format(x, 10, -14);
    case DType::kBFloat16:
      return ulp_of_format(x, 7, -126);
    case DType::kFloat32:
      return ulp_of_format(x, 23, -126);
    case DType::kFloat64:
      return ulp_of_format(x, 52, -1022);
    default:
      return 0;
  }
}

Comparison compare_buffers(DType dtype, const Tolerance& tol, const void* expected,
                           const void* actual, std::int64_t count) {
  Comparison c;
  // The worst element is the one furthest beyond its allowance (error / allowed), so a
  // NaN mismatch outranks any finite error.
  double worst_excess = -1;
  for (std::int64_t k = 0; k < count; ++k) {
    const Element e = load_element(expected, dtype, k);
    const Element a = load_element(actual, dtype, k);
    double abs_err = 0, rel_err = 0, excess = 0;
    bool bad = false;
    if (!e.is_float) {
      bad = e.i != a.i;
      abs_err = std::fabs(double(a.i) - double(e.i));
      rel_err = e.i ? abs_err / std::fabs(double(e.i)) : (bad ? INFINITY : 0);
      excess = bad ? (abs_err > 0 ? abs_err : 1) : 0;
    } else if (std::isnan(e.f) || std::isnan(a.f)) {
      bad = std::isnan(e.f) != std::isnan(a.f);
      abs_err = rel_err = excess = bad ? INFINITY : 0;
    } else if (std::isinf(e.f) || std::isinf(a.f)) {
      bad = e.f != a.f;
      abs_err = rel_err = excess = bad ? INFINITY : 0;
    } else {
      abs_err = std::fabs(a.f - e.f);
      rel_err = e.f != 0 ? abs_err / std::fabs(e.f) : (abs_err > 0 ? INFINITY : 0);
      double allowed = 0;
      if (!tol.exact)
        allowed = std::max(tol.atol + tol.rtol * std::fabs(e.f), tol.ulps * ulp_at(e.f, dtype));
      bad = abs_err > allowed;
      excess = allowed > 0 ? abs_err / allowed : (abs_err > 0 ? INFINITY : 0);
    }
    if (!bad) continue;
    c.ok = false;
    ++c.mismatches;
    c.max_abs_error = std::max(c.max_abs_error, abs_err);
    c.max_rel_error = std::max(c.max_rel_error, rel_err);
    if (excess > worst_excess) {
      worst_excess = excess;
      c.worst_index = k;
      c.worst_expected = e;
      c.worst_actual = a;
    }
  }
  return c;
}

}  // namespace nbx::conformance
