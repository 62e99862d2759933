// DeviceProperties of a HIP (AMD) device, from the runtime (never from tables of our own).
#include <string>

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
  p.name = prop.name;
  p.vendor = "amd";
  // "gfx90a:sramecc+:xnack-": the device-file key is the part before the feature flags.
  const std::string gcn = prop.gcnArchName;
  p.arch = gcn.substr(0, gcn.find(':'));
  int driver = 0, runtime = 0;
  (void)hipDriverGetVersion(&driver);
  (void)hipRuntimeGetVersion(&runtime);
  p.driver = "HIP driver " + std::to_string(driver) + ", runtime " + std::to_string(runtime);
  p.pci_vendor_id = 0x1002;
  p.total_memory = prop.totalGlobalMem;
  p.compute_units = prop.multiProcessorCount;
  // Every GCN/CDNA/RDNA GPU computes in fp64, fp16, int64 and int8. Whether bfloat16 is
  // native is not something HIP reports: the device file says, so bf16 stays unknown here.
  p.fp64 = true;
  p.fp16 = true;
  p.int64 = true;
  p.int8 = true;
  p.subgroup_size = prop.warpSize;  // 64 on gfx9 (GCN/CDNA), 32 on RDNA by default
  p.subgroup_sizes = {prop.warpSize};
  p.max_threads_per_block = prop.maxThreadsPerBlock;
  p.shared_memory_per_block = static_cast<std::int64_t>(prop.sharedMemPerBlock);
  p.shared_memory_per_block_optin =
      static_cast<std::int64_t>(attribute(hipDeviceAttributeMaxSharedMemoryPerBlock, index));
  p.l2_cache_bytes = prop.l2CacheSize;
  if (p.arch == "gfx908" || p.arch == "gfx90a" || p.arch.rfind("gfx94", 0) == 0) {
    p.matrix_unit = "mfma";
  } else if (p.arch.rfind("gfx11", 0) == 0) {
    p.matrix_unit = "wmma";
  }
  char bus[32] = {};
  if (hipDeviceGetPCIBusId(bus, sizeof bus, index) == hipSuccess) p.extra["pci_bus_id"] = bus;
  p.extra["gcn_arch_name"] = gcn;
  p.extra["max_threads_per_multiprocessor"] = std::to_string(prop.maxThreadsPerMultiProcessor);
  p.extra["shared_memory_per_multiprocessor"] =
      std::to_string(prop.maxSharedMemoryPerMultiProcessor);
  p.extra["memory_bus_width_bits"] = std::to_string(prop.memoryBusWidth);
  p.extra["ecc"] = prop.ECCEnabled ? "on" : "off";
  p.extra["hip_archs_compiled"] = NBX_HIP_ARCHS;
  return p;
}

}  // namespace nbx::hip
