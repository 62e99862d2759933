// Creation helpers on the host: arange and linspace against hand-computed values and
// PyTorch's formulas, full/fill, and triu/tril over batches and strided views.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "nbx/nbx.hpp"

using namespace nbx;

namespace {
using F = std::vector<float>;
using I64 = std::vector<std::int64_t>;
}  // namespace

TEST_CASE("arange: integer and floating ranges, lengths, negative steps") {
  const Tensor i = ops::arange(2, 11, 3, int64);
  CHECK(i.shape() == Shape{3});
  CHECK(i.to_host<std::int64_t>() == I64{2, 5, 8});
  CHECK(ops::arange(5, -4, -2, int32).to_host<std::int32_t>() ==
        std::vector<std::int32_t>{5, 3, 1, -1, -3});
  CHECK(ops::arange(0.5, 2.0, 0.25, float32).to_host<float>() ==
        F{0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 1.75f});
  CHECK(ops::arange(1, 2.1, 0.5, float64).to_host<double>() == std::vector<double>{1, 1.5, 2});
  CHECK(ops::arange(3, 3, 1, float32).numel() == 0);
  // Integer ranges stay exact past 2^53.
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  CHECK(ops::arange(big, big + 4, 2, int64).to_host<std::int64_t>() == I64{big, big + 2});
  // An integer dtype truncates bounds and step first, as PyTorch's int64 arange.
  CHECK(ops::arange(0.5, 3.9, 1, int64).to_host<std::int64_t>() == I64{0, 1, 2});
  CHECK(ops::arange(-1.5, 6, 2.7, int64).to_host<std::int64_t>() == I64{-1, 1, 3, 5});
  CHECK_THROWS_AS(ops::arange(0, 2, 0.5, int64), InvalidArgument);
  CHECK_THROWS_AS(ops::arange(0, 2, 1, DType::kBool), InvalidArgument);
  CHECK_THROWS_AS(ops::arange(0, 5, 0, int64), InvalidArgument);
  CHECK_THROWS_AS(ops::arange(0, 5, -1, int64), InvalidArgument);
  CHECK_THROWS_AS(ops::arange(0, NAN, 1, float32), InvalidArgument);
}

TEST_CASE("linspace: PyTorch's symmetric formula, both ends exact") {
  CHECK(ops::linspace(-1, 1, 5, float32).to_host<float>() == F{-1, -0.5f, 0, 0.5f, 1});
  CHECK(ops::linspace(3, 10, 1, float32).to_host<float>() == F{3});
  CHECK(ops::linspace(3, 10, 0, float32).numel() == 0);
  CHECK(ops::linspace(10, 0, 3, float64).to_host<double>() == std::vector<double>{10, 5, 0});
  // 0.1 is not a float64 value: the last element still equals `end` exactly, and the
  // first half counts up from start while the second half counts down from end.
  const std::vector<double> v = ops::linspace(0.0, 0.7, 8, float64).to_host<double>();
  const double step = 0.7 / 7;
  CHECK(v.front() == 0.0);
  CHECK(v.back() == 0.7);
  CHECK(v[2] == 2 * step);
  CHECK(v[5] == 0.7 - 2 * step);
  // Integer outputs: the values are truncated, as PyTorch's [0, 1, 3, 4, 6] for 0..6.5 in 5.
  CHECK(ops::linspace(0, 6.5, 5, int64).to_host<std::int64_t>() == I64{0, 1, 3, 4, 6});
  CHECK_THROWS_AS(ops::linspace(0, 1, -1, float32), InvalidArgument);
  CHECK_THROWS_AS(ops::linspace(0, 1, 3, DType::kBool), InvalidArgument);
}

TEST_CASE("full and fill") {
  const Tensor f = ops::full({2, 2}, 7.5, float64);
  CHECK(f.to_host<double>() == std::vector<double>{7.5, 7.5, 7.5, 7.5});
  const Tensor like = Tensor::from_host(std::vector<std::int16_t>{1, 2, 3}, {3});
  const Tensor g = ops::fill(like, -4);
  CHECK(g.dtype() == int16);
  CHECK(g.shape() == Shape{3});
  CHECK(g.to_host<std::int16_t>() == std::vector<std::int16_t>{-4, -4, -4});
  CHECK(like.to_host<std::int16_t>() == std::vector<std::int16_t>{1, 2, 3});  // not written
  CHECK_THROWS_AS(ops::fill(Tensor(), 1), InvalidArgument);
}

TEST_CASE("triu and tril with diagonals, batches and strided views") {
  // [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
  const Tensor x = Tensor::from_host(F{1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  CHECK(ops::triu(x).to_host<float>() == F{1, 2, 3, 0, 5, 6, 0, 0, 9});
  CHECK(ops::tril(x).to_host<float>() == F{1, 0, 0, 4, 5, 0, 7, 8, 9});
  CHECK(ops::triu(x, 1).to_host<float>() == F{0, 2, 3, 0, 0, 6, 0, 0, 0});
  CHECK(ops::tril(x, -1).to_host<float>() == F{0, 0, 0, 4, 0, 0, 7, 8, 0});
  CHECK(ops::triu(x, -1).to_host<float>() == F{1, 2, 3, 4, 5, 6, 0, 8, 9});
  CHECK(ops::tril(x, 5).to_host<float>() == F{1, 2, 3, 4, 5, 6, 7, 8, 9});
  // The transposed view [[1, 4, 7], [2, 5, 8], [3, 6, 9]], read through strides.
  CHECK(ops::triu(x.transpose(0, 1)).to_host<float>() == F{1, 4, 7, 0, 5, 8, 0, 0, 9});
  // A batch of two 2x3 matrices.
  const Tensor b = Tensor::from_host(I64{1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}, {2, 2, 3});
  CHECK(ops::tril(b).to_host<std::int64_t>() == I64{1, 0, 0, 4, 5, 0, -1, 0, 0, -4, -5, 0});
  CHECK(ops::triu(b, 2).to_host<std::int64_t>() == I64{0, 0, 3, 0, 0, 0, 0, 0, -3, 0, 0, 0});
  const Tensor t = Tensor::from_host(std::vector<bool>{true, true, true, true}, {2, 2});
  CHECK(ops::triu(t).to_host<bool>() == std::vector<bool>{true, true, false, true});
  CHECK(ops::tril(Tensor::empty({0, 4}, float32)).shape() == Shape{0, 4});
  CHECK_THROWS_AS(ops::triu(Tensor::from_host(F{1, 2}, {2})), InvalidArgument);
}
