// A lost Vulkan device (issue 15), simulated: meson runs this with NBX_TEST_VK_DEVICE_LOST=3,
// so the third queue submit of vulkan:0 reports VK_ERROR_DEVICE_LOST as a driver would. The
// loss surfaces as nbx::DeviceLost naming the device and the call, every later use of that
// device fails the same way (no hang, no other error), the host goes on, and the process
// closes the lost device at exit.
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "nbx/nbx.hpp"
#include "vk_test_util.hpp"

namespace nbx::vktest {
namespace {

TEST_CASE(
    "a lost device: DeviceLost naming it and the call, for every later use; the host goes on") {
  REQUIRE_MESSAGE(std::getenv("NBX_TEST_VK_DEVICE_LOST"), "run through meson: it sets the hook");
  const Device gpu = nbx::open("vulkan:0");
  const Tensor x = Tensor::from_host(std::vector<float>{1, 2, 3, 4}, {4}, gpu);
  // Each synchronize submits one batch; the third is the lost one.
  std::optional<DeviceLost> lost;
  int synchronized = 0;
  for (int i = 0; i < 5 && !lost; ++i) {
    try {
      (void)ops::add(x, x);
      gpu.synchronize();
      ++synchronized;
    } catch (const DeviceLost& e) {
      lost = e;
    }
  }
  REQUIRE(lost.has_value());
  CHECK(synchronized == 2);
  CHECK(lost->device() == "vulkan:0");
  const std::string m = lost->what();
  CAPTURE(m);
  CHECK(m.find("vkQueueSubmit on vulkan:0") == 0);
  CHECK(m.find("VK_ERROR_DEVICE_LOST") != std::string::npos);

  // Every later use of the device: a launch, a synchronize, a read back, a copy to it.
  CHECK_THROWS_AS(ops::mul(x, x), DeviceLost);
  CHECK_THROWS_AS(gpu.synchronize(), DeviceLost);
  CHECK_THROWS_AS(x.to_host<float>(), DeviceLost);
  CHECK_THROWS_AS(Tensor::from_host(std::vector<float>{5, 6}, {2}, gpu), DeviceLost);

  // The host is another device: it goes on.
  const Tensor h = Tensor::from_host(std::vector<float>{1, 2, 3, 4}, {4});
  CHECK(ops::add(h, h).to_host<float>() == std::vector<float>{2, 4, 6, 8});
}

}  // namespace
}  // namespace nbx::vktest
