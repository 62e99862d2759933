// The HIP backend: device enumeration and the module's entry point.
//
// The module links libamdhip64. The registry dlopens the module, so a machine without the
// ROCm runtime makes only this backend unavailable (dlopen's reason); a machine with the
// runtime but no AMD GPU lists no device with HIP's reason ("hipErrorNoDevice").
#include <memory>
#include <string>

#include "backends/hip/hip_device.hpp"
#include "backends/hip/hip_errors.hpp"
#include "core/errors.hpp"

namespace nbx::hip {
namespace {

class HipBackend final : public Backend {
 public:
  std::string_view name() const override { return "hip"; }

  DeviceListing list_devices() override {
    DeviceListing listing;
    int count = 0;
    const hipError_t e = hipGetDeviceCount(&count);
    if (e != hipSuccess || count == 0) {
      (void)hipGetLastError();
      // `nbx devices` prints "cuda: no device (<this>)".
      listing.unavailable_reason = describe(e != hipSuccess ? e : hipErrorNoDevice);
      return listing;
    }
    for (int i = 0; i < count; ++i) listing.devices.push_back(query_properties(i));
    return listing;
  }

  std::unique_ptr<BackendDevice> open(int index) override {
    int count = 0;
    const hipError_t e = hipGetDeviceCount(&count);
    if (e != hipSuccess) {
      (void)hipGetLastError();
      throw Unavailable(
          "hip", describe(e),
          "hip:" + std::to_string(index) + " cannot be opened: no device (" + describe(e) + ").");
    }
    if (index < 0 || index >= count)
      throw Unavailable("hip", "no such device",
                        "hip:" + std::to_string(index) + " does not exist; this machine has " +
                            std::to_string(count) + " HIP device(s).");
    return std::make_unique<HipDevice>(index, query_properties(index));
  }

  // RCCL (NCCL's API for AMD) is not packaged in Debian 12 (no librccl-dev), so this build
  // has no header to compile the RCCL path against; collectives are refused by name.
  CollectiveLibrary* collectives(std::string& why_not) override {
    why_not = "this build has no RCCL (rccl/rccl.h was not available when it was compiled)";
    return nullptr;
  }
  bool stages_collectives_through_host() const override { return false; }
};

}  // namespace
}  // namespace nbx::hip

// The module's one export (core/registry.hpp). The registry owns the returned object.
extern "C" __attribute__((visibility("default"))) nbx::Backend* nbx_backend_create_v1() {
  return new nbx::hip::HipBackend();
}

// Its pair: the registry destroys the backend at exit with the module's own delete.
extern "C" __attribute__((visibility("default"))) void nbx_backend_destroy_v1(nbx::Backend* b) {
  delete b;
}
