// Runtime facts of one physical device: features and limits (DeviceFeatures), their report
// as nbx::DeviceProperties, and the feature chain the backend enables at device creation.
#pragma once

#include <string>
#include <vector>

#include "backends/vulkan/vk_api.hpp"
#include "backends/vulkan/vk_context.hpp"
#include "backends/vulkan/vk_ext_structs.hpp"
#include "core/backend.hpp"

namespace nbx::vulkan {

// The feature structures of one query or one device creation, linked through pNext.
// Not copyable: the chain points into itself.
struct FeatureChain {
  VkPhysicalDeviceFeatures2 core{};
  VkPhysicalDeviceVulkan11Features v11{};
  VkPhysicalDeviceVulkan12Features v12{};
  VkPhysicalDeviceVulkan13Features v13{};
  VkPhysicalDeviceSubgroupSizeControlFeaturesEXT size_control{};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coopmat{};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat_nv{};
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bf16{};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec_props{};
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float{};

  FeatureChain() = default;
  FeatureChain(const FeatureChain&) = delete;
  FeatureChain& operator=(const FeatureChain&) = delete;
  // Links the structures the device knows (by API version and extension list).
  void link(std::uint32_t api_version, const std::vector<std::string>& extensions);
};

struct PhysicalDeviceInfo {
  DeviceProperties properties;
  DeviceFeatures features;
  std::vector<std::string> extensions;         // every device extension
  std::vector<std::string> enable_extensions;  // the ones the backend enables
  std::uint32_t queue_family = 0;
  std::uint32_t timestamp_valid_bits = 0;
  std::string unusable_reason;  // non-empty: the backend cannot use it
};

PhysicalDeviceInfo describe_physical_device(const InstanceApi& api, VkPhysicalDevice device);

// The features the backend turns on, taken from what `info` found.
void fill_enabled_features(const PhysicalDeviceInfo& info, FeatureChain& chain);

}  // namespace nbx::vulkan
