// The CUDA backend: device enumeration and the module's entry point.
//
// The module links the CUDA runtime statically; the static runtime loads libcuda itself on
// first use, so on a machine without the NVIDIA driver cudaGetDeviceCount reports why and
// the backend lists no device with that reason, instead of failing to load.
#include <memory>
#include <string>

#include "backends/cuda/cuda_collectives.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_errors.hpp"
#include "core/errors.hpp"

namespace nbx::cuda {
namespace {

class CudaBackend final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }

  DeviceListing list_devices() override {
    DeviceListing listing;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      (void)cudaGetLastError();
      // `nbx devices` prints "cuda: no device (<this>)".
      listing.unavailable_reason = describe(e != cudaSuccess ? e : cudaErrorNoDevice);
      return listing;
    }
    for (int i = 0; i < count; ++i) listing.devices.push_back(query_properties(i));
    return listing;
  }

  std::unique_ptr<BackendDevice> open(int index) override {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      throw Unavailable(
          "cuda", describe(e),
          "cuda:" + std::to_string(index) + " cannot be opened: no device (" + describe(e) + ").");
    }
    if (index < 0 || index >= count)
      throw Unavailable("cuda", "no such device",
                        "cuda:" + std::to_string(index) + " does not exist; this machine has " +
                            std::to_string(count) + " CUDA device(s).");
    return std::make_unique<CudaDevice>(index, query_properties(index));
  }

  // NCCL, loaded on first use (cuda_collectives.hpp).
  CollectiveLibrary* collectives(std::string& why_not) override { return nccl_library(why_not); }
  bool stages_collectives_through_host() const override { return false; }
};

}  // namespace
}  // namespace nbx::cuda

// The module's one export (core/registry.hpp). The registry owns the returned object.
extern "C" __attribute__((visibility("default"))) nbx::Backend* nbx_backend_create_v1() {
  return new nbx::cuda::CudaBackend();
}

// Its pair: the registry destroys the backend at exit with the module's own delete.
extern "C" __attribute__((visibility("default"))) void nbx_backend_destroy_v1(nbx::Backend* b) {
  delete b;
}
