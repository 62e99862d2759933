// dlopen of the Vulkan loader and the entry-point tables of vk_api.hpp.
#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "backends/vulkan/vk_api.hpp"
#include "core/errors.hpp"

namespace nbx::vulkan {

InstanceApi::~InstanceApi() {
  if (instance == VK_NULL_HANDLE) return;
  if (messenger != VK_NULL_HANDLE && vkDestroyDebugUtilsMessengerEXT)
    vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
  if (vkDestroyInstance) vkDestroyInstance(instance, nullptr);
}

std::shared_ptr<InstanceApi> open_loader() {
  const char* env = std::getenv("NBX_VULKAN_LOADER");
  std::string name = env && *env ? env : "libvulkan.so.1";
  void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::string reason = name + " not found";
    throw Unavailable("vulkan", reason,
                      "vulkan: unavailable (" + reason + "; dlopen said: " + dlerror() + ").");
  }
  auto api = std::make_shared<InstanceApi>();
  api->vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!api->vkGetInstanceProcAddr) {
    std::string reason = name + " has no vkGetInstanceProcAddr";
    throw Unavailable("vulkan", reason, "vulkan: unavailable (" + reason + ").");
  }
#define NBX_VK_LOAD_GLOBAL(fn) \
  api->fn = reinterpret_cast<PFN_##fn>(api->vkGetInstanceProcAddr(VK_NULL_HANDLE, #fn));
  NBX_VK_GLOBAL_FNS(NBX_VK_LOAD_GLOBAL)
#undef NBX_VK_LOAD_GLOBAL
  if (!api->vkCreateInstance) {
    throw Unavailable("vulkan", name + " exports no vkCreateInstance",
                      "vulkan: unavailable (" + name + " exports no vkCreateInstance).");
  }
  return api;
}

void load_instance_functions(InstanceApi& api) {
  // Debug-utils entry points stay null when the extension was not enabled.
#define NBX_VK_LOAD_INSTANCE(fn) \
  api.fn = reinterpret_cast<PFN_##fn>(api.vkGetInstanceProcAddr(api.instance, #fn));
  NBX_VK_INSTANCE_FNS(NBX_VK_LOAD_INSTANCE)
#undef NBX_VK_LOAD_INSTANCE
  if (!api.vkEnumeratePhysicalDevices || !api.vkCreateDevice || !api.vkGetDeviceProcAddr ||
      !api.vkGetPhysicalDeviceProperties2 || !api.vkGetPhysicalDeviceFeatures2) {
    throw Unavailable("vulkan", "the Vulkan loader lacks Vulkan 1.1 instance functions",
                      "vulkan: unavailable (the Vulkan loader lacks Vulkan 1.1 instance "
                      "functions such as vkGetPhysicalDeviceFeatures2).");
  }
}

void DeviceApi::load(const InstanceApi& api, VkDevice device) {
#define NBX_VK_LOAD_DEVICE(fn)                                                            \
  fn = reinterpret_cast<PFN_##fn>(api.vkGetDeviceProcAddr(device, #fn));                  \
  if (!fn) {                                                                              \
    throw Internal(std::string("vulkan: the driver returned no entry point for ") + #fn + \
                   " although the device reports Vulkan 1.2.");                           \
  }
  NBX_VK_DEVICE_FNS(NBX_VK_LOAD_DEVICE)
#undef NBX_VK_LOAD_DEVICE
}

}  // namespace nbx::vulkan
