// VulkanDevice::record: one compute dispatch, shared by every kernel family.
#include "backends/vulkan/vk_dispatch.hpp"

#include <algorithm>
#include <cstring>

#include "backends/vulkan/vk_device.hpp"
#include "core/errors.hpp"

namespace nbx::vulkan {
void VulkanDevice::record(const Dispatch& d) {
  if (d.buffers.size() > kDataBindings)
    throw Internal("vulkan dispatch of " + std::string(d.module) + " binds " +
                   std::to_string(d.buffers.size()) + " buffers; the layout has " +
                   std::to_string(kDataBindings));
  const auto& f = ctx_.features;
  VkPipeline pipeline = pipelines_->get(std::string(d.module), d.spec);
  // A kernel without parameters still binds a (16-byte, unread) block: one layout for all.
  const std::size_t param_bytes = std::max<std::size_t>(d.param_bytes, 16);
  VkCommandBuffer cb = submit_->begin_command(param_bytes, 0);
  VkDescriptorBufferInfo infos[Pipelines::kBindings];
  HostSlice ps = submit_->params(param_bytes);
  if (d.param_bytes > 0) std::memcpy(ps.ptr, d.params, d.param_bytes);
  infos[0] = {ps.buffer, ps.offset, param_bytes};
  BufferRange reads[kDataBindings], writes[kDataBindings];
  std::size_t nreads = 0, nwrites = 0;
  for (std::uint32_t b = 0; b < kDataBindings; ++b) {
    if (b >= d.buffers.size() || !d.buffers[b].memory) {
      const std::uint64_t slot = std::uint64_t(submit_->command_in_batch()) * kDataBindings + b;
      infos[1 + b] = {dummy_->buffer, slot * dummy_slice_, dummy_slice_};
      continue;
    }
    const Allocation& a = *allocation_of(d.buffers[b].memory);
    infos[1 + b] = {a.buffer(), a.offset,
                    std::min<std::uint64_t>(a.size, f.max_storage_buffer_range)};
    const DispatchBuffer& db = d.buffers[b];
    if (db.written && db.written_bytes > 0 && db.written_from < a.size)
      writes[nwrites++] = {a.block, a.offset + db.written_from,
                           std::min(db.written_bytes, a.size - db.written_from)};
    else if (db.written)
      writes[nwrites++] = {a.block, a.offset, a.size};
    else
      reads[nreads++] = {a.block, a.offset, a.size};
  }
  infos[kFaultBinding] = {fault_->buffer, 0, VK_WHOLE_SIZE};
  VkDescriptorSet set = submit_->allocate_set();
  VkWriteDescriptorSet w[Pipelines::kBindings];
  for (std::uint32_t b = 0; b < Pipelines::kBindings; ++b) {
    w[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w[b].dstSet = set;
    w[b].dstBinding = b;
    w[b].descriptorCount = 1;
    w[b].descriptorType =
        b == 0 ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w[b].pBufferInfo = &infos[b];
  }
  fn_.vkUpdateDescriptorSets(ctx_.device, Pipelines::kBindings, w, 0, nullptr);
  submit_->access(reads, nreads, writes, nwrites);
  fn_.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  fn_.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_->layout(), 0, 1, &set,
                              0, nullptr);
  fn_.vkCmdDispatch(cb, d.groups[0], d.groups[1], d.groups[2]);
}

}  // namespace nbx::vulkan
