// Softmax family and normalizations on the host against hand-computed values.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nbx/nbx.hpp"

using namespace nbx;

namespace {
Tensor f32(std::vector<float> v, Shape s) {
  return Tensor::from_host(v, s);
}
void check_close(const std::vector<float>& got, const std::vector<double>& want,
                 double tol = 1e-6) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    if (std::isnan(want[i]))
      CHECK(std::isnan(got[i]));
    else if (std::isinf(want[i]))
      CHECK(got[i] == want[i]);
    else
      CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol));
  }
}
}  // namespace

TEST_CASE("softmax and log_softmax along any dim") {
  const double e1 = std::exp(1.0), e2 = std::exp(2.0);
  const Tensor x = f32({0, 1, 2, 2, 1, 0}, {2, 3});
  const double s = 1 + e1 + e2;
  check_close(ops::softmax(x, 1).to_host<float>(), {1 / s, e1 / s, e2 / s, e2 / s, e1 / s, 1 / s});
  // dim 0 reads through strides: pairs (0,2), (1,1), (2,0)
  const double a = 1 / (1 + e2);
  check_close(ops::softmax(x, 0).to_host<float>(), {a, 0.5, e2 * a, e2 * a, 0.5, a});
  check_close(ops::log_softmax(x, -1).to_host<float>(),
              {-std::log(s), 1 - std::log(s), 2 - std::log(s), 2 - std::log(s), 1 - std::log(s),
               -std::log(s)});
  // Large values do not overflow: the row maximum is subtracted first.
  check_close(ops::softmax(f32({1000, 1000}, {2}), 0).to_host<float>(), {0.5, 0.5});
  CHECK_THROWS_AS(ops::softmax(Tensor::ones({3}, int32), 0), InvalidArgument);
  CHECK_THROWS_AS(ops::softmax(x, 2), InvalidArgument);
}

TEST_CASE("softmax special values follow PyTorch") {
  check_close(ops::softmax(f32({-INFINITY, 0}, {2}), 0).to_host<float>(), {0, 1});
  check_close(ops::softmax(f32({-INFINITY, -INFINITY}, {2}), 0).to_host<float>(), {NAN, NAN});
  check_close(ops::softmax(f32({NAN, 1}, {2}), 0).to_host<float>(), {NAN, NAN});
  check_close(ops::softmax(f32({3}, {}), 0).to_host<float>(), {1});
}

TEST_CASE("scaled and masked softmax") {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  const Tensor mask =
      Tensor::from_host(std::vector<bool>{false, true}, {2});  // broadcast over rows
  check_close(ops::scaled_masked_softmax(x, 1, 0.5, mask).to_host<float>(), {1, 0, 1, 0});
  const Tensor none = Tensor::from_host(std::vector<bool>{true, true}, {2});
  check_close(ops::scaled_masked_softmax(x, 1, 1.0, none).to_host<float>(), {0, 0, 0, 0});
  check_close(ops::scaled_masked_softmax(x, 1, 1.0, none, true).to_host<float>(),
              {-INFINITY, -INFINITY, -INFINITY, -INFINITY});
  const double e = std::exp(0.5);  // scale 0.5 on a difference of 1
  check_close(ops::scaled_masked_softmax(x, 1, 0.5).to_host<float>(),
              {1 / (1 + e), e / (1 + e), 1 / (1 + e), e / (1 + e)});
}

TEST_CASE("layer_norm and rms_norm over trailing dims") {
  // Row [1, 2, 3, 4]: mean 2.5, biased variance 1.25.
  const Tensor x = f32({1, 2, 3, 4, 10, 10, 10, 10}, {2, 4});
  const double inv = 1 / std::sqrt(1.25 + 1e-5);
  check_close(ops::layer_norm(x, {4}).to_host<float>(),
              {-1.5 * inv, -0.5 * inv, 0.5 * inv, 1.5 * inv, 0, 0, 0, 0}, 1e-5);
  const Tensor w = f32({1, 2, 3, 4}, {4}), b = f32({0.5f, 0.5f, 0.5f, 0.5f}, {4});
  check_close(
      ops::layer_norm(x, {4}, w, b).to_host<float>(),
      {-1.5 * inv + 0.5, -1.0 * inv + 0.5, 1.5 * inv + 0.5, 6 * inv + 0.5, 0.5, 0.5, 0.5, 0.5},
      1e-5);
  // rms of [1, 2, 3, 4] = sqrt(30 / 4)
  const double r = 1 / std::sqrt(7.5 + 1e-6);
  check_close(ops::rms_norm(x, {4}, w, 1e-6).to_host<float>(),
              {1 * r, 4 * r, 9 * r, 16 * r, 10 / std::sqrt(100 + 1e-6), 20 / std::sqrt(100 + 1e-6),
               30 / std::sqrt(100 + 1e-6), 40 / std::sqrt(100 + 1e-6)},
              1e-5);
  CHECK(ops::layer_norm(x.to(bfloat16), {4}).dtype() == bfloat16);
  CHECK_THROWS_AS(ops::layer_norm(x, {3}), InvalidArgument);
  CHECK_THROWS_AS(ops::layer_norm(x, {4}, f32({1, 2}, {2})), InvalidArgument);
}

TEST_CASE("group_norm and batch_norm (inference)") {
  // N=1, C=4, inner=2; 2 groups → group 0 = channels 0,1 = [1, 3, 5, 7], group 1 = [2, 2, 2, 2]
  const Tensor x = f32({1, 3, 5, 7, 2, 2, 2, 2}, {1, 4, 2});
  const double inv = 1 / std::sqrt(5.0 + 1e-5);  // var of [1, 3, 5, 7] = 5
  check_close(ops::group_norm(x, 2).to_host<float>(),
              {-3 * inv, -1 * inv, 1 * inv, 3 * inv, 0, 0, 0, 0}, 1e-5);
  const Tensor w = f32({1, 2, 3, 4}, {4});
  check_close(ops::group_norm(x, 2, w).to_host<float>(),
              {-3 * inv, -1 * inv, 2 * inv, 6 * inv, 0, 0, 0, 0}, 1e-5);
  CHECK_THROWS_AS(ops::group_norm(x, 3), InvalidArgument);
  const Tensor rm = f32({1, 1, 0, 0}, {4}), rv = f32({4, 4, 1, 1}, {4});
  const double s2 = 1 / std::sqrt(4 + 1e-5), s1 = 1 / std::sqrt(1 + 1e-5);
  check_close(ops::batch_norm(x, rm, rv, w, f32({0, 0, 0, 1}, {4})).to_host<float>(),
              {0, 2 * s2, 8 * s2, 12 * s2, 6 * s1, 6 * s1, 8 * s1 + 1, 8 * s1 + 1}, 1e-5);
  CHECK_THROWS_AS(ops::batch_norm(x, f32({1}, {1}), rv), InvalidArgument);
}

TEST_CASE("empty batches normalize to empty results") {
  CHECK(ops::group_norm(Tensor::empty({0, 4, 3}, float32), 2).shape() == Shape{0, 4, 3});
  const Tensor stats = Tensor::full({4}, 1.0, float32);
  CHECK(ops::batch_norm(Tensor::empty({0, 4}, float32), stats, stats).numel() == 0);
}
