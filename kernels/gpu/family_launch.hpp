// The CUDA/HIP launcher of every kernel family: one overload of launch_family per family,
// declared here from core/families/family_list.inc (so a new family adds no line) and
// defined in the family's <family>_kernels.cu. GpuDevice's launcher table takes the overload
// of each family its backend implements (core/families/backend_variants.hpp); one declared
// implemented but never defined fails to link. Plain C++: backends' ordinary files include it.
//
// Every launch reaching a launcher was validated by BackendDevice::launch through the
// family table, including that the block's variant serves it; a launcher runs exactly that
// variant and checks only the limits of its own kernels.
#pragma once

#include <cstdint>
#include <string>

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// What a launcher may use of the device: its buffers, per-device options, the stream
// (cudaStream_t / hipStream_t), the fault record kernels write, the elementwise batch
// (null with NBX_GPU_BATCH=0) and the facts matmul sizes its tiles by.
struct GpuLaunch {
  const BoundBuffer* buffers = nullptr;
  int num_buffers = 0;
  const ElementwiseOptions* options = nullptr;
  void* stream = nullptr;
  abi::FaultRecord* fault = nullptr;
  ElementwiseBatch* batch = nullptr;
  int device_index = 0;                      // the runtime's device index
  const std::string* device_name = nullptr;  // "cuda:0 (NVIDIA H200)", for messages
  std::int64_t shared_memory_per_block = 0;  // the runtime's per-block limit, bytes
};

#define NBX_KERNEL_FAMILY(kId, id, Params) \
  ElementwiseLaunchResult launch_family(const Params& params, const GpuLaunch& launch);
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY

}  // namespace nbx::gpu
