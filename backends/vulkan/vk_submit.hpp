// Command submission: many commands recorded into one command buffer per batch, submitted
// at synchronization points (synchronize, a copy to the host) or when the batch fills, never
// one submit-and-wait per op. Three batch slots rotate, so recording continues while earlier
// batches run. Each slot owns its descriptor pool, uniform parameter ring and staging buffer,
// recycled when its fence signals.
//
// A lost device (VK_ERROR_DEVICE_LOST from a submit or a wait) stays lost: every later
// command, wait or host access throws DeviceLost naming it; the other devices go on. The
// test hook NBX_TEST_VK_DEVICE_LOST=N reports the N-th submit of each device as lost
// without submitting it (tests/vulkan/test_vk_device_lost.cpp).
//
// Hazards: every command declares the byte ranges it reads and writes; a memory barrier is
// recorded only where a range meets an earlier unbarriered write (RAW, WAW) or a write meets
// an earlier read (WAR). Each batch opens with a barrier against earlier batches and closes
// with one that makes device writes visible to the host.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "backends/vulkan/vk_context.hpp"
#include "backends/vulkan/vk_memory.hpp"

namespace nbx::vulkan {

struct BufferRange {
  MemoryBlock* block = nullptr;
  std::uint64_t offset = 0, size = 0;
};

struct HostSlice {
  VkBuffer buffer = VK_NULL_HANDLE;
  std::uint64_t offset = 0;
  std::uint8_t* ptr = nullptr;
};

class Submitter {
 public:
  static constexpr std::uint32_t kMaxCommands = 512;

  Submitter(DeviceContext& ctx, MemoryPool& pool, VkDescriptorSetLayout layout);
  ~Submitter();
  Submitter(const Submitter&) = delete;
  Submitter& operator=(const Submitter&) = delete;

  // Makes room in the current batch for one command with these needs (submitting the batch
  // when it is full), then returns its command buffer.
  VkCommandBuffer begin_command(std::uint64_t param_bytes, std::uint64_t staging_bytes);
  VkDescriptorSet allocate_set();
  HostSlice params(std::uint64_t bytes);
  HostSlice staging(std::uint64_t bytes);
  // Records the barrier the command needs and stamps the blocks with this batch's serial.
  void access(std::initializer_list<BufferRange> reads, std::initializer_list<BufferRange> writes);
  void access(const BufferRange* reads, std::size_t nreads, const BufferRange* writes,
              std::size_t nwrites);
  // A full execution + memory barrier (timestamps).
  void full_barrier();

  // The current command's place in its batch (0 … kMaxCommands − 1), after begin_command.
  std::uint32_t command_in_batch() const { return slots_[serial_ % slots_.size()].commands - 1; }
  std::uint64_t staging_capacity() const { return staging_bytes_; }
  std::uint64_t current_serial() const { return serial_; }
  std::uint64_t completed() const { return completed_; }
  // Submits the current batch if it holds commands.
  void flush();
  // Waits until the batch `serial` (and every earlier one) has finished.
  void wait(std::uint64_t serial);
  void wait_idle() { wait(serial_); }
  // Throws DeviceLost once the device is lost (the host-access paths call it).
  void throw_if_lost() const;

 private:
  struct Batch {
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkDescriptorPool descriptors = VK_NULL_HANDLE;
    MemoryBlock* params = nullptr;
    MemoryBlock* staging = nullptr;
    std::uint64_t params_used = 0, staging_used = 0;
    std::uint32_t commands = 0;
    std::uint64_t serial = 0;
    bool recording = false, in_flight = false;
  };
  Batch& current() { return slots_[serial_ % slots_.size()]; }
  void begin_batch();
  void retire(Batch& b);
  void barrier(VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
               VkAccessFlags dst_access);
  // vk_check for the calls that can report the device lost: marks it lost first.
  void check_queue(VkResult r, const char* call);

  DeviceContext& ctx_;
  MemoryPool& pool_;
  VkDescriptorSetLayout layout_;
  std::array<Batch, 3> slots_;
  std::uint64_t serial_ = 1, completed_ = 0;
  std::uint64_t params_bytes_ = 0, staging_bytes_ = 0;
  std::vector<BufferRange> reads_, writes_;      // since the last barrier
  std::string lost_;                             // why the device is lost; empty while it works
  std::uint64_t submits_ = 0, fail_submit_ = 0;  // fail_submit_: the test hook's N, 0 = off
};

}  // namespace nbx::vulkan
