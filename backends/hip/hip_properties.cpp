// DeviceProperties of a HIP (AMD) device, from the runtime (never from tables of our own).
#include <string>

#include "backends/gpu_runtime/gpu_properties.hpp"
#include "backends/hip/hip_device.hpp"
#include "backends/hip/hip_errors.hpp"
#include "nbx_config.h"

namespace nbx::hip {
namespace {

int attribute(hipDeviceAttribute_t attr, int index) {
  int v = 0;
  check(hipDeviceGetAttribute(&v, attr, index), "hipDeviceGetAttribute", "hip");
  return v;
}

}  // namespace

DeviceProperties query_properties(int index) {
  hipDeviceProp_t prop{};
  check(hipGetDeviceProperties(&prop, index), "hipGetDeviceProperties", "hip");
  DeviceProperties p;
  gpu_runtime::copy_common_properties(prop, p);
  p.vendor = "amd";
  // "gfx90a:sramecc+:xnack-": the device-file key is the part before the feature flags.
  const std::string gcn = prop.gcnArchName;
  p.arch = gcn.substr(0, gcn.find(':'));
  int driver = 0, runtime = 0;
  (void)hipDriverGetVersion(&driver);
  (void)hipRuntimeGetVersion(&runtime);
  p.driver = "HIP driver " + std::to_string(driver) + ", runtime " + std::to_string(runtime);
  p.pci_vendor_id = 0x1002;
  // Every GCN/CDNA/RDNA GPU also computes in fp16 and int8. Whether bfloat16 is
  // native is not something HIP reports: the device file says, so bf16 stays unknown here.
  p.fp16 = true;
  p.int8 = true;
  p.shared_memory_per_block_optin =
      static_cast<std::int64_t>(attribute(hipDeviceAttributeMaxSharedMemoryPerBlock, index));
  if (p.arch == "gfx908" || p.arch == "gfx90a" || p.arch.rfind("gfx94", 0) == 0) {
    p.matrix_unit = "mfma";
  } else if (p.arch.rfind("gfx11", 0) == 0) {
    p.matrix_unit = "wmma";
  }
  char bus[32] = {};
  if (hipDeviceGetPCIBusId(bus, sizeof bus, index) == hipSuccess) p.extra["pci_bus_id"] = bus;
  p.extra["gcn_arch_name"] = gcn;
  p.extra["shared_memory_per_multiprocessor"] =
      std::to_string(prop.maxSharedMemoryPerMultiProcessor);
  p.extra["memory_bus_width_bits"] = std::to_string(prop.memoryBusWidth);
  p.extra["hip_archs_compiled"] = NBX_HIP_ARCHS;
  // Peer access per pair, as Tensor::to's route asks it; the link kinds (xGMI, PCIe) would
  // need rocm-smi, which Debian does not package: said, not guessed.
  p.extra["topology.links"] = "not queried (no rocm-smi library here)";
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess) count = 0;
  if (count <= 1) p.extra["topology.peers"] = "none (the only HIP device)";
  for (int j = 0; j < count; ++j) {
    if (j == index) continue;
    int can = 0;
    const bool asked = hipDeviceCanAccessPeer(&can, index, j) == hipSuccess;
    p.extra["topology.peer.hip:" + std::to_string(j)] = !asked ? "peer access unknown"
                                                        : can  ? "peer access"
                                                               : "no peer access";
  }
  return p;
}

}  // namespace nbx::hip
