// What a Vulkan kernel family needs to record one compute dispatch, and the family
// launchers. A family lives in its own vk_<family>.cpp: it translates its abi:: parameter
// block into its shader's uniform block, picks a module and specialization constants, and
// calls VulkanDevice::record.
//
// Descriptor layout shared by every kernel (vk_pipelines.cpp): binding 0 the uniform
// parameter block, bindings 1..kDataBindings the data buffers in the launch's order
// (buffer 0, usually the output, at binding 1), binding kFaultBinding the fault record.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/backend.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::vulkan {

class VulkanDevice;

inline constexpr std::uint32_t kDataBindings = 6;
inline constexpr std::uint32_t kFaultBinding = kDataBindings + 1;

struct DispatchBuffer {
  DeviceMemory memory;   // empty: binds a small dummy buffer (an absent optional operand)
  bool written = false;  // declared to the hazard tracker as a write, else a read
  // The bytes of `memory` a written buffer's dispatch writes, when it is known to write fewer
  // than all (written_bytes 0: all): the hazard tracker then orders only overlapping accesses,
  // so dispatches filling disjoint slices of one output run without a barrier between them.
  std::uint64_t written_from = 0, written_bytes = 0;
};

struct Dispatch {
  std::string_view module;              // embedded SPIR-V name, e.g. "reduce_f"
  std::span<const std::uint32_t> spec;  // specialization constants 0..n-1
  const void* params = nullptr;         // the shader's uniform block
  std::size_t param_bytes = 0;
  std::span<const DispatchBuffer> buffers;  // at most kDataBindings, bindings 1..
  std::uint32_t groups[3] = {1, 1, 1};
};

// The family launchers: one overload per family, declared here from
// core/families/family_list.inc (a new family adds no line) and defined in its
// vk_<family>.cpp (elementwise and the diagnostics in vk_device.cpp). vk_device.cpp's table
// takes the overload of each family this backend implements (backend_variants.hpp); one
// declared implemented but never defined fails to link. Each receives a launch
// BackendDevice::launch has validated through the family table (`params` is its block),
// checks only this backend's own limits (32-bit shader indices, maxStorageBufferRange,
// shader features), and records its dispatch.
#define NBX_KERNEL_FAMILY(kId, id, Params) \
  void launch_family(VulkanDevice& device, const Params& params, const KernelLaunch& launch);
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY

}  // namespace nbx::vulkan
