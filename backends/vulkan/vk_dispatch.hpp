// What a Vulkan kernel family needs to record one compute dispatch, and the table that maps
// kernel names to family launchers. A family lives in its own vk_<family>.cpp: it checks
// its abi:: parameter block against the device, translates it into its shader's uniform
// block, picks a module and specialization constants, and calls VulkanDevice::record.
// It registers itself with NBX_VK_KERNEL("name", fn), so vk_device.cpp lists no family.
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

namespace nbx::vulkan {

class VulkanDevice;

inline constexpr std::uint32_t kDataBindings = 6;
inline constexpr std::uint32_t kFaultBinding = kDataBindings + 1;

struct DispatchBuffer {
  DeviceMemory memory;   // empty: binds a small dummy buffer (an absent optional operand)
  bool written = false;  // declared to the hazard tracker as a write, else a read
};

struct Dispatch {
  std::string_view module;              // embedded SPIR-V name, e.g. "reduce_f"
  std::span<const std::uint32_t> spec;  // specialization constants 0..n-1
  const void* params = nullptr;         // the shader's uniform block
  std::size_t param_bytes = 0;
  std::span<const DispatchBuffer> buffers;  // at most kDataBindings, bindings 1..
  std::uint32_t groups[3] = {1, 1, 1};
};

using VkKernelFn = void (*)(VulkanDevice& device, const KernelLaunch& launch);
// Whether `device` offers a kernel that needs a device feature ("matmul.coopmat").
using VkKernelAvailableFn = bool (*)(const VulkanDevice& device);

// Returns nullptr when no family registered `name`.
VkKernelFn find_vk_kernel(std::string_view name);
// has_kernel's answer: `name` is registered and, where it has an availability test,
// `device` passes it.
bool vk_kernel_offered(std::string_view name, const VulkanDevice& device);

struct VkKernelRegistrar {
  // Optional: `available` (default nullptr: every device offers the kernel).
  VkKernelRegistrar(const char* name, VkKernelFn fn, VkKernelAvailableFn available = nullptr);
};

#define NBX_VK_KERNEL_CAT2(a, b) a##b
#define NBX_VK_KERNEL_CAT(a, b) NBX_VK_KERNEL_CAT2(a, b)
#define NBX_VK_KERNEL(name, fn)                                                                   \
  static const ::nbx::vulkan::VkKernelRegistrar NBX_VK_KERNEL_CAT(nbx_vk_kernel_, __LINE__)(name, \
                                                                                            fn)
// A kernel only some devices offer: has_kernel(name) asks available(device).
#define NBX_VK_KERNEL_IF(name, fn, available)                                                \
  static const ::nbx::vulkan::VkKernelRegistrar NBX_VK_KERNEL_CAT(nbx_vk_kernel_, __LINE__)( \
      name, fn, available)

}  // namespace nbx::vulkan
