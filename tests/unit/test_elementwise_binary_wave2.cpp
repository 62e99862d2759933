// Issue 11's binary ops against PyTorch-computed values on every present device (host,
// vulkan:0 where it opens): fmod, hypot, copysign, logaddexp(2), xlogy, nextafter,
// float_power, isclose/allclose and clamp_min/clamp_max, with their result dtypes,
// broadcasting, scalar operands and refusals by name. The constants come from
// /usr/bin/python3 (torch 1.13), each with the torch call that gave it; nextafter of float16
// follows PyTorch 2.x (1.13 has no float16 kernel).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/ops/elementwise.hpp"
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

// The float32 value nearest v, as torch.tensor([v]) holds it.
double f32(double v) {
  return static_cast<float>(v);
}

// Runs `body` once per present device, with a function that moves host tensors there.
void on_every_device(const std::function<void(const std::function<Tensor(Tensor)>&)>& body) {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    body([&d](Tensor t) { return t.to(d); });
  }
}

template <class E>
void check_throws_named(const std::function<void()>& call, const char* op, const char* words) {
  try {
    call();
    FAIL("expected a refusal");
  } catch (const E& e) {
    CHECK(e.op() == op);
    CAPTURE(e.what());
    CHECK(std::string(e.what()).find(words) != std::string::npos);
  }
}
}  // namespace

TEST_CASE("fmod keeps the dividend's sign; integer zero divisors fault as remainder's do") {
  on_every_device([](const auto& on) {
    // torch.fmod(torch.tensor([5.5,-5.5,5.5,-5.5,7.0,-0.0,1.0,inf,2.0]),
    //            torch.tensor([2.,2.,-2.,-2.,0.,3.,inf,2.,nan]))
    const Tensor a = on(make(float32, {5.5, -5.5, 5.5, -5.5, 7.0, -0.0, 1.0, kInf, 2.0}));
    const Tensor b = on(make(float32, {2.0, 2.0, -2.0, -2.0, 0.0, 3.0, kInf, 2.0, kNaN}));
    check_floats(ops::fmod(a, b), float32, {1.5, -1.5, 1.5, -1.5, kNaN, -0.0, 1.0, kNaN, kNaN}, 0);
    // torch.fmod(torch.tensor([-7,7,-7,7,-128], dtype=torch.int8), torch.tensor([3,-3,-3,3,-1]))
    check_ints(ops::fmod(on(make(int8, {-7, 7, -7, 7, -128})), on(make(int8, {3, -3, -3, 3, -1}))),
               int8, {-1, 1, -1, 1, 0});
    // A float scalar promotes an integer tensor: torch.fmod(int32 [-7, 7], 2.5) -> float32.
    check_floats(ops::fmod(on(make(int32, {-7, 7})), 2.5), float32, {-2.0, 2.0}, 0);
    check_throws_named<InvalidArgument>(
        [&] { ops::fmod(on(make(bool_, {1})), on(make(bool_, {1}))); }, "fmod", "bool");
    try {
      const Tensor q = ops::fmod(on(make(int32, {4, 5, 6})), on(make(int32, {2, 0, 3})));
      (void)q.to(host_device());
      FAIL("expected DeviceFault");
    } catch (const DeviceFault& e) {
      CHECK(e.op() == "fmod");
      CHECK(std::string(e.what()).find("division by zero") != std::string::npos);
    }
  });
}

TEST_CASE("hypot neither overflows nor underflows, and hypot(inf, NaN) is inf") {
  on_every_device([](const auto& on) {
    // torch.hypot(torch.tensor([3.,2.**100,3e38,1e-30,inf,nan,-5.,0.]),
    //             torch.tensor([4.,2.**100,3e38,1e-30,nan,-inf,12.,-0.]))
    const double big = std::ldexp(1.0, 100);
    const Tensor a = on(make(float32, {3.0, big, f32(3e38), f32(1e-30), kInf, kNaN, -5.0, 0.0}));
    const Tensor b = on(make(float32, {4.0, big, f32(3e38), f32(1e-30), kNaN, -kInf, 12.0, -0.0}));
    check_floats(ops::hypot(a, b), float32,
                 {5.0, 1.792728640511912e+30, kInf, 1.4142135555081815e-30, kInf, kInf, 13.0, 0.0});
    // torch.hypot(torch.tensor([3e307, 1e-300], dtype=torch.float64), ... [4e307, 1e-300])
    check_floats(ops::hypot(on(make(float64, {3e307, 1e-300})), on(make(float64, {4e307, 1e-300}))),
                 float64, {5e307, 1.414213562373095e-300});
    check_throws_named<InvalidArgument>(
        [&] { ops::hypot(on(make(int32, {3})), on(make(int32, {4}))); }, "hypot", "int32");
  });
}

TEST_CASE("copysign takes the sign bit of -0 and returns a float for integers") {
  on_every_device([](const auto& on) {
    // torch.copysign(torch.tensor([1.5,-2.,0.,3.,inf]), torch.tensor([-0.,0.,-1.,nan,-2.]))
    check_floats(ops::copysign(on(make(float32, {1.5, -2.0, 0.0, 3.0, kInf})),
                               on(make(float32, {-0.0, 0.0, -1.0, kNaN, -2.0}))),
                 float32, {-1.5, 2.0, -0.0, 3.0, -kInf}, 0);
    // torch.copysign(torch.tensor([1, 2], dtype=torch.int32), -1) -> float32 [-1., -2.]
    check_floats(ops::copysign(on(make(int32, {1, 2})), -1), float32, {-1.0, -2.0}, 0);
    // torch.copysign(torch.tensor([1.], dtype=torch.float16), torch.tensor([-0.], float64))
    const Tensor wide = ops::copysign(on(make(float16, {1.0})), on(make(float64, {-0.0})));
    check_floats(wide, float64, {-1.0}, 0);
  });
}

TEST_CASE("logaddexp and logaddexp2: stable forms, equal infinities, NaN") {
  on_every_device([](const auto& on) {
    // torch.logaddexp(torch.tensor([1.,inf,-inf,inf,-1000.,3e38,nan,0.5]),
    //                 torch.tensor([2.,inf,-inf,-inf,-1000.,3e38,1.,-20.]))
    const Tensor a = on(make(float32, {1.0, kInf, -kInf, kInf, -1000.0, f32(3e38), kNaN, 0.5}));
    const Tensor b = on(make(float32, {2.0, kInf, -kInf, -kInf, -1000.0, f32(3e38), 1.0, -20.0}));
    check_floats(ops::logaddexp(a, b), float32,
                 {2.3132617473602295, kInf, -kInf, kInf, -999.3068237304688, 3.0000000054977558e+38,
                  kNaN, 0.5});
    // torch.logaddexp2(torch.tensor([1.,inf,-inf,-1000.,10.]),
    // torch.tensor([2.,inf,-inf,-1000.,-30.]))
    check_floats(ops::logaddexp2(on(make(float32, {1.0, kInf, -kInf, -1000.0, 10.0})),
                                 on(make(float32, {2.0, kInf, -kInf, -1000.0, -30.0}))),
                 float32, {2.5849623680114746, kInf, -kInf, -999.0, 10.0});
    // torch.logaddexp(torch.tensor([1., -800.], dtype=torch.float64), ... [2., -801.])
    if (on(make(float32, {0})).device().capabilities().fp64.value)
      check_floats(
          ops::logaddexp(on(make(float64, {1.0, -800.0})), on(make(float64, {2.0, -801.0}))),
          float64, {2.313261687518223, -799.6867383124818});
    check_throws_named<InvalidArgument>(
        [&] { ops::logaddexp2(on(make(int64, {1})), on(make(int64, {2}))); }, "logaddexp2",
        "int64");
  });
}

TEST_CASE("xlogy: 0 where x == 0 unless y is NaN; integers become float32") {
  on_every_device([](const auto& on) {
    // torch.xlogy(torch.tensor([0.,0.,0.,0.,2.,-3.,nan,1.,2.]),
    //             torch.tensor([nan,0.,inf,-1.,3.,0.,1.,nan,-1.]))
    check_floats(ops::xlogy(on(make(float32, {0.0, 0.0, 0.0, 0.0, 2.0, -3.0, kNaN, 1.0, 2.0})),
                            on(make(float32, {kNaN, 0.0, kInf, -1.0, 3.0, 0.0, 1.0, kNaN, -1.0}))),
                 float32, {kNaN, 0.0, 0.0, 0.0, 2.1972246170043945, kInf, kNaN, kNaN, kNaN});
    // torch.xlogy(torch.tensor([0, 2, 3]), torch.tensor([0, 5, -1])) -> float32
    check_floats(ops::xlogy(on(make(int64, {0, 2, 3})), on(make(int64, {0, 5, -1}))), float32,
                 {0.0, 3.2188758850097656, kNaN});
    // Scalars on either side: torch.xlogy(2, torch.tensor([3.])), torch.xlogy(torch.tensor([2.]),
    // 3)
    check_floats(ops::xlogy(2, on(make(float32, {3.0}))), float32, {2.1972246170043945});
    check_floats(ops::xlogy(on(make(float32, {2.0})), 3), float32, {2.1972246170043945});
  });
}

TEST_CASE("nextafter steps one ulp of the result dtype, bit-exact, 16-bit dtypes included") {
  const std::vector<double> x{1.0, 1.0, 0.0, -0.0, 0.0, kInf, 2.0, -1.0};
  const std::vector<double> y{2.0, 0.0, 1.0, -1.0, -0.0, 0.0, 2.0, -2.0};
  on_every_device([&](const auto& on) {
    // torch.nextafter(torch.tensor(x, dtype=D), torch.tensor(y, dtype=D)) for each D
    check_floats(ops::nextafter(on(make(float32, x)), on(make(float32, y))), float32,
                 {1.0000001192092896, 0.9999999403953552, 1.401298464324817e-45,
                  -1.401298464324817e-45, -0.0, 3.4028234663852886e+38, 2.0, -1.0000001192092896},
                 0);
    check_floats(ops::nextafter(on(make(bfloat16, x)), on(make(bfloat16, y))), bfloat16,
                 {1.0078125, 0.99609375, 9.183549615799121e-41, -9.183549615799121e-41, -0.0,
                  3.3895313892515355e+38, 2.0, -1.0078125},
                 0);
    // PyTorch 2.x (float16 has a kernel there): 1 + 2^-10, 1 - 2^-11, 2^-24, 65504 …
    check_floats(ops::nextafter(on(make(float16, x)), on(make(float16, y))), float16,
                 {1.0009765625, 0.99951171875, 5.960464477539063e-08, -5.960464477539063e-08, -0.0,
                  65504.0, 2.0, -1.0009765625},
                 0);
    if (on(make(float32, {0})).device().capabilities().fp64.value)
      check_floats(ops::nextafter(on(make(float64, x)), on(make(float64, y))), float64,
                   {1.0000000000000002, 0.9999999999999999, 5e-324, -5e-324, -0.0,
                    1.7976931348623157e+308, 2.0, -1.0000000000000002},
                   0);
    // Broadcast: a [2, 1] against a [3].
    const Tensor b =
        ops::nextafter(on(make(float32, {1.0, -1.0}, {2, 1})), on(make(float32, {2.0, 0.0, 1.0})));
    CHECK(b.shape() == Shape{2, 3});
    check_floats(b, float32,
                 {1.0000001192092896, 0.9999999403953552, 1.0, -0.9999999403953552,
                  -0.9999999403953552, -0.9999999403953552},
                 0);
    check_throws_named<InvalidArgument>(
        [&] { ops::nextafter(on(make(int32, {1})), on(make(int32, {2}))); }, "nextafter", "int32");
  });
}

TEST_CASE("float_power computes and returns float64") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const auto on = [&d](Tensor t) { return t.to(d); };
    if (!d.capabilities().fp64.value) {
      check_throws_named<Unsupported>([&] { ops::float_power(on(make(int32, {2})), 3); },
                                      "float_power", "fp64");
      continue;
    }
    // torch.float_power(torch.tensor([2,-3,0], dtype=torch.int32), torch.tensor([-1,3,-2]))
    check_floats(ops::float_power(on(make(int32, {2, -3, 0})), on(make(int32, {-1, 3, -2}))),
                 float64, {0.5, -27.0, kInf});
    // torch.float_power(torch.tensor([1.5]), 2.5); (float16 [1.1], bfloat16 [3.]) mixed
    check_floats(ops::float_power(on(make(float32, {1.5})), 2.5), float64, {2.7556759606310752});
    check_floats(ops::float_power(on(make(float16, {1.099609375})), on(make(bfloat16, {3.0}))),
                 float64, {1.3295825347304344});
    // torch.float_power(torch.tensor([True, False]), 2) -> float64 [1., 0.]
    check_floats(ops::float_power(on(make(bool_, {1, 0})), 2), float64, {1.0, 0.0});
  }
}

TEST_CASE("isclose: PyTorch's results for infinities, NaN, integers and 16-bit floats") {
  on_every_device([](const auto& on) {
    const Tensor a = on(make(float32, {1.0, kNaN, kInf, kInf, -kInf, 1.0, 100.0, 0.0, f32(1e-9)}));
    const Tensor b = on(make(float32, {f32(1.00001), kNaN, kInf, f32(1e38), kInf, f32(1.0001),
                                       f32(100.001), f32(1e-8), 0.0}));
    // torch.isclose(A, B), equal_nan=True, rtol=atol=0, rtol=atol=1e-3
    check_bools(ops::isclose(a, b), {0, 0, 1, 0, 0, 0, 1, 1, 1});
    check_bools(ops::isclose(a, b, 1e-5, 1e-8, true), {0, 1, 1, 0, 0, 0, 1, 1, 1});
    check_bools(ops::isclose(a, b, 0, 0), {0, 0, 1, 0, 0, 0, 0, 0, 0});
    check_bools(ops::isclose(a, b, 1e-3, 1e-3), {1, 0, 1, 0, 0, 1, 1, 1, 1});
    // Integers go through float32 (16777216 and 16777217 meet there) except with zero
    // tolerances: torch.isclose(int32 I, J, rtol=0, atol=0 / atol=2 / rtol=0.1)
    const Tensor i = on(make(int32, {16777216, 3, 100, -100}));
    const Tensor j = on(make(int32, {16777217, 5, 90, 100}));
    check_bools(ops::isclose(i, j, 0, 0), {0, 0, 0, 0});
    check_bools(ops::isclose(i, j, 0, 2), {1, 1, 0, 0});
    check_bools(ops::isclose(i, j, 0.1, 0), {1, 0, 0, 0});
    // uint8 differences are not wrapped: torch.isclose(uint8 [3,250,0], [5,255,1], 0, 2)
    check_bools(ops::isclose(on(make(uint8, {3, 250, 0})), on(make(uint8, {5, 255, 1})), 0, 2),
                {1, 0, 1});
    check_bools(ops::isclose(on(make(bool_, {1, 0, 1})), on(make(bool_, {1, 1, 0})), 0, 1),
                {1, 1, 1});
    // float16 rounds each step: 60000 - (-60000) overflows to inf, so not close even with
    // rtol 3; atol 1e-3 becomes 0.0010004: torch.isclose(f16 H, G, ...)
    const Tensor h = on(make(float16, {1.0, 60000.0, 1.0}));
    const Tensor g = on(make(float16, {1.0009765625, -60000.0, 1.0029296875}));
    check_bools(ops::isclose(h, g, 0, 1e-3), {1, 0, 0});
    check_bools(ops::isclose(h, g, 3, 0), {1, 0, 1});
    check_bools(ops::isclose(h, g, 0.002, 0.001), {1, 0, 1});
    // Broadcasting: [2, 1] against [3].
    const Tensor c = ops::isclose(on(make(float32, {1.0, 2.0}, {2, 1})),
                                  on(make(float32, {1.0, 2.0, 1.5})), 0, 0.5);
    CHECK(c.shape() == Shape{2, 3});
    check_bools(c, {1, 0, 1, 0, 1, 1});
    check_throws_named<InvalidArgument>([&] { ops::isclose(a, on(make(float64, {1.0}))); },
                                        "isclose", "float64");
    check_throws_named<InvalidArgument>([&] { ops::isclose(a, b, -1.0); }, "isclose", "rtol");
    check_throws_named<InvalidArgument>([&] { ops::isclose(a, b, 0.0, -1e-3); }, "isclose", "atol");
  });
}

TEST_CASE("allclose reduces isclose on the device") {
  on_every_device([](const auto& on) {
    const Tensor a = on(make(float32, {1.0, kNaN, kInf}));
    const Tensor b = on(make(float32, {f32(1.000001), kNaN, kInf}));
    // torch.allclose(a, b) False (NaN), with equal_nan=True True; a [2] slice of other values
    CHECK_FALSE(ops::allclose(a, b));
    CHECK(ops::allclose(a, b, 1e-5, 1e-8, true));
    CHECK_FALSE(ops::allclose(on(make(float32, {1.0, 2.0})), on(make(float32, {1.0, f32(2.1)}))));
    CHECK(ops::allclose(on(make(float32, {1.0, 2.0})), on(make(float32, {1.0, f32(2.1)})), 0.1));
  });
}

TEST_CASE("clamp_min and clamp_max: tensor or scalar bounds, clamp's NaN and dtype rules") {
  on_every_device([](const auto& on) {
    // torch.clamp_min(torch.tensor([1.,nan,-3.]), torch.tensor([0.,0.,nan])) -> [1, nan, nan]
    check_floats(
        ops::clamp_min(on(make(float32, {1.0, kNaN, -3.0})), on(make(float32, {0.0, 0.0, kNaN}))),
        float32, {1.0, kNaN, kNaN}, 0);
    // torch.clamp_min(torch.tensor([1,5,-3], dtype=torch.int32), 2.5) -> float32 [2.5, 5, 2.5]
    check_floats(ops::clamp_min(on(make(int32, {1, 5, -3})), 2.5), float32, {2.5, 5.0, 2.5}, 0);
    // torch.clamp_max(torch.tensor([[1.,4.],[7.,-2.]]), torch.tensor([3.,0.])): broadcast rows
    check_floats(ops::clamp_max(on(make(float32, {1.0, 4.0, 7.0, -2.0}, {2, 2})),
                                on(make(float32, {3.0, 0.0}))),
                 float32, {1.0, 0.0, 3.0, -2.0}, 0);
    // torch.clamp_max(int8 [1, 100], 50) stays int8; torch.clamp_min(x, nan) is all NaN
    check_ints(ops::clamp_max(on(make(int8, {1, 100})), 50), int8, {1, 50});
    check_floats(ops::clamp_min(on(make(float32, {1.0, 2.0})), kNaN), float32, {kNaN, kNaN}, 0);
    // torch.clamp_min(bool, True) has no bool kernel; bool with 2 promotes to int64 [2, 2];
    // with a bool tensor bound it is maximum and stays bool.
    check_throws_named<InvalidArgument>(
        [&] {
          ops::clamp_min(on(make(bool_, {1, 0})), true);
        },
        "clamp_min", "bool");
    check_ints(ops::clamp_min(on(make(bool_, {1, 0})), 2), int64, {2, 2});
    check_bools(ops::clamp_min(on(make(bool_, {1, 0})), on(make(bool_, {0, 1}))), {1, 1});
  });
}

TEST_CASE("overlay: float_power without fp64 is refused by name, never computed in float32") {
  // Under tests/data/overlays/no_fp64.yml (meson's overlay run) the host has no fp64; in the
  // plain run it has, and float64 comes back.
  const Device host = host_device();
  const Tensor x = make(int32, {2, 3});
  if (host.capabilities().fp64.value) {
    check_floats(ops::float_power(x, 2), float64, {4.0, 9.0});
    return;
  }
  check_throws_named<Unsupported>([&] { ops::float_power(x, 2); }, "float_power", "fp64");
  try {
    ops::float_power(make(float32, {1.5}), make(float32, {2.0}));
    FAIL("expected Unsupported");
  } catch (const Unsupported& e) {
    CHECK(e.capability() == "fp64");
  }
}
