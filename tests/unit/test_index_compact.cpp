// The compacting index ops and their kin (core/ops/index_write.hpp: masked_scatter,
// masked_select, nonzero, nonzero_tuple, argwhere, one_hot, bincount) on every present device
// against hand-computed values: broadcast masks, 0-d and empty inputs, the bincount dtype rule.
#include <doctest/doctest.h>

#include "tests/unit/index_write_test_util.hpp"

using namespace nbx;
using namespace nbx::testing::index_write;

TEST_CASE("masked_scatter and masked_select with broadcast masks") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor a = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    // A [3] mask over both rows: (0,0), (0,2), (1,0), (1,2) take 10, 20, 30, 40 in order.
    CHECK(vals(ops::masked_scatter(a, mask({true, false, true}, {3}, d),
                                   on({10, 20, 30, 40, 50}, {5}, d))) == D{10, 2, 20, 30, 5, 40});
    // A [2, 1] mask: the whole first row; a 2-d source read in row-major order.
    CHECK(vals(ops::masked_scatter(a, mask({true, false}, {2, 1}, d),
                                   on({10, 20, 30, 40}, {2, 2}, d))) == D{10, 20, 30, 4, 5, 6});
    // A transposed source, ints.
    CHECK(ints(ops::masked_scatter(
              on({1, 2, 3, 4}, {4}, d, i64), mask({false, true, true, false}, {4}, d),
              on({7, 8, 9, 10}, {2, 2}, d, i64).transpose(0, 1))) == I64{1, 7, 9, 4});
    // In place through a transposed self: (0,0), (1,0), (2,0) of the view, i.e. row 0 of a.
    const Tensor base = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    ops::masked_scatter_(base.transpose(0, 1), mask({true, false}, {2}, d),
                         on({-1, -2, -3}, {3}, d));
    CHECK(vals(base) == D{-1, -2, -3, 4, 5, 6});
    // An all-false mask needs no source at all.
    CHECK(vals(ops::masked_scatter(a, mask({false, false, false}, {3}, d),
                                   Tensor::empty({0}, f32, d))) == vals(a));
    // 0-d self and mask.
    CHECK(vals(ops::masked_scatter(on({3}, {}, d), mask({true}, {}, d), on({8, 9}, {2}, d))) ==
          D{8});

    // masked_select: the selected elements, 1-d.
    const Tensor s = ops::masked_select(a, mask({true, false, true}, {3}, d));
    CHECK(s.shape() == Shape{4});
    CHECK(vals(s) == D{1, 3, 4, 6});
    // Self broadcasts against a larger mask too.
    CHECK(vals(ops::masked_select(on({1, 2, 3}, {3}, d),
                                  mask({true, false, true, false, true, false}, {2, 3}, d))) ==
          D{1, 3, 2});
    CHECK(vals(ops::masked_select(a.transpose(0, 1), mask({false, true}, {2}, d))) == D{4, 5, 6});
    CHECK(ops::masked_select(a, mask({false, false, false}, {3}, d)).shape() == Shape{0});
    const Tensor zs = ops::masked_select(on({5}, {}, d), mask({true}, {}, d));
    CHECK(zs.shape() == Shape{1});
    CHECK(vals(zs) == D{5});
    CHECK(ops::masked_select(Tensor::empty({0, 3}, f32, d), mask({true, true, true}, {3}, d))
              .shape() == Shape{0});
    // NaN and -0 are copied.
    const D got =
        vals(ops::masked_select(on({kNaN, -0.0, 1}, {3}, d), mask({true, true, false}, {3}, d)));
    CHECK(std::isnan(got[0]));
    CHECK(std::signbit(got[1]));
    // Errors: the source too small; a float mask; shapes that do not broadcast.
    CHECK_THROWS_AS((void)vals(ops::masked_scatter(a, mask({true, false, true}, {3}, d),
                                                   on({10, 20, 30}, {3}, d))),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::masked_select(a, on({1, 0, 1}, {3}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::masked_select(a, mask({true, false}, {2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::masked_scatter(a, mask({true, false}, {2}, d), on({1, 2, 3}, {3}, d)),
                    InvalidArgument);
    CHECK_THROWS_AS(
        ops::masked_scatter(a, mask({true, false, true}, {3}, d), on({1, 2, 3, 4}, {4}, d, i32)),
        InvalidArgument);
  }
}

TEST_CASE("nonzero, nonzero_tuple and argwhere: row-major coordinates, 0-d and empty") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = on({0, 2, 0, 3, 0, -1}, {2, 3}, d);
    const Tensor n = ops::nonzero(x);
    CHECK(n.dtype() == i64);
    CHECK(n.shape() == Shape{3, 2});
    CHECK(ints(n) == I64{0, 1, 1, 0, 1, 2});
    CHECK(ints(ops::argwhere(x)) == I64{0, 1, 1, 0, 1, 2});
    const std::vector<Tensor> tup = ops::nonzero_tuple(x);
    REQUIRE(tup.size() == 2);
    CHECK(ints(tup[0]) == I64{0, 1, 1});
    CHECK(ints(tup[1]) == I64{1, 0, 2});
    // -0 is zero, NaN is not; a transposed view in its own row-major order.
    CHECK(ints(ops::nonzero(on({-0.0, kNaN, 0, 0.5}, {4}, d))) == I64{1, 3});
    CHECK(ints(ops::nonzero(x.transpose(0, 1))) == I64{0, 1, 1, 0, 2, 1});
    for (DType t : {b8, DType::kInt8, DType::kUInt8, DType::kInt16, i32, i64, DType::kFloat16,
                    DType::kBFloat16, f64}) {
      CAPTURE(dtype_name(t));
      CHECK(ints(ops::nonzero(on({0, 1, 1, 0, 0, 1}, {3, 2}, d, t))) == I64{0, 1, 1, 0, 2, 1});
    }
    // 0-d: [1, 0] for a non-zero, [0, 0] for a zero; the tuple form treats it as 1-d.
    CHECK(ops::nonzero(on({5}, {}, d)).shape() == Shape{1, 0});
    CHECK(ops::nonzero(on({0}, {}, d)).shape() == Shape{0, 0});
    CHECK(ops::argwhere(on({5}, {}, d)).shape() == Shape{1, 0});
    const std::vector<Tensor> z = ops::nonzero_tuple(on({5}, {}, d));
    REQUIRE(z.size() == 1);
    CHECK(ints(z[0]) == I64{0});
    const std::vector<Tensor> z0 = ops::nonzero_tuple(on({0}, {}, d));
    REQUIRE(z0.size() == 1);
    CHECK(z0[0].shape() == Shape{0});
    // Empty inputs and all zeros.
    CHECK(ops::nonzero(Tensor::empty({0, 3}, f32, d)).shape() == Shape{0, 2});
    CHECK(ops::nonzero(on({0, 0, 0, 0}, {2, 1, 2}, d)).shape() == Shape{0, 3});
    // Many elements: every third of 5000.
    D big(5000, 0.0);
    for (std::size_t k = 0; k < big.size(); k += 3) big[k] = 1.5;
    const I64 got = ints(ops::nonzero(on(big, {5000}, d)));
    REQUIRE(got.size() == 1667);
    bool ok = true;
    for (std::size_t k = 0; k < got.size(); ++k) ok = ok && got[k] == std::int64_t(3 * k);
    CHECK(ok);
  }
}

TEST_CASE("one_hot and bincount") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = ids({2, 0, 1}, {3}, d);
    const Tensor h = ops::one_hot(x, 4);
    CHECK(h.dtype() == i64);
    CHECK(h.shape() == Shape{3, 4});
    CHECK(ints(h) == I64{0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0});
    // -1: max + 1 classes.
    CHECK(ops::one_hot(x).shape() == Shape{3, 3});
    CHECK(ints(ops::one_hot(x, -1)) == I64{0, 0, 1, 1, 0, 0, 0, 1, 0});
    // 2-d and transposed inputs, a 0-d input, an empty input with num_classes.
    const Tensor m = ids({1, 0, 3, 1}, {2, 2}, d).transpose(0, 1);  // [[1, 3], [0, 1]]
    CHECK(ops::one_hot(m, 4).shape() == Shape{2, 2, 4});
    CHECK(ints(ops::one_hot(m, 4)) == I64{0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0});
    CHECK(ints(ops::one_hot(ids({2}, {}, d))) == I64{0, 0, 1});
    CHECK(ops::one_hot(ids({}, {0}, d), 3).shape() == Shape{0, 3});
    CHECK_THROWS_AS(ops::one_hot(ids({}, {0}, d)), InvalidArgument);  // no max to infer from
    CHECK_THROWS_AS(ops::one_hot(on({1, 0}, {2}, d)), InvalidArgument);
    CHECK(refused([&] { (void)ints(ops::one_hot(ids({0, -1}, {2}, d), 3)); }, d));
    CHECK(refused([&] { (void)ints(ops::one_hot(ids({0, 3}, {2}, d), 3)); }, d));
    CHECK(refused([&] { (void)ints(ops::one_hot(ids({0, -2}, {2}, d))); }, d));

    // bincount: counts, minlength, weights (float32 stays float32, others give float64).
    const Tensor v = ids({1, 1, 3}, {3}, d);
    const Tensor c = ops::bincount(v);
    CHECK(c.dtype() == i64);
    CHECK(ints(c) == I64{0, 2, 0, 1});
    CHECK(ints(ops::bincount(v, {}, 6)) == I64{0, 2, 0, 1, 0, 0});
    CHECK(ints(ops::bincount(v, {}, 2)) == I64{0, 2, 0, 1});
    const Tensor w32 = ops::bincount(v, on({0.5, 1, 2}, {3}, d));
    CHECK(w32.dtype() == f32);
    CHECK(vals(w32) == D{0, 1.5, 0, 2});
    for (DType wt : {f64, DType::kFloat16, DType::kBFloat16, i32, i64, DType::kInt8}) {
      CAPTURE(dtype_name(wt));
      const Tensor r = ops::bincount(v, on({1, 2, 4}, {3}, d, wt), 5);
      CHECK(r.dtype() == f64);
      CHECK(vals(r) == D{0, 3, 0, 4, 0});
    }
    // Other integer dtypes of x, a strided x, an empty x.
    for (DType t : {DType::kUInt8, DType::kInt8, DType::kInt16, i32}) {
      CAPTURE(dtype_name(t));
      CHECK(ints(ops::bincount(on({4, 0, 4, 4}, {4}, d, t))) == I64{1, 0, 0, 0, 3});
    }
    CHECK(ints(ops::bincount(ids({2, 9, 2, 9, 0, 9}, {6}, d).slice(0, 0, 6, 2))) == I64{1, 0, 2});
    CHECK(ops::bincount(ids({}, {0}, d)).shape() == Shape{0});
    CHECK(ints(ops::bincount(ids({}, {0}, d), {}, 3)) == I64{0, 0, 0});
    // Many counts into few bins (duplicates everywhere).
    I64 many(3000);
    for (std::size_t k = 0; k < many.size(); ++k) many[k] = std::int64_t(k % 7);
    CHECK(ints(ops::bincount(ids(many, {3000}, d))) == I64{429, 429, 429, 429, 428, 428, 428});
    // Errors: 2-d, float, bool, weights of another length, negative minlength, negative values.
    CHECK_THROWS_AS(ops::bincount(ids({1, 2}, {1, 2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::bincount(on({1, 2}, {2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::bincount(on({1, 0}, {2}, d, b8)), InvalidArgument);
    CHECK_THROWS_AS(ops::bincount(v, on({1, 2}, {2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::bincount(v, {}, -1), InvalidArgument);
    CHECK(refused([&] { (void)ints(ops::bincount(ids({1, -1}, {2}, d))); }, d));
  }
}
