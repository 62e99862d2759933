// On-device copies by shader (kernels/vulkan/copy.comp), used by
// VulkanDevice::copy_on_device_impl: vkCmdCopyBuffer moved 844 GB/s on the H200 where a
// 16-byte-per-invocation shader moves ~4.1 TB/s (docs/performance.md, Vulkan).
#pragma once

#include <cstddef>

#include "core/backend.hpp"

namespace nbx::vulkan {

class VulkanDevice;

// Records the copy of `bytes` bytes as one compute dispatch and returns true; returns false
// (recording nothing) where a shader cannot address the ranges — past the device's
// maxStorageBufferRange or 2^32 bytes — so the caller copies with vkCmdCopyBuffer.
// The ranges must not overlap (the caller checks).
bool copy_by_shader(VulkanDevice& device, DeviceMemory dst, std::size_t dst_offset,
                    DeviceMemory src, std::size_t src_offset, std::size_t bytes);

}  // namespace nbx::vulkan
