// What every part of an open Vulkan device shares: the entry points, handles, and the
// features and limits queried once at open (vk_properties.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/vulkan/vk_api.hpp"

namespace nbx::vulkan {

// A cooperative-matrix fragment shape M x N x K (vk_coopmat_query.cpp); m == 0: none.
struct CoopmatShape {
  std::uint32_t m = 0, n = 0, k = 0;
};

struct DeviceFeatures {
  bool fp64 = false, int64 = false, int16 = false, fp16 = false, int8 = false;
  // shaderBufferInt64Atomics (with shaderInt64): 64-bit atomics on storage buffers (scatter).
  bool int64_atomics = false;
  // VK_EXT_shader_atomic_float's shaderBufferFloat32AtomicAdd: float32 atomic adds on storage
  // buffers (scatter's atomic sums; without it a compare-and-swap loop).
  bool float32_atomic_add = false;
  bool storage8 = false, storage16 = false;
  bool bf16_ext = false, coopmat_khr = false, coopmat_nv = false;
  bool subgroup_size_control = false, memory_budget = false, sm_builtins = false;
  // shaderDenormPreserveFloat32/64: every module gets DenormPreserve (vk_float_controls.hpp).
  bool denorm_preserve_f32 = false, denorm_preserve_f64 = false;
  // float16 x float16 -> float32 subgroup shapes the matmul kernel can tile, from each
  // extension's list; the Vulkan memory model, which glslang's cooperative-matrix code needs,
  // is enabled where either extension is.
  CoopmatShape coopmat_f16_khr, coopmat_f16_nv;
  bool vulkan_memory_model = false;
  // NBX_VULKAN_PIPELINE_STATS=1 and VK_KHR_pipeline_executable_properties: every new
  // pipeline's compiler statistics (registers, ...) go to stderr (vk_pipelines.cpp).
  bool pipeline_stats = false;
  std::uint32_t api_version = 0;
  std::uint32_t subgroup_size = 1, min_subgroup_size = 1, max_subgroup_size = 1;
  std::uint32_t subgroup_ops = 0;  // VkSubgroupFeatureFlags
  std::uint32_t max_workgroup_invocations = 1, max_workgroup_size_x = 1;
  std::uint32_t max_workgroup_count_x = 1;
  std::uint32_t max_shared_memory = 0, max_push_constants = 0;
  std::uint64_t max_storage_buffer_range = 0;
  std::uint64_t min_storage_alignment = 16, min_uniform_alignment = 16;
  std::uint64_t max_allocation_size = 0;
  float timestamp_period_ns = 1.0f;
  VkPhysicalDeviceType device_type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  // Device-local memory is also host-visible and coherent and the device shares the
  // host's memory (CPU or integrated): map it and copy without staging.
  bool zero_copy = false;
};

struct DeviceContext {
  std::shared_ptr<struct InstanceApi> instance;
  struct DeviceApi* fn = nullptr;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t queue_family = 0;
  std::uint32_t timestamp_valid_bits = 0;
  DeviceFeatures features;
  VkPhysicalDeviceMemoryProperties memory{};
  std::string name;  // display name for messages: "vulkan:0 (llvmpipe …)"
  std::string id;    // "vulkan:0": the device field of typed errors
};

}  // namespace nbx::vulkan
