// Compute pipelines from the embedded SPIR-V (kernels/vulkan), one per (module,
// specialization constants) pair, created on first use and kept for the device's life.
// A VkPipelineCache, persisted under $NBX_CACHE_DIR (default ~/.cache/nbxtensor) unless
// NBX_VULKAN_PIPELINE_CACHE=0, keeps driver compiles across runs.
//
// Every kernel shares one descriptor set layout (vk_dispatch.hpp): binding 0 a uniform block
// (the parameter block), bindings 1-6 data buffers, binding 7 the fault record.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backends/vulkan/vk_context.hpp"

namespace nbx::vulkan {

class Pipelines {
 public:
  static constexpr std::uint32_t kBindings = 8;

  Pipelines(DeviceContext& ctx, const std::uint8_t (&cache_uuid)[VK_UUID_SIZE]);
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  VkPipelineLayout layout() const { return layout_; }
  // The pipeline of module `module` ("elementwise_f64") with specialization constants
  // 0..n-1 set to `spec` (constant 0 is the workgroup size). Throws Internal when the
  // module is not embedded, the vk error of vkCreateComputePipelines otherwise.
  VkPipeline get(const std::string& module, std::span<const std::uint32_t> spec);
  std::size_t size() const { return pipelines_.size(); }

 private:
  VkShaderModule shader(const std::string& module);
  void save_cache() const;

  DeviceContext& ctx_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string cache_path_;
  std::map<std::string, VkShaderModule> shaders_;
  std::map<std::pair<std::string, std::vector<std::uint32_t>>, VkPipeline> pipelines_;
};

}  // namespace nbx::vulkan
