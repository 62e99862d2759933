// Casts between every pair of dtypes on the host, and nbx's conversion rules at their edges:
// float → integer truncates toward zero, NaN → 0, out-of-range saturates; narrowing integers
// wrap; any → bool is x != 0; float16/bfloat16 round to nearest even and overflow to ±inf.
// Expected 16-bit results are written as bit patterns worked out by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "tests/unit/elementwise_test_util.hpp"

using namespace nbx;
using test::check_bools;
using test::check_floats;
using test::check_ints;
using test::make;
using test::make_ints;
using test::read_bits16;

namespace {
constexpr double kInf = INFINITY;
constexpr double kNaN = NAN;

struct Rounding {
  double value;
  std::uint16_t bits;
};

// Casts each value from float64 and, where float32 holds it exactly, from float32 too.
void check_rounding(DType to, const std::vector<Rounding>& cases) {
  for (const Rounding& c : cases) {
    CAPTURE(c.value);
    CAPTURE(c.bits);
    for (DType from : {float64, float32}) {
      if (from == float32 && !test::same_double(static_cast<float>(c.value), c.value)) continue;
      CAPTURE(dtype_name(from));
      const std::vector<std::uint16_t> got = read_bits16(ops::cast(make(from, {c.value}), to));
      if (std::isnan(c.value)) {
        CHECK((got[0] & 0x7FFF) > (to == float16 ? 0x7C00 : 0x7F80));  // a NaN pattern
      } else {
        CHECK(got[0] == c.bits);
      }
    }
  }
}
}  // namespace

TEST_CASE("every pair of dtypes converts values both can hold") {
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      CAPTURE(dtype_name(from));
      CAPTURE(dtype_name(to));
      std::vector<double> values =
          from == bool_ ? std::vector<double>{1, 0, 1} : std::vector<double>{1, 0, 7, 100};
      if (is_signed(from)) values.push_back(-5);
      std::vector<double> want;
      for (double v : values) {
        if (to == bool_) want.push_back(v != 0);
        // -5 into uint8: an integer wraps to 251; a float saturates to 0.
        else if (to == uint8 && v < 0)
          want.push_back(is_floating(from) ? 0 : 256 + v);
        else
          want.push_back(v);
      }
      const Tensor x = make(from, values);
      const Tensor y = ops::cast(x, to);
      CHECK(y.shape() == x.shape());
      check_floats(y, to, want, 0);
      check_floats(x.to(to), to, want, 0);
    }
  }
}

TEST_CASE("float → integer truncates toward zero") {
  check_ints(ops::cast(make(float32, {2.75, -2.75, 0.5, -0.5, 127.75, -128.75}), int8), int8,
             {2, -2, 0, 0, 127, -128});
  check_ints(ops::cast(make(float64, {2.9, -2.9, 1e9 + 0.5, -0.999}), int32), int32,
             {2, -2, 1000000000, 0});
  check_ints(ops::cast(make(bfloat16, {-1.5, 254.0}), uint8), uint8, {0, 254});
  check_ints(ops::cast(make(float16, {-2.5, 1000.5}), int16), int16, {-2, 1000});
}

TEST_CASE("float → integer: NaN gives 0, ±inf and out-of-range values saturate") {
  for (DType from : {float16, bfloat16, float32, float64}) {
    CAPTURE(dtype_name(from));
    const Tensor x = make(from, {kNaN, kInf, -kInf, 3.0});
    check_ints(ops::cast(x, int8), int8, {0, 127, -128, 3});
    check_ints(ops::cast(x, uint8), uint8, {0, 255, 0, 3});
    check_ints(ops::cast(x, int16), int16, {0, 32767, -32768, 3});
    check_ints(ops::cast(x, int32), int32, {0, 2147483647, -2147483648LL, 3});
    check_ints(ops::cast(x, int64), int64, {0, INT64_MAX, INT64_MIN, 3});
  }
  const Tensor big = make(float64, {1e10, -1e10, 300.5, -1.5});
  check_ints(ops::cast(big, int8), int8, {127, -128, 127, -1});
  check_ints(ops::cast(big, uint8), uint8, {255, 0, 255, 0});
  check_ints(ops::cast(big, int16), int16, {32767, -32768, 300, -1});
  check_ints(ops::cast(big, int32), int32, {2147483647, -2147483648LL, 300, -1});
  check_ints(ops::cast(big, int64), int64, {10000000000LL, -10000000000LL, 300, -1});
  // 2^63 is one past int64's range; -2^63 is its minimum, exactly.
  check_ints(
      ops::cast(make(float64, {9.3e18, 9223372036854775808.0, -9223372036854775808.0, -1e19}),
                int64),
      int64, {INT64_MAX, INT64_MAX, INT64_MIN, INT64_MIN});
  check_ints(ops::cast(make(float16, {65504.0, -65504.0}), int16), int16, {32767, -32768});
  check_ints(ops::cast(make(float16, {65504.0}), int32), int32, {65504});
}

TEST_CASE("narrowing integer casts wrap; widening ones sign- or zero-extend") {
  const Tensor x = make(int32, {300, -129, 65537, -1});
  check_ints(ops::cast(x, int8), int8, {44, 127, 1, -1});
  check_ints(ops::cast(x, uint8), uint8, {44, 127, 1, 255});
  check_ints(ops::cast(x, int16), int16, {300, -129, 1, -1});
  check_ints(ops::cast(make_ints(int64, {(1LL << 32) + 5, -(1LL << 32) - 1, INT64_MIN}), int32),
             int32, {5, -1, 0});
  check_ints(ops::cast(make(uint8, {255, 128}), int8), int8, {-1, -128});
  check_ints(ops::cast(make(int8, {-1, -128}), uint8), uint8, {255, 128});
  check_ints(ops::cast(make(int8, {-1, -128}), int64), int64, {-1, -128});
  check_ints(ops::cast(make(uint8, {255, 128}), int16), int16, {255, 128});
  check_ints(ops::cast(make(int16, {-32768}), int32), int32, {-32768});
}

TEST_CASE("any → bool is x != 0 (NaN is true, -0 is false, no narrowing first)") {
  check_bools(ops::cast(make(float32, {0.0, -0.0, kNaN, 0.25, -kInf, 0x1p-149}), bool_),
              {0, 0, 1, 1, 1, 1});
  check_bools(ops::cast(make(float64, {0x1p-1074, -0.0}), bool_), {1, 0});
  check_bools(ops::cast(make(float16, {0x1p-24, -0.0}), bool_), {1, 0});
  check_bools(ops::cast(make(bfloat16, {-0.0, 0x1p-133}), bool_), {0, 1});
  check_bools(ops::cast(make(int32, {0, -1, 256, 65536}), bool_), {0, 1, 1, 1});
  check_bools(ops::cast(make_ints(int64, {1LL << 32, INT64_MIN}), bool_), {1, 1});
  check_bools(ops::cast(make(uint8, {128, 0}), bool_), {1, 0});
}

TEST_CASE("→ float16 rounds to nearest even and overflows to inf") {
  check_rounding(float16, {
                              {1 + 0x1p-11, 0x3C00},            // tie → even (down)
                              {1 + 3 * 0x1p-11, 0x3C02},        // tie → even (up)
                              {1 + 0x1p-11 + 0x1p-20, 0x3C01},  // above the tie
                              {1 - 0x1p-12, 0x3C00},            // tie below 1 → 1.0
                              {-2.5 - 0x1p-11, 0xC100},         // -2.5 - 1/4 ulp → -2.5
                              {65504.0, 0x7BFF},
                              {65519.0, 0x7BFF},
                              {65520.0, 0x7C00},  // halfway to 2^16: overflow
                              {-65520.0, 0xFC00},
                              {1e300, 0x7C00},
                              {0x1p-24, 0x0001},            // smallest subnormal
                              {0x1p-25, 0x0000},            // tie → even zero
                              {3 * 0x1p-25, 0x0002},        // tie → even (2 quanta)
                              {0x1p-25 + 0x1p-40, 0x0001},  // above the tie
                              {0x1p-14 - 0x1p-25, 0x0400},  // rounds up to min normal
                              {-0.0, 0x8000},
                              {kInf, 0x7C00},
                              {-kInf, 0xFC00},
                              {kNaN, 0},
                          });
}

TEST_CASE("→ bfloat16 rounds to nearest even and overflows to inf") {
  check_rounding(bfloat16, {
                               {1 + 0x1p-8, 0x3F80},
                               {1 + 3 * 0x1p-8, 0x3F82},
                               {1 + 0x1p-8 + 0x1p-20, 0x3F81},
                               {65504.0, 0x4780},  // 1.1111111|11 × 2^15 rounds up to 2^16
                               {3.3895313892515355e38, 0x7F7F},  // largest finite bfloat16
                               {3.4028234663852886e38, 0x7F80},  // float32 max → inf
                               {1e39, 0x7F80},
                               {0x1p-133, 0x0001},  // smallest subnormal
                               {-0.0, 0x8000},
                               {-kInf, 0xFF80},
                               {kNaN, 0},
                           });
}

TEST_CASE("between the 16-bit formats, and back to wider floats exactly") {
  CHECK(read_bits16(ops::cast(make(float16, {65504.0}), bfloat16))[0] == 0x4780);
  CHECK(read_bits16(ops::cast(make(bfloat16, {99840.0}), float16))[0] == 0x7C00);
  CHECK(read_bits16(ops::cast(make(float16, {0x1p-24}), bfloat16))[0] == 0x3380);
  CHECK(read_bits16(ops::cast(make(bfloat16, {1 + 0x1p-7}), float16))[0] == 0x3C08);
  check_floats(ops::cast(make(float16, {0x1p-24, 65504.0, -0.0}), float32), float32,
               {5.960464477539063e-08, 65504.0, -0.0}, 0);
  check_floats(ops::cast(make(bfloat16, {3.3895313892515355e38, 0x1p-133}), float64), float64,
               {3.3895313892515355e38, 0x1p-133}, 0);
}

TEST_CASE("integer → float rounds once, to nearest even") {
  check_floats(ops::cast(make(int32, {2049, 2051, 65519, 65520, 70000, -2049}), float16), float16,
               {2048, 2052, 65504, kInf, kInf, -2048}, 0);
  check_floats(ops::cast(make(int32, {257, 259, 16777217}), bfloat16), bfloat16,
               {256, 260, 16777216}, 0);
  check_floats(ops::cast(make(int32, {16777217, 16777219, -16777217}), float32), float32,
               {16777216, 16777220, -16777216}, 0);
  // 2^62 + 2^38 + 1 lies just above a float32 tie: one rounding goes up; rounding first to
  // double would land on the tie and go down to 2^62.
  check_floats(ops::cast(make_ints(int64, {(1LL << 62) + (1LL << 38) + 1, INT64_MAX}), float32),
               float32, {0x1p62 + 0x1p39, 0x1p63}, 0);
  check_floats(ops::cast(make_ints(int64, {(1LL << 53) + 1, (1LL << 53) + 3}), float64), float64,
               {0x1p53, 0x1p53 + 4}, 0);
  check_floats(ops::cast(make(bool_, {1, 0}), float16), float16, {1, 0}, 0);
}

// The same single rounding, for bfloat16: 2^62 + 2^54 + 1 is just above the tie between
// 2^62 and 2^62 + 2^55, so round-to-nearest-even gives 2^62 + 2^55 (0x5E81). A path through
// double (or through float, as PyTorch's c10::BFloat16(float) takes) lands on the tie and
// gives 2^62 (0x5E80). The contract says round to nearest even; PyTorch double-rounds.
TEST_CASE("int64 → bfloat16 rounds once" * doctest::may_fail()) {
  const Tensor x = make_ints(int64, {(1LL << 62) + (1LL << 54) + 1});
  CHECK(read_bits16(ops::cast(x, bfloat16))[0] == 0x5E81);
}

TEST_CASE("float64 → float32 rounds to nearest even, with subnormals and overflow") {
  check_floats(ops::cast(make(float64, {1 + 0x1p-24, 1 + 0x1p-24 + 0x1p-50, 1e39, -1e39, 0x1p-149,
                                        0x1p-150, 3 * 0x1p-150}),
                         float32),
               float32, {1.0, 1 + 0x1p-23, kInf, -kInf, 0x1p-149, 0.0, 0x1p-148}, 0);
}

TEST_CASE("casts read views through their strides; 0-d and 0-size tensors") {
  const Tensor x = make(float32, {1.5, -2.5, 3.75, -4.25, 5.5, 6.0}, Shape{2, 3});
  const Tensor t = x.transpose(0, 1);  // [3, 2], not contiguous
  check_ints(ops::cast(t, int16), int16, {1, -4, -2, 5, 3, 6});
  check_ints(ops::cast(x.slice(1, 0, 3, 2), int8), int8, {1, 3, -4, 6});
  const Tensor e = ops::cast(make(int32, {-7}).expand(Shape{2, 2}), float64);
  check_floats(e, float64, {-7, -7, -7, -7}, 0);
  const Tensor s = ops::cast(make(float64, {-9.75}, Shape{}), int32);
  CHECK(s.dim() == 0);
  check_ints(s, int32, {-9});
  const Tensor z = ops::cast(make(float32, {}, Shape{3, 0}), bfloat16);
  CHECK(z.shape() == Shape{3, 0});
  CHECK(z.dtype() == bfloat16);
}
