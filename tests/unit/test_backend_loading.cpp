// A vendor module that is present but cannot serve (issue 15). meson runs this with
// NBX_BACKEND_PATH at a folder whose libnbx_backend_vulkan.so is not a shared object
// (tests/data/not_a_module), and at one whose module exports nbx_backend_create_v1 but not
// nbx_backend_destroy_v1 (stub_backend_module.cpp); NBX_TEST_EXPECT names the words the
// reason must hold. Either way vulkan:0 is Unavailable naming the module and what is wrong,
// the backend list says the same, and the host goes on.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "nbx/nbx.hpp"
#include "nbx_config.h"

TEST_CASE("a module that cannot load makes its backend unavailable by name; the host goes on") {
  const char* path = std::getenv("NBX_BACKEND_PATH");
  const char* expect = std::getenv("NBX_TEST_EXPECT");
  REQUIRE_MESSAGE((path && expect),
                  "run through meson: it sets NBX_BACKEND_PATH and NBX_TEST_EXPECT");
  if (!NBX_HAVE_VULKAN) return;  // not compiled in: the module is never looked for
  const std::string module = std::string(path) + "/libnbx_backend_vulkan.so";
  try {
    (void)nbx::open("vulkan:0");
    FAIL("vulkan:0 opened from " << module);
  } catch (const nbx::Unavailable& e) {
    const std::string m = e.what();
    CAPTURE(m);
    CHECK(e.backend() == "vulkan");
    CHECK(e.reason().find(expect) != std::string::npos);
    CHECK(m.find(module) != std::string::npos);
  }
  for (const nbx::BackendStatus& s : nbx::backend_statuses()) {
    if (s.name != "vulkan") continue;
    CHECK(s.backend == nullptr);
    CHECK(s.unavailable_reason.find(expect) != std::string::npos);
  }
  const nbx::Tensor h = nbx::Tensor::from_host(std::vector<float>{1, 2, 3}, {3});
  CHECK(nbx::ops::mul(h, h).to_host<float>() == std::vector<float>{1, 4, 9});
}
