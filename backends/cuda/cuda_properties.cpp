// DeviceProperties of a CUDA device, from the runtime (never from tables of our own).
#include <string>

#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_errors.hpp"
#include "backends/cuda/cuda_topology.hpp"
#include "backends/gpu_runtime/gpu_properties.hpp"
#include "nbx_config.h"

namespace nbx::cuda {
namespace {

std::string version_text(int v) {  // 13000 → "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

int attribute(cudaDeviceAttr attr, int index) {
  int v = 0;
  check(cudaDeviceGetAttribute(&v, attr, index), "cudaDeviceGetAttribute", "cuda");
  return v;
}

}  // namespace

DeviceProperties query_properties(int index) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties", "cuda");
  DeviceProperties p;
  gpu_runtime::copy_common_properties(prop, p);
  p.vendor = "nvidia";
  p.arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  p.driver = "CUDA driver " + version_text(driver) + ", runtime " + version_text(runtime);
  p.pci_vendor_id = 0x10de;
  p.compute_capability_major = prop.major;
  p.compute_capability_minor = prop.minor;
  // Facts of the architecture as CUDA defines it: half arithmetic from sm_53, bfloat16
  // from sm_80, dp4a int8 from sm_61.
  const int cc = prop.major * 10 + prop.minor;
  p.fp16 = cc >= 53;
  p.bf16 = cc >= 80;
  p.int8 = cc >= 61;
  p.shared_memory_per_block_optin = static_cast<std::int64_t>(prop.sharedMemPerBlockOptin);
  if (cc >= 90) {
    p.matrix_unit = "wgmma";
  } else if (cc >= 70) {
    p.matrix_unit = "mma";
  }
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, index) == cudaSuccess) p.extra["pci_bus_id"] = bus;
  p.extra["shared_memory_per_multiprocessor"] = std::to_string(prop.sharedMemPerMultiprocessor);
  p.extra["memory_bus_width_bits"] =
      std::to_string(attribute(cudaDevAttrGlobalMemoryBusWidth, index));
  p.extra["cuda_archs_compiled"] = NBX_CUDA_ARCHS;
  // atomicAdd(float*) on global memory flushes subnormal inputs and results whatever -ftz says
  // (NVIDIA's forum, "atomicAdd(float) does not add very small values"): the scatters' sums.
  p.extra["float32_atomic_add_subnormals"] = "flushed to zero (atomicAdd on global memory)";
  add_topology(index, p);
  return p;
}

}  // namespace nbx::cuda
