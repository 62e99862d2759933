// Querying a physical device once: features, limits, queues, memory heaps -> DeviceFeatures
// and the DeviceProperties the capability model cross-checks against device files.
#include "backends/vulkan/vk_properties.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backends/vulkan/vk_coopmat_query.hpp"

namespace nbx::vulkan {
namespace {

bool has(const std::vector<std::string>& list, const char* name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::string vendor_name(std::uint32_t id, VkDriverId driver) {
  if (driver == VK_DRIVER_ID_MESA_LLVMPIPE) return "mesa";
  switch (id) {
    case 0x10de:
      return "nvidia";
    case 0x1002:
      return "amd";
    case 0x8086:
      return "intel";
    case 0x10005:
      return "mesa";
    case 0x13b5:
      return "arm";
    case 0x5143:
      return "qualcomm";
    default:
      return "unknown";
  }
}

// What a shader does with subnormals of one width, as the backend runs it.
std::string subnormals_text(bool preserve, bool flush) {
  if (preserve) return "preserved (DenormPreserve set in every module)";
  return flush ? "may flush to zero (the driver cannot preserve them; it can flush)"
               : "may flush to zero (the driver offers no float-controls mode for them)";
}

std::string version_text(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::string subgroup_ops_text(std::uint32_t ops) {
  static const std::pair<std::uint32_t, const char*> kNames[] = {
      {VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},
      {VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
      {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"},
      {VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"},
      {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"},
      {VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"}};
  std::string out;
  for (auto [bit, name] : kNames) {
    if (ops & bit) out += (out.empty() ? "" : ",") + std::string(name);
  }
  return out;
}

}  // namespace

void FeatureChain::link(std::uint32_t api_version, const std::vector<std::string>& extensions) {
  core.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  core.pNext = &v11;
  v11.pNext = &v12;
  void** tail = &v12.pNext;
  auto append = [&tail](auto& s, VkStructureType type) {
    s.sType = type;
    *tail = &s;
    tail = &s.pNext;
  };
  if (api_version >= VK_API_VERSION_1_3) {
    append(v13, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES);
  } else if (has(extensions, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) {
    append(size_control, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT);
  }
  if (has(extensions, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME))
    append(coopmat, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR);
  if (has(extensions, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME))
    append(coopmat_nv, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
  if (has(extensions, VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME))
    append(bf16, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR);
  if (has(extensions, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME))
    append(exec_props,
           VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR);
  if (has(extensions, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME))
    append(atomic_float, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT);
  *tail = nullptr;
}

PhysicalDeviceInfo describe_physical_device(const InstanceApi& api, VkPhysicalDevice pd) {
  PhysicalDeviceInfo info;
  std::uint32_t count = 0;
  api.vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  api.vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, exts.data());
  for (const auto& e : exts) info.extensions.emplace_back(e.extensionName);

  VkPhysicalDeviceProperties base{};
  api.vkGetPhysicalDeviceProperties(pd, &base);
  DeviceFeatures& f = info.features;
  f.api_version = std::min(base.apiVersion, api.api_version);
  if (f.api_version < VK_API_VERSION_1_2) {
    info.unusable_reason =
        "it reports Vulkan " + version_text(base.apiVersion) + "; the backend needs Vulkan 1.2";
  }

  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlPropertiesEXT psize{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT};
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV psm{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  props.pNext = &p11;
  p11.pNext = &p12;
  const bool size_control_props = f.api_version >= VK_API_VERSION_1_3 ||
                                  has(info.extensions, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  void** tail = &p12.pNext;
  if (size_control_props) {
    *tail = &psize;
    tail = &psize.pNext;
  }
  f.sm_builtins = has(info.extensions, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  if (f.sm_builtins) {
    *tail = &psm;
    tail = &psm.pNext;
  }
  if (f.api_version >= VK_API_VERSION_1_2) api.vkGetPhysicalDeviceProperties2(pd, &props);

  FeatureChain chain;
  chain.link(f.api_version, info.extensions);
  if (f.api_version >= VK_API_VERSION_1_2) api.vkGetPhysicalDeviceFeatures2(pd, &chain.core);

  const VkPhysicalDeviceLimits& lim = base.limits;
  f.device_type = base.deviceType;
  f.fp64 = chain.core.features.shaderFloat64;
  f.int64 = chain.core.features.shaderInt64;
  f.int64_atomics = f.int64 && chain.v12.shaderBufferInt64Atomics;
  f.float32_atomic_add = chain.atomic_float.shaderBufferFloat32AtomicAdd;
  f.int16 = chain.core.features.shaderInt16;
  f.fp16 = chain.v12.shaderFloat16;
  f.int8 = chain.v12.shaderInt8;
  f.storage16 = chain.v11.storageBuffer16BitAccess;
  f.storage8 = chain.v12.storageBuffer8BitAccess;
  f.bf16_ext = chain.bf16.shaderBFloat16Type;
  f.coopmat_khr = chain.coopmat.cooperativeMatrix;
  f.coopmat_nv = chain.coopmat_nv.cooperativeMatrix;
  f.vulkan_memory_model = chain.v12.vulkanMemoryModel && (f.coopmat_khr || f.coopmat_nv);
  const CoopmatShapes coopmat_shapes = query_coopmat_shapes(api, pd, f);
  f.coopmat_f16_khr = coopmat_shapes.khr;
  f.coopmat_f16_nv = coopmat_shapes.nv;
  f.subgroup_size_control = f.api_version >= VK_API_VERSION_1_3
                                ? chain.v13.subgroupSizeControl
                                : chain.size_control.subgroupSizeControl;
  f.memory_budget = has(info.extensions, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  f.denorm_preserve_f32 = p12.shaderDenormPreserveFloat32;
  f.denorm_preserve_f64 = p12.shaderDenormPreserveFloat64;
  f.subgroup_size = std::max(1u, p11.subgroupSize);
  f.subgroup_ops = p11.subgroupSupportedOperations;
  f.min_subgroup_size = size_control_props ? psize.minSubgroupSize : f.subgroup_size;
  f.max_subgroup_size = size_control_props ? psize.maxSubgroupSize : f.subgroup_size;
  f.max_workgroup_invocations = lim.maxComputeWorkGroupInvocations;
  f.max_workgroup_size_x = lim.maxComputeWorkGroupSize[0];
  f.max_workgroup_count_x = lim.maxComputeWorkGroupCount[0];
  f.max_shared_memory = lim.maxComputeSharedMemorySize;
  f.max_push_constants = lim.maxPushConstantsSize;
  f.max_storage_buffer_range = lim.maxStorageBufferRange;
  f.min_storage_alignment = lim.minStorageBufferOffsetAlignment;
  f.min_uniform_alignment = lim.minUniformBufferOffsetAlignment;
  f.max_allocation_size = p11.maxMemoryAllocationSize;
  f.timestamp_period_ns = lim.timestampPeriod;

  // A queue that computes, preferring one with timestamps.
  api.vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  api.vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, families.data());
  int chosen = -1;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (chosen < 0 || (families[chosen].timestampValidBits == 0 && families[i].timestampValidBits))
      chosen = static_cast<int>(i);
  }
  if (chosen < 0 && info.unusable_reason.empty()) info.unusable_reason = "it has no compute queue";
  info.queue_family = chosen < 0 ? 0 : static_cast<std::uint32_t>(chosen);
  info.timestamp_valid_bits = chosen < 0 ? 0 : families[chosen].timestampValidBits;
  if (info.unusable_reason.empty() && !(f.storage8 && f.storage16)) {
    info.unusable_reason =
        "it lacks storageBuffer8BitAccess/storageBuffer16BitAccess, which "
        "every elementwise kernel needs";
  }

  VkPhysicalDeviceMemoryProperties mem{};
  api.vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  std::uint64_t device_local = 0;
  for (std::uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      device_local = std::max<std::uint64_t>(device_local, mem.memoryHeaps[i].size);
  }
  const VkMemoryPropertyFlags shared = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  bool shared_type = false;
  for (std::uint32_t i = 0; i < mem.memoryTypeCount; ++i)
    shared_type |= (mem.memoryTypes[i].propertyFlags & shared) == shared;
  f.zero_copy = shared_type && (base.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ||
                                base.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU);

  for (const char* e :
       {VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME,
        VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME,
        VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME}) {
    if (has(info.extensions, e)) info.enable_extensions.emplace_back(e);
  }
  // Only on request: capturing statistics may cost the driver compile time.
  const char* stats = std::getenv("NBX_VULKAN_PIPELINE_STATS");
  if (stats && std::string(stats) == "1" &&
      has(info.extensions, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
    info.enable_extensions.emplace_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    f.pipeline_stats = true;
  }
  if (f.api_version < VK_API_VERSION_1_3 &&
      has(info.extensions, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME))
    info.enable_extensions.emplace_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);

  DeviceProperties& p = info.properties;
  p.name = base.deviceName;
  p.pci_vendor_id = base.vendorID;
  p.pci_device_id = base.deviceID;
  p.vulkan_driver_id = p12.driverID;
  p.vendor = vendor_name(base.vendorID, p12.driverID);
  p.arch = p12.driverID == VK_DRIVER_ID_MESA_LLVMPIPE ? "llvmpipe" : p.vendor;
  p.driver = std::string(p12.driverName) + " " + p12.driverInfo;
  p.total_memory = device_local;
  p.compute_units = f.sm_builtins ? static_cast<int>(psm.shaderSMCount) : 0;
  p.fp64 = f.fp64;
  p.fp16 = f.fp16 && f.storage16;
  p.bf16 = f.storage16;  // emulated: 16-bit words, float32 arithmetic (see extra["bf16"])
  p.int64 = f.int64;
  p.int8 = f.int8 && f.storage8;
  p.subgroup_size = static_cast<int>(f.subgroup_size);
  for (std::uint32_t s = f.min_subgroup_size; s && s <= f.max_subgroup_size; s *= 2)
    p.subgroup_sizes.push_back(static_cast<int>(s));
  p.max_threads_per_block = static_cast<int>(f.max_workgroup_invocations);
  p.shared_memory_per_block = f.max_shared_memory;
  p.shared_memory_per_block_optin = f.max_shared_memory;
  if (f.coopmat_khr)
    p.matrix_unit = "coopmat";
  else if (f.coopmat_nv)
    p.matrix_unit = "coopmat_nv";
  p.max_push_constant_bytes = f.max_push_constants;

  auto& x = p.extra;
  x["api_version"] = version_text(base.apiVersion);
  x["driver_version"] = std::to_string(base.driverVersion);
  x["bf16"] = f.bf16_ext ? "emulated (VK_KHR_shader_bfloat16 present; glslc cannot emit it)"
                         : "emulated (16-bit words, float32 arithmetic; glslc has no bf16 type)";
  x["shader_int16"] = f.int16 ? "yes" : "no";
  x["shader_int64_atomics"] = f.int64_atomics ? "yes" : "no";
  x["shader_float32_atomic_add"] = f.float32_atomic_add ? "yes" : "no";
  // Tests and users read these to know whether a subnormal may read or come out as zero.
  x["float32_subnormals"] =
      subnormals_text(f.denorm_preserve_f32, p12.shaderDenormFlushToZeroFloat32);
  x["float64_subnormals"] =
      subnormals_text(f.denorm_preserve_f64, p12.shaderDenormFlushToZeroFloat64);
  // The scatters' float32 sums follow the modules' float mode, native atomics or not (the
  // H200's driver keeps subnormals under DenormPreserve at full speed, where CUDA's atomicAdd
  // flushes them: test_index_write_modes).
  x["float32_atomic_add_subnormals"] =
      f.denorm_preserve_f32 ? "preserved" : "may flush to zero (no DenormPreserve for float32)";
  x["storage_8bit"] = f.storage8 ? "yes" : "no";
  x["storage_16bit"] = f.storage16 ? "yes" : "no";
  x["subgroup_ops"] = subgroup_ops_text(f.subgroup_ops);
  x["subgroup_size_control"] = f.subgroup_size_control ? "yes" : "no";
  x["max_workgroup_size"] = std::to_string(lim.maxComputeWorkGroupSize[0]) + "x" +
                            std::to_string(lim.maxComputeWorkGroupSize[1]) + "x" +
                            std::to_string(lim.maxComputeWorkGroupSize[2]);
  x["max_workgroup_count"] = std::to_string(lim.maxComputeWorkGroupCount[0]);
  x["max_storage_buffer_range"] = std::to_string(lim.maxStorageBufferRange);
  x["cooperative_matrix"] = f.coopmat_khr ? "khr" : (f.coopmat_nv ? "nv" : "none");
  x["cooperative_matrix_shapes"] = coopmat_shapes.listing.empty() ? "none" : coopmat_shapes.listing;
  x["matmul.coopmat"] = choose_coopmat(f).status;
  x["zero_copy"] = f.zero_copy ? "yes" : "no";
  // How Tensor::to reaches another device from here (core/ops/copy_route.cpp): this backend
  // has no device-to-device copy of its own.
  x["topology.peers"] = "none: copies to other devices go through host memory";
  x["timestamp_period_ns"] = std::to_string(f.timestamp_period_ns);
  // The queue's clock width: nbx::Event takes differences modulo 2^bits (core/event.cpp).
  x["timestamp_valid_bits"] = std::to_string(info.timestamp_valid_bits);
  for (std::uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
    char buf[64];
    std::snprintf(
        buf, sizeof buf, "%.2f GiB%s", mem.memoryHeaps[i].size / 1073741824.0,
        (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) ? " device_local" : "");
    x["memory_heap" + std::to_string(i)] = buf;
  }
  return info;
}

void fill_enabled_features(const PhysicalDeviceInfo& info, FeatureChain& c) {
  const DeviceFeatures& f = info.features;
  c.link(f.api_version, info.enable_extensions);
  c.core.features.shaderFloat64 = f.fp64;
  c.core.features.shaderInt64 = f.int64;
  c.v12.shaderBufferInt64Atomics = f.int64_atomics;
  c.atomic_float.shaderBufferFloat32AtomicAdd = f.float32_atomic_add;
  c.core.features.shaderInt16 = f.int16;
  c.v11.storageBuffer16BitAccess = f.storage16;
  c.v12.storageBuffer8BitAccess = f.storage8;
  c.v12.shaderFloat16 = f.fp16;
  c.v12.shaderInt8 = f.int8;
  if (f.api_version >= VK_API_VERSION_1_3)
    c.v13.subgroupSizeControl = f.subgroup_size_control;
  else
    c.size_control.subgroupSizeControl = f.subgroup_size_control;
  c.coopmat.cooperativeMatrix = f.coopmat_khr;
  c.coopmat_nv.cooperativeMatrix = f.coopmat_nv;
  c.v12.vulkanMemoryModel = f.vulkan_memory_model;
  c.bf16.shaderBFloat16Type = f.bf16_ext;
  c.exec_props.pipelineExecutableInfo = f.pipeline_stats;
}

}  // namespace nbx::vulkan
