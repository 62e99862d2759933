// The one explicit list of backends (registry.cpp). The host backend is linked into
// libnbx; vendor backends are shared modules loaded with dlopen on first use, so a machine
// without a vendor runtime (no libcuda, no libamdhip64, no Vulkan loader) gets that backend
// "unavailable, because …" instead of a program that does not start.
//
// A vendor module `libnbx_backend_<name>.so` exports
//     extern "C" nbx::Backend* nbx_backend_create_v1();
// returning a heap-allocated Backend (owned by the registry), or throwing nbx::Unavailable, and
//     extern "C" void nbx_backend_destroy_v1(nbx::Backend*);
// which the registry calls at exit. A module lacking either is unavailable. Module handles are
// never closed. A BackendDevice must not use its Backend after open() returns: devices the
// program still holds at exit outlive the backends.
// Modules are searched in $NBX_BACKEND_PATH (':'-separated), then beside libnbx.so, in its
// `backends/<name>/` subfolder (the build tree's layout) and in its `nbxtensor/` subfolder
// (the installed layout, <libdir>/nbxtensor/).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"

namespace nbx {

// The entry point name every vendor module exports.
inline constexpr const char* kBackendEntryPoint = "nbx_backend_create_v1";
inline constexpr const char* kBackendDestroyEntryPoint = "nbx_backend_destroy_v1";
using BackendCreateFn = Backend* (*)();
using BackendDestroyFn = void (*)(Backend*);

struct BackendStatus {
  std::string name;            // "host", "cuda", "hip", "vulkan"
  bool compiled_in = false;    // built into this library
  Backend* backend = nullptr;  // null when unavailable
  std::string unavailable_reason;
};

// Every backend this build knows, compiled in or not, in a fixed order: host, cuda, hip,
// vulkan (loading each that is not yet loaded). Each backend loads once per process, at its
// first use — backend_by_name loads only the one it names; thread-safe.
const std::vector<BackendStatus>& backend_statuses();

// The loaded backend of that name. Throws Unavailable with the reason when it is not
// compiled in or could not be loaded; InvalidArgument for an unknown name.
Backend& backend_by_name(std::string_view name);

// Destroys every loaded backend (vendors through their modules' destroy entry point, in
// reverse list order, then the host). An exit handler: registered when a vendor module loads
// and by device.cpp after each device opens, so that it runs before the exit handlers the
// vendor runtimes registered while loading (they stop a driver's threads). Runs once; after
// it backend_by_name throws Unavailable ("the process is exiting").
void release_backends_at_exit();

}  // namespace nbx
