// Device memory: sub-allocation of tensors from large VkDeviceMemory blocks, each bound to
// one VkBuffer that covers the whole block (one VkDeviceMemory per tensor does not scale:
// drivers cap allocations at a few thousand). On zero-copy devices (llvmpipe) the blocks are
// mapped and the host reads and writes them directly.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "backends/vulkan/vk_context.hpp"
#include "core/backend.hpp"

namespace nbx::vulkan {

struct MemoryBlock {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  std::uint64_t size = 0;
  std::uint8_t* mapped = nullptr;                // zero-copy blocks only
  std::map<std::uint64_t, std::uint64_t> free_;  // offset -> size, coalesced
  std::uint64_t live = 0;                        // allocations carved from it
  std::uint64_t last_use = 0;                    // batch serial of the last command using it
  bool dedicated = false;
};

// What DeviceMemory::handle points to on this backend.
struct Allocation {
  MemoryBlock* block = nullptr;
  std::uint64_t offset = 0;  // bytes into block->buffer
  std::uint64_t size = 0;    // reserved bytes (the request rounded up)
  VkBuffer buffer() const { return block->buffer; }
  std::uint8_t* mapped() const { return block->mapped ? block->mapped + offset : nullptr; }
};

inline Allocation* allocation_of(DeviceMemory m) {
  return static_cast<Allocation*>(m.handle);
}

class MemoryPool {
 public:
  explicit MemoryPool(DeviceContext& ctx);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // Throws OutOfMemory with requested / free / reserved / allocated bytes.
  Allocation* allocate(std::uint64_t bytes);
  // `completed` is the last finished batch serial: blocks still in use by a later batch are
  // released only once release_idle() sees them finished.
  void free(Allocation* a, std::uint64_t completed);
  void release_idle(std::uint64_t completed);
  MemoryInfo info() const;

  // A standalone host-visible, coherent, mapped buffer (staging, parameters, fault record).
  MemoryBlock* create_host_block(std::uint64_t bytes, VkBufferUsageFlags usage);
  void destroy_block(MemoryBlock* b);

 private:
  MemoryBlock* create_block(std::uint64_t bytes, std::uint32_t type, VkBufferUsageFlags usage,
                            bool map, bool for_tensor);
  std::uint32_t find_type(VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) const;
  [[noreturn]] void throw_oom(std::uint64_t requested) const;

  DeviceContext& ctx_;
  std::uint32_t tensor_type_ = 0, host_type_ = 0;
  std::uint64_t block_size_ = 0, alignment_ = 256;
  std::vector<std::unique_ptr<MemoryBlock>> blocks_;
  std::vector<MemoryBlock*> retiring_;  // empty blocks waiting for their last batch
  std::uint64_t reserved_ = 0, allocated_ = 0;
};

}  // namespace nbx::vulkan
