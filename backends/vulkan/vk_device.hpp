// nbx::vulkan::VulkanDevice: one opened Vulkan physical device behind the BackendDevice
// seam. Owns the VkDevice and, through MemoryPool / Pipelines / Submitter, everything made
// from it. Families: elementwise (vk_elementwise.cpp), copy_probe and timestamp (benchmark
// diagnostics; vk_device.cpp), and one vk_<family>.cpp for each other family, listed in
// vk_device.cpp's launcher table (kVkLaunchers).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/vk_api.hpp"
#include "backends/vulkan/vk_context.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_memory.hpp"
#include "backends/vulkan/vk_pipelines.hpp"
#include "backends/vulkan/vk_properties.hpp"
#include "backends/vulkan/vk_submit.hpp"
#include "core/backend.hpp"

namespace nbx::vulkan {

// Messages of the Khronos validation layer (NBX_VULKAN_VALIDATION=1), collected by the
// instance's debug messenger; synchronize() turns them into an error.
struct ValidationLog {
  std::mutex mutex;
  std::vector<std::string> messages;
};

class VulkanDevice final : public BackendDevice {
 public:
  VulkanDevice(std::shared_ptr<InstanceApi> api, VkPhysicalDevice physical, int index,
               PhysicalDeviceInfo info, std::shared_ptr<ValidationLog> log);
  ~VulkanDevice() override;

  // For the kernel families (vk_dispatch.hpp): the device's features and limits, the
  // default workgroup size (a multiple of the subgroup size, within the limits), and one
  // recorded dispatch (vk_dispatch.cpp).
  const DeviceContext& context() const { return ctx_; }
  std::uint32_t workgroup_size() const { return workgroup_size_; }
  void record(const Dispatch& dispatch);
  bool has_timestamps() const { return queries_ != VK_NULL_HANDLE; }

  // The launchers of the families this file's device runs itself.
  void launch_elementwise(const KernelLaunch& launch);  // vk_elementwise.cpp
  void launch_timestamp(const KernelLaunch& launch);
  void launch_copy_probe(const KernelLaunch& launch);

 private:
  DeviceMemory allocate_impl(std::size_t bytes) override;
  void free_impl(DeviceMemory memory) override;
  MemoryInfo memory_info_impl() const override;
  void copy_from_host_impl(DeviceMemory dst, std::size_t dst_offset, const void* src,
                           std::size_t bytes) override;
  void copy_to_host_impl(void* dst, DeviceMemory src, std::size_t src_offset,
                         std::size_t bytes) override;
  void copy_on_device_impl(DeviceMemory dst, std::size_t dst_offset, DeviceMemory src,
                           std::size_t src_offset, std::size_t bytes) override;
  void synchronize_impl() override;
  int launch_impl(const KernelLaunch& launch) override;
  bool offers_impl(KernelFamily family, int variant) const override;
  void check_fault();
  void check_validation();
  // Waits for the batch that last used `a` when the host is about to touch it directly.
  void wait_for_host_access(const Allocation& a);

  DeviceApi fn_;
  DeviceContext ctx_;
  std::shared_ptr<ValidationLog> log_;
  std::unique_ptr<MemoryPool> pool_;
  std::unique_ptr<Pipelines> pipelines_;
  std::unique_ptr<Submitter> submit_;
  MemoryBlock* fault_ = nullptr;  // abi::FaultRecord, host-visible
  // Bound where a kernel has no buffer (scalars, absent inputs and outputs): a slice of its own
  // per binding of each command of a batch (kDummySlice bytes), since the synchronization
  // validation takes a binding a shader can write as written: one buffer shared by a batch's
  // dispatches was a read-after-write hazard between them (issue 15, defect 6).
  MemoryBlock* dummy_ = nullptr;
  std::uint64_t dummy_slice_ = 256;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  std::uint32_t next_query_ = 0;
  std::uint32_t workgroup_size_ = 64;
};

}  // namespace nbx::vulkan
