// The DeviceProperties that cudaDeviceProp and hipDeviceProp_t report under the same field
// names, copied once for both backends. What differs (architecture names, versions, what
// each runtime leaves unsaid) stays in cuda_properties.cpp and hip_properties.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "core/backend.hpp"

namespace nbx::gpu_runtime {

template <class Prop>
void copy_common_properties(const Prop& prop, DeviceProperties& p) {
  p.name = prop.name;
  p.total_memory = prop.totalGlobalMem;
  p.compute_units = prop.multiProcessorCount;
  // Every CUDA and every AMD GPU computes in fp64 and int64 (at differing rates).
  p.fp64 = true;
  p.int64 = true;
  p.subgroup_size = prop.warpSize;  // 32 on NVIDIA and RDNA, 64 on gfx9 (GCN/CDNA)
  p.subgroup_sizes = {prop.warpSize};
  p.max_threads_per_block = prop.maxThreadsPerBlock;
  p.shared_memory_per_block = static_cast<std::int64_t>(prop.sharedMemPerBlock);
  p.l2_cache_bytes = prop.l2CacheSize;
  p.extra["max_threads_per_multiprocessor"] = std::to_string(prop.maxThreadsPerMultiProcessor);
  p.extra["ecc"] = prop.ECCEnabled ? "on" : "off";
}

}  // namespace nbx::gpu_runtime
