// The Vulkan tests' main: exits 77 (meson SKIP) when this machine has no Vulkan loader,
// driver or device, otherwise runs the doctest cases. Run with NBX_VULKAN_VALIDATION=1
// (tests/vulkan/meson.build does): any validation-layer warning or error then makes the
// next synchronize() throw, which fails the case that caused it.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "core/errors.hpp"
#include "core/registry.hpp"

int main(int argc, char** argv) {
  try {
    nbx::DeviceListing listing = nbx::backend_by_name("vulkan").list_devices();
    if (listing.devices.empty()) {
      std::printf("SKIP: vulkan: %s\n", listing.unavailable_reason.c_str());
      return 77;
    }
    std::printf("vulkan:0 is %s (%s)\n", listing.devices[0].name.c_str(),
                listing.devices[0].driver.c_str());
  } catch (const nbx::Unavailable& e) {
    std::printf("SKIP: %s\n", e.what());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
