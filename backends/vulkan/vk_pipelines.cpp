// Shader modules, the pipeline cache and specialised compute pipelines (vk_pipelines.hpp).
#include "backends/vulkan/vk_pipelines.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "backends/vulkan/vk_errors.hpp"
#include "backends/vulkan/vk_float_controls.hpp"
#include "core/errors.hpp"
#include "nbx_vk_spirv.hpp"

namespace nbx::vulkan {
namespace {

std::string cache_file(const std::uint8_t (&uuid)[VK_UUID_SIZE]) {
  const char* off = std::getenv("NBX_VULKAN_PIPELINE_CACHE");
  if (off && std::string(off) == "0") return {};
  std::filesystem::path dir;
  if (const char* d = std::getenv("NBX_CACHE_DIR"); d && *d)
    dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = std::filesystem::path(x) / "nbxtensor";
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = std::filesystem::path(h) / ".cache/nbxtensor";
  else
    return {};
  std::string name = "vulkan-pipelines-";
  char hex[3];
  for (std::uint8_t b : uuid) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    name += hex;
  }
  return (dir / (name + ".bin")).string();
}

// NBX_VULKAN_PIPELINE_STATS=1: the driver's statistics of a new pipeline (NVIDIA: registers,
// binary size, ...) on stderr, one line, so a benchmark run shows what the compiler made.
void print_statistics(const DeviceContext& ctx, VkPipeline p, const std::string& module,
                      std::span<const std::uint32_t> spec) {
  auto get = [&ctx](const char* name) {
    return ctx.instance->vkGetDeviceProcAddr(ctx.device, name);
  };
  auto props = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      get("vkGetPipelineExecutablePropertiesKHR"));
  auto stats = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      get("vkGetPipelineExecutableStatisticsKHR"));
  if (!props || !stats) return;
  std::string line = "vulkan pipeline " + module + " spec";
  for (std::uint32_t v : spec) {
    line += ' ';
    line += std::to_string(v);
  }
  VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pi.pipeline = p;
  std::uint32_t n = 0;
  props(ctx.device, &pi, &n, nullptr);
  for (std::uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = p;
    ei.executableIndex = e;
    std::uint32_t m = 0;
    stats(ctx.device, &ei, &m, nullptr);
    std::vector<VkPipelineExecutableStatisticKHR> st(
        m, VkPipelineExecutableStatisticKHR{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    stats(ctx.device, &ei, &m, st.data());
    for (const auto& s : st) {
      line += " | ";
      line += s.name;
      line += ' ';
      switch (s.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
          line += s.value.b32 ? "true" : "false";
          break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
          line += std::to_string(s.value.i64);
          break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
          line += std::to_string(s.value.u64);
          break;
        default:
          line += std::to_string(s.value.f64);
      }
    }
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace

Pipelines::Pipelines(DeviceContext& ctx, const std::uint8_t (&cache_uuid)[VK_UUID_SIZE])
    : ctx_(ctx), cache_path_(cache_file(cache_uuid)) {
  const DeviceApi& vk = *ctx.fn;
  VkDescriptorSetLayoutBinding b[kBindings]{};
  for (std::uint32_t i = 0; i < kBindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType =
        i == 0 ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = kBindings;
  li.pBindings = b;
  vk_check(vk.vkCreateDescriptorSetLayout(ctx.device, &li, nullptr, &set_layout_),
           "vkCreateDescriptorSetLayout", ctx.name);
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &set_layout_;
  vk_check(vk.vkCreatePipelineLayout(ctx.device, &pli, nullptr, &layout_), "vkCreatePipelineLayout",
           ctx.name);

  std::vector<char> data;
  if (!cache_path_.empty()) {
    std::ifstream in(cache_path_, std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  // The driver checks the header (vendor, device, UUID) and ignores data not its own.
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  if (vk.vkCreatePipelineCache(ctx.device, &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    vk_check(vk.vkCreatePipelineCache(ctx.device, &ci, nullptr, &cache_), "vkCreatePipelineCache",
             ctx.name);
  }
}

Pipelines::~Pipelines() {
  const DeviceApi& vk = *ctx_.fn;
  save_cache();
  for (auto& [key, p] : pipelines_) vk.vkDestroyPipeline(ctx_.device, p, nullptr);
  for (auto& [name, s] : shaders_) vk.vkDestroyShaderModule(ctx_.device, s, nullptr);
  vk.vkDestroyPipelineCache(ctx_.device, cache_, nullptr);
  vk.vkDestroyPipelineLayout(ctx_.device, layout_, nullptr);
  vk.vkDestroyDescriptorSetLayout(ctx_.device, set_layout_, nullptr);
}

void Pipelines::save_cache() const {
  if (cache_path_.empty() || pipelines_.empty()) return;
  std::size_t size = 0;
  const DeviceApi& vk = *ctx_.fn;
  if (vk.vkGetPipelineCacheData(ctx_.device, cache_, &size, nullptr) != VK_SUCCESS || !size) return;
  std::vector<char> data(size);
  if (vk.vkGetPipelineCacheData(ctx_.device, cache_, &size, data.data()) != VK_SUCCESS) return;
  // Best effort: a cache that cannot be written costs compile time, never correctness.
  // Written aside and renamed, so concurrent processes never read half a file.
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(cache_path_).parent_path(), ec);
  const std::string tmp =
      cache_path_ + ".tmp" + std::to_string(reinterpret_cast<std::uintptr_t>(this));
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(size));
    if (!out) return;
  }
  std::filesystem::rename(tmp, cache_path_, ec);
}

VkShaderModule Pipelines::shader(const std::string& module) {
  auto it = shaders_.find(module);
  if (it != shaders_.end()) return it->second;
  std::span<const std::uint32_t> words = spirv::find(module);
  if (words.empty())
    throw Internal("vulkan: no embedded SPIR-V module named '" + module + "' in this build.");
  std::vector<std::uint32_t> patched;
  if (ctx_.features.denorm_preserve_f32 || ctx_.features.denorm_preserve_f64) {
    patched = with_denorm_preserve(
        words, {ctx_.features.denorm_preserve_f32, ctx_.features.denorm_preserve_f64});
    words = patched;
  }
  VkShaderModuleCreateInfo si{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  si.codeSize = words.size_bytes();
  si.pCode = words.data();
  VkShaderModule s = VK_NULL_HANDLE;
  vk_check(ctx_.fn->vkCreateShaderModule(ctx_.device, &si, nullptr, &s), "vkCreateShaderModule",
           ctx_.name);
  shaders_[module] = s;
  return s;
}

VkPipeline Pipelines::get(const std::string& module, std::span<const std::uint32_t> spec) {
  auto key = std::make_pair(module, std::vector<std::uint32_t>(spec.begin(), spec.end()));
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return it->second;
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (std::uint32_t i = 0; i < spec.size(); ++i)
    entries[i] = {i, static_cast<std::uint32_t>(i * sizeof(std::uint32_t)), sizeof(std::uint32_t)};
  VkSpecializationInfo sp{};
  sp.mapEntryCount = static_cast<std::uint32_t>(entries.size());
  sp.pMapEntries = entries.data();
  sp.dataSize = spec.size_bytes();
  sp.pData = spec.data();
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = shader(module);
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = &sp;
  ci.layout = layout_;
  if (ctx_.features.pipeline_stats) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkPipeline p = VK_NULL_HANDLE;
  vk_check(ctx_.fn->vkCreateComputePipelines(ctx_.device, cache_, 1, &ci, nullptr, &p),
           "vkCreateComputePipelines", ctx_.name);
  if (ctx_.features.pipeline_stats) print_statistics(ctx_, p, module, spec);
  pipelines_.emplace(std::move(key), p);
  return p;
}

}  // namespace nbx::vulkan
