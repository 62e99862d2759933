// The Vulkan entry points the backend uses, fetched at run time: the module never links
// libvulkan, so a machine without a loader gets "vulkan: unavailable" instead of a program
// that fails to start. Global and instance-level functions live in InstanceApi, device-level
// ones (fetched with vkGetDeviceProcAddr, skipping the loader trampoline) in DeviceApi.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include <memory>
#include <string>

namespace nbx::vulkan {

#define NBX_VK_GLOBAL_FNS(X)                \
  X(vkCreateInstance)                       \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkEnumerateInstanceLayerProperties)     \
  X(vkEnumerateInstanceVersion)

#define NBX_VK_INSTANCE_FNS(X)                \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceMemoryProperties2)     \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)                      \
  X(vkCreateDebugUtilsMessengerEXT)           \
  X(vkDestroyDebugUtilsMessengerEXT)

#define NBX_VK_DEVICE_FNS(X)       \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkQueueSubmit)                 \
  X(vkDeviceWaitIdle)              \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkMapMemory)                   \
  X(vkUnmapMemory)                 \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkBindBufferMemory)            \
  X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule)         \
  X(vkCreatePipelineCache)         \
  X(vkDestroyPipelineCache)        \
  X(vkGetPipelineCacheData)        \
  X(vkCreateComputePipelines)      \
  X(vkDestroyPipeline)             \
  X(vkCreatePipelineLayout)        \
  X(vkDestroyPipelineLayout)       \
  X(vkCreateDescriptorSetLayout)   \
  X(vkDestroyDescriptorSetLayout)  \
  X(vkCreateDescriptorPool)        \
  X(vkDestroyDescriptorPool)       \
  X(vkResetDescriptorPool)         \
  X(vkAllocateDescriptorSets)      \
  X(vkUpdateDescriptorSets)        \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkResetCommandPool)            \
  X(vkAllocateCommandBuffers)      \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkCmdBindPipeline)             \
  X(vkCmdBindDescriptorSets)       \
  X(vkCmdDispatch)                 \
  X(vkCmdPipelineBarrier)          \
  X(vkCmdCopyBuffer)               \
  X(vkCmdWriteTimestamp)           \
  X(vkCmdResetQueryPool)           \
  X(vkCmdCopyQueryPoolResults)     \
  X(vkCreateQueryPool)             \
  X(vkDestroyQueryPool)            \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkWaitForFences)               \
  X(vkResetFences)

#define NBX_VK_DECLARE_FN(name) PFN_##name name = nullptr;

// The loader library and one VkInstance. Shared by the backend and every device it opens,
// so whichever is destroyed last destroys the instance. The library is never dlclose'd:
// drivers register atexit handlers that must outlive the instance.
struct InstanceApi {
  NBX_VK_GLOBAL_FNS(NBX_VK_DECLARE_FN)
  NBX_VK_INSTANCE_FNS(NBX_VK_DECLARE_FN)
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  std::uint32_t api_version = VK_API_VERSION_1_2;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  ~InstanceApi();
};

struct DeviceApi {
  NBX_VK_DEVICE_FNS(NBX_VK_DECLARE_FN)
  // Fetches every device-level entry point; throws Internal naming one the driver lacks.
  void load(const InstanceApi& api, VkDevice device);
};

// Opens libvulkan.so.1 (or $NBX_VULKAN_LOADER) and fetches the global entry points.
// Throws Unavailable("vulkan", "libvulkan.so.1 not found", …) without a loader.
std::shared_ptr<InstanceApi> open_loader();

// Fetches the instance-level entry points once api.instance exists.
void load_instance_functions(InstanceApi& api);

}  // namespace nbx::vulkan
