// Block sub-allocator for tensors and the host-visible buffers of the submitter.
#include "backends/vulkan/vk_memory.hpp"

#include <algorithm>

#include "backends/vulkan/vk_errors.hpp"
#include "core/errors.hpp"

namespace nbx::vulkan {
namespace {
constexpr std::uint64_t kMiB = 1ull << 20;
std::uint64_t round_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}
}  // namespace

MemoryPool::MemoryPool(DeviceContext& ctx) : ctx_(ctx) {
  const auto& f = ctx.features;
  const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  host_type_ = find_type(host, 0);
  // Discrete GPUs: plain device-local memory (not the BAR window, slow for the host to read).
  tensor_type_ = f.zero_copy ? find_type(local | host, 0)
                             : find_type(local, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  if (tensor_type_ == UINT32_MAX) tensor_type_ = find_type(local, 0);
  if (tensor_type_ == UINT32_MAX || host_type_ == UINT32_MAX) {
    throw Unavailable("vulkan", "no suitable memory type",
                      ctx.name +
                          " offers no device-local or no host-visible coherent memory "
                          "type; the backend cannot use it.");
  }
  const std::uint64_t heap =
      ctx.memory.memoryHeaps[ctx.memory.memoryTypes[tensor_type_].heapIndex].size;
  block_size_ = std::clamp<std::uint64_t>(heap / 16, 16 * kMiB, 256 * kMiB);
  if (f.max_allocation_size) block_size_ = std::min(block_size_, f.max_allocation_size);
  alignment_ = std::max<std::uint64_t>({256, f.min_storage_alignment, f.min_uniform_alignment});
}

MemoryPool::~MemoryPool() {
  for (auto& b : blocks_) destroy_block(b.release());
}

std::uint32_t MemoryPool::find_type(VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) const {
  for (std::uint32_t i = 0; i < ctx_.memory.memoryTypeCount; ++i) {
    VkMemoryPropertyFlags fl = ctx_.memory.memoryTypes[i].propertyFlags;
    if ((fl & want) == want && !(fl & avoid)) return i;
  }
  return UINT32_MAX;
}

MemoryBlock* MemoryPool::create_block(std::uint64_t bytes, std::uint32_t type,
                                      VkBufferUsageFlags usage, bool map, bool for_tensor) {
  // The heap cannot hold more than its size. Asking the driver anyway breaks
  // VUID-vkAllocateMemory-pAllocateInfo-01713, and a CPU device (llvmpipe) may grant it in
  // virtual memory that fails only when touched.
  const std::uint64_t heap =
      ctx_.memory.memoryHeaps[ctx_.memory.memoryTypes[tensor_type_].heapIndex].size;
  if (for_tensor && (bytes > heap || reserved_ > heap - bytes)) throw_oom(bytes);
  const DeviceApi& vk = *ctx_.fn;
  auto b = std::make_unique<MemoryBlock>();
  b->size = bytes;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = bytes;
  bci.usage = usage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vk.vkCreateBuffer(ctx_.device, &bci, nullptr, &b->buffer);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    if (for_tensor) throw_oom(bytes);
  }
  if (r != VK_SUCCESS) throw_vk_error(r, "vkCreateBuffer", ctx_.name, bytes);
  VkMemoryRequirements req{};
  vk.vkGetBufferMemoryRequirements(ctx_.device, b->buffer, &req);
  if (!(req.memoryTypeBits & (1u << type))) {
    vk.vkDestroyBuffer(ctx_.device, b->buffer, nullptr);
    throw Internal(ctx_.name + ": memory type " + std::to_string(type) +
                   " cannot back a storage buffer (allowed mask " +
                   std::to_string(req.memoryTypeBits) + ").");
  }
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type;
  r = vk.vkAllocateMemory(ctx_.device, &mai, nullptr, &b->memory);
  if (r != VK_SUCCESS) {
    vk.vkDestroyBuffer(ctx_.device, b->buffer, nullptr);
    if (for_tensor && (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY))
      throw_oom(bytes);
    throw_vk_error(r, "vkAllocateMemory", ctx_.name, bytes);
  }
  vk_check(vk.vkBindBufferMemory(ctx_.device, b->buffer, b->memory, 0), "vkBindBufferMemory",
           ctx_.name);
  if (map) {
    void* p = nullptr;
    vk_check(vk.vkMapMemory(ctx_.device, b->memory, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory",
             ctx_.name);
    b->mapped = static_cast<std::uint8_t*>(p);
  }
  b->free_[0] = bytes;
  if (for_tensor) reserved_ += bytes;
  blocks_.push_back(std::move(b));
  return blocks_.back().get();
}

void MemoryPool::destroy_block(MemoryBlock* b) {
  const DeviceApi& vk = *ctx_.fn;
  if (b->buffer) vk.vkDestroyBuffer(ctx_.device, b->buffer, nullptr);
  if (b->memory) vk.vkFreeMemory(ctx_.device, b->memory, nullptr);  // unmaps too
  auto it = std::find_if(blocks_.begin(), blocks_.end(), [b](auto& p) { return p.get() == b; });
  if (it != blocks_.end())
    blocks_.erase(it);
  else
    delete b;
}

MemoryBlock* MemoryPool::create_host_block(std::uint64_t bytes, VkBufferUsageFlags usage) {
  return create_block(bytes, host_type_, usage, true, false);
}

Allocation* MemoryPool::allocate(std::uint64_t bytes) {
  const std::uint64_t size = round_up(bytes, alignment_);
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  const bool map = ctx_.features.zero_copy;
  MemoryBlock* block = nullptr;
  std::uint64_t offset = 0;
  if (size > block_size_ / 2) {
    block = create_block(size, tensor_type_, usage, map, true);
    block->dedicated = true;
  } else {
    for (auto& b : blocks_) {
      if (b->dedicated || b->size != block_size_ || b->free_.empty()) continue;
      if (std::find(retiring_.begin(), retiring_.end(), b.get()) != retiring_.end()) continue;
      auto it = std::find_if(b->free_.begin(), b->free_.end(),
                             [size](const auto& r) { return r.second >= size; });
      if (it != b->free_.end()) {
        block = b.get();
        offset = it->first;
        break;
      }
    }
    if (!block) block = create_block(block_size_, tensor_type_, usage, map, true);
  }
  auto it = block->free_.find(offset);
  const std::uint64_t left = it->second - size;
  block->free_.erase(it);
  if (left) block->free_[offset + size] = left;
  block->live += 1;
  allocated_ += size;
  return new Allocation{block, offset, size};
}

void MemoryPool::free(Allocation* a, std::uint64_t completed) {
  MemoryBlock* b = a->block;
  allocated_ -= a->size;
  auto [it, _] = b->free_.emplace(a->offset, a->size);
  auto next = std::next(it);
  if (next != b->free_.end() && it->first + it->second == next->first) {
    it->second += next->second;
    b->free_.erase(next);
  }
  if (it != b->free_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      b->free_.erase(it);
    }
  }
  delete a;
  // Dedicated blocks go back to the driver; one empty regular block stays for reuse.
  if (--b->live == 0) {
    std::size_t empties = 0;
    for (auto& o : blocks_) empties += (o->live == 0 && !o->dedicated && o->size == block_size_);
    if (b->dedicated || empties > 1) retiring_.push_back(b);
  }
  release_idle(completed);
}

void MemoryPool::release_idle(std::uint64_t completed) {
  for (std::size_t i = 0; i < retiring_.size();) {
    MemoryBlock* b = retiring_[i];
    if (b->last_use <= completed) {
      reserved_ -= b->size;
      retiring_.erase(retiring_.begin() + static_cast<std::ptrdiff_t>(i));
      destroy_block(b);
    } else {
      ++i;
    }
  }
}

MemoryInfo MemoryPool::info() const {
  const std::uint32_t heap = ctx_.memory.memoryTypes[tensor_type_].heapIndex;
  MemoryInfo mi;
  mi.total = ctx_.memory.memoryHeaps[heap].size;
  mi.free = mi.total > reserved_ ? mi.total - reserved_ : 0;
  if (ctx_.features.memory_budget && ctx_.instance->vkGetPhysicalDeviceMemoryProperties2) {
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
                                         &budget};
    ctx_.instance->vkGetPhysicalDeviceMemoryProperties2(ctx_.physical, &p2);
    const std::uint64_t b = budget.heapBudget[heap], u = budget.heapUsage[heap];
    if (b) mi.free = b > u ? b - u : 0;
  }
  return mi;
}

void MemoryPool::throw_oom(std::uint64_t requested) const {
  MemoryInfo mi = info();
  throw OutOfMemory(ctx_.name, requested, mi.free, reserved_, allocated_,
                    "Out of device memory on " + ctx_.name + ": requested " +
                        std::to_string(requested) + " bytes (free " + std::to_string(mi.free) +
                        ", reserved " + std::to_string(reserved_) + ", allocated " +
                        std::to_string(allocated_) + " bytes).");
}

}  // namespace nbx::vulkan
