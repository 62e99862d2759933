// Scans on the host against hand-computed values, PyTorch's dtype rules and special cases.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "nbx/nbx.hpp"

using namespace nbx;

namespace {
Tensor f32(std::vector<float> v, Shape s) {
  return Tensor::from_host(v, s);
}
using I64 = std::vector<std::int64_t>;
}  // namespace

TEST_CASE("cumsum and cumprod along each dim, negative dims and transposed views") {
  // [[1, 2, 3], [4, 5, 6.5]]
  const Tensor x = f32({1, 2, 3, 4, 5, 6.5f}, {2, 3});
  CHECK(ops::cumsum(x, 1).to_host<float>() == std::vector<float>{1, 3, 6, 4, 9, 15.5f});
  CHECK(ops::cumsum(x, -2).to_host<float>() == std::vector<float>{1, 2, 3, 5, 7, 9.5f});
  CHECK(ops::cumsum(x, 1).shape() == Shape{2, 3});
  CHECK(ops::cumprod(x, 1).to_host<float>() == std::vector<float>{1, 2, 6, 4, 20, 130});
  // The transposed view [[1, 4], [2, 5], [3, 6.5]] scanned along its rows, read in place.
  CHECK(ops::cumsum(x.transpose(0, 1), 1).to_host<float>() ==
        std::vector<float>{1, 5, 2, 7, 3, 9.5f});
  CHECK(ops::cumprod(x.transpose(0, 1), 0).to_host<float>() ==
        std::vector<float>{1, 4, 2, 20, 6, 130});
  CHECK_THROWS_AS(ops::cumsum(x, 2), InvalidArgument);
  CHECK_THROWS_AS(ops::cumsum(Tensor(), 0), InvalidArgument);
}

TEST_CASE("integer and bool scans produce int64, as sum does; dtype casts first") {
  const Tensor i8 = Tensor::from_host(std::vector<std::int8_t>{100, 100, 100, -7}, {4});
  const Tensor s = ops::cumsum(i8, 0);
  CHECK(s.dtype() == int64);
  CHECK(s.to_host<std::int64_t>() == I64{100, 200, 300, 293});
  const Tensor p =
      ops::cumprod(Tensor::from_host(std::vector<std::int32_t>{-3, 1000, 1000, 1000}, {4}), 0);
  CHECK(p.dtype() == int64);
  CHECK(p.to_host<std::int64_t>() == I64{-3, -3000, -3000000, -3000000000LL});
  const Tensor b = Tensor::from_host(std::vector<bool>{true, false, true, true}, {4});
  CHECK(ops::cumsum(b, 0).to_host<std::int64_t>() == I64{1, 1, 2, 3});
  const Tensor d = ops::cumsum(i8, 0, float64);
  CHECK(d.dtype() == float64);
  CHECK(d.to_host<double>() == std::vector<double>{100, 200, 300, 293});
}

TEST_CASE("float16 cumsum keeps its dtype but does not accumulate in float16") {
  const Tensor h = Tensor::from_host(std::vector<float>(4096, 1.0f), {4096}).to(float16);
  const Tensor c = ops::cumsum(h, 0);
  CHECK(c.dtype() == float16);
  const std::vector<float> v = c.to(float32).to_host<float>();
  // A float16 running sum sticks at 2048 (2048 + 1 rounds back to 2048); the exact sums
  // rounded once per element reach 4096.
  CHECK(v[4095] == 4096.0f);
  CHECK(v[2047] == 2048.0f);
  CHECK(v[3071] == 3072.0f);
}

TEST_CASE("cummax and cummin: values, int64 indices, ties take the later index") {
  const auto [mx, mi] = ops::cummax(f32({1, 3, 2, 3, 5, -1}, {6}), 0);
  CHECK(mx.to_host<float>() == std::vector<float>{1, 3, 3, 3, 5, 5});
  CHECK(mi.dtype() == int64);
  CHECK(mi.to_host<std::int64_t>() == I64{0, 1, 1, 3, 4, 4});
  const auto [nv, ni] = ops::cummin(f32({4, 2, 2, 5, 1, 1.5f}, {6}), 0);
  CHECK(nv.to_host<float>() == std::vector<float>{4, 2, 2, 2, 1, 1});
  CHECK(ni.to_host<std::int64_t>() == I64{0, 1, 2, 2, 4, 4});
  // Along dim 0 of [[3, 1], [2, 7], [3, 0]]: per column.
  const auto [cv, ci] = ops::cummax(f32({3, 1, 2, 7, 3, 0}, {3, 2}), 0);
  CHECK(cv.to_host<float>() == std::vector<float>{3, 1, 3, 7, 3, 7});
  CHECK(ci.to_host<std::int64_t>() == I64{0, 0, 0, 1, 2, 1});
  const auto [iv, ii] =
      ops::cummin(Tensor::from_host(std::vector<std::int16_t>{5, -2, 9, -2}, {4}), 0);
  CHECK(iv.dtype() == int16);
  CHECK(iv.to_host<std::int16_t>() == std::vector<std::int16_t>{5, -2, -2, -2});
  CHECK(ii.to_host<std::int64_t>() == I64{0, 1, 1, 3});
  const auto [bv, bi] =
      ops::cummax(Tensor::from_host(std::vector<bool>{false, true, false}, {3}), 0);
  CHECK(bv.to_host<bool>() == std::vector<bool>{false, true, true});
  CHECK(bi.to_host<std::int64_t>() == I64{0, 1, 1});
}

TEST_CASE("NaN sticks in cummax/cummin and each NaN takes the index") {
  const auto [v, i] = ops::cummax(f32({1, NAN, 5, -INFINITY}, {4}), 0);
  const std::vector<float> vals = v.to_host<float>();
  CHECK(vals[0] == 1.0f);
  for (int k = 1; k < 4; ++k) CHECK(std::isnan(vals[static_cast<std::size_t>(k)]));
  CHECK(i.to_host<std::int64_t>() == I64{0, 1, 1, 1});
  const auto [w, j] = ops::cummin(f32({NAN, -2, NAN, -9}, {4}), 0);
  for (float x : w.to_host<float>()) CHECK(std::isnan(x));
  CHECK(j.to_host<std::int64_t>() == I64{0, 0, 2, 2});
  const auto [iv, ii] = ops::cummax(f32({-INFINITY, 2, INFINITY, 2}, {4}), 0);
  CHECK(iv.to_host<float>() == std::vector<float>{-INFINITY, 2, INFINITY, INFINITY});
  CHECK(ii.to_host<std::int64_t>() == I64{0, 1, 2, 2});
}

TEST_CASE("0-d and zero-size inputs") {
  const Tensor s = Tensor::full({}, 2.5, float32);
  CHECK(ops::cumsum(s, 0).shape() == Shape{});
  CHECK(ops::cumsum(s, -1).item().to_double() == 2.5);
  CHECK(ops::cummax(s, 0).indices.item().to_int() == 0);
  CHECK_THROWS_AS(ops::cumsum(s, 1), InvalidArgument);
  const Tensor e = Tensor::empty({0, 3}, float32);
  CHECK(ops::cumsum(e, 0).shape() == Shape{0, 3});
  CHECK(ops::cumprod(e, 1).shape() == Shape{0, 3});
  const auto [v, i] = ops::cummax(Tensor::empty({2, 0}, float32), 1);
  CHECK(v.shape() == Shape{2, 0});
  CHECK(i.shape() == Shape{2, 0});
}

TEST_CASE("a middle-dim scan of a strided 3-d view matches a naive loop (seeded)") {
  const unsigned seed = 20261130;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> data(4 * 5 * 6);
  for (float& v : data) v = dist(rng);
  // The [4, 5, 6] tensor viewed as [6, 5, 4] by a permute: no element is contiguous.
  const Tensor base = Tensor::from_host(data, {4, 5, 6}).to(float64);
  const Tensor x = base.permute({2, 1, 0});
  const std::vector<double> got = ops::cumsum(x, 1).to_host<double>();
  const auto [mv, mi] = ops::cummax(x, 1);
  const std::vector<double> gmax = mv.to_host<double>();
  const std::vector<std::int64_t> gidx = mi.to_host<std::int64_t>();
  INFO("seed " << seed);
  for (int a = 0; a < 6; ++a)
    for (int c = 0; c < 4; ++c) {
      double run = 0, best = -INFINITY;
      std::int64_t at = 0;
      for (int b = 0; b < 5; ++b) {
        const double v = static_cast<double>(data[static_cast<std::size_t>(c * 30 + b * 6 + a)]);
        run += v;
        if (v >= best) best = v, at = b;
        const auto o = static_cast<std::size_t>(a * 20 + b * 4 + c);
        CHECK(got[o] == doctest::Approx(run).epsilon(1e-12));
        CHECK(gmax[o] == best);
        CHECK(gidx[o] == at);
      }
    }
}
