// The one explicit list of backends. Host is linked in; vendor backends are dlopen'd.
#include "core/registry.hpp"

#include <dlfcn.h>

#include <array>
#include <atomic>
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

// Destroys a backend the way it was made: a vendor module's through its own
// nbx_backend_destroy_v1 (its allocator, its destructor), the host's with delete.
struct BackendDeleter {
  BackendDestroyFn destroy = nullptr;
  void operator()(Backend* b) const {
    if (destroy)
      destroy(b);
    else
      delete b;
  }
};
using OwnedBackend = std::unique_ptr<Backend, BackendDeleter>;

// Loads a vendor module; on failure returns null and says why in `reason`. The handle is
// never closed: devices and tensors the program still holds at exit run the module's code
// after the backend object is gone (a Vulkan device keeps its instance alive by itself).
OwnedBackend load_vendor_backend(const std::string& name, std::string& reason) {
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
    auto destroy = reinterpret_cast<BackendDestroyFn>(dlsym(handle, kBackendDestroyEntryPoint));
    if (!create || !destroy) {
      reason = "module " + path.string() + " has no " +
               (create ? kBackendDestroyEntryPoint : kBackendEntryPoint);
      return nullptr;
    }
    try {
      return OwnedBackend(create(), BackendDeleter{destroy});
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
// its first use (host_device() loads no vendor module, cuda:0 no Vulkan loader), once.
struct Slot {
  std::once_flag once;
  BackendStatus status;
  OwnedBackend owner;
};
constexpr std::size_t kSlots = 1 + std::size(kVendorBackends);
std::string_view slot_name(std::size_t i) {
  return i == 0 ? "host" : kVendorBackends[i - 1].name;
}

// Set once release_backends_at_exit has run: later lookups throw instead of reviving a slot.
std::atomic<bool> released{false};

std::array<Slot, kSlots>& slots() {
  static std::array<Slot, kSlots> all;
  return all;
}

Slot& loaded_slot(std::size_t i) {
  Slot& s = slots()[i];
  std::call_once(s.once, [&] {
    if (i == 0) {
      s.owner = OwnedBackend(new host::HostBackend());
      s.status = {"host", true, s.owner.get(), ""};
      return;
    }
    const VendorBackend& v = kVendorBackends[i - 1];
    s.status = {v.name, v.compiled_in, nullptr, ""};
    if (!v.compiled_in) {
      s.status.unavailable_reason =
          "not compiled in (configure with -D" + s.status.name + "=enabled)";
      return;
    }
    s.owner = load_vendor_backend(s.status.name, s.status.unavailable_reason);
    s.status.backend = s.owner.get();
    // After the vendor runtime registered its own exit handlers (a driver's worker threads
    // are stopped by one), so this one runs first and the backend goes while the runtime
    // still works.
    if (s.owner) std::atexit(release_backends_at_exit);
  });
  return s;
}

}  // namespace

void release_backends_at_exit() {
  if (released.exchange(true)) return;
  // Vendors first, in reverse load order of the list; the host last.
  for (std::size_t i = kSlots; i-- > 0;) slots()[i].owner.reset();
}

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
    if (released.load())
      throw Unavailable(
          std::string(name), "the process is exiting",
          "The " + std::string(name) + " backend is unavailable: the process is exiting.");
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
