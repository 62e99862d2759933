// A vendor module of the old contract: it exports nbx_backend_create_v1 but no
// nbx_backend_destroy_v1, so the registry must refuse it by name (test_backend_loading.cpp)
// rather than own a backend it cannot destroy. Its create is never called.
#include "core/backend.hpp"

extern "C" __attribute__((visibility("default"))) nbx::Backend* nbx_backend_create_v1() {
  return nullptr;
}
