// Issue 11's reductions, scan and creation ops on every present device (the host and, where
// it opens, vulkan:0): values checked against PyTorch (the command that gave each is in a
// comment; /usr/bin/python3's torch 1.13 — where 2.x differs, 2.x is followed and said so),
// result dtypes, and refusals by name.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/ops/op_catalog.hpp"
#include "nbx/nbx.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

// x = torch.tensor([[0.75, -1.5, 2.25, 0.5], [3.0, 0.125, -0.625, 1.75],
//                   [-2.5, 1.25, 0.375, -0.875]])
Tensor x34(const Device& d) {
  return Tensor::from_host(std::vector<float>{0.75f, -1.5f, 2.25f, 0.5f, 3.0f, 0.125f, -0.625f,
                                              1.75f, -2.5f, 1.25f, 0.375f, -0.875f},
                           {3, 4})
      .to(d);
}

std::vector<float> floats(const Tensor& t) {
  return t.to(host_device()).to(float32).contiguous().to_host<float>();
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, double rel = 2e-6) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else if (std::isinf(want[i])) {
      CHECK(got[i] == want[i]);
    } else {
      CHECK(got[i] == doctest::Approx(want[i]).epsilon(rel));
    }
  }
}

// The op named by an InvalidArgument that `f` throws ("" when it throws none).
template <class F>
std::string refusing_op(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.op();
  }
  return "";
}

}  // namespace

TEST_CASE("max(x) and min(x) of a whole tensor: 0-d, the input's dtype, NaN propagates") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = x34(d);
    // torch.max(x), torch.min(x) -> tensor(3.), tensor(-2.5)
    CHECK(ops::max(x).dim() == 0);
    CHECK(ops::max(x).item().to_double() == 3.0);
    CHECK(ops::min(x.transpose(0, 1)).item().to_double() == -2.5);
    const Tensor i8 = Tensor::from_host(std::vector<std::int8_t>{4, -7, 9, 2}, {4}).to(d);
    CHECK(ops::max(i8).dtype() == int8);  // torch.max(int8) -> int8
    CHECK(ops::min(i8).item().to_int() == -7);
    // torch.max(torch.tensor([1., nan, 2.])) -> nan
    const Tensor n = Tensor::from_host(std::vector<float>{1, NAN, 2}, {3}).to(d);
    CHECK(std::isnan(ops::max(n).item().to_double()));
    CHECK(std::isnan(ops::min(n).item().to_double()));
    // torch.max(torch.empty(0, 3)) -> RuntimeError (no reduction dim for numel() == 0)
    CHECK(refusing_op([&] { ops::max(Tensor::empty({0, 3}, float32, d)); }) == "max");
    CHECK(refusing_op([&] { ops::min(Tensor::empty({0}, float32, d)); }) == "min");
  }
}

TEST_CASE("aminmax: both extrema in one call, dims, keepdim, NaN, empty dims") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = x34(d);
    // torch.aminmax(x, dim=1) -> min [-1.5, -0.625, -2.5], max [2.25, 3., 1.25]
    ops::MinMax r = ops::aminmax(x, 1);
    CHECK(floats(r.min) == std::vector<float>{-1.5f, -0.625f, -2.5f});
    CHECK(floats(r.max) == std::vector<float>{2.25f, 3.0f, 1.25f});
    // torch.aminmax(x, dim=0, keepdim=True) -> shapes [1, 4]
    r = ops::aminmax(x, 0, true);
    CHECK(r.min.shape() == Shape{1, 4});
    CHECK(floats(r.max) == std::vector<float>{3.0f, 1.25f, 2.25f, 1.75f});
    // torch.aminmax(x) -> (tensor(-2.5), tensor(3.))
    r = ops::aminmax(x);
    CHECK(r.min.dim() == 0);
    CHECK(r.min.item().to_double() == -2.5);
    CHECK(r.max.item().to_double() == 3.0);
    // torch.aminmax(torch.tensor([1., nan, 2.])) -> (nan, nan)
    r = ops::aminmax(Tensor::from_host(std::vector<float>{1, NAN, 2}, {3}).to(d));
    CHECK(std::isnan(r.min.item().to_double()));
    CHECK(std::isnan(r.max.item().to_double()));
    // torch.aminmax(torch.tensor([1, 5, -3], dtype=torch.int8)) -> int8 (-3, 5)
    r = ops::aminmax(Tensor::from_host(std::vector<std::int8_t>{1, 5, -3}, {3}).to(d));
    CHECK(r.max.dtype() == int8);
    CHECK(r.min.item().to_int() == -3);
    CHECK(r.max.item().to_int() == 5);
    // torch.aminmax(torch.tensor([True, False])) -> (False, True)
    r = ops::aminmax(Tensor::from_host(std::vector<bool>{true, false}, {2}).to(d));
    CHECK(r.min.item().to_bool() == false);
    CHECK(r.max.item().to_bool() == true);
    // torch.aminmax(torch.empty(0, 3), dim=0) -> IndexError; dim=1 -> two empty tensors
    CHECK(refusing_op([&] { ops::aminmax(Tensor::empty({0, 3}, float32, d), 0); }) == "aminmax");
    CHECK(ops::aminmax(Tensor::empty({0, 3}, float32, d), 1).max.shape() == Shape{0});
  }
}

TEST_CASE("nansum and nanmean skip NaN; their dtypes are PyTorch's") {
  // n = torch.tensor([[1., nan, 2.5, -4.], [nan] * 4, [0.25, -0.5, nan, 8.]])
  const std::vector<float> n = {1, NAN, 2.5f, -4, NAN, NAN, NAN, NAN, 0.25f, -0.5f, NAN, 8};
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = Tensor::from_host(n, {3, 4}).to(d);
    // torch.nansum(n, 1) -> [-0.5, 0., 7.75]; torch.nansum(n) -> 7.25
    CHECK(floats(ops::nansum(x, {1})) == std::vector<float>{-0.5f, 0, 7.75f});
    CHECK(ops::nansum(x).item().to_double() == 7.25);
    // torch.nanmean(n, 1) -> [-0.16666667, nan, 2.5833333]; torch.nanmean(n, 0)
    // -> [0.625, -0.5, 2.5, 2.]
    check_close(floats(ops::nanmean(x, {1})), {-0.16666667f, NAN, 2.5833333f});
    check_close(floats(ops::nanmean(x.transpose(0, 1), {1}, true)), {0.625f, -0.5f, 2.5f, 2});
    // torch.nansum(torch.tensor([inf, nan, -inf])) -> nan
    const Tensor inf = Tensor::from_host(std::vector<float>{INFINITY, NAN, -INFINITY}, {3}).to(d);
    CHECK(std::isnan(ops::nansum(inf).item().to_double()));
    // torch.nansum(int8 [100, 100, 100]) -> int64 300; with dtype=torch.int32 -> int32
    const Tensor i8 = Tensor::from_host(std::vector<std::int8_t>{100, 100, 100}, {3}).to(d);
    CHECK(ops::nansum(i8).dtype() == int64);
    CHECK(ops::nansum(i8).item().to_int() == 300);
    CHECK(ops::nansum(i8, {}, false, int32).dtype() == int32);
    // torch.nansum(torch.tensor([True, True])) -> tensor(2)
    CHECK(
        ops::nansum(Tensor::from_host(std::vector<bool>{true, true}, {2}).to(d)).item().to_int() ==
        2);
    // torch.nanmean(int) -> RuntimeError "expected input to have floating point dtype",
    // also with dtype=torch.float32
    CHECK(refusing_op([&] { ops::nanmean(i8); }) == "nanmean");
    CHECK(refusing_op([&] { ops::nanmean(i8, {}, false, float32); }) == "nanmean");
    // torch.nanmean(torch.empty(0, 3), dim=0) -> [nan, nan, nan]
    CHECK(std::isnan(floats(ops::nanmean(Tensor::empty({0, 3}, float32, d), {0}))[2]));
    // Half types keep their dtype (accumulated in float32).
    CHECK(ops::nanmean(x.to(float16), {1}).dtype() == float16);
  }
}

TEST_CASE("var_mean and std_mean: one call, both outputs exactly var's/std's and mean's") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = x34(d);
    // torch.var_mean(x) -> (2.5113637447, 0.375)
    ops::StatisticAndMean r = ops::var_mean(x);
    CHECK(r.statistic.item().to_double() == doctest::Approx(2.5113637447).epsilon(1e-6));
    CHECK(r.mean.item().to_double() == 0.375);
    // torch.var_mean(x, dim=1) -> ([2.375, 2.6510417, 2.6510417], [0.5, 1.0625, -0.4375])
    r = ops::var_mean(x, {1});
    check_close(floats(r.statistic), {2.375f, 2.6510417461f, 2.6510417461f});
    CHECK(floats(r.mean) == std::vector<float>{0.5f, 1.0625f, -0.4375f});
    // torch.std_mean(x, dim=0, unbiased=False, keepdim=True)
    r = ops::std_mean(x, {0}, 0, true);
    CHECK(r.statistic.shape() == Shape{1, 4});
    check_close(floats(r.statistic), {2.2577028275f, 1.1288514137f, 1.1916958094f, 1.0720566511f});
    check_close(floats(r.mean), {0.4166666567f, -0.0416666679f, 0.6666666865f, 0.4583333433f});
    // correction 2 (torch 2.x's correction=2): 27.625 / 10
    CHECK(ops::var_mean(x, {}, 2).statistic.item().to_double() ==
          doctest::Approx(2.7625).epsilon(1e-6));
    // Bit for bit what var, std and mean give on the same device.
    CHECK(floats(ops::var_mean(x, {0}).statistic) == floats(ops::var(x, {0})));
    CHECK(floats(ops::std_mean(x, {1}).statistic) == floats(ops::std(x, {1})));
    CHECK(floats(ops::std_mean(x, {1}).mean) == floats(ops::mean(x, {1})));
    // torch.var_mean(torch.tensor([1.])) -> (nan, 1.)
    r = ops::var_mean(Tensor::from_host(std::vector<float>{1}, {1}).to(d));
    CHECK(std::isnan(r.statistic.item().to_double()));
    CHECK(r.mean.item().to_double() == 1.0);
    // torch.var_mean(int) -> RuntimeError "var_mean only support floating point"
    const Tensor i32 = Tensor::from_host(std::vector<std::int32_t>{1, 2, 4}, {3}).to(d);
    CHECK(refusing_op([&] { ops::var_mean(i32); }) == "var_mean");
    CHECK(refusing_op([&] { ops::std_mean(i32); }) == "std_mean");
    CHECK(ops::var_mean(x.to(bfloat16), {1}).mean.dtype() == bfloat16);
  }
}

TEST_CASE("std is the public name; stddev is its alias") {
  const Tensor x = x34(host_device());
  // torch.std(x) -> 1.5847282410
  CHECK(ops::std(x).item().to_double() == doctest::Approx(1.5847282410).epsilon(1e-6));
  CHECK(floats(ops::stddev(x, {1}, 0)) == floats(ops::std(x, {1}, 0)));
}

TEST_CASE("logcumsumexp: stable, -inf/+inf/NaN as PyTorch, floating dtypes only") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    // torch.logcumsumexp(torch.tensor([0.5, -1.25, 3., 2., -0.75]), 0)
    const Tensor y =
        Tensor::from_host(std::vector<float>{0.5f, -1.25f, 3.0f, 2.0f, -0.75f}, {5}).to(d);
    check_close(floats(ops::logcumsumexp(y, 0)),
                {0.5f, 0.6602241397f, 3.0919857025f, 3.3813285828f, 3.3972625732f});
    // float64: ...[4].item() -> 3.3972625049261485
    CHECK(ops::logcumsumexp(y.to(float64), -1).to_host<double>()[4] ==
          doctest::Approx(3.3972625049261485).epsilon(1e-14));
    // Stable where exp overflows: torch.logcumsumexp(torch.tensor([1000., 1000., -1000.,
    // 999.]), 0) -> [1000., 1000.6931762695, 1000.6931762695, 1000.8619995117]
    const Tensor big = Tensor::from_host(std::vector<float>{1000, 1000, -1000, 999}, {4}).to(d);
    check_close(floats(ops::logcumsumexp(big, 0)),
                {1000.0f, 1000.6931762695f, 1000.6931762695f, 1000.8619995117f});
    // Along dim 0 of x (a strided row): torch.logcumsumexp(x, 0), its first row x's own
    check_close(floats(ops::logcumsumexp(x34(d), 0)),
                {0.75f, -1.5f, 2.25f, 0.5f, 3.1002066135f, 0.3047446311f, 2.3048822880f,
                 2.0019290447f, 3.1038968563f, 1.5782818794f, 2.4404311180f, 2.0567083359f});
    // torch.logcumsumexp(torch.tensor([-inf, -inf, 1., inf, 2., nan, 3.]), 0)
    // -> [-inf, -inf, 1., inf, inf, nan, nan]
    const Tensor s =
        Tensor::from_host(std::vector<float>{-INFINITY, -INFINITY, 1, INFINITY, 2, NAN, 3}, {7})
            .to(d);
    check_close(floats(ops::logcumsumexp(s, 0)),
                {-INFINITY, -INFINITY, 1, INFINITY, INFINITY, NAN, NAN});
    // torch.logcumsumexp(torch.tensor([inf, -inf, 1.]), 0) -> [inf, inf, inf]
    const Tensor i = Tensor::from_host(std::vector<float>{INFINITY, -INFINITY, 1}, {3}).to(d);
    check_close(floats(ops::logcumsumexp(i, 0)), {INFINITY, INFINITY, INFINITY});
    // torch 1.13's CPU kernel has no Half ("not implemented for 'Half'"); 2.x has: followed,
    // the result keeps the dtype.
    CHECK(ops::logcumsumexp(y.to(float16), 0).dtype() == float16);
    // torch.logcumsumexp(torch.tensor([1, 2, 3]), 0) -> "not implemented for 'Long'"; Bool too
    const Tensor l = Tensor::from_host(std::vector<std::int64_t>{1, 2, 3}, {3}).to(d);
    CHECK(refusing_op([&] { ops::logcumsumexp(l, 0); }) == "logcumsumexp");
    CHECK(refusing_op([&] {
            ops::logcumsumexp(Tensor::from_host(std::vector<bool>{true}, {1}).to(d), 0);
          }) == "logcumsumexp");
    // torch.logcumsumexp(torch.tensor(2.), 0) -> tensor(2.)
    CHECK(ops::logcumsumexp(Tensor::full({}, 2.0, float32, d), 0).item().to_double() == 2.0);
  }
}

TEST_CASE("zeros_like, ones_like, full_like, empty_like: layout, dtype and device as PyTorch") {
  const std::vector<Device> devices = testing::present_devices();
  for (const Device& d : devices) {
    CAPTURE(d.str());
    const Tensor base = x34(d);
    // torch.zeros_like(torch.zeros(3, 4).t()).stride() -> (1, 4): a dense input's strides
    const Tensor t = ops::zeros_like(base.transpose(0, 1));
    CHECK(t.shape() == Shape{4, 3});
    CHECK(t.strides() == Strides{1, 4});
    CHECK(floats(t) == std::vector<float>(12, 0.0f));
    // torch.zeros_like(torch.zeros(3, 4)[:, ::2]).stride() -> (2, 1): contiguous
    CHECK(ops::ones_like(base.slice(1, 0, 4, 2)).strides() == Strides{2, 1});
    // torch.zeros_like(torch.zeros(3, 1, 4).permute(2, 0, 1)).stride() -> (1, 4, 4)
    const Tensor p = Tensor::zeros({3, 1, 4}, float32, d).permute({2, 0, 1});
    CHECK(ops::empty_like(p).strides() == Strides{1, 4, 4});
    // expanded (overlapping) -> contiguous, (12, 4, 1)
    CHECK(ops::full_like(base.expand({2, 3, 4}), 1.5).strides() == Strides{12, 4, 1});
    // torch.full_like(torch.zeros(3, dtype=torch.int8), 3.7) -> [3, 3, 3] int8
    const Tensor i8 = Tensor::zeros({3}, int8, d);
    CHECK(ops::full_like(i8, 3.7).to_host<std::int8_t>() == std::vector<std::int8_t>{3, 3, 3});
    // ... dtype=torch.float32 -> 3.7; ones_like(int8, dtype=torch.bool) -> True
    CHECK(ops::full_like(i8, 3.7, float32).to_host<float>()[1] == 3.7f);
    CHECK(ops::ones_like(i8, DType::kBool).dtype() == DType::kBool);
    // torch.full_like(int8, 300) -> "value cannot be converted to type int8_t without overflow"
    CHECK(refusing_op([&] { ops::full_like(i8, 300); }) == "full_like");
    // A device override places the result there.
    for (const Device& to : devices) {
      const Tensor z = ops::zeros_like(i8, {}, to);
      CHECK(z.device() == to);
      CHECK(z.to_host<std::int8_t>() == std::vector<std::int8_t>{0, 0, 0});
    }
  }
}

TEST_CASE("eye and empty_strided") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    // torch.eye(2, 3) -> [[1, 0, 0], [0, 1, 0]] float32
    const Tensor e = ops::eye(2, 3, float32, d);
    CHECK(e.dtype() == float32);
    CHECK(floats(e) == std::vector<float>{1, 0, 0, 0, 1, 0});
    // torch.eye(3, dtype=torch.bool): the diagonal True
    CHECK(ops::eye(3, DType::kBool, d).to_host<bool>() ==
          std::vector<bool>{true, false, false, false, true, false, false, false, true});
    CHECK(ops::eye(4, 2, int64, d).to_host<std::int64_t>() ==
          std::vector<std::int64_t>{1, 0, 0, 1, 0, 0, 0, 0});
    CHECK(ops::eye(0, float32, d).shape() == Shape{0, 0});  // torch.eye(0) -> size (0, 0)
    // torch.eye(-1) -> "n must be greater or equal to 0, got -1"; torch.eye(2, -1) likewise m
    CHECK(refusing_op([&] { ops::eye(-1, float32, d); }) == "eye");
    CHECK(refusing_op([&] { ops::eye(2, -1, float32, d); }) == "eye");

    // torch.empty_strided((2, 3), (1, 2)).storage().size() -> 6; (0, 0) -> 1; ((2, 0), (5, 1))
    // -> 0
    const Tensor cm = ops::empty_strided({2, 3}, {1, 2}, float32, d);
    CHECK(cm.strides() == Strides{1, 2});
    CHECK(cm.storage()->bytes() == 6 * 4);
    CHECK(ops::empty_strided({2, 3}, {0, 0}, float64, d).storage()->bytes() == 8);
    CHECK(ops::empty_strided({2, 0}, {5, 1}, float32, d).storage()->bytes() == 0);
    CHECK(ops::empty_strided({4, 5}, {1, 1}, int16, d).storage()->bytes() == 8 * 2);
    // torch.empty_strided((2, 3), (-1, 1)) -> RuntimeError; ranks (2) and (1) -> RuntimeError;
    // a negative size -> RuntimeError
    CHECK(refusing_op([&] { ops::empty_strided({2, 3}, {-1, 1}, float32, d); }) == "empty_strided");
    CHECK(refusing_op([&] { ops::empty_strided({2, 3}, {1}, float32, d); }) == "empty_strided");
    CHECK(refusing_op([&] { ops::empty_strided({-2, 3}, {1, 1}, float32, d); }) == "empty_strided");
  }
}

TEST_CASE("explain names each new op") {
  for (const char* name :
       {"aminmax", "nansum", "nanmean", "var_mean", "std_mean", "logcumsumexp", "eye", "zeros_like",
        "ones_like", "full_like", "empty_like", "empty_strided"}) {
    CAPTURE(name);
    CHECK(ops::find_op(name) != nullptr);
  }
}
