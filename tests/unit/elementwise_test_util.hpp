// Helpers shared by the elementwise unit tests: host tensors from literal values, any dtype
// read back as double or int64, and comparisons that treat NaN, infinities and signed zeros
// exactly. float16/bfloat16 bits are encoded and decoded here, independently of
// core/half.cpp, because that file's rounding is itself under test.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/ops/elementwise.hpp"
#include "core/tensor.hpp"

namespace nbx::test {

inline double decode_half_bits(std::uint16_t b) {
  const int e = (b >> 10) & 0x1F;
  const int m = b & 0x3FF;
  const double v = e == 0x1F ? (m ? NAN : INFINITY)
                   : e == 0  ? std::ldexp(m, -24)
                             : std::ldexp(m + 1024, e - 25);
  return (b & 0x8000) ? -v : v;
}

// bfloat16 is the upper half of a float32: decoding is a shift.
inline double decode_bf16_bits(std::uint16_t b) {
  const std::uint32_t w = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}

inline bool same_double(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

// Bits of a value float16 holds exactly (test inputs only; anything else is a test bug).
inline std::uint16_t exact_half_bits(double v) {
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  std::uint16_t bits = 0;
  if (std::isnan(v)) {
    bits = 0x7E00;
  } else if (std::isinf(a)) {
    bits = 0x7C00;
  } else if (a < std::ldexp(1.0, -14)) {
    bits = static_cast<std::uint16_t>(std::ldexp(a, 24));
  } else {
    int ex = 0;
    const double m = std::frexp(a, &ex);  // a = m * 2^ex, m in [0.5, 1)
    bits = static_cast<std::uint16_t>(((ex + 14) << 10) | static_cast<int>((m * 2 - 1) * 1024));
  }
  bits |= sign;
  REQUIRE(same_double(decode_half_bits(bits), v));
  return bits;
}

inline std::uint16_t exact_bf16_bits(double v) {
  const float f = static_cast<float>(v);
  std::uint32_t w;
  std::memcpy(&w, &f, sizeof w);
  const auto bits = static_cast<std::uint16_t>(w >> 16);
  REQUIRE(same_double(decode_bf16_bits(bits), v));
  return bits;
}

inline Shape flat_shape(std::size_t n) {
  return Shape{static_cast<std::int64_t>(n)};
}

// A tensor of `dtype` holding `values`, which the caller keeps exactly representable.
inline Tensor make(DType dtype, const std::vector<double>& values, const Shape& shape) {
  auto build = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v;
    for (double x : values) {
      if constexpr (std::is_same_v<T, Half>) {
        v.push_back(Half{exact_half_bits(x)});
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        v.push_back(BFloat16{exact_bf16_bits(x)});
      } else {
        v.push_back(static_cast<T>(x));
        REQUIRE(same_double(static_cast<double>(v.back()), x));
      }
    }
    return Tensor::from_host(v.data(), shape, dtype);
  };
  switch (dtype) {
    case DType::kBool:
      return build(std::uint8_t{});
    case DType::kInt8:
      return build(std::int8_t{});
    case DType::kUInt8:
      return build(std::uint8_t{});
    case DType::kInt16:
      return build(std::int16_t{});
    case DType::kInt32:
      return build(std::int32_t{});
    case DType::kInt64:
      return build(std::int64_t{});
    case DType::kFloat16:
      return build(Half{});
    case DType::kBFloat16:
      return build(BFloat16{});
    case DType::kFloat32:
      return build(float{});
    case DType::kFloat64:
      return build(double{});
  }
  return {};
}
inline Tensor make(DType dtype, const std::vector<double>& values) {
  return make(dtype, values, flat_shape(values.size()));
}

// Integers beyond 2^53 do not survive a double: these take int64 literals.
inline Tensor make_ints(DType dtype, const std::vector<std::int64_t>& values) {
  std::vector<std::uint8_t> raw(values.size() * dtype_size(dtype));
  for (std::size_t i = 0; i < values.size(); ++i)
    std::memcpy(raw.data() + i * dtype_size(dtype), &values[i],
                dtype_size(dtype));  // little-endian
  return Tensor::from_host(raw.data(), flat_shape(values.size()), dtype);
}

inline std::vector<std::uint8_t> raw_bytes(const Tensor& t) {
  std::vector<std::uint8_t> raw(static_cast<std::size_t>(t.numel()) * t.itemsize());
  if (!raw.empty()) t.copy_to_host(raw.data());
  return raw;
}

// Every element as int64 (integer and bool dtypes: sign- or zero-extended from the width).
inline std::vector<std::int64_t> read_ints(const Tensor& t) {
  const auto raw = raw_bytes(t);
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(t.numel()); ++i) {
    const std::uint8_t* p = raw.data() + i * t.itemsize();
    auto get = [p](auto tag) {
      decltype(tag) x;
      std::memcpy(&x, p, sizeof x);
      return static_cast<std::int64_t>(x);
    };
    switch (t.dtype()) {
      case DType::kBool:
      case DType::kUInt8:
        out.push_back(get(std::uint8_t{}));
        break;
      case DType::kInt8:
        out.push_back(get(std::int8_t{}));
        break;
      case DType::kInt16:
        out.push_back(get(std::int16_t{}));
        break;
      case DType::kInt32:
        out.push_back(get(std::int32_t{}));
        break;
      default:
        out.push_back(get(std::int64_t{}));
        break;
    }
  }
  return out;
}

// Every element as double, decoding 16-bit floats here rather than in core/.
inline std::vector<double> read_doubles(const Tensor& t) {
  if (!is_floating(t.dtype())) {
    std::vector<double> out;
    for (std::int64_t v : read_ints(t)) out.push_back(static_cast<double>(v));
    return out;
  }
  const auto raw = raw_bytes(t);
  std::vector<double> out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(t.numel()); ++i) {
    const std::uint8_t* p = raw.data() + i * t.itemsize();
    if (t.dtype() == DType::kFloat32) {
      float f;
      std::memcpy(&f, p, sizeof f);
      out.push_back(f);
    } else if (t.dtype() == DType::kFloat64) {
      double d;
      std::memcpy(&d, p, sizeof d);
      out.push_back(d);
    } else {
      std::uint16_t b;
      std::memcpy(&b, p, sizeof b);
      out.push_back(t.dtype() == DType::kFloat16 ? decode_half_bits(b) : decode_bf16_bits(b));
    }
  }
  return out;
}

inline std::vector<std::uint16_t> read_bits16(const Tensor& t) {
  REQUIRE(is_half_type(t.dtype()));
  const auto raw = raw_bytes(t);
  std::vector<std::uint16_t> out(raw.size() / 2);
  if (!out.empty()) std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

// Relative error allowed against an expectation worked out in double: a few units of the
// dtype's last place, since the result is rounded once to that dtype.
inline double rtol_for(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 1e-3;
    case DType::kBFloat16:
      return 8e-3;
    case DType::kFloat32:
      return 3e-7;
    default:
      return 1e-14;
  }
}

// NaN matches NaN; infinities and zeros (with their sign) match exactly; other values within
// rtol relative error.
inline bool close(double got, double want, double rtol) {
  if (std::isnan(want) || std::isinf(want) || want == 0) return same_double(got, want);
  return std::fabs(got - want) <= rtol * std::fabs(want);
}

inline void check_floats(const Tensor& t, DType dtype, const std::vector<double>& want,
                         double rtol = -1) {
  REQUIRE(t.dtype() == dtype);
  if (rtol < 0) rtol = rtol_for(dtype);
  const std::vector<double> got = read_doubles(t);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CAPTURE(got[i]);
    CAPTURE(want[i]);
    CHECK(close(got[i], want[i], rtol));
  }
}

inline void check_ints(const Tensor& t, DType dtype, const std::vector<std::int64_t>& want) {
  REQUIRE(t.dtype() == dtype);
  const std::vector<std::int64_t> got = read_ints(t);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == want[i]);
  }
}

inline void check_bools(const Tensor& t, const std::vector<std::int64_t>& want) {
  check_ints(t, DType::kBool, want);
}

// Allocations the host allocator has handed out so far: an op that reads its operands
// through strides allocates exactly its output.
inline std::uint64_t host_allocations() {
  return host_device().memory_stats().allocations;
}

}  // namespace nbx::test
