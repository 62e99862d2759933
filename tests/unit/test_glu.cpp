// Issue 13's ops on every present device (host, vulkan:0 where it opens) against values
// computed by PyTorch 1.13 (/usr/bin/python3; each with its torch call): glu along any dim,
// silu_and_mul and gelu_and_mul (both forms) as one launch on two views of the input,
// their half-type contract (float32 math, one rounding), log_sigmoid at the ends of its
// range, threshold with PyTorch's conversions of its scalars, softmax_with_temperature, the
// refusals by name, and what `nbx explain` says of them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/ops/explain.hpp"
#include "core/ops/glu.hpp"
#include "core/ops/inplace.hpp"
#include "core/ops/softmax.hpp"
#include "tests/unit/elementwise_test_util.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;
using test::check_floats;
using test::check_ints;
using test::make;
using test::make_ints;

namespace {
constexpr double kInf = INFINITY;
constexpr double kNaN = NAN;

void on_every_device(const std::function<void(const Device&)>& body) {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    body(d);
  }
}

template <class E>
void check_throws_named(const std::function<void()>& call, const char* op,
                        std::vector<std::string> words) {
  try {
    call();
    FAIL("expected a refusal");
  } catch (const E& e) {
    CHECK(e.op() == op);
    CAPTURE(e.what());
    for (const std::string& w : words) CHECK(std::string(e.what()).find(w) != std::string::npos);
  }
}

// x = [[1.5, -2, 0.5, 3], [-1, 4, -0.25, -3]], the GLU tests' input.
const std::vector<double> kX = {1.5, -2.0, 0.5, 3.0, -1.0, 4.0, -0.25, -3.0};
}  // namespace

TEST_CASE("glu: a * sigmoid(b) of the halves along any dim") {
  on_every_device([](const Device& d) {
    for (DType t : {float32, float64}) {
      CAPTURE(dtype_name(t));
      const Tensor x = make(t, kX, {2, 4}).to(d);
      // F.glu(x, -1) and F.glu(x, 0), x in float64
      const Tensor last = ops::glu(x);
      CHECK(last.shape() == Shape{2, 2});
      check_floats(
          last, t,
          {0.933688996802782, -1.9051482536448667, -0.43782349911420193, 0.18970349271026712});
      check_floats(
          ops::glu(x, 0), t,
          {0.40341213205499266, -1.964027580075817, 0.21891174955710097, 0.14227761953270035});
      // dim -2 is dim 0; a transposed input splits its own dim 1 (x.T's columns).
      check_floats(
          ops::glu(x, -2), t,
          {0.40341213205499266, -1.964027580075817, 0.21891174955710097, 0.14227761953270035});
      // x.T = [[1.5, 0.5, -1, -0.25], [-2, 3, 4, -3]]: a = x.T[:, :2], b = x.T[:, 2:]
      check_floats(ops::glu(make(t, kX, {4, 2}).to(d).transpose(0, 1)), t,
                   {1.5 / (1 + std::exp(1.0)), 0.5 / (1 + std::exp(0.25)),
                    -2.0 / (1 + std::exp(-4.0)), 3.0 / (1 + std::exp(3.0))});
    }
  });
}

TEST_CASE("silu_and_mul and gelu_and_mul: the activation of the first half times the second") {
  on_every_device([](const Device& d) {
    for (DType t : {float32, float64}) {
      CAPTURE(dtype_name(t));
      const Tensor x = make(t, kX, {2, 4}).to(d);
      // F.silu(x[..., :2]) * x[..., 2:]
      check_floats(
          ops::silu_and_mul(x), t,
          {0.6131808571452327, -0.7152175321327052, 0.06723535534249878, -11.784165480454902});
      // F.gelu(x[..., :2]) * x[..., 2:], and approximate='tanh'. 1 + erf(a / sqrt 2) (and
      // 1 + tanh) cancel for a < 0: gelu(-2) * 3 carries float32's error of erf near -1
      // scaled by |a b| / 2 = 3 (vulkan:0: 2.9 ulps), so float32 takes 8 ulps here.
      const double rtol = t == float32 ? 1e-6 : -1;
      check_floats(
          ops::gelu_and_mul(x), t,
          {0.6998945990483565, -0.13650079168907525, 0.039663813482864255, -11.999619945098003},
          rtol);
      check_floats(
          ops::gelu_and_mul(x, ops::GeluApproximation::kTanh), t,
          {0.6997857884901164, -0.13620691773667482, 0.03970200234793081, -11.999789262155423},
          rtol);
    }
  });
}

TEST_CASE("the gated products at infinities and NaN, as PyTorch's formulas give them") {
  on_every_device([](const Device& d) {
    // a = [2, -3, inf, 1, 0, nan, 5], b = [-inf, inf, 1, -800, 2, 1, nan]:
    // F.glu(torch.cat([a, b])), F.silu(a) * b
    const std::vector<double> ab = {2.0,   -3.0, kInf, 1.0,    0.0, kNaN, 5.0,
                                    -kInf, kInf, 1.0,  -800.0, 2.0, 1.0,  kNaN};
    const Tensor x = make(float32, ab).to(d);
    check_floats(ops::glu(x), float32, {0.0, -3.0, kInf, 0.0, 0.0, kNaN, kNaN});
    check_floats(ops::silu_and_mul(x), float32,
                 {-kInf, -kInf, kInf, -584.846862904004, 0.0, kNaN, kNaN});
  });
}

TEST_CASE("half types compute in float32 and round once: PyTorch's float32 composition, cast") {
  on_every_device([](const Device& d) {
    // xb = torch.tensor([[1.5,-2,0.5,3,0.1,7],[-1,4,-0.25,-3,2.5,-0.75]]).bfloat16()
    const std::vector<double> in = {1.5,  -2.0, 0.5,   3.0,  0.10009765625, 7.0,
                                    -1.0, 4.0,  -0.25, -3.0, 2.5,           -0.75};
    const Tensor xb = make(bfloat16, in, {2, 6}).to(d);
    // F.glu(xb.float()).bfloat16()
    check_floats(ops::glu(xb), bfloat16,
                 {1.4296875, -1.046875, 0.5, -0.04736328125, 3.703125, -0.080078125}, 0);
    // (F.silu(xf[..., :3]) * xf[..., 3:]).bfloat16(): one rounding. PyTorch's bfloat16
    // composition (and vLLM's kernel) rounds silu first: 3.703125 and 9.875 there.
    check_floats(ops::silu_and_mul(xb), bfloat16,
                 {3.671875, -0.0238037109375, 2.171875, 0.80859375, 9.8125, 0.08203125}, 0);
    // The same values in float16: (F.gelu(xh.float()[..., :3]) * xh.float()[..., 3:]).half()
    const Tensor xh = make(float16, in, {2, 6}).to(d);
    check_floats(
        ops::gelu_and_mul(xh), float16,
        {4.19921875, -0.00455474853515625, 2.419921875, 0.47607421875, 10.0, 0.07525634765625}, 0);
    check_floats(
        ops::gelu_and_mul(xh, ops::GeluApproximation::kTanh), float16,
        {4.19921875, -0.004543304443359375, 2.419921875, 0.476318359375, 10.0, 0.07525634765625},
        0);
  });
}

TEST_CASE("a gated product is one launch on two views: no copy, no intermediate tensor") {
  on_every_device([](const Device& d) {
    const Tensor base = make(float32, kX, {4, 2}).to(d);
    const Tensor x = base.transpose(0, 1);  // [2, 4], strides [1, 2]: not contiguous
    d.synchronize();
    BackendDevice& backend = d.context().backend_device();
    const std::uint64_t launches = backend.launches();
    const std::uint64_t allocations = d.memory_stats().allocations;
    const Tensor y = ops::silu_and_mul(x);
    CHECK(backend.launches() - launches == 1);
    CHECK(d.memory_stats().allocations - allocations == 1);  // the output alone
    CHECK(y.shape() == Shape{2, 2});
    CHECK(y.is_contiguous());
  });
}

TEST_CASE("zero-size inputs give zero-size halves") {
  on_every_device([](const Device& d) {
    CHECK(ops::glu(Tensor::empty({3, 0}, float32, d)).shape() == Shape{3, 0});
    CHECK(ops::glu(Tensor::empty({0, 4}, float32, d), 0).shape() == Shape{0, 4});
    CHECK(ops::silu_and_mul(Tensor::empty({0, 6}, bfloat16, d)).shape() == Shape{0, 3});
  });
}

TEST_CASE("the gated products refuse odd halves, 0-d inputs, bad dims and integer dtypes") {
  const Tensor odd = make(float32, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 5});
  // PyTorch: "Halving dimension must be even, but dimension 1 is size 5"
  check_throws_named<InvalidArgument>([&] { ops::glu(odd); }, "glu",
                                      {"dimension 1 is size 5", "[2, 5]"});
  check_throws_named<InvalidArgument>([&] { ops::silu_and_mul(odd); }, "silu_and_mul",
                                      {"must be even", "[2, 5]"});
  check_throws_named<InvalidArgument>([&] { ops::gelu_and_mul(odd); }, "gelu_and_mul",
                                      {"must be even"});
  check_throws_named<InvalidArgument>(
      [&] { ops::gelu_and_mul(odd, ops::GeluApproximation::kTanh); }, "gelu_tanh_and_mul",
      {"must be even"});
  check_throws_named<InvalidArgument>([&] { ops::glu(make(float32, {1}, {})); }, "glu",
                                      {"does not support scalars"});
  check_throws_named<InvalidArgument>([&] { ops::glu(odd, 2); }, "glu",
                                      {"dimension 2", "out of range"});
  // "glu_cpu" not implemented for 'Int'
  check_throws_named<InvalidArgument>(
      [&] {
        ops::glu(make(int32, {1, 2}, {2}));
      },
      "glu", {"int32", "floating"});
  check_throws_named<InvalidArgument>(
      [&] {
        ops::silu_and_mul(make(bool_, {1, 0}, {2}));
      },
      "silu_and_mul", {"bool"});
  check_throws_named<InvalidArgument>([&] { ops::glu(Tensor()); }, "glu", {"undefined"});
}

TEST_CASE("log_sigmoid: stable at both ends, NaN kept, floats only") {
  on_every_device([](const Device& d) {
    // F.logsigmoid(torch.tensor([nan, -inf, inf, -100, 0, -1, 30, -30, 80, -80, 0.5, -17.5],
    //                           dtype=torch.float64))
    const std::vector<double> x = {kNaN, -kInf, kInf, -100.0, 0.0, -1.0,
                                   30.0, -30.0, 80.0, -80.0,  0.5, -17.5};
    const std::vector<double> want = {kNaN,
                                      -kInf,
                                      0.0,
                                      -100.0,
                                      -0.6931471805599453,
                                      -1.3132616875182228,
                                      -9.357622968839737e-14,
                                      -30.000000000000092,
                                      -1.804851387845415e-35,
                                      -80.0,
                                      -0.4740769841801067,
                                      -17.50000002510999};
    for (DType t : {float32, float64}) {
      CAPTURE(dtype_name(t));
      check_floats(ops::log_sigmoid(make(t, x).to(d)), t, want);
    }
  });
  // "log_sigmoid_cpu" not implemented for 'Long'
  check_throws_named<InvalidArgument>([] { ops::log_sigmoid(make(int64, {1})); }, "log_sigmoid",
                                      {"int64"});
}

TEST_CASE("threshold: x <= threshold ? value : x in x's dtype, as PyTorch converts the scalars") {
  on_every_device([](const Device& d) {
    // F.threshold(torch.tensor([1., 2., nan, -inf, inf]), 1.5, -7.): NaN stays
    check_floats(ops::threshold(make(float32, {1.0, 2.0, kNaN, -kInf, kInf}).to(d), 1.5, -7.0),
                 float32, {-7.0, 2.0, kNaN, -7.0, kInf}, 0);
    // The threshold in the tensor's dtype: float32 0.1 <= float32(0.1) replaces.
    check_floats(ops::threshold(make(float32, {-1.0, 0.1f, 0.2f}).to(d), 0.1, 1e38), float32,
                 {1e38f, 1e38f, 0.2f}, 0);
    // bfloat16(0.999) is 1: F.threshold(bf16 [1, 2, nan, -inf, inf], 0.999, -7.) ->
    // [-7, 2, nan, -7, inf]; in float32, 1 > 0.9999 stays.
    check_floats(ops::threshold(make(bfloat16, {1.0, 2.0, kNaN, -kInf, kInf}).to(d), 0.999, -7.0),
                 bfloat16, {-7.0, 2.0, kNaN, -7.0, kInf}, 0);
    check_floats(ops::threshold(make(float32, {1.0, 0.5, 2.0}).to(d), 0.9999, -7.0), float32,
                 {1.0, -7.0, 2.0}, 0);
    // float16(0.9999) is 1 as well (PyTorch's CUDA kernel takes float16).
    check_floats(ops::threshold(make(float16, {1.0, 0.5, 2.0}).to(d), 0.9999, -7.0), float16,
                 {-7.0, -7.0, 2.0}, 0);
    // Integers: F.threshold(int32 [1, 2, 3, -5], 2.5, 7.9) -> [7, 7, 3, 7] (both truncate)
    check_ints(ops::threshold(make_ints(int32, {1, 2, 3, -5}).to(d), 2.5, 7.9), int32,
               {7, 7, 3, 7});
    // uint8 wraps -1 to 255: F.threshold(uint8 [1, 2, 3, 250], 2, -1) -> [255, 255, 3, 250];
    // a threshold of -1 is 255, so every element is replaced.
    check_ints(ops::threshold(make_ints(uint8, {1, 2, 3, 250}).to(d), 2, -1), uint8,
               {255, 255, 3, 250});
    check_ints(ops::threshold(make_ints(uint8, {1, 2, 3, 250}).to(d), -1, 5), uint8, {5, 5, 5, 5});
    check_ints(ops::threshold(make_ints(int8, {-128, 127, 0}).to(d), -128, 127), int8,
               {127, 127, 0});
  });
  // int64 beyond double's precision: F.threshold(torch.tensor([2**62, 5, -3]), 2**62 - 1,
  // -2**63) -> [2**62, -2**63, -2**63] (on the host: int64 needs shaderInt64 on Vulkan).
  constexpr std::int64_t k62 = std::int64_t(1) << 62;
  check_ints(ops::threshold(make_ints(int64, {k62, 5, -3}), k62 - 1, INT64_MIN), int64,
             {k62, INT64_MIN, INT64_MIN});
  // Values that do not fit the dtype, refused as PyTorch does ("value cannot be converted to
  // type int8_t without overflow"), and bool ("threshold_cpu" not implemented for 'Bool').
  const Tensor i8 = make_ints(int8, {1, 2});
  check_throws_named<InvalidArgument>([&] { ops::threshold(i8, 2, 200); }, "threshold",
                                      {"200", "int8", "overflow"});
  check_throws_named<InvalidArgument>([&] { ops::threshold(i8, 300, 7); }, "threshold",
                                      {"300", "int8"});
  check_throws_named<InvalidArgument>([&] { ops::threshold(i8, 2, NAN); }, "threshold",
                                      {"nan", "int8"});
  check_throws_named<InvalidArgument>([&] { ops::threshold(make_ints(uint8, {1}), 2, -1.0); },
                                      "threshold", {"uint8"});
  check_throws_named<InvalidArgument>([&] { ops::threshold(make(float32, {1}), 1.5, 1e39); },
                                      "threshold", {"float32", "overflow"});
  check_throws_named<InvalidArgument>([&] { ops::threshold(make(float16, {1}), 1e5, 0); },
                                      "threshold", {"float16"});
  check_throws_named<InvalidArgument>([&] { ops::threshold(make(bool_, {1}), 0, 1); }, "threshold",
                                      {"bool"});
  // float64 holds 1e39, and inf converts to any floating dtype.
  check_floats(ops::threshold(make(float64, {1.0, 2.0}), 1.5, 1e39), float64, {1e39, 2.0});
  check_floats(ops::threshold(make(float16, {1.0, 2.0}), 1.5, kInf), float16, {kInf, 2.0});
}

TEST_CASE("threshold_ writes in place and log_sigmoid_out into out, as PyTorch's forms") {
  on_every_device([](const Device& d) {
    // torch.threshold_(torch.tensor([1., 2., nan, -3.]), 1.5, -7.) -> [-7, 2, nan, -7], in place
    const Tensor x = make(float32, {1.0, 2.0, kNaN, -3.0}).to(d);
    const Tensor same = ops::threshold_(x, 1.5, -7.0);
    CHECK(same.storage() == x.storage());
    check_floats(x, float32, {-7.0, 2.0, kNaN, -7.0}, 0);
    // A transposed view is written through its strides: column 0 of [[1, 5], [3, 0.5]].
    const Tensor m = make(float32, {1.0, 5.0, 3.0, 0.5}).to(d).view({2, 2});
    ops::threshold_(m.transpose(0, 1), 2.0, 0.0);
    check_floats(m, float32, {0.0, 5.0, 3.0, 0.0}, 0);
    // F.logsigmoid(torch.tensor([0., -1.])) into a float32 out
    const Tensor out = Tensor::full({2}, 9.0, DType::kFloat32, d);
    ops::log_sigmoid_out(out, make(float32, {0.0, -1.0}).to(d));
    check_floats(out, float32, {-0.6931471805599453, -1.3132616875182228});
  });
  // threshold_ of an int8 tensor with a value int8 cannot hold: refused, the tensor untouched.
  const Tensor i = make_ints(int8, {1, 5});
  CHECK_THROWS_AS(ops::threshold_(i, 2, 200), InvalidArgument);
  check_ints(i, int8, {1, 5});
}

TEST_CASE("softmax_with_temperature is softmax(x / T), one launch") {
  on_every_device([](const Device& d) {
    const Tensor x = make(float32, {1.0, 2.0, 3.0, 0.0, -4.0, 4.0}, {2, 3}).to(d);
    // torch.softmax(x / 2, -1), torch.softmax(x / 0.25, 0) in float64
    check_floats(ops::softmax_with_temperature(x, -1, 2.0), float32,
                 {0.1863237232258476, 0.3071958857184984, 0.506480391055654, 0.11731042782619838,
                  0.015876239976466765, 0.8668133321973349},
                 2e-6);
    check_floats(ops::softmax_with_temperature(x, 0, 0.25), float32,
                 {0.9820137900379085, 0.9999999999622486, 0.017986209962091555,
                  0.017986209962091555, 3.775134544136581e-11, 0.9820137900379085},
                 2e-6);
  });
  const Tensor x = make(float32, {1.0, 2.0});
  for (double t : {0.0, -1.0, double(NAN), double(INFINITY)}) {
    CAPTURE(t);
    check_throws_named<InvalidArgument>([&] { ops::softmax_with_temperature(x, -1, t); },
                                        "softmax_with_temperature", {"temperature"});
  }
  // 1 / 1e-39 overflows float32, the rows' arithmetic; float64 rows take it.
  check_throws_named<InvalidArgument>([&] { ops::softmax_with_temperature(x, -1, 1e-39); },
                                      "softmax_with_temperature", {"float32"});
  check_floats(ops::softmax_with_temperature(make(float64, {1.0, 1.0}), -1, 1e-39), float64,
               {0.5, 0.5});
  check_throws_named<InvalidArgument>(
      [&] { ops::softmax_with_temperature(make_ints(int32, {1}), -1, 1.0); },
      "softmax_with_temperature", {"int32"});
}

TEST_CASE("explain: the gated products split the last dim; threshold and log_sigmoid as unary") {
  const Device host = host_device();
  const ops::PlanTarget target{host.capabilities(), host.str(), host.display_name()};
  const auto e = ops::explain("glu", {bfloat16}, {{4, 16}}, target);
  REQUIRE_FALSE(e.refused);
  CHECK(e.family == "elementwise");
  CHECK(e.output == "bfloat16 [4, 8]");
  CHECK(e.kernel.find("sigmoid_mul") != std::string::npos);
  bool float32_compute = false;
  for (const auto& c : e.choices)
    float32_compute |= c.what == "compute_dtype" && c.value == "float32";
  CHECK(float32_compute);
  CHECK(ops::explain("silu_and_mul", {float16}, {{3, 2, 10}}, target).output ==
        "float16 [3, 2, 5]");
  CHECK(ops::explain("gelu_tanh_and_mul", {float32}, {{6}}, target).kernel.find("gelu_tanh_mul") !=
        std::string::npos);
  const auto odd = ops::explain("glu", {float32}, {{4, 15}}, target);
  CHECK(odd.refused);
  CHECK(odd.refusal.find("must be even") != std::string::npos);
  CHECK(ops::explain("glu", {int32}, {{4, 16}}, target).refused);
  CHECK(ops::explain("threshold", {uint8}, {{8}}, target).output == "uint8 [8]");
  CHECK(ops::explain("threshold", {bool_}, {{8}}, target).refused);
  CHECK(ops::explain("log_sigmoid", {float16}, {{8}}, target).output == "float16 [8]");
  CHECK(ops::explain("softmax_with_temperature", {float32}, {{4, 7}}, target).output ==
        "float32 [4, 7]");
}
