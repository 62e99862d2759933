// Batches, barriers and per-batch resources (see vk_submit.hpp).
#include "backends/vulkan/vk_submit.hpp"

#include <algorithm>
#include <cstdlib>

#include "backends/vulkan/vk_errors.hpp"
#include "core/errors.hpp"

namespace nbx::vulkan {
namespace {

constexpr VkPipelineStageFlags kDeviceStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kDeviceWrites = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags kDeviceAccess = kDeviceWrites | VK_ACCESS_SHADER_READ_BIT |
                                        VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_UNIFORM_READ_BIT;

bool overlaps(const BufferRange& a, const BufferRange& b) {
  return a.block == b.block && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}
bool any_overlap(const BufferRange& r, const std::vector<BufferRange>& list) {
  return std::any_of(list.begin(), list.end(), [&r](const auto& o) { return overlaps(r, o); });
}
std::uint64_t round_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace

Submitter::Submitter(DeviceContext& ctx, MemoryPool& pool, VkDescriptorSetLayout layout)
    : ctx_(ctx), pool_(pool), layout_(layout) {
  if (const char* n = std::getenv("NBX_TEST_VK_DEVICE_LOST"); n && *n)
    fail_submit_ = std::strtoull(n, nullptr, 10);
  const DeviceApi& vk = *ctx.fn;
  params_bytes_ = round_up(kMaxCommands * 320ull, 4096);
  // Discrete devices stage transfers; zero-copy devices never do.
  staging_bytes_ = ctx.features.zero_copy ? 0 : 64ull << 20;
  for (Batch& b : slots_) {
    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    cpi.queueFamilyIndex = ctx.queue_family;
    vk_check(vk.vkCreateCommandPool(ctx.device, &cpi, nullptr, &b.pool), "vkCreateCommandPool",
             ctx.name);
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = b.pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    vk_check(vk.vkAllocateCommandBuffers(ctx.device, &cai, &b.cb), "vkAllocateCommandBuffers",
             ctx.name);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vk_check(vk.vkCreateFence(ctx.device, &fci, nullptr, &b.fence), "vkCreateFence", ctx.name);
    VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kMaxCommands},
                                    {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kMaxCommands * 7}};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = kMaxCommands;
    dpi.poolSizeCount = 2;
    dpi.pPoolSizes = sizes;
    vk_check(vk.vkCreateDescriptorPool(ctx.device, &dpi, nullptr, &b.descriptors),
             "vkCreateDescriptorPool", ctx.name);
    b.params = pool.create_host_block(params_bytes_, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT);
  }
}

Submitter::~Submitter() {
  const DeviceApi& vk = *ctx_.fn;
  // Every submitted batch finishes before its objects go, also on a lost device (whose waits
  // return at once); errors were reported when they happened.
  for (Batch& b : slots_)
    if (b.in_flight) (void)vk.vkWaitForFences(ctx_.device, 1, &b.fence, VK_TRUE, UINT64_MAX);
  for (Batch& b : slots_) {
    vk.vkDestroyDescriptorPool(ctx_.device, b.descriptors, nullptr);
    vk.vkDestroyFence(ctx_.device, b.fence, nullptr);
    vk.vkDestroyCommandPool(ctx_.device, b.pool, nullptr);
    if (b.params) pool_.destroy_block(b.params);
    if (b.staging) pool_.destroy_block(b.staging);
  }
}

void Submitter::barrier(VkPipelineStageFlags src, VkAccessFlags src_access,
                        VkPipelineStageFlags dst, VkAccessFlags dst_access) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = src_access;
  mb.dstAccessMask = dst_access;
  ctx_.fn->vkCmdPipelineBarrier(current().cb, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Submitter::throw_if_lost() const {
  if (!lost_.empty()) throw DeviceLost(ctx_.id, lost_);
}

void Submitter::check_queue(VkResult r, const char* call) {
  if (r == VK_ERROR_DEVICE_LOST) {
    lost_ = call + std::string(" on ") + ctx_.name +
            " failed with VK_ERROR_DEVICE_LOST: the device is lost, with its memory and "
            "queued work; every later call on it fails.";
    throw_if_lost();
  }
  vk_check(r, call, ctx_.name);
}

void Submitter::retire(Batch& b) {
  if (!b.in_flight) return;
  const DeviceApi& vk = *ctx_.fn;
  check_queue(vk.vkWaitForFences(ctx_.device, 1, &b.fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  b.in_flight = false;
  completed_ = std::max(completed_, b.serial);
  vk_check(vk.vkResetFences(ctx_.device, 1, &b.fence), "vkResetFences", ctx_.name);
}

void Submitter::begin_batch() {
  const DeviceApi& vk = *ctx_.fn;
  Batch& b = current();
  retire(b);  // the slot's previous batch, three serials ago
  vk_check(vk.vkResetCommandPool(ctx_.device, b.pool, 0), "vkResetCommandPool", ctx_.name);
  vk_check(vk.vkResetDescriptorPool(ctx_.device, b.descriptors, 0), "vkResetDescriptorPool",
           ctx_.name);
  b.params_used = b.staging_used = 0;
  b.commands = 0;
  b.serial = serial_;
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vk.vkBeginCommandBuffer(b.cb, &bi), "vkBeginCommandBuffer", ctx_.name);
  b.recording = true;
  // Orders this batch after everything earlier batches wrote.
  barrier(kDeviceStages, kDeviceWrites, kDeviceStages, kDeviceAccess);
  reads_.clear();
  writes_.clear();
  pool_.release_idle(completed_);
}

VkCommandBuffer Submitter::begin_command(std::uint64_t param_bytes, std::uint64_t staging_bytes) {
  throw_if_lost();
  Batch* b = &current();
  const std::uint64_t pa = std::max<std::uint64_t>(ctx_.features.min_uniform_alignment, 16);
  if (b->recording &&
      (b->commands >= kMaxCommands || b->params_used + round_up(param_bytes, pa) > params_bytes_ ||
       b->staging_used + round_up(staging_bytes, 256) > staging_bytes_)) {
    flush();
    b = &current();
  }
  if (!b->recording) begin_batch();
  if (staging_bytes && !b->staging)
    b->staging = pool_.create_host_block(
        staging_bytes_, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  b->commands += 1;
  return b->cb;
}

VkDescriptorSet Submitter::allocate_set() {
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = current().descriptors;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout_;
  VkDescriptorSet set = VK_NULL_HANDLE;
  vk_check(ctx_.fn->vkAllocateDescriptorSets(ctx_.device, &ai, &set), "vkAllocateDescriptorSets",
           ctx_.name);
  return set;
}

HostSlice Submitter::params(std::uint64_t bytes) {
  Batch& b = current();
  const std::uint64_t at = b.params_used;
  b.params_used +=
      round_up(bytes, std::max<std::uint64_t>(ctx_.features.min_uniform_alignment, 16));
  return {b.params->buffer, at, b.params->mapped + at};
}

HostSlice Submitter::staging(std::uint64_t bytes) {
  Batch& b = current();
  const std::uint64_t at = b.staging_used;
  b.staging_used += round_up(bytes, 256);
  return {b.staging->buffer, at, b.staging->mapped + at};
}

void Submitter::access(std::initializer_list<BufferRange> reads,
                       std::initializer_list<BufferRange> writes) {
  access(reads.begin(), reads.size(), writes.begin(), writes.size());
}

void Submitter::access(const BufferRange* reads, std::size_t nreads, const BufferRange* writes,
                       std::size_t nwrites) {
  bool hazard = false;
  for (std::size_t i = 0; i < nreads && !hazard; ++i) hazard = any_overlap(reads[i], writes_);
  for (std::size_t i = 0; i < nwrites && !hazard; ++i)
    hazard = any_overlap(writes[i], writes_) || any_overlap(writes[i], reads_);
  if (hazard) {
    barrier(kDeviceStages, kDeviceWrites, kDeviceStages, kDeviceAccess);
    reads_.clear();
    writes_.clear();
  }
  for (std::size_t i = 0; i < nreads; ++i) {
    reads_.push_back(reads[i]);
    reads[i].block->last_use = serial_;
  }
  for (std::size_t i = 0; i < nwrites; ++i) {
    writes_.push_back(writes[i]);
    writes[i].block->last_use = serial_;
  }
}

void Submitter::full_barrier() {
  barrier(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, kDeviceWrites, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
          kDeviceAccess);
  reads_.clear();
  writes_.clear();
}

void Submitter::flush() {
  Batch& b = current();
  if (!b.recording) return;
  const DeviceApi& vk = *ctx_.fn;
  barrier(kDeviceStages, kDeviceWrites, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  vk_check(vk.vkEndCommandBuffer(b.cb), "vkEndCommandBuffer", ctx_.name);
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &b.cb;
  b.recording = false;
  // The test hook: this submit is reported lost, as a driver would, and never reaches it.
  const bool simulate_loss = fail_submit_ && ++submits_ == fail_submit_;
  check_queue(simulate_loss ? VK_ERROR_DEVICE_LOST : vk.vkQueueSubmit(ctx_.queue, 1, &si, b.fence),
              "vkQueueSubmit");
  b.in_flight = true;
  ++serial_;
}

void Submitter::wait(std::uint64_t serial) {
  throw_if_lost();
  if (serial >= serial_ && current().recording) flush();
  // Batches finish in submission order on the one queue: retire oldest first.
  std::array<Batch*, 3> order{&slots_[0], &slots_[1], &slots_[2]};
  std::sort(order.begin(), order.end(), [](Batch* a, Batch* b) { return a->serial < b->serial; });
  for (Batch* b : order) {
    if (b->in_flight && b->serial <= serial) retire(*b);
  }
  pool_.release_idle(completed_);
}

}  // namespace nbx::vulkan
