// The backend registry (core/registry.cpp) loads each backend at its first use: a program on
// the host maps no vendor module (issue 15: host_device() loaded the Vulkan backend, and with it
// the Vulkan loader and driver), one that lists the backends loads every compiled-in one.
// One test case a process: what is mapped depends on what ran before.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "core/device.hpp"
#include "core/registry.hpp"
#include "core/tensor.hpp"
#include "nbx_config.h"

namespace {

// Whether this process has mapped a vendor backend module (libnbx_backend_<name>.so).
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  const std::string file = "libnbx_backend_" + name + ".so";
  for (std::string line; std::getline(maps, line);)
    if (line.find(file) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("the host loads no vendor backend; listing the backends loads the rest") {
  const nbx::Tensor t = nbx::Tensor::ones({4}, nbx::float32, nbx::host_device());
  CHECK(t.to_host<float>() == std::vector<float>(4, 1.0f));
  CHECK_FALSE(mapped("vulkan"));
  CHECK_FALSE(mapped("cuda"));
  CHECK_FALSE(mapped("hip"));
  const auto& statuses = nbx::backend_statuses();
  REQUIRE(statuses.size() == 4);
  CHECK(statuses[0].name == "host");
  for (const nbx::BackendStatus& s : statuses)
    if (s.name != "host" && s.backend != nullptr) CHECK(mapped(s.name));
  // A second listing is the same one, and naming a backend finds the loaded one.
  CHECK(&nbx::backend_statuses() == &statuses);
  CHECK(&nbx::backend_by_name("host") == statuses[0].backend);
}
