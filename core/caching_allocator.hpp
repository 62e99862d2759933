// A per-device caching allocator over BackendDevice's raw allocate/free.
//
// Freed blocks go back to a pool by size class and are reused, so steady-state tensor
// traffic never reaches the driver. On out-of-memory it returns the whole pool to the
// backend, runs the registered reclaimers, retries once, and only then throws OutOfMemory
// with requested / free / reserved / allocated bytes. Thread-safe: its calls into the device
// (allocate, free, memory_info) hold the device's launch mutex, as launches do, since a
// BackendDevice is used from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "core/backend.hpp"
#include "core/errors.hpp"

namespace nbx {

// A device's launch mutex. Recursive because a host launch, which holds it, takes its scratch
// rows from this allocator (BackendDevice::scratch), and the allocator takes it again to call
// the device.
using LaunchMutex = std::recursive_mutex;

struct AllocatorStats {
  std::uint64_t allocated = 0;  // bytes held by live blocks (size-class rounded)
  std::uint64_t reserved = 0;   // allocated + pooled: what the driver has given us
  std::uint64_t peak_allocated = 0;
  std::uint64_t peak_reserved = 0;
  std::uint64_t allocations = 0;  // allocate() calls that returned memory
  std::uint64_t cache_hits = 0;   // of those, served from the pool
  std::uint64_t oom_retries = 0;  // pool flushes forced by an out-of-memory
};

// A block handed out by the allocator. `memory.bytes` is the size-class size.
struct AllocatedBlock {
  DeviceMemory memory;
  explicit operator bool() const { return static_cast<bool>(memory); }
};

class CachingAllocator {
 public:
  // `device_mutex` serialises this allocator's calls into `device` with everything else done
  // on it (DeviceContext passes its launch mutex); it is not used by the destructor.
  CachingAllocator(BackendDevice& device, LaunchMutex& device_mutex)
      : device_(device), device_mutex_(device_mutex) {}
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Throws OutOfMemory after the flush-reclaim-retry sequence fails, and at once for more than
  // 2^63 bytes. Zero bytes → empty block.
  AllocatedBlock allocate(std::size_t bytes);
  // Returns a block to the pool (not to the driver).
  void release(AllocatedBlock block);
  // Returns every pooled block to the driver.
  void empty_cache();
  AllocatorStats stats() const;

  // A reclaimer frees memory the program can live without (caches of our own) when an
  // allocation fails. Returns an id for remove_reclaimer. Reclaimers run without the
  // allocator's lock held, so they may release tensors.
  using Reclaimer = std::function<void()>;
  int add_reclaimer(Reclaimer reclaimer);
  void remove_reclaimer(int id);

  // The size class a request is rounded to: 512-byte steps below 1 MiB, 2 MiB steps above,
  // so that reuse is likely and a reused block wastes little.
  static std::size_t size_class(std::size_t bytes);

 private:
  std::optional<DeviceMemory> take_from_pool(std::size_t size);  // lock held
  // The error for `bytes` with this allocator's figures, `tried` saying what was done.
  OutOfMemory out_of_memory(std::uint64_t bytes, const MemoryInfo& info,
                            const char* tried) const;            // lock held
  std::vector<DeviceMemory> take_pool();                         // lock held
  void free_to_device(const std::vector<DeviceMemory>& blocks);  // lock not held

  BackendDevice& device_;
  LaunchMutex& device_mutex_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, DeviceMemory> pool_;
  AllocatorStats stats_;
  std::map<int, Reclaimer> reclaimers_;
  int next_reclaimer_id_ = 1;
};

}  // namespace nbx
