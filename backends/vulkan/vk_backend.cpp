// nbx::vulkan::VulkanBackend and the module entry point nbx_backend_create_v1.
//
// One VkInstance over every physical device the loader reports; NBX_VULKAN_DEVICES
// ("0,2") keeps a subset, renumbered from 0 in the order given. NBX_VULKAN_VALIDATION=1
// enables VK_LAYER_KHRONOS_validation and a debug messenger whose warnings and errors
// make the next synchronize() throw; NBX_VULKAN_VALIDATION=sync adds the layer's
// synchronization validation (hazards between commands that no barrier orders).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_errors.hpp"
#include "backends/vulkan/vk_properties.hpp"
#include "core/errors.hpp"

namespace nbx::vulkan {
namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* log = static_cast<ValidationLog*>(user);
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    std::lock_guard<std::mutex> lock(log->mutex);
    log->messages.emplace_back(data && data->pMessage ? data->pMessage : "(no text)");
  }
  return VK_FALSE;
}

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

class VulkanBackend final : public Backend {
 public:
  VulkanBackend() : api_(open_loader()) {
    const bool validate = env_on("NBX_VULKAN_VALIDATION");
    const char* mode = std::getenv("NBX_VULKAN_VALIDATION");
    const bool validate_sync = validate && std::strcmp(mode, "sync") == 0;
    std::uint32_t loader_version = VK_API_VERSION_1_0;
    if (api_->vkEnumerateInstanceVersion) api_->vkEnumerateInstanceVersion(&loader_version);
    if (loader_version < VK_API_VERSION_1_2) {
      throw Unavailable("vulkan", "the Vulkan loader is older than 1.2",
                        "vulkan: unavailable (the Vulkan loader is older than 1.2).");
    }
    api_->api_version =
        loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "nbxtensor";
    app.pEngineName = "nbxtensor";
    app.apiVersion = api_->api_version;
    std::vector<const char*> layers, exts;
    if (validate) {
      layers.push_back("VK_LAYER_KHRONOS_validation");
      exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      log_ = std::make_shared<ValidationLog>();
    }
    VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mci.pfnUserCallback = on_validation_message;
    mci.pUserData = log_.get();
    // The layer reads this from the chain (VK_EXT_validation_features, which the layer itself
    // provides and so needs no extension of the driver).
    const VkValidationFeatureEnableEXT sync_feature =
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync_feature;
    if (validate_sync) {
      exts.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
      mci.pNext = &features;
    }
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pNext = validate ? &mci : nullptr;  // also catches instance creation itself
    ici.pApplicationInfo = &app;
    ici.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
    ici.ppEnabledLayerNames = layers.data();
    ici.enabledExtensionCount = static_cast<std::uint32_t>(exts.size());
    ici.ppEnabledExtensionNames = exts.data();
    VkResult r = api_->vkCreateInstance(&ici, nullptr, &api_->instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
      throw Unavailable("vulkan",
                        "no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)",
                        "vulkan: unavailable (no Vulkan driver; vkCreateInstance returned "
                        "VK_ERROR_INCOMPATIBLE_DRIVER).");
    }
    if (r == VK_ERROR_LAYER_NOT_PRESENT) {
      throw Unavailable("vulkan",
                        "NBX_VULKAN_VALIDATION is set but VK_LAYER_KHRONOS_validation "
                        "is not installed",
                        "vulkan: unavailable (NBX_VULKAN_VALIDATION is set "
                        "but VK_LAYER_KHRONOS_validation is not installed).");
    }
    vk_check(r, "vkCreateInstance", "vulkan");
    load_instance_functions(*api_);
    if (validate) {
      mci.pNext = nullptr;  // the features belong to the instance's chain only
      vk_check(
          api_->vkCreateDebugUtilsMessengerEXT(api_->instance, &mci, nullptr, &api_->messenger),
          "vkCreateDebugUtilsMessengerEXT", "vulkan");
    }
    enumerate();
  }

  std::string_view name() const override { return "vulkan"; }

  DeviceListing list_devices() override {
    DeviceListing out;
    for (const auto& d : devices_) out.devices.push_back(d.info.properties);
    if (out.devices.empty()) out.unavailable_reason = no_device_reason_;
    return out;
  }

  std::unique_ptr<BackendDevice> open(int index) override {
    if (index < 0 || index >= static_cast<int>(devices_.size())) {
      throw Unavailable("vulkan", "no device vulkan:" + std::to_string(index),
                        "vulkan:" + std::to_string(index) + " does not exist (" +
                            std::to_string(devices_.size()) + " Vulkan device(s) present" +
                            (devices_.empty() ? "; " + no_device_reason_ : "") + ").");
    }
    const Found& d = devices_[static_cast<std::size_t>(index)];
    return std::make_unique<VulkanDevice>(api_, d.physical, index, d.info, log_);
  }

 private:
  struct Found {
    VkPhysicalDevice physical;
    PhysicalDeviceInfo info;
  };

  void enumerate() {
    std::uint32_t count = 0;
    vk_check(api_->vkEnumeratePhysicalDevices(api_->instance, &count, nullptr),
             "vkEnumeratePhysicalDevices", "vulkan");
    std::vector<VkPhysicalDevice> all(count);
    vk_check(api_->vkEnumeratePhysicalDevices(api_->instance, &count, all.data()),
             "vkEnumeratePhysicalDevices", "vulkan");
    std::vector<std::size_t> order;
    if (const char* sel = std::getenv("NBX_VULKAN_DEVICES"); sel && *sel) {
      std::stringstream ss(sel);
      std::string item;
      while (std::getline(ss, item, ',')) {
        char* end = nullptr;
        const long i = std::strtol(item.c_str(), &end, 10);
        if (end == item.c_str() || *end || i < 0 || i >= static_cast<long>(count)) {
          throw InvalidArgument("NBX_VULKAN_DEVICES",
                                "NBX_VULKAN_DEVICES=\"" + std::string(sel) + "\": '" + item +
                                    "' is not a device index below " + std::to_string(count) + ".");
        }
        order.push_back(static_cast<std::size_t>(i));
      }
    } else {
      for (std::size_t i = 0; i < count; ++i) order.push_back(i);
    }
    std::string skipped;
    for (std::size_t i : order) {
      PhysicalDeviceInfo info = describe_physical_device(*api_, all[i]);
      if (!info.unusable_reason.empty()) {
        skipped +=
            (skipped.empty() ? "" : "; ") + info.properties.name + ": " + info.unusable_reason;
        continue;
      }
      devices_.push_back({all[i], std::move(info)});
    }
    if (count == 0)
      no_device_reason_ = "no device (vkEnumeratePhysicalDevices found none)";
    else if (order.empty())
      no_device_reason_ = "no device selected by NBX_VULKAN_DEVICES";
    else
      no_device_reason_ = "no usable device (" + skipped + ")";
  }

  std::shared_ptr<InstanceApi> api_;
  std::shared_ptr<ValidationLog> log_;
  std::vector<Found> devices_;
  std::string no_device_reason_;
};

}  // namespace
}  // namespace nbx::vulkan

extern "C" __attribute__((visibility("default"))) nbx::Backend* nbx_backend_create_v1() {
  return new nbx::vulkan::VulkanBackend();
}

// Its pair: the registry destroys the backend at exit with the module's own delete.
extern "C" __attribute__((visibility("default"))) void nbx_backend_destroy_v1(nbx::Backend* b) {
  delete b;
}
