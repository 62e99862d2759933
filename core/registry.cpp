// The one explicit list of backends. Host is linked in; vendor backends are dlopen'd.
#include "core/registry.hpp"

#include <dlfcn.h>

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
  out.push_back(here / "nbx" / file);  // an installed layout: <libdir>/nbx/
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

std::vector<BackendStatus> load_all() {
  std::vector<BackendStatus> out;
  static host::HostBackend host_backend;
  out.push_back({"host", true, &host_backend, ""});
  for (const VendorBackend& v : kVendorBackends) {
    BackendStatus s{v.name, v.compiled_in, nullptr, ""};
    if (!v.compiled_in) {
      s.unavailable_reason = "not compiled in (configure with -D" + s.name + "=enabled)";
    } else {
      s.backend = load_vendor_backend(s.name, s.unavailable_reason);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

const std::vector<BackendStatus>& backend_statuses() {
  static const std::vector<BackendStatus> statuses = load_all();
  return statuses;
}

Backend& backend_by_name(std::string_view name) {
  for (const BackendStatus& s : backend_statuses()) {
    if (s.name != name) continue;
    if (!s.backend)
      throw Unavailable(s.name, s.unavailable_reason,
                        "The " + s.name + " backend is unavailable: " + s.unavailable_reason + ".");
    return *s.backend;
  }
  throw InvalidArgument("backend", "'" + std::string(name) +
                                       "' is not a backend (expected host, cuda, hip or vulkan).");
}

}  // namespace nbx
