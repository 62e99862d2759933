// main() of the CUDA/HIP tests: exits 77 (meson: SKIP) when the backend under test
// ($NBX_TEST_GPU_BACKEND) is not built, cannot load, or has no device — the case on every
// machine without that GPU, CI included — and runs the doctest cases otherwise.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "tests/gpu/gpu_test_support.hpp"

int main(int argc, char** argv) {
  const std::string name = nbx::gputest::backend_under_test();
  try {
    const nbx::DeviceListing listing = nbx::backend_by_name(name).list_devices();
    if (listing.devices.empty()) {
      std::cout << name << ": no device (" << listing.unavailable_reason << "); skipped.\n";
      return 77;
    }
    std::cout << "testing " << name << ":0 (" << listing.devices[0].name << ")\n";
  } catch (const nbx::Unavailable& e) {
    std::cout << e.what() << " Skipped.\n";
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
