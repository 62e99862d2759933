// Issue 11's unary ops against PyTorch: values on every present device (float64 where the
// device has fp64, and float32 for the inputs float32 holds exactly), result dtypes, and
// refusals by name. The expected values are PyTorch 1.13's, from
//   python3 -c "import torch; x = torch.tensor([...], dtype=torch.float64);
//               print([repr(float(v)) for v in torch.<op>(x)])"
// with the inputs of each row; where PyTorch's float64 formula is itself inexact (logit near
// 1/2) the exact value (mpmath, 40 digits) is used and the row says so.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tests/unit/elementwise_test_util.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;
using test::check_bools;
using test::check_floats;
using test::check_ints;
using test::make;

namespace {
constexpr double kInf = INFINITY;
constexpr double kNaN = NAN;

struct Row {
  std::string op;
  std::function<Tensor(const Tensor&)> fn;
  std::vector<double> x, want;
  // lgamma/digamma cross zero (only an absolute bound means something there, as in the
  // conformance table): float32 is held to this absolute error instead of 3e-7 relative.
  double float32_atol = 0;
  bool float64_only = false;  // PyTorch's float32 result differs (its own bounds), see the row
};

const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
      {"log1p",
       ops::log1p,
       {1e-10, -0.5, 3.0, -1.0, -2.0, -0.0},
       {9.999999999500001e-11, -0.6931471805599453, 1.3862943611198906, -kInf, kNaN, -0.0}},
      {"expm1",
       ops::expm1,
       {1e-10, -0.25, 5.0, -40.0, 710.0, -0.0},
       {1.00000000005e-10, -0.22119921692859512, 147.4131591025766, -1.0, kInf, -0.0}},
      {"log10",
       ops::log10,
       {1000.0, 0.5, 1e-300, 0.0, -1.0},
       {3.0, -0.3010299956639812, -300.0, -kInf, kNaN}},
      {"asin",
       ops::asin,
       {0.5, -0.999999, 1e-8, 1.0, 1.5},
       {0.5235987755982989, -1.5693821131146521, 1e-08, 1.5707963267948966, kNaN}},
      {"acos",
       ops::acos,
       {0.5, 0.999999, -1.0, -0.25, 2.0},
       {1.0471975511965976, 0.0014142136802445852, 3.141592653589793, 1.8234765819369754, kNaN}},
      {"atan",
       ops::atan,
       {1.0, -1e10, 1e-9, 0.5},
       {0.7853981633974483, -1.5707963266948965, 1e-09, 0.4636476090008061}},
      {"sinh",
       ops::sinh,
       {1e-9, -2.5, 89.0, 710.0, -711.0},
       {1e-09, -6.0502044810397875, 2.2448064095871728e+38, 1.1169973830808557e+308, -kInf}},
      {"cosh",
       ops::cosh,
       {0.0, -2.5, 89.0, 711.0},
       {1.0, 6.132289479663686, 2.2448064095871728e+38, kInf}},
      {"asinh",
       ops::asinh,
       {1e-9, -2.5, 1e20, 0.75},
       {1e-09, -1.6472311463710958, 46.74484904044086, 0.6931471805599453}},
      {"acosh",
       ops::acosh,
       {1.0, 1.0000001, 3.0, 1e20, 0.5},
       {0.0, 0.0004472135919037347, 1.762747174039086, 46.74484904044086, kNaN}},
      {"atanh",
       ops::atanh,
       {1e-9, -0.5, 0.999999, 1.0, -1.0, 1.5},
       {1e-09, -0.5493061443340548, 7.254328619247669, kInf, -kInf, kNaN}},
      {"erfc",
       ops::erfc,
       {0.25, -1.0, 1.25, 5.0, 26.0, 30.0},
       {0.7236736098317631, 1.8427007929497148, 0.07709987174354177, 1.537459794428035e-12,
        5.663192408856143e-296, 0.0}},
      // PyTorch 1.13's float64 erfinv is itself off near 1 (-3.458910737283175 at -0.999999,
      // 4.572825001442121 at 0.9999999999): those two are mpmath's.
      {"erfinv",
       ops::erfinv,
       {0.5, -0.999999, 1e-9, 0.9999999999, 1.0, -1.0, 1.5},
       {0.4769362762044699, -3.458910737275499, 8.86226925452758e-10, 4.572824958544925, kInf,
        -kInf, kNaN}},
      // Near its zeros at 1 and 2, at the poles, and by reflection below 0.
      {"lgamma",
       ops::lgamma,
       {0.5, 1e-8, 1.0000001, 2.5, -2.5, -1e-7, 100.0, -3.0, 0.0},
       {0.5723649429247001, 18.42068073818021, -5.772155829918507e-08, 0.2846828704729192,
        -0.05624371649767405, 16.118095708679895, 359.1342053695754, kInf, kInf},
       1e-6},
      {"digamma",
       ops::digamma,
       {1.0, 0.5, -0.5, -2.25, 1e-8, 30.0, -1.0, 0.0, -0.0},
       {-0.5772156649015328, -1.9635100260214229, 0.03648997397857639, 4.158583564657972,
        -100000000.57721564, 3.384438132685525, kNaN, -kInf, kInf},
       1e-6},
      {"frac", ops::frac, {2.75, -2.75, 1e20, -0.5, kInf}, {0.75, -0.75, 0.0, -0.5, kNaN}},
      {"deg2rad",
       ops::deg2rad,
       {180.0, -45.0, 1.0},
       {3.141592653589793, -0.7853981633974483, 0.017453292519943295}},
      {"rad2deg",
       ops::rad2deg,
       {3.141592653589793, -1.0, 0.5},
       {180.0, -57.29577951308232, 28.64788975654116}},
      {"sinc",
       ops::sinc,
       {0.5, -2.5, 1e-9, 100.25, 0.0},
       {0.6366197723675814, 0.12732395447351627, 1.0, 0.002245177845778254, 1.0}},
      // PyTorch's float64 log(x / (1 - x)) gives 3.9999999972550487e-07 at 0.5000001; exact:
      {"logit",
       [](const Tensor& x) { return ops::logit(x); },
       {0.25, 0.5000001, 0.9, 1.0, 0.0},
       {-1.0986122886681098, 3.99999999789463e-07, 2.1972245773362196, kInf, -kInf}},
      {"logit(eps=1e-6)",
       [](const Tensor& x) { return ops::logit(x, 1e-6); },
       {0.25, 0.9, 1.0, 0.0, kNaN},
       {-1.0986122886681098, 2.1972245773362196, 13.815509557935018, -13.815509557963773, kNaN},
       0,
       true},  // float32's bounds: the next test case
  };
  return r;
}

// The values float32 holds exactly, with their expectations rounded to float32.
void float32_subset(const Row& r, std::vector<double>& x, std::vector<double>& want) {
  for (std::size_t i = 0; i < r.x.size(); ++i) {
    if (static_cast<double>(static_cast<float>(r.x[i])) != r.x[i] && !std::isnan(r.x[i])) continue;
    x.push_back(r.x[i]);
    want.push_back(static_cast<double>(static_cast<float>(r.want[i])));
  }
}

}  // namespace

TEST_CASE("issue 11 unary ops: PyTorch's values on every present device") {
  for (const Device& device : testing::present_devices()) {
    CAPTURE(device.str());
    const bool fp64 = device.capabilities().fp64.value;
    for (const Row& r : rows()) {
      CAPTURE(r.op);
      if (fp64) check_floats(r.fn(make(float64, r.x).to(device)), float64, r.want, 1e-13);
      std::vector<double> x, want;
      float32_subset(r, x, want);
      if (x.empty() || r.float64_only) continue;
      const Tensor got = r.fn(make(float32, x).to(device));
      if (r.float32_atol == 0) {
        check_floats(got, float32, want);
        continue;
      }
      const std::vector<double> v = test::read_doubles(got);
      for (std::size_t i = 0; i < v.size(); ++i) {
        CAPTURE(want[i]);
        CAPTURE(v[i]);
        CHECK(((std::isfinite(want[i]) &&
                std::fabs(v[i] - want[i]) <= r.float32_atol + 3e-7 * std::fabs(want[i])) ||
               test::same_double(v[i], want[i])));
      }
    }
  }
}

TEST_CASE(
    "issue 11 unary ops: sign, sgn, signbit, square, isposinf, isneginf keep PyTorch's dtypes") {
  for (const Device& device : testing::present_devices()) {
    CAPTURE(device.str());
    // torch.sign(torch.tensor([-2.5, 0.0, -0.0, nan, inf])) -> [-1, 0, 0, 0, 1]: NaN gives 0.
    const Tensor f = make(float32, {-2.5, 0.0, -0.0, kNaN, kInf}).to(device);
    check_floats(ops::sign(f), float32, {-1.0, 0.0, 0.0, 0.0, 1.0});
    check_floats(ops::sgn(f), float32, {-1.0, 0.0, 0.0, 0.0, 1.0});
    check_bools(ops::signbit(f), {1, 0, 1, 0, 0});
    check_bools(ops::isposinf(f), {0, 0, 0, 0, 1});
    check_bools(ops::isneginf(make(float64, {-kInf, kInf, kNaN}).to(device)), {1, 0, 0});
    check_ints(ops::sign(make(int32, {-7, 0, 9}).to(device)), int32, {-1, 0, 1});
    check_ints(ops::sign(make(bool_, {1, 0}).to(device)), bool_, {1, 0});
    check_ints(ops::sgn(make(uint8, {0, 200}).to(device)), uint8, {0, 1});
    check_bools(ops::signbit(make(int32, {-3, 0, 4}).to(device)), {1, 0, 0});
    check_bools(ops::signbit(make(uint8, {255, 0}).to(device)), {0, 0});
    check_bools(ops::isposinf(make(int16, {32767, -1}).to(device)), {0, 0});
    // torch.square(torch.tensor([12, -128], dtype=torch.int8)) -> [-112, 0] (wraps);
    // torch.square(torch.tensor([True, False])) -> int64 [1, 0] (pow(x, 2) in PyTorch 2.x).
    check_ints(ops::square(make(int8, {12, -128}).to(device)), int8, {-112, 0});
    check_ints(ops::square(make(bool_, {1, 0}).to(device)), int64, {1, 0});
    check_floats(ops::square(make(float32, {-1.5, kNaN, std::ldexp(1.0, 70)}).to(device)), float32,
                 {2.25, kNaN, kInf});
    // Integer inputs of the float functions give the default float dtype:
    // torch.lgamma(torch.tensor([5, 0], dtype=torch.int32)) -> float32 [3.1781, inf].
    check_floats(ops::lgamma(make(int32, {5, 0}).to(device)), float32, {3.1780538303479458, kInf});
    check_floats(ops::erfinv(make(bool_, {1, 0}).to(device)), float32, {kInf, 0.0});
    check_floats(ops::deg2rad(make(uint8, {180}).to(device)), float32, {3.141592653589793});
    // torch.logit(torch.tensor([0.999999, 1.0, 0.0]), eps=1e-6): the bounds are float32's
    // 1e-6 and 1 - 1e-6 -> [13.80231761932373, 13.80231761932373, -13.815509796142578].
    check_floats(ops::logit(make(float32, {1.0, 0.0}).to(device), 1e-6), float32,
                 {13.80231761932373, -13.815509796142578});
    // A negative eps clamps nothing: torch.logit(torch.tensor([1.0]), eps=-1.0) -> inf.
    check_floats(ops::logit(make(float32, {1.0, 2.0}).to(device), -1.0), float32, {kInf, kNaN});
  }
}

TEST_CASE("issue 11 unary ops: frac refuses integer and bool tensors by name, as PyTorch does") {
  // torch.frac(torch.tensor([1, 2])) -> RuntimeError: "frac_cpu" not implemented for 'Long'.
  for (DType t : {int32, int64, uint8, bool_}) {
    CAPTURE(dtype_name(t));
    try {
      ops::frac(make(t, {1, 0}));
      FAIL("frac accepted an integer or bool tensor");
    } catch (const InvalidArgument& e) {
      CHECK(std::string(e.what()).find("frac") != std::string::npos);
      CHECK(std::string(e.what()).find(std::string(dtype_name(t))) != std::string::npos);
    }
  }
}
