// Vulkan result codes as nbx errors (see vk_errors.hpp).
#include "backends/vulkan/vk_errors.hpp"

#include "core/errors.hpp"

namespace nbx::vulkan {

std::string result_name(VkResult r) {
  switch (r) {
#define NBX_VK_RESULT(code) \
  case code:                \
    return #code;
    NBX_VK_RESULT(VK_SUCCESS)
    NBX_VK_RESULT(VK_NOT_READY)
    NBX_VK_RESULT(VK_TIMEOUT)
    NBX_VK_RESULT(VK_INCOMPLETE)
    NBX_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    NBX_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    NBX_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    NBX_VK_RESULT(VK_ERROR_DEVICE_LOST)
    NBX_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    NBX_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    NBX_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    NBX_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    NBX_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    NBX_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    NBX_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    NBX_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    NBX_VK_RESULT(VK_ERROR_UNKNOWN)
    NBX_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    NBX_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    NBX_VK_RESULT(VK_ERROR_FRAGMENTATION)
    NBX_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    NBX_VK_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
    NBX_VK_RESULT(VK_ERROR_VALIDATION_FAILED_EXT)
#undef NBX_VK_RESULT
    default:
      return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

void throw_vk_error(VkResult r, const char* call, const std::string& device,
                    std::uint64_t requested_bytes) {
  const std::string what = std::string(call) + " on " + device + " failed with " + result_name(r) +
                           " (" + std::to_string(static_cast<int>(r)) + ")";
  switch (r) {
    case VK_ERROR_DEVICE_LOST:
      throw DeviceLost(device, what + "; the device is lost.");
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      // The allocator (vk_memory.cpp) fills free/reserved/allocated itself; other calls
      // that run out of memory know only what they asked for.
      throw OutOfMemory(device, requested_bytes, 0, 0, 0,
                        what + " while requesting " + std::to_string(requested_bytes) + " bytes.");
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_LAYER_NOT_PRESENT:
      throw Unavailable("vulkan", result_name(r), what + ".");
    default:
      throw Internal(what + ".");
  }
}

}  // namespace nbx::vulkan
