// VulkanDevice: device creation, memory and copies, synchronization, faults, timestamps.
#include "backends/vulkan/vk_device.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/vulkan/vk_copy.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_errors.hpp"
#include "backends/vulkan/vk_matmul.hpp"
#include "core/errors.hpp"
#include "core/families/backend_variants.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::vulkan {
namespace {
constexpr std::uint32_t kQueries = 1024;
}

VulkanDevice::VulkanDevice(std::shared_ptr<InstanceApi> api, VkPhysicalDevice physical, int index,
                           PhysicalDeviceInfo info, std::shared_ptr<ValidationLog> log)
    : BackendDevice(DeviceId{"vulkan", index}, info.properties), log_(std::move(log)) {
  ctx_.instance = std::move(api);
  ctx_.fn = &fn_;
  ctx_.physical = physical;
  ctx_.features = info.features;
  ctx_.queue_family = info.queue_family;
  ctx_.timestamp_valid_bits = info.timestamp_valid_bits;
  ctx_.name = display_name();
  ctx_.id = id().str();
  const InstanceApi& in = *ctx_.instance;
  in.vkGetPhysicalDeviceMemoryProperties(physical, &ctx_.memory);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = info.queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  FeatureChain features;
  fill_enabled_features(info, features);
  std::vector<const char*> exts;
  for (const auto& e : info.enable_extensions) exts.push_back(e.c_str());
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &features.core;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<std::uint32_t>(exts.size());
  dci.ppEnabledExtensionNames = exts.data();
  vk_check(in.vkCreateDevice(physical, &dci, nullptr, &ctx_.device), "vkCreateDevice", ctx_.name);
  fn_.load(in, ctx_.device);
  fn_.vkGetDeviceQueue(ctx_.device, info.queue_family, 0, &ctx_.queue);

  // 256 invocations (8 NVIDIA warps, 32 llvmpipe subgroups), within the device's limits
  // and a multiple of its subgroup size.
  const auto& f = ctx_.features;
  // NBX_VULKAN_WORKGROUP_SIZE overrides the 256 (benchmarks compare 128/256/512).
  std::uint32_t want = 256;
  if (const char* e = std::getenv("NBX_VULKAN_WORKGROUP_SIZE"); e && std::atoi(e) > 0)
    want = std::uint32_t(std::atoi(e));
  std::uint32_t wg = std::min({want, f.max_workgroup_invocations, f.max_workgroup_size_x});
  if (wg >= f.subgroup_size) wg -= wg % f.subgroup_size;
  workgroup_size_ = std::max(1u, wg);

  pool_ = std::make_unique<MemoryPool>(ctx_);
  VkPhysicalDeviceProperties base{};
  in.vkGetPhysicalDeviceProperties(physical, &base);
  pipelines_ = std::make_unique<Pipelines>(ctx_, base.pipelineCacheUUID);
  submit_ = std::make_unique<Submitter>(ctx_, *pool_, pipelines_->set_layout());
  fault_ = pool_->create_host_block(256, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
  std::memset(fault_->mapped, 0, 256);
  dummy_slice_ = std::max<std::uint64_t>(256, ctx_.features.min_storage_alignment);
  const std::uint64_t dummy_bytes = dummy_slice_ * Submitter::kMaxCommands * kDataBindings;
  dummy_ = pool_->create_host_block(dummy_bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
  std::memset(dummy_->mapped, 0, dummy_bytes);
  if (ctx_.timestamp_valid_bits) {
    VkQueryPoolCreateInfo qp{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qp.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qp.queryCount = kQueries;
    vk_check(fn_.vkCreateQueryPool(ctx_.device, &qp, nullptr, &queries_), "vkCreateQueryPool",
             ctx_.name);
  }
}

VulkanDevice::~VulkanDevice() {
  submit_.reset();  // waits for every batch
  pipelines_.reset();
  if (queries_) fn_.vkDestroyQueryPool(ctx_.device, queries_, nullptr);
  pool_.reset();
  fn_.vkDestroyDevice(ctx_.device, nullptr);
  // What the layer said while the device closed has no synchronize left to raise it: it goes
  // to stderr, where tests/conformance/run_with_validation.py fails on it.
  if (log_) {
    std::lock_guard<std::mutex> lock(log_->mutex);
    for (const std::string& m : log_->messages) std::fprintf(stderr, "%s\n", m.c_str());
    log_->messages.clear();
  }
}

DeviceMemory VulkanDevice::allocate_impl(std::size_t bytes) {
  return {pool_->allocate(bytes), bytes};
}

void VulkanDevice::free_impl(DeviceMemory memory) {
  pool_->free(allocation_of(memory), submit_->completed());
}

MemoryInfo VulkanDevice::memory_info_impl() const {
  return pool_->info();
}

void VulkanDevice::wait_for_host_access(const Allocation& a) {
  submit_->throw_if_lost();  // mapped memory stays readable, but what it holds is undefined
  if (a.block->last_use > submit_->completed()) submit_->wait(a.block->last_use);
}

void VulkanDevice::copy_from_host_impl(DeviceMemory dst, std::size_t dst_offset, const void* src,
                                       std::size_t bytes) {
  Allocation& a = *allocation_of(dst);
  const auto* from = static_cast<const std::uint8_t*>(src);
  if (a.mapped()) {
    wait_for_host_access(a);
    std::memcpy(a.mapped() + dst_offset, from, bytes);
    return;
  }
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min<std::size_t>(bytes - done, submit_->staging_capacity());
    VkCommandBuffer cb = submit_->begin_command(0, n);
    HostSlice s = submit_->staging(n);
    std::memcpy(s.ptr, from + done, n);
    const VkBufferCopy region{s.offset, a.offset + dst_offset + done, n};
    submit_->access({}, {{a.block, region.dstOffset, n}});
    fn_.vkCmdCopyBuffer(cb, s.buffer, a.buffer(), 1, &region);
    done += n;
  }
}

void VulkanDevice::copy_to_host_impl(void* dst, DeviceMemory src, std::size_t src_offset,
                                     std::size_t bytes) {
  Allocation& a = *allocation_of(src);
  auto* to = static_cast<std::uint8_t*>(dst);
  if (a.mapped()) {
    wait_for_host_access(a);
    std::memcpy(to, a.mapped() + src_offset, bytes);
    check_fault();  // a read back raises what the kernels that wrote it recorded
    return;
  }
  // One staging chunk per batch: the slice is read right after its batch finishes.
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min<std::size_t>(bytes - done, submit_->staging_capacity());
    VkCommandBuffer cb = submit_->begin_command(0, n);
    HostSlice s = submit_->staging(n);
    const VkBufferCopy region{a.offset + src_offset + done, s.offset, n};
    submit_->access({{a.block, region.srcOffset, n}}, {});
    fn_.vkCmdCopyBuffer(cb, a.buffer(), s.buffer, 1, &region);
    submit_->wait(submit_->current_serial());
    std::memcpy(to + done, s.ptr, n);
    done += n;
  }
  check_fault();  // everything submitted before the copy has finished
}

void VulkanDevice::copy_on_device_impl(DeviceMemory dst, std::size_t dst_offset, DeviceMemory src,
                                       std::size_t src_offset, std::size_t bytes) {
  Allocation& d = *allocation_of(dst);
  Allocation& s = *allocation_of(src);
  const BufferRange from{s.block, s.offset + src_offset, bytes};
  const BufferRange to{d.block, d.offset + dst_offset, bytes};
  if (from.block == to.block && from.offset < to.offset + bytes &&
      to.offset < from.offset + bytes) {
    throw InvalidArgument("copy_on_device", "copy_on_device on " + ctx_.name +
                                                ": the source and "
                                                "destination ranges overlap (" +
                                                std::to_string(bytes) + " bytes).");
  }
  // A copy shader where the ranges fit one binding (vk_copy.cpp: 4.1 TB/s against
  // vkCmdCopyBuffer's 844 GB/s on the H200); the transfer command otherwise.
  if (copy_by_shader(*this, dst, dst_offset, src, src_offset, bytes)) return;
  VkCommandBuffer cb = submit_->begin_command(0, 0);
  submit_->access({from}, {to});
  const VkBufferCopy region{from.offset, to.offset, bytes};
  fn_.vkCmdCopyBuffer(cb, s.buffer(), d.buffer(), 1, &region);
}

void VulkanDevice::synchronize_impl() {
  submit_->wait_idle();
  check_validation();
  check_fault();
}

void VulkanDevice::check_fault() {
  abi::FaultRecord rec;
  std::memcpy(&rec, fault_->mapped, sizeof rec);
  if (rec.code == abi::kFaultNone) return;
  std::memset(fault_->mapped, 0, sizeof rec);
  throw fault_error(rec, id().str(), ctx_.name);
}

void VulkanDevice::check_validation() {
  if (!log_) return;
  std::lock_guard<std::mutex> lock(log_->mutex);
  if (log_->messages.empty()) return;
  std::string all = std::to_string(log_->messages.size()) + " message(s) from the Vulkan " +
                    "validation layer on " + ctx_.name + ": " + log_->messages.front();
  log_->messages.clear();
  throw Internal(all);
}

// The families VulkanDevice runs itself.
void launch_family(VulkanDevice& d, const abi::ElementwiseParams&, const KernelLaunch& l) {
  d.launch_elementwise(l);
}
void launch_family(VulkanDevice& d, const abi::TimestampParams&, const KernelLaunch& l) {
  d.launch_timestamp(l);
}
void launch_family(VulkanDevice& d, const abi::CopyProbeParams&, const KernelLaunch& l) {
  d.launch_copy_probe(l);
}

namespace {

using VkLauncher = void (*)(VulkanDevice& device, const KernelLaunch& launch);

template <class Params>
void run(VulkanDevice& device, const KernelLaunch& launch) {
  Params p;  // validated by BackendDevice::launch, including its size
  std::memcpy(&p, launch.params.data(), sizeof p);
  launch_family(device, p, launch);
}

// Every family, in family order, with the variants this backend's shaders run
// (backend_variants.hpp); the cooperative-matrix matmul and timestamps are further asked of
// the device (offers_impl).
template <class Params, KernelFamily F>
constexpr FamilyEntry<VkLauncher> entry() {
  constexpr std::uint32_t variants = implemented_variants(BackendKind::kVulkan, F);
  if constexpr (variants == 0)
    return {F, nullptr, 0};
  else
    return {F, &run<Params>, variants};
}
constexpr std::array<FamilyEntry<VkLauncher>, kKernelFamilyCount> kVkLaunchers = {{
#define NBX_KERNEL_FAMILY(kId, id, Params) entry<Params, KernelFamily::kId>(),
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY
}};
static_assert(covers_every_family(kVkLaunchers));

}  // namespace

bool VulkanDevice::offers_impl(KernelFamily family, int variant) const {
  const auto& entry = kVkLaunchers[static_cast<std::size_t>(family)];
  if (entry.launch == nullptr || (entry.variants & variant_bit(variant)) == 0) return false;
  if (family == KernelFamily::kMatmul && variant == abi::kMatmulCoopMatrix)
    return matmul_coopmat_available(*this);  // a float16 cooperative-matrix shape was found
  if (family == KernelFamily::kTimestamp) return has_timestamps();
  return true;
}

int VulkanDevice::launch_impl(const KernelLaunch& launch) {
  kVkLaunchers[static_cast<std::size_t>(launch.family)].launch(*this, launch);
  return family_spec(launch.family).variant_of(launch.params.data());
}

// Family copy_probe: buffers [0] destination, [1] source; copies `words` 16-byte words
// with kernels/vulkan/copy_probe.comp, the bandwidth ceiling benchmarks compare the
// elementwise kernel with.
void VulkanDevice::launch_copy_probe(const KernelLaunch& launch) {
  abi::CopyProbeParams p;
  std::memcpy(&p, launch.params.data(), sizeof p);
  if (std::uint64_t(p.words) > UINT32_MAX)
    throw InvalidArgument("copy_probe", "copy_probe on " + ctx_.name +
                                            ": more than 2^32 - 1 words (64 GiB); refused.");
  const std::uint64_t words = std::uint64_t(p.words);
  if (words == 0) return;
  const auto& f = ctx_.features;
  const std::uint64_t groups = std::min<std::uint64_t>(
      {(words + workgroup_size_ - 1) / workgroup_size_, f.max_workgroup_count_x, 1u << 22});
  const std::uint32_t head[4] = {std::uint32_t(words), std::uint32_t(groups * workgroup_size_), 0,
                                 0};
  const std::uint32_t spec[] = {workgroup_size_};
  const DispatchBuffer bufs[] = {{launch.buffers[0].memory, true}, {launch.buffers[1].memory}};
  Dispatch d;
  d.module = "copy_probe";
  d.spec = spec;
  d.params = head;
  d.param_bytes = sizeof head;
  d.buffers = bufs;
  d.groups[0] = std::uint32_t(groups);
  record(d);
}

// Family timestamp: buffers [0] a uint64 array, params the slot. Writes the GPU clock
// (ticks; extra["timestamp_period_ns"] converts) into the slot once every command issued
// before it has finished.
void VulkanDevice::launch_timestamp(const KernelLaunch& launch) {
  abi::TimestampParams p;
  std::memcpy(&p, launch.params.data(), sizeof p);
  const std::int64_t slot = p.slot;
  Allocation& a = *allocation_of(launch.buffers[0].memory);
  VkCommandBuffer cb = submit_->begin_command(0, 0);
  submit_->full_barrier();
  const std::uint32_t q = next_query_++ % kQueries;
  fn_.vkCmdResetQueryPool(cb, queries_, q, 1);
  fn_.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, q);
  const std::uint64_t at = a.offset + std::uint64_t(slot) * 8;
  submit_->access({}, {{a.block, at, 8}});
  fn_.vkCmdCopyQueryPoolResults(cb, queries_, q, 1, a.buffer(), at, 8,
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
}

}  // namespace nbx::vulkan
