// Reductions on the host against hand-computed values and PyTorch's special cases.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nbx/nbx.hpp"

using namespace nbx;

namespace {
Tensor f32(std::vector<float> v, Shape s) {
  return Tensor::from_host(v, s);
}
}  // namespace

TEST_CASE("sum, prod and mean over dims, keepdim and full reductions") {
  // [[1, 2, 3], [4, 5, 6.5]]
  const Tensor x = f32({1, 2, 3, 4, 5, 6.5f}, {2, 3});
  CHECK(ops::sum(x).item().to_double() == 21.5);
  CHECK(ops::sum(x, {0}).to_host<float>() == std::vector<float>{5, 7, 9.5f});
  CHECK(ops::sum(x, {1}, true).shape() == Shape{2, 1});
  CHECK(ops::sum(x, {-1}).to_host<float>() == std::vector<float>{6, 15.5f});
  CHECK(ops::prod(x, {1}).to_host<float>() == std::vector<float>{6, 130});
  CHECK(ops::mean(x, {0, 1}).item().to_double() == doctest::Approx(21.5 / 6));
  // A transposed view reduces the same numbers without a copy.
  CHECK(ops::sum(x.transpose(0, 1), {1}).to_host<float>() == std::vector<float>{5, 7, 9.5f});
  CHECK_THROWS_AS(ops::sum(x, {0, -2}), InvalidArgument);
  CHECK_THROWS_AS(ops::sum(x, {2}), InvalidArgument);
}

TEST_CASE("integer sums accumulate in int64, as PyTorch's") {
  const Tensor i8 = Tensor::from_host(std::vector<std::int8_t>{100, 100, 100}, {3});
  const Tensor s = ops::sum(i8);
  CHECK(s.dtype() == int64);
  CHECK(s.item().to_int() == 300);
  const Tensor b = Tensor::from_host(std::vector<bool>{true, false, true, true}, {4});
  CHECK(ops::sum(b).item().to_int() == 3);
  CHECK(ops::count_nonzero(b).item().to_int() == 3);
  CHECK(ops::sum(i8, {}, false, float64).dtype() == float64);
  CHECK_THROWS_AS(ops::mean(i8), InvalidArgument);
}

TEST_CASE("empty reductions give the identity, extrema refuse") {
  const Tensor e = Tensor::empty({0, 3}, float32);
  CHECK(ops::sum(e, {0}).to_host<float>() == std::vector<float>{0, 0, 0});
  CHECK(ops::prod(e, {0}).to_host<float>() == std::vector<float>{1, 1, 1});
  CHECK(std::isnan(ops::mean(e).item().to_double()));
  CHECK(ops::any(e).item().to_bool() == false);
  CHECK(ops::all(e).item().to_bool() == true);
  CHECK_THROWS_AS(ops::amax(e), InvalidArgument);
  CHECK_THROWS_AS(ops::argmax(e), InvalidArgument);
  CHECK(ops::amax(e, {1}).shape() == Shape{0});  // no rows: nothing to refuse
}

TEST_CASE("NaN propagates through extrema; argmax picks the first NaN or first maximum") {
  const Tensor x = f32({1, NAN, 7, 7, -INFINITY}, {5});
  CHECK(std::isnan(ops::amax(x).item().to_double()));
  CHECK(std::isnan(ops::amin(x).item().to_double()));
  CHECK(ops::argmax(x).item().to_int() == 1);
  CHECK(ops::argmin(x).item().to_int() == 1);
  const Tensor y = f32({1, 7, 3, 7, -2}, {5});
  CHECK(ops::argmax(y).item().to_int() == 1);
  CHECK(ops::argmin(y).item().to_int() == 4);
  const auto [values, indices] = ops::max(f32({3, 9, 9, 2, 5, 1}, {2, 3}), 1);
  CHECK(values.to_host<float>() == std::vector<float>{9, 5});
  CHECK(indices.to_host<std::int64_t>() == std::vector<std::int64_t>{1, 1});
  const auto [minv, mini] = ops::min(f32({3, 9, 9, 2, 5, 1}, {2, 3}), 0, true);
  CHECK(minv.shape() == Shape{1, 3});
  CHECK(minv.to_host<float>() == std::vector<float>{2, 5, 1});
  CHECK(mini.to_host<std::int64_t>() == std::vector<std::int64_t>{1, 1, 1});
  CHECK(ops::argmax(f32({3, 9, 2, 8}, {2, 2}), 1).to_host<std::int64_t>() ==
        std::vector<std::int64_t>{1, 1});
}

TEST_CASE("var, std, norm and logsumexp") {
  const Tensor x = f32({2, 4, 4, 4, 5, 5, 7, 9}, {8});
  CHECK(ops::var(x, {}, 0).item().to_double() == doctest::Approx(4.0));
  CHECK(ops::var(x).item().to_double() == doctest::Approx(32.0 / 7));
  CHECK(ops::stddev(x, {}, 0).item().to_double() == doctest::Approx(2.0));
  CHECK(std::isnan(ops::var(f32({3}, {1})).item().to_double()));  // N - correction = 0
  const Tensor v = f32({3, -4}, {2});
  CHECK(ops::norm(v).item().to_double() == doctest::Approx(5.0));
  CHECK(ops::norm(v, 1).item().to_double() == doctest::Approx(7.0));
  CHECK(ops::norm(v, INFINITY).item().to_double() == doctest::Approx(4.0));
  CHECK(ops::norm(v, -INFINITY).item().to_double() == doctest::Approx(3.0));
  CHECK(ops::norm(v, 0).item().to_double() == 2.0);
  CHECK(ops::norm(v, 3).item().to_double() == doctest::Approx(std::cbrt(91.0)));
  const Tensor l = f32({1000, 1000}, {2});  // naive exp would overflow
  CHECK(ops::logsumexp(l).item().to_double() == doctest::Approx(1000 + std::log(2.0)));
  CHECK(ops::logsumexp(f32({-INFINITY, -INFINITY}, {2})).item().to_double() == -INFINITY);
  CHECK(ops::logsumexp(f32({INFINITY, 1}, {2})).item().to_double() == INFINITY);
  CHECK(ops::logsumexp(Tensor::from_host(std::vector<std::int32_t>{0, 0}, {2})).dtype() == float32);
}

TEST_CASE("half types accumulate in float32 and keep their dtype") {
  std::vector<float> ones(4096, 1.0f);
  const Tensor h = Tensor::from_host(ones, {4096}).to(float16);
  // float16 cannot count past 2048 by ones; float32 accumulation can.
  CHECK(ops::sum(h).dtype() == float16);
  CHECK(ops::sum(h).item().to_double() == 4096.0);
}

TEST_CASE("infinity norms over an empty dim refuse, as amax does") {
  const Tensor e = Tensor::empty({0}, float32);
  CHECK_THROWS_AS(ops::norm(e, INFINITY), InvalidArgument);
  CHECK_THROWS_AS(ops::norm(e, -INFINITY), InvalidArgument);
  CHECK(ops::norm(e, 2).item().to_double() == 0.0);
}
