// Unary elementwise ops on the host against values worked out by hand or with Python's math
// module (literals below), identities, and IEEE special values (±0, NaN, ±inf), with
// PyTorch's dtype rules: integer inputs to float functions give float32, activations refuse
// integers, rounding ops return integers unchanged.
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

namespace {
constexpr double kInf = INFINITY;
constexpr double kNaN = NAN;
constexpr double kE = 2.718281828459045;
constexpr double kPi = 3.141592653589793;
}  // namespace

TEST_CASE("neg and abs: hand values, signed zeros, integer wrap-around") {
  const Tensor x = make(float32, {1.5, -2.25, 0.0, -0.0, kInf, -kInf, kNaN});
  check_floats(ops::neg(x), float32, {-1.5, 2.25, -0.0, 0.0, -kInf, kInf, kNaN});
  check_floats(ops::abs(x), float32, {1.5, 2.25, 0.0, 0.0, kInf, kInf, kNaN});
  check_floats(-make(float64, {3.0, -0.0}), float64, {-3.0, 0.0});
  // Two's complement: the most negative value is its own negation and absolute value.
  check_ints(ops::neg(make(int8, {-128, 127, -5})), int8, {-128, -127, 5});
  check_ints(ops::abs(make(int8, {-128, -7, 9})), int8, {-128, 7, 9});
  check_ints(ops::abs(make(int32, {-2147483648.0, -3})), int32, {-2147483648LL, 3});
  check_ints(ops::neg(make_ints(int64, {INT64_MIN, INT64_MAX})), int64, {INT64_MIN, -INT64_MAX});
  check_ints(ops::neg(make(uint8, {1, 200})), uint8, {255, 56});
  CHECK_THROWS_AS(ops::neg(make(bool_, {1, 0})), InvalidArgument);
}

TEST_CASE("exp, exp2, log, log2: exact points and limits") {
  check_floats(ops::exp(make(float64, {1.0, -kInf, kInf, kNaN, 710.0, -0.0, -746.0})), float64,
               {kE, 0.0, kInf, kNaN, kInf, 1.0, 0.0});
  check_floats(ops::exp2(make(float64, {10.0, -1.0, 0.5, -1075.0, 1024.0})), float64,
               {1024.0, 0.5, 1.4142135623730951, 0.0, kInf});
  check_floats(ops::log(make(float64, {kE, 1.0, 0.0, -0.0, -1.0, kInf, kNaN})), float64,
               {1.0, 0.0, -kInf, -kInf, kNaN, kInf, kNaN});
  check_floats(ops::log2(make(float64, {8.0, 0.125, 1024.0, 0.0, -2.0})), float64,
               {3.0, -3.0, 10.0, -kInf, kNaN});
  // Identity: log(exp(x)) == x over a spread of values.
  const Tensor x = make(float64, {-3.5, -0.25, 0.75, 2.0, 9.125});
  check_floats(ops::log(ops::exp(x)), float64, {-3.5, -0.25, 0.75, 2.0, 9.125}, 1e-13);
  // An integer input gives the default float dtype.
  check_floats(ops::exp2(make(int32, {3, -2})), float32, {8.0, 0.25});
}

TEST_CASE("sqrt, rsqrt, reciprocal: signed zeros and infinities") {
  check_floats(ops::sqrt(make(float64, {2.25, 0.0, -0.0, -4.0, kInf, kNaN})), float64,
               {1.5, 0.0, -0.0, kNaN, kInf, kNaN});
  check_floats(ops::rsqrt(make(float64, {0.25, 16.0, 0.0, -0.0, kInf, -1.0})), float64,
               {2.0, 0.25, kInf, -kInf, 0.0, kNaN});
  check_floats(ops::reciprocal(make(float32, {4.0, -0.5, 0.0, -0.0, kInf, -kInf})), float32,
               {0.25, -2.0, kInf, -kInf, 0.0, -0.0});
  check_floats(ops::sqrt(make(int32, {4, 9, 2})), float32, {2.0, 3.0, 1.4142135623730951});
  check_floats(ops::reciprocal(make(int64, {0, 8})), float32, {kInf, 0.125});
  check_floats(ops::reciprocal(make(bool_, {1, 0})), float32, {1.0, kInf});
}

TEST_CASE("sin, cos, tan, tanh: known angles, odd symmetry, identities") {
  const Tensor a = make(float64, {kPi / 6, kPi / 3, kPi / 4, -0.0, kInf, kNaN});
  check_floats(ops::sin(a), float64,
               {0.5, 0.8660254037844386, 0.7071067811865476, -0.0, kNaN, kNaN}, 1e-15);
  check_floats(ops::cos(a), float64, {0.8660254037844387, 0.5, 0.7071067811865476, 1.0, kNaN, kNaN},
               1e-15);
  check_floats(ops::tan(make(float64, {kPi / 4, -kPi / 4, -0.0})), float64, {1.0, -1.0, -0.0},
               1e-15);
  check_floats(ops::tanh(make(float64, {0.5, -0.5, -0.0, kInf, -kInf, 30.0})), float64,
               {0.46211715726000974, -0.46211715726000974, -0.0, 1.0, -1.0, 1.0});
  // sin² + cos² = 1 and tan = sin / cos, through the tensor ops themselves.
  const Tensor x = make(float64, {-2.5, -1.0, 0.3, 1.2, 3.0, 7.5});
  const Tensor s = ops::sin(x), c = ops::cos(x);
  check_floats(s * s + c * c, float64, {1, 1, 1, 1, 1, 1}, 1e-15);
  const std::vector<double> t = test::read_doubles(ops::tan(x)), q = test::read_doubles(s / c);
  for (std::size_t i = 0; i < t.size(); ++i) CHECK(test::close(t[i], q[i], 1e-14));
  check_floats(ops::sin(make(int16, {0, 1})), float32, {0.0, 0.8414709848078965});
}

TEST_CASE("sigmoid and erf: fixed points, limits, symmetry") {
  // sigmoid(ln 3) = 3 / 4.
  check_floats(ops::sigmoid(make(float64, {0.0, std::log(3.0), 1.0, -kInf, kInf, kNaN})), float64,
               {0.5, 0.75, 0.7310585786300049, 0.0, 1.0, kNaN});
  const Tensor x = make(float32, {-4.0, -0.5, 0.25, 3.0});
  check_floats(ops::sigmoid(x) + ops::sigmoid(ops::neg(x)), float32, {1, 1, 1, 1});
  // tanh(x) = 2 sigmoid(2x) - 1.
  const Tensor y = make(float64, {-1.5, 0.5, 2.0});
  const std::vector<double> th = test::read_doubles(ops::tanh(y));
  check_floats(ops::sigmoid(y * 2) * 2 - 1, float64, th, 1e-14);
  check_floats(ops::erf(make(float64, {1.0, -1.0, -0.0, kInf, -kInf, kNaN})), float64,
               {0.8427007929497149, -0.8427007929497149, -0.0, 1.0, -1.0, kNaN});
}

TEST_CASE("relu, silu, gelu (both forms), mish, softplus: reference points") {
  check_floats(ops::relu(make(float32, {-2.0, 3.5, kNaN, -kInf, kInf, 0x1p-100})), float32,
               {0.0, 3.5, kNaN, 0.0, kInf, 0x1p-100});
  check_ints(ops::relu(make(int32, {-5, 7, -2147483648.0})), int32, {0, 7, 0});
  CHECK_THROWS_AS(ops::relu(make(bool_, {1})), InvalidArgument);
  // silu(x) = x / (1 + e^-x).
  check_floats(ops::silu(make(float64, {-1.0, 1.0, kInf})), float64,
               {-0.2689414213699951, 0.7310585786300049, kInf});
  // gelu(x) = x Φ(x); tanh form = x/2 (1 + tanh(√(2/π) (x + 0.044715 x³))).
  check_floats(ops::gelu(make(float64, {1.0, -1.0, kInf})), float64,
               {0.8413447460685429, -0.15865525393145707, kInf});
  check_floats(ops::gelu(make(float64, {1.0, -2.0}), ops::GeluApproximation::kTanh), float64,
               {0.8411919906082768, -0.04540230591222494});
  // mish(x) = x tanh(ln(1 + e^x)).
  check_floats(ops::mish(make(float64, {1.0, kInf})), float64, {0.8650983882673103, kInf});
  check_floats(ops::softplus(make(float64, {1.0, -kInf, 25.0})), float64,
               {1.3132616875182228, 0.0, 25.0});
  // beta scales the input; past threshold (on beta·x) the op is the identity, exactly.
  check_floats(ops::softplus(make(float64, {0.5, 11.0}), 2.0, 20.0), float64,
               {0.6566308437591114, 11.0});
  CHECK_THROWS_AS(ops::silu(make(int32, {1})), InvalidArgument);
  CHECK_THROWS_AS(ops::gelu(make(int64, {1})), InvalidArgument);
  CHECK_THROWS_AS(ops::mish(make(uint8, {1})), InvalidArgument);
  CHECK_THROWS_AS(ops::softplus(make(int8, {1})), InvalidArgument);
}

TEST_CASE("leaky_relu, elu, selu, celu, hardsigmoid, hardswish") {
  check_floats(ops::leaky_relu(make(float64, {-2.0, 3.0})), float64, {-0.02, 3.0});
  check_floats(ops::leaky_relu(make(float64, {-2.0, 3.0}), 0.25), float64, {-0.5, 3.0});
  check_floats(ops::elu(make(float64, {-1.0, 2.0, -kInf})), float64,
               {-0.6321205588285577, 2.0, -1.0});
  check_floats(ops::elu(make(float64, {-1.0}), 2.0), float64, {-1.2642411176571154});
  check_floats(ops::selu(make(float64, {1.0, -1.0, -kInf})), float64,
               {1.0507009873554805, -1.1113307378125625, -1.7580993408473766});
  check_floats(ops::celu(make(float64, {-1.0, 1.5}), 2.0), float64, {-0.7869386805747332, 1.5});
  CHECK_THROWS_AS(ops::celu(make(float64, {-1.0}), 0.0), InvalidArgument);
  // hardsigmoid = clamp(x/6 + 1/2, 0, 1); hardswish = x · hardsigmoid(x).
  check_floats(ops::hardsigmoid(make(float32, {-4.0, -3.0, 1.5, 3.0, 4.0})), float32,
               {0.0, 0.0, 0.75, 1.0, 1.0});
  check_floats(ops::hardswish(make(float32, {-4.0, -1.5, 1.5, 4.0})), float32,
               {-0.0, -0.375, 1.125, 4.0});
  CHECK_THROWS_AS(ops::hardswish(make(int32, {1})), InvalidArgument);
  CHECK_THROWS_AS(ops::elu(make(bool_, {1})), InvalidArgument);
}

TEST_CASE("floor, ceil, round (half to even), trunc") {
  const Tensor x = make(float32, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.75, -2.75, kInf, kNaN});
  check_floats(ops::round(x), float32, {-2, -2, -0.0, 0, 2, 2, 3, -3, kInf, kNaN});
  check_floats(ops::floor(x), float32, {-3, -2, -1, 0, 1, 2, 2, -3, kInf, kNaN});
  check_floats(ops::ceil(x), float32, {-2, -1, -0.0, 1, 2, 3, 3, -2, kInf, kNaN});
  check_floats(ops::trunc(x), float32, {-2, -1, -0.0, 0, 1, 2, 2, -2, kInf, kNaN});
  // 2^52 + 0.5 is not representable; 2^52 - 0.5 is, and rounds to even (2^52).
  check_floats(ops::round(make(float64, {4503599627370495.5, 8388609.0})), float64,
               {4503599627370496.0, 8388609.0});
  // Integers come back unchanged in their own dtype, even beyond float precision.
  check_ints(ops::floor(make_ints(int64, {(1LL << 53) + 1, -7})), int64, {(1LL << 53) + 1, -7});
  check_ints(ops::round(make(int32, {2147483647.0, -3})), int32, {2147483647, -3});
  check_ints(ops::ceil(make(uint8, {255, 3})), uint8, {255, 3});
  check_ints(ops::trunc(make(int8, {-128, 5})), int8, {-128, 5});
}

TEST_CASE("isnan, isinf, isfinite give bool for every input dtype") {
  const Tensor x = make(float32, {1.0, kNaN, kInf, -kInf, -0.0, 0x1p127});
  check_bools(ops::isnan(x), {0, 1, 0, 0, 0, 0});
  check_bools(ops::isinf(x), {0, 0, 1, 1, 0, 0});
  check_bools(ops::isfinite(x), {1, 0, 0, 0, 1, 1});
  check_bools(ops::isinf(make(float16, {65504.0, -kInf})), {0, 1});
  check_bools(ops::isnan(make(bfloat16, {kNaN, 2.0})), {1, 0});
  const Tensor i = make(int32, {-1, 2147483647.0});
  check_bools(ops::isnan(i), {0, 0});
  check_bools(ops::isinf(i), {0, 0});
  check_bools(ops::isfinite(i), {1, 1});
}

TEST_CASE("nan_to_num: defaults are the dtype's finite extremes") {
  const double f32_max = std::numeric_limits<float>::max();
  check_floats(ops::nan_to_num(make(float32, {kNaN, kInf, -kInf, 2.5})), float32,
               {0.0, f32_max, -f32_max, 2.5});
  check_floats(ops::nan_to_num(make(float16, {kInf, -kInf, kNaN})), float16,
               {65504.0, -65504.0, 0.0});
  check_floats(ops::nan_to_num(make(bfloat16, {kInf, -kInf})), bfloat16,
               {3.3895313892515355e38, -3.3895313892515355e38}, 0);
  check_floats(ops::nan_to_num(make(float64, {kNaN, kInf, -kInf, -1.0}), 1.5, 100.0, -100.0),
               float64, {1.5, 100.0, -100.0, -1.0});
  check_ints(ops::nan_to_num(make(int16, {-7, 300})), int16, {-7, 300});
}

TEST_CASE("logical_not and bitwise_not") {
  check_bools(ops::logical_not(make(float32, {0.0, -0.0, kNaN, 2.0, -kInf})), {1, 1, 0, 0, 0});
  check_bools(ops::logical_not(make(int32, {0, 256, -1})), {1, 0, 0});
  check_bools(ops::logical_not(make(bool_, {1, 0})), {0, 1});
  check_ints(ops::bitwise_not(make(int8, {5, -1, 127, -128})), int8, {-6, 0, -128, 127});
  check_ints(ops::bitwise_not(make(uint8, {15, 255})), uint8, {240, 0});
  check_ints(ops::bitwise_not(make_ints(int64, {INT64_MAX})), int64, {INT64_MIN});
  check_bools(ops::bitwise_not(make(bool_, {1, 0})), {0, 1});
  try {
    ops::bitwise_not(make(float32, {1.0}));
    FAIL("bitwise_not accepted a float32 tensor");
  } catch (const InvalidArgument& e) {
    CHECK(e.op() == "bitwise_not");
    CHECK(std::string(e.what()).find("float32") != std::string::npos);
  }
}

TEST_CASE("16-bit floats: computed wide, rounded once to the input dtype") {
  // e = 2.71828… → 2.71875 in both formats; √2 → 1.4140625 in float16, 1.4140625 in bfloat16.
  check_floats(ops::exp(make(float16, {1.0})), float16, {2.71875}, 0);
  check_floats(ops::exp(make(bfloat16, {1.0})), bfloat16, {2.71875}, 0);
  check_floats(ops::sqrt(make(float16, {2.0, -0.0})), float16, {1.4140625, -0.0}, 0);
  check_floats(ops::sqrt(make(bfloat16, {2.0})), bfloat16, {1.4140625}, 0);
  // Overflow of the 16-bit result goes to infinity, not to the largest finite value.
  check_floats(ops::exp(make(float16, {12.0})), float16, {kInf});
  check_floats(ops::neg(make(bfloat16, {-0.0, 3.0})), bfloat16, {0.0, -3.0}, 0);
}
