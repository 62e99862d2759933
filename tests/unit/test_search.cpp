// searchsorted and bucketize (core/ops/index_write.hpp) on every present device against
// hand-computed values: left and right, side, NaN and ±0, sorter, out_int32, scalar values.
#include <doctest/doctest.h>

#include "tests/unit/index_write_test_util.hpp"

using namespace nbx;
using namespace nbx::testing::index_write;

TEST_CASE("searchsorted and bucketize: left and right, NaN and ±0, sorter, out_int32") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (DType t : {f32, f64, DType::kFloat16, DType::kBFloat16}) {
      CAPTURE(dtype_name(t));
      const Tensor seq = on({1, 3, 3, 5}, {4}, d, t);
      const Tensor v = on({0, 3, 4, 6, kNaN}, {5}, d, t);
      const Tensor left = ops::searchsorted(seq, v);
      CHECK(left.dtype() == i64);
      CHECK(ints(left) == I64{0, 1, 3, 4, 4});
      CHECK(ints(ops::searchsorted(seq, v, false, true)) == I64{0, 3, 3, 4, 4});
      CHECK(ints(ops::searchsorted(seq, v, false, false, "right")) == I64{0, 3, 3, 4, 4});
      CHECK(ints(ops::searchsorted(seq, v, false, true, "right")) == I64{0, 3, 3, 4, 4});
      CHECK(ints(ops::searchsorted(seq, v, false, false, "left")) == I64{0, 1, 3, 4, 4});
      // -0 equals +0: both insert before [-0, 0] on the left, after it on the right.
      const Tensor zeros = on({-0.0, 0.0, 1}, {3}, d, t);
      CHECK(ints(ops::searchsorted(zeros, on({0.0, -0.0}, {2}, d, t))) == I64{0, 0});
      CHECK(ints(ops::searchsorted(zeros, on({0.0, -0.0}, {2}, d, t), false, true)) == I64{2, 2});
      // A NaN at the end of the sequence compares false: PyTorch's loop goes right past it.
      CHECK(ints(ops::searchsorted(on({1, 2, kNaN}, {3}, d, t), on({5, kNaN, 1.5}, {3}, d, t))) ==
            I64{3, 3, 1});
      CHECK(ints(ops::searchsorted(on({-kInf, 0, kInf}, {3}, d, t), on({-kInf, kInf}, {2}, d, t),
                                   false, true)) == I64{1, 3});
    }
    // out_int32.
    const Tensor seq = on({1, 3, 3, 5}, {4}, d);
    const Tensor r32 = ops::searchsorted(seq, on({3, 9}, {2}, d), true);
    CHECK(r32.dtype() == i32);
    CHECK(ints(r32) == I64{1, 4});
    // A sorter: [5, 1, 3] sorted by [1, 2, 0].
    CHECK(ints(ops::searchsorted(on({5, 1, 3}, {3}, d), on({2, 5}, {2}, d), false, false, {},
                                 ids({1, 2, 0}, {3}, d))) == I64{1, 2});
    CHECK(ints(ops::searchsorted(on({5, 1, 3}, {3}, d), on({2, 5}, {2}, d), false, true, {},
                                 ids({1, 2, 0}, {3}, d))) == I64{1, 3});
    // Rows: a 2-d sequence with the values' leading dim; transposed values.
    const Tensor s2 = on({1, 3, 5, 2, 4, 6}, {2, 3}, d, i64);
    CHECK(ints(ops::searchsorted(s2, on({3, 3}, {2, 1}, d, i64))) == I64{1, 1});
    CHECK(ints(ops::searchsorted(s2, on({3, 3}, {2, 1}, d, i64), false, true)) == I64{2, 1});
    CHECK(ints(ops::searchsorted(s2, on({0, 6, 5, 2}, {2, 2}, d, i64).transpose(0, 1))) ==
          I64{0, 2, 2, 0});
    // A 1-d sequence with 2-d values; a scalar value (0-d result); integers.
    CHECK(ints(ops::searchsorted(seq, on({1, 2, 3, 4}, {2, 2}, d))) == I64{0, 1, 1, 3});
    const Tensor sc = ops::searchsorted(seq, Scalar(3));
    CHECK(sc.shape() == Shape{});
    CHECK(ints(sc) == I64{1});
    CHECK(ints(ops::searchsorted(seq, Scalar(3), false, true)) == I64{3});
    for (DType t : {DType::kInt8, DType::kUInt8, DType::kInt16, i32, i64}) {
      CAPTURE(dtype_name(t));
      CHECK(ints(ops::searchsorted(on({0, 2, 2, 7}, {4}, d, t), on({2, 8, 0}, {3}, d, t))) ==
            I64{1, 4, 0});
    }
    // Promotion: int64 sequence, float values.
    CHECK(ints(ops::searchsorted(on({1, 2, 3}, {3}, d, i64), on({1.5}, {1}, d))) == I64{1});
    // A strided sequence: every other element of [1, 9, 2, 9, 4, 9].
    CHECK(ints(ops::searchsorted(on({1, 9, 2, 9, 4, 9}, {6}, d).slice(0, 0, 6, 2),
                                 on({3}, {1}, d))) == I64{2});
    // An empty sequence, empty values, 0-d values.
    CHECK(ints(ops::searchsorted(on({}, {0}, d), on({3}, {1}, d))) == I64{0});
    CHECK(ops::searchsorted(seq, on({}, {0}, d)).shape() == Shape{0});
    CHECK(ints(ops::searchsorted(seq, on({4}, {}, d))) == I64{3});
    // A long sequence (5000 even numbers) and many values.
    D evens(5000), probe(300);
    for (std::size_t k = 0; k < evens.size(); ++k) evens[k] = 2.0 * double(k);
    for (std::size_t k = 0; k < probe.size(); ++k) probe[k] = double(33 * k) - 1;
    const I64 got = ints(ops::searchsorted(on(evens, {5000}, d, f64), on(probe, {300}, d, f64)));
    bool ok = true;
    for (std::size_t k = 0; k < probe.size(); ++k) {
      const double p = probe[k];
      const std::int64_t want =
          p < 0 ? 0 : std::min<std::int64_t>(5000, std::int64_t(std::ceil(p / 2)));
      ok = ok && got[k] == want;
    }
    CHECK(ok);

    // bucketize: searchsorted of x in 1-d boundaries.
    const Tensor bx = on({1, 6, 3, 9}, {2, 2}, d, i64);
    const Tensor bounds = on({1, 5, 7}, {3}, d, i64);
    CHECK(ops::bucketize(bx, bounds).shape() == Shape{2, 2});
    CHECK(ints(ops::bucketize(bx, bounds)) == I64{0, 2, 1, 3});
    CHECK(ints(ops::bucketize(bx, bounds, false, true)) == I64{1, 2, 1, 3});
    CHECK(ops::bucketize(bx, bounds, true).dtype() == i32);
    CHECK(ints(ops::bucketize(on({3}, {}, d, i64), bounds)) == I64{1});
    CHECK(ints(ops::bucketize(on({kNaN, -0.0}, {2}, d), on({-1, 0, 1}, {3}, d))) == I64{3, 1});

    // Errors.
    CHECK_THROWS_AS(ops::searchsorted(seq, on({1}, {1}, d), false, true, "left"), InvalidArgument);
    CHECK_THROWS_AS(ops::searchsorted(seq, on({1}, {1}, d), false, false, "middle"),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::searchsorted(s2, on({3, 3, 3}, {3, 1}, d, i64)), InvalidArgument);
    CHECK_THROWS_AS(ops::searchsorted(on({3}, {}, d), on({3}, {1}, d)), InvalidArgument);
    CHECK_THROWS_AS(
        ops::searchsorted(seq, on({1}, {1}, d), false, false, {}, ids({0, 1, 2, 3}, {4}, d, i32)),
        InvalidArgument);
    CHECK_THROWS_AS(
        ops::searchsorted(seq, on({1}, {1}, d), false, false, {}, ids({0, 1, 2}, {3}, d)),
        InvalidArgument);
    CHECK_THROWS_AS(ops::searchsorted(on({0, 1}, {2}, d, b8), on({1}, {1}, d, b8)),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::bucketize(on({1}, {1}, d), on({1, 2, 3, 4}, {2, 2}, d)), InvalidArgument);
  }
}
