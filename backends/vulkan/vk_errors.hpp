// VkResult -> the typed nbx errors, in one place. Every failing call is named in the
// message with the device and the driver's result code.
#pragma once

#include <string>

#include "backends/vulkan/vk_api.hpp"

namespace nbx::vulkan {

// "VK_ERROR_DEVICE_LOST"; the number for codes this header does not know.
std::string result_name(VkResult r);

// Throws DeviceLost for VK_ERROR_DEVICE_LOST, OutOfMemory for the two out-of-memory codes
// (requested_bytes when the call allocated), Unavailable for a missing driver or
// extension, Internal otherwise. `device` is the display name ("vulkan:0 (llvmpipe …)").
[[noreturn]] void throw_vk_error(VkResult r, const char* call, const std::string& device,
                                 std::uint64_t requested_bytes = 0);

inline void vk_check(VkResult r, const char* call, const std::string& device) {
  if (r != VK_SUCCESS) throw_vk_error(r, call, device);
}

}  // namespace nbx::vulkan
