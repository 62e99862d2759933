// The host run "as if" it had no bfloat16 (meson sets NBX_DEVICE_OVERLAY=no_bf16.yml):
// bfloat16 tensors are refused by name; other dtypes are unaffected.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "nbx/nbx.hpp"

using namespace nbx;

TEST_CASE("bfloat16 is refused by name when the device has no bf16") {
  CHECK(host_device().capabilities().bf16.value == Bf16Support::kNone);
  const Tensor x = Tensor::full({4}, 2.5, float32);
  try {
    (void)x.to(bfloat16);
    FAIL("expected Unsupported");
  } catch (const Unsupported& e) {
    CHECK(e.capability() == "bf16");
    CHECK(std::string(e.what()).find("bfloat16") != std::string::npos);
  }
  CHECK_THROWS_AS(Tensor::empty({2}, bfloat16), Unsupported);  // no bfloat16 storage at all
  CHECK((x + x.to(float16)).to_host<float>()[0] == 5.0f);
}
