// The one explicit list of backends. Host is linked in; vendor backends are dlopen'd.
#include "core/registry.hpp"

#include <dlfcn.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <sstream>

#include "backends/host/host_backend.hpp"
#include "core/errors.hpp"
#include "nbx_config.h"

namespace nbx {
namespace {

struct VendorBackend {
  const char* name;
  bool compiled_in;
};

// The explicit list. Order is the order `nbx devices` prints.
constexpr VendorBackend kVendorBackends[] = {
    {"cuda", NBX_HAVE_CUDA != 0},
    {"hip", NBX_HAVE_HIP != 0},
    {"vulkan", NBX_HAVE_VULKAN != 0},
};

std::filesystem::path libnbx_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&libnbx_dir), &info) && info.dli_fname)
    return std::filesystem::path(info.dli_fname).parent_path();
  return {};
}

std::vector<std::filesystem::path> module_candidates(const std::string& name) {
  const std::string file = "libnbx_backend_" + name + ".so";
  std::vector<std::filesystem::path> out;
  if (const char* env = std::getenv("NBX_BACKEND_PATH")) {
    std::stringstream ss(env);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty()) out.push_back(std::filesystem::path(dir) / file);
  }
  const auto here = libnbx_dir();
  out.push_back(here / file);
  out.push_back(here / "backends" / name / file);
  out.push_back(here / NBX_MODULE_SUBDIR / file);  // installed: <libdir>/nbxtensor/
  return out;
}

// Loads a vendor module; on failure returns nullptr and says why in `reason`. The handle
// is never closed: backends live for the whole process.
Backend* load_vendor_backend(const std::string& name, std::string& reason) {
  std::string errors;
  for (const auto& path : module_candidates(name)) {
    if (!std::filesystem::exists(path)) continue;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      // The module is there but its vendor runtime is not (e.g. libamdhip64.so missing).
      const char* err = dlerror();
      reason = "its module could not be loaded (" + std::string(err ? err : "unknown") + ")";
      return nullptr;
    }
    auto create = reinterpret_cast<BackendCreateFn>(dlsym(handle, kBackendEntryPoint));
    if (!create) {
      reason = "module " + path.string() + " has no " + kBackendEntryPoint;
      return nullptr;
    }
    try {
      return create();
    } catch (const Error& e) {
      reason = e.what();
      return nullptr;
    }
  }
  reason = "its module libnbx_backend_" + name +
           ".so was not found (searched NBX_BACKEND_PATH and " + libnbx_dir().string() + ")";
  return nullptr;
}

// The backends' slots: host first, then the vendors in kVendorBackends' order. Each loads at
// its first use (host_device() loads no vendor module, cuda:0 no Vulkan loader), once. The
// slots are never destroyed: devices — never closed either (device.cpp) — hold their
// backends' instances to the end of the process, and the backends stay reachable for leak
// checkers instead of being lost with a static vector at exit.
struct Slot {
  std::once_flag once;
  BackendStatus status;
};
constexpr std::size_t kSlots = 1 + std::size(kVendorBackends);
std::string_view slot_name(std::size_t i) {
  return i == 0 ? "host" : kVendorBackends[i - 1].name;
}

Slot& loaded_slot(std::size_t i) {
  static auto* slots = new std::array<Slot, kSlots>();
  Slot& s = (*slots)[i];
  std::call_once(s.once, [&] {
    if (i == 0) {
      static auto* host_backend = new host::HostBackend();
      s.status = {"host", true, host_backend, ""};
      return;
    }
    const VendorBackend& v = kVendorBackends[i - 1];
    s.status = {v.name, v.compiled_in, nullptr, ""};
    if (!v.compiled_in)
      s.status.unavailable_reason =
          "not compiled in (configure with -D" + s.status.name + "=enabled)";
    else
      s.status.backend = load_vendor_backend(s.status.name, s.status.unavailable_reason);
  });
  return s;
}

}  // namespace

const std::vector<BackendStatus>& backend_statuses() {
  static const std::vector<BackendStatus> statuses = [] {
    std::vector<BackendStatus> out;
    for (std::size_t i = 0; i < kSlots; ++i) out.push_back(loaded_slot(i).status);
    return out;
  }();
  return statuses;
}

Backend& backend_by_name(std::string_view name) {
  for (std::size_t i = 0; i < kSlots; ++i) {
    if (slot_name(i) != name) continue;
    const BackendStatus& s = loaded_slot(i).status;
    if (!s.backend)
      throw Unavailable(s.name, s.unavailable_reason,
                        "The " + s.name + " backend is unavailable: " + s.unavailable_reason + ".");
    return *s.backend;
  }
  throw InvalidArgument("backend", "'" + std::string(name) +
                                       "' is not a backend (expected host, cuda, hip or vulkan).");
}

}  // namespace nbx
