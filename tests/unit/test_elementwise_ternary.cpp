// Ternary elementwise ops on the host: where, masked_fill, clamp, lerp, addcmul, addcdiv,
// against hand-worked values, with PyTorch's rules for their dtypes (a bool condition,
// masked_fill keeping its tensor's dtype, clamp promoting with its bounds, lerp and addcdiv
// only for floats) and its treatment of NaN and inverted bounds.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <optional>

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
using Bound = std::optional<ops::TensorOrScalar>;
}  // namespace

TEST_CASE("where picks per element, broadcasting all three operands") {
  const Tensor cond = make(bool_, {1, 0, 1, 0});
  check_floats(ops::where(cond, make(float32, {1.5, 2.5, kNaN, 4.5}),
                          make(float32, {-1.0, kNaN, -3.0, -0.0})),
               float32, {1.5, kNaN, kNaN, -0.0});
  // Large int64 values pass through untouched (no detour through a float).
  check_ints(ops::where(make(bool_, {1, 0}), make_ints(int64, {(1LL << 62) + 1, 5}),
                        make_ints(int64, {7, INT64_MIN})),
             int64, {(1LL << 62) + 1, INT64_MIN});
  // cond [2, 1], a [1, 3], b 0-d → [2, 3].
  const Tensor c = make(bool_, {1, 0}, Shape{2, 1});
  const Tensor a = make(int32, {10, 20, 30}, Shape{1, 3});
  const Tensor out = ops::where(c, a, make(int32, {-1}, Shape{}));
  CHECK(out.shape() == Shape{2, 3});
  check_ints(out, int32, {10, 20, 30, -1, -1, -1});
}

TEST_CASE("where promotes its value operands like a binary op") {
  const Tensor cond = make(bool_, {1, 0});
  check_floats(ops::where(cond, 1.5, make(int32, {7, 8})), float32, {1.5, 8.0});
  check_floats(ops::where(cond, 2, make(float16, {0.5, 0.25})), float16, {2.0, 0.25});
  check_ints(ops::where(cond, make(uint8, {200, 1}), make(int8, {-3, -4})), int16, {200, -4});
  check_floats(ops::where(cond, make(float16, {1, 2}), make(bfloat16, {3, 4})), float32, {1, 4});
  check_ints(ops::where(cond, 5, -6), int64, {5, -6});
  CHECK_THROWS_AS(ops::where(make(int32, {1, 0}), make(float32, {1, 2}), 0.5), InvalidArgument);
  CHECK_THROWS_AS(ops::where(make(float32, {1, 0}), make(float32, {1, 2}), 0.5), InvalidArgument);
}

TEST_CASE("masked_fill writes the value where the mask is true and keeps x's dtype") {
  const Tensor x = make(float32, {1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor row_mask = make(bool_, {1, 0, 1});
  check_floats(ops::masked_fill(x, row_mask, 2.5), float32, {2.5, 2, 2.5, 2.5, 5, 2.5});
  check_floats(ops::masked_fill(x, row_mask, -kInf), float32, {-kInf, 2, -kInf, -kInf, 5, -kInf});
  // A float value into an int tensor converts to the tensor's dtype (truncation).
  check_ints(ops::masked_fill(make(int32, {1, 2}), make(bool_, {1, 0}), 2.7), int32, {2, 2});
  check_floats(ops::masked_fill(make(float16, {1, 2}), make(bool_, {0, 1}), 1000), float16,
               {1, 1000});
  // A 0-d tensor as the value.
  check_ints(ops::masked_fill(make(int64, {9, 8}), make(bool_, {0, 1}), make(int64, {-3}, Shape{})),
             int64, {9, -3});
  // The mask may broadcast to x, never grow it; it must be bool; the value must be 0-d.
  CHECK_THROWS_AS(
      ops::masked_fill(make(float32, {1, 2, 3}), make(bool_, {1, 0, 1}, Shape{3, 1}), 1),
      InvalidArgument);
  CHECK_THROWS_AS(ops::masked_fill(x, make(int32, {1, 0, 1}), 1), InvalidArgument);
  CHECK_THROWS_AS(ops::masked_fill(x, row_mask, make(float32, {1, 2})), InvalidArgument);
}

TEST_CASE("clamp: both, one or no bound; NaN propagates; min > max gives max") {
  const Tensor x = make(float32, {-3, -1, 0.5, 2, 7, kNaN});
  check_floats(ops::clamp(x, Bound(-1), Bound(2)), float32, {-1, -1, 0.5, 2, 2, kNaN});
  check_floats(ops::clamp(x, Bound(0.25), std::nullopt), float32, {0.25, 0.25, 0.5, 2, 7, kNaN});
  check_floats(ops::clamp(x, std::nullopt, Bound(1.5)), float32, {-3, -1, 0.5, 1.5, 1.5, kNaN});
  // Inverted bounds: every element becomes max.
  check_floats(ops::clamp(x, Bound(5), Bound(1)), float32, {1, 1, 1, 1, 1, kNaN});
  // A NaN bound makes the result NaN.
  check_floats(ops::clamp(make(float64, {1, 2}), Bound(kNaN), Bound(5)), float64, {kNaN, kNaN});
  CHECK_THROWS_AS(ops::clamp(x, std::nullopt, std::nullopt), InvalidArgument);
}

TEST_CASE("clamp bounds may be tensors and take part in promotion") {
  const Tensor x = make(int32, {-5, 0, 5, 100}, Shape{2, 2});
  const Tensor lo = make(int32, {-1, 1}, Shape{1, 2});  // per column
  check_ints(ops::clamp(x, Bound(lo), Bound(50)), int32, {-1, 1, 5, 50});
  // Integer bounds keep the integer dtype, even at its extremes.
  check_ints(ops::clamp(make(uint8, {3, 250}), std::nullopt, Bound(200)), uint8, {3, 200});
  check_ints(ops::clamp(make_ints(int64, {INT64_MIN, INT64_MAX}), Bound(-7), std::nullopt), int64,
             {-7, INT64_MAX});
  // A float bound on an int tensor gives the default float, as PyTorch's clamp does.
  check_floats(ops::clamp(make(int32, {1, 2, 3}), Bound(1.5), std::nullopt), float32, {1.5, 2, 3});
  check_floats(ops::clamp(make(float16, {-32768, 3}), Bound(-10), Bound(2)), float16, {-10, 2});
}

TEST_CASE("lerp: start + weight (end - start), exact at both ends") {
  const Tensor s = make(float64, {1, 1, 1, 1, -2, 0.1});
  const Tensor e = make(float64, {5, 5, 5, 5, 6, 0.7});
  check_floats(ops::lerp(s, e, 0.25), float64, {2, 2, 2, 2, 0, 0.25});
  const Tensor w = make(float64, {0, 1, 0.75, 2, 0.5, 1});
  // weight 0 gives start and weight 1 gives end exactly (0.7 stays 0.7, with no rounding).
  check_floats(ops::lerp(s, e, w), float64, {1, 5, 4, 9, 2, 0.7}, 0);
  check_floats(ops::lerp(make(float32, {1, kInf}), make(float32, {3, 1}), 0.5), float32, {2, kInf});
  check_floats(ops::lerp(make(float16, {0, 2}), make(float16, {4, 4}), 0.5), float16, {2, 3});
  CHECK_THROWS_AS(ops::lerp(make(int32, {1}), make(int32, {3}), make(int32, {1})), InvalidArgument);
}

// PyTorch's lerp requires start, end (and a tensor weight) to share one dtype and refuses
// otherwise (aten/src/ATen/native/Lerp.cpp: "expected dtype float for `end` but got dtype
// double"); it does not promote, so integer start/end stay integer and are refused even
// with a float weight.
TEST_CASE("lerp refuses operands of different dtypes, as PyTorch does") {
  CHECK_THROWS_AS(ops::lerp(make(int32, {1}), make(int32, {3}), 0.5), InvalidArgument);
  CHECK_THROWS_AS(ops::lerp(make(float32, {1}), make(float64, {3}), 0.5), InvalidArgument);
  CHECK_THROWS_AS(ops::lerp(make(float32, {1}), make(float32, {3}), make(float64, {0.5})),
                  InvalidArgument);
}

TEST_CASE("addcmul: x + value * t1 * t2, integers wrap") {
  const Tensor x = make(float32, {1, 2, -1});
  check_floats(ops::addcmul(x, make(float32, {2, 4, kInf}), make(float32, {3, 5, 0}), 0.5), float32,
               {4, 12, kNaN});
  check_floats(ops::addcmul(x, make(float32, {2, 4, 1}), make(float32, {3, 5, 1})), float32,
               {7, 22, 0});
  check_ints(
      ops::addcmul(make(int32, {1, -1}), make(int32, {3, 65536}), make(int32, {4, 65536}), 2),
      int32, {25, -1});
  check_ints(ops::addcmul(make(int8, {100}), make(int8, {10}), make(int8, {3})), int8, {-126});
  // Operands promote together: int32 + float32 products give float32.
  check_floats(ops::addcmul(make(int32, {1}), make(float32, {0.5}), make(int32, {3})), float32,
               {2.5});
}

TEST_CASE("addcdiv: x + value * t1 / t2, floats only, IEEE at zero") {
  check_floats(ops::addcdiv(make(float64, {1, 1, 1, 1}), make(float64, {3, 1, -1, 0}),
                            make(float64, {4, 0, 0, 0}), 2),
               float64, {2.5, kInf, -kInf, kNaN});
  check_floats(ops::addcdiv(make(float32, {-1}), make(float32, {1}), make(float32, {-0.0})),
               float32, {-kInf});
  CHECK_THROWS_AS(ops::addcdiv(make(int32, {1}), make(int32, {2}), make(int32, {3})),
                  InvalidArgument);
}

TEST_CASE("ternary ops on 0-size and 0-d operands") {
  const Tensor empty = make(float32, {}, Shape{0, 3});
  const Tensor out = ops::where(make(bool_, {1, 0, 1}), empty, 1.5);
  CHECK(out.shape() == Shape{0, 3});
  CHECK(out.dtype() == float32);
  const Tensor scalar = make(float64, {4.0}, Shape{});
  const Tensor c = ops::clamp(scalar, Bound(-1), Bound(2.5));
  CHECK(c.dim() == 0);
  check_floats(c, float64, {2.5});
  check_bools(ops::isnan(ops::addcmul(scalar, scalar, make(float64, {kNaN}, Shape{}))), {1});
}
