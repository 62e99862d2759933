// The host run "as if" it had no fp64 (meson sets NBX_DEVICE_OVERLAY=no_fp64.yml): integer
// true division widens through float32 below 2^24 and is refused by name above; float64
// tensors are refused. The fp64 branch (widening through float64) runs in the other tests.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "nbx/nbx.hpp"

using namespace nbx;

TEST_CASE("the overlay is in force") {
  const Capabilities& caps = host_device().capabilities();
  CHECK_FALSE(caps.fp64.value);
  CHECK(caps.fp64.source.find("no_fp64.yml") != std::string::npos);
  CHECK(host_device().display_name().find("overlay") != std::string::npos);
}

TEST_CASE("integer division below 2^24 widens through float32 and is exact") {
  const Tensor a = Tensor::from_host(std::vector<std::int32_t>{16777215, -7, 9}, {3});
  const Tensor b = Tensor::from_host(std::vector<std::int32_t>{1, 2, -4}, {3});
  const Tensor q = ops::div(a, b);
  CHECK(q.dtype() == float32);
  CHECK(q.to_host<float>() == std::vector<float>{16777215.0f, -3.5f, -2.25f});
}

TEST_CASE("integer division at or above 2^24 is refused by name") {
  const Tensor a = Tensor::from_host(std::vector<std::int32_t>{3, 16777217}, {2});
  const Tensor b = Tensor::from_host(std::vector<std::int32_t>{2, 3}, {2});
  try {
    (void)ops::div(a, b);
    FAIL("expected Unsupported");
  } catch (const Unsupported& e) {
    CHECK(e.op() == "div");
    CHECK(e.capability() == "fp64");
    CHECK(e.device() == "host");
    const std::string m = e.what();
    CHECK(m.find("16777217") != std::string::npos);
    CHECK(m.find("2^24") != std::string::npos);
  }
  // A scalar divisor counts too.
  CHECK_THROWS_AS(ops::div(Tensor::from_host(std::vector<std::int32_t>{1}, {1}), 1 << 25),
                  Unsupported);
  // Floats are untouched by the rule.
  CHECK(ops::div(Tensor::full({2}, 3e9, float32), 2.0).to_host<float>()[0] == 1.5e9f);
}

TEST_CASE("float64 tensors are refused by name, not computed in float32") {
  const Tensor h = Tensor::full({2}, 1.5, float32);
  try {
    (void)h.to(float64);
    FAIL("expected Unsupported");
  } catch (const Unsupported& e) {
    CHECK(e.capability() == "fp64");
  }
  CHECK_THROWS_AS(ops::sum(Tensor::full({2}, 1, float32), {}, false, float64), Unsupported);
}
