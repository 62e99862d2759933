#include "core/caching_allocator.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace nbx {
namespace {

constexpr std::size_t kSmallLimit = std::size_t(1) << 20;
constexpr std::size_t kSmallStep = 512;
constexpr std::size_t kLargeStep = std::size_t(2) << 20;
constexpr std::size_t kMaxRequest = std::size_t(1) << 63;

std::string human_bytes(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[48];
  std::snprintf(buf, sizeof buf, u ? "%.2f %s (%llu bytes)" : "%.0f %s", v, units[u],
                static_cast<unsigned long long>(b));
  return buf;
}

}  // namespace

CachingAllocator::~CachingAllocator() {
  // The device's mutex is gone already (it is declared after the allocator), and no other
  // thread can hold a handle to a device being destroyed. A lost device fails every free
  // (DeviceLost, seen under compute-sanitizer's synccheck): a destructor must not throw — that
  // is std::terminate at exit — and the driver takes the memory back with its context.
  for (const DeviceMemory& mem : take_pool()) {
    try {
      device_.free(mem);
    } catch (const Error&) {
    }
  }
}

std::size_t CachingAllocator::size_class(std::size_t bytes) {
  const std::size_t step = bytes < kSmallLimit ? kSmallStep : kLargeStep;
  return (bytes + step - 1) / step * step;
}

std::optional<DeviceMemory> CachingAllocator::take_from_pool(std::size_t size) {
  // Best fit, but never hand a block more than 25% larger than asked (plus one step): a
  // small tensor must not pin a huge cached block.
  auto it = pool_.lower_bound(size);
  if (it == pool_.end() || it->first > size + size / 4 + kSmallStep) return std::nullopt;
  DeviceMemory mem = it->second;
  pool_.erase(it);
  return mem;
}

std::vector<DeviceMemory> CachingAllocator::take_pool() {
  std::vector<DeviceMemory> out;
  out.reserve(pool_.size());
  for (auto& [size, mem] : pool_) {
    out.push_back(mem);
    stats_.reserved -= size;
  }
  pool_.clear();
  return out;
}

void CachingAllocator::free_to_device(const std::vector<DeviceMemory>& blocks) {
  if (blocks.empty()) return;
  std::lock_guard device_lock(device_mutex_);
  for (const DeviceMemory& mem : blocks) device_.free(mem);
}

OutOfMemory CachingAllocator::out_of_memory(std::uint64_t bytes, const MemoryInfo& info,
                                            const char* tried) const {
  return OutOfMemory(
      device_.id().str(), bytes, info.free, stats_.reserved, stats_.allocated,
      "Out of memory on " + device_.display_name() + ": requested " +
          (bytes == std::numeric_limits<std::uint64_t>::max() ? std::string("2^64 bytes or more")
                                                              : human_bytes(bytes)) +
          "; the device has " + human_bytes(info.free) + " free of " + human_bytes(info.total) +
          ", the allocator reserves " + human_bytes(stats_.reserved) + " of which tensors hold " +
          human_bytes(stats_.allocated) + " (" + tried + ").");
}

AllocatedBlock CachingAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return {};
  // Its size class would wrap (a request of 2^64 - 1 rounded up to 0 bytes and "succeeded");
  // no device has 2^63 bytes, so such a request is refused without asking the driver.
  if (bytes > kMaxRequest) {
    MemoryInfo info;
    {
      std::lock_guard device_lock(device_mutex_);
      info = device_.memory_info();
    }
    std::lock_guard lock(mutex_);
    throw out_of_memory(bytes, info, "more than any device addresses; not attempted");
  }
  const std::size_t size = size_class(bytes);
  {
    std::lock_guard lock(mutex_);
    if (auto mem = take_from_pool(size)) {
      stats_.allocated += mem->bytes;
      stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
      ++stats_.allocations;
      ++stats_.cache_hits;
      return {*mem};
    }
  }
  auto try_driver = [&]() -> std::optional<DeviceMemory> {
    std::lock_guard device_lock(device_mutex_);
    DeviceMemory fresh;
    try {
      fresh = device_.allocate(size);
    } catch (const OutOfMemory&) {
      return std::nullopt;
    }
    // The block's bytes past the request are zeroed once, when it comes from the driver: a
    // kernel may read a tensor's last aligned word whole (a 1- or 2-byte scatter's 32-bit
    // compare-and-swap puts the neighbouring bytes back as they were), and bytes past the
    // tensor would otherwise never be written — compute-sanitizer's initcheck reported such
    // reads on the H100 (2026-12-07). The requested bytes are left as the driver gave them,
    // so that initcheck still finds a kernel reading what nothing wrote. One copy of at most
    // one size-class step per block from the driver; a pooled block keeps what its earlier
    // tenants wrote.
    if (size > bytes) {
      static const std::byte kZeros[kLargeStep] = {};
      try {
        device_.copy_from_host(fresh, bytes, kZeros, size - bytes);
      } catch (...) {
        device_.free(fresh);
        throw;
      }
    }
    return fresh;
  };
  std::optional<DeviceMemory> mem = try_driver();
  if (!mem) {
    std::vector<Reclaimer> to_run;
    std::vector<DeviceMemory> flushed;
    {
      std::lock_guard lock(mutex_);
      ++stats_.oom_retries;
      flushed = take_pool();
      for (auto& [id, r] : reclaimers_) to_run.push_back(r);
    }
    free_to_device(flushed);
    for (auto& r : to_run) r();
    {
      std::lock_guard lock(mutex_);
      flushed = take_pool();  // reclaimers may have released tensors into the pool
    }
    free_to_device(flushed);
    mem = try_driver();
  }
  MemoryInfo info;
  if (!mem) {
    std::lock_guard device_lock(device_mutex_);
    info = device_.memory_info();
  }
  std::lock_guard lock(mutex_);
  if (!mem) throw out_of_memory(bytes, info, "the cache was emptied and the request retried");
  mem->bytes = size;
  stats_.allocated += size;
  stats_.reserved += size;
  stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
  ++stats_.allocations;
  return {*mem};
}

void CachingAllocator::release(AllocatedBlock block) {
  if (!block) return;
  std::lock_guard lock(mutex_);
  stats_.allocated -= block.memory.bytes;
  pool_.emplace(block.memory.bytes, block.memory);
}

void CachingAllocator::empty_cache() {
  std::vector<DeviceMemory> flushed;
  {
    std::lock_guard lock(mutex_);
    flushed = take_pool();
  }
  free_to_device(flushed);
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

int CachingAllocator::add_reclaimer(Reclaimer reclaimer) {
  std::lock_guard lock(mutex_);
  const int id = next_reclaimer_id_++;
  reclaimers_.emplace(id, std::move(reclaimer));
  return id;
}

void CachingAllocator::remove_reclaimer(int id) {
  std::lock_guard lock(mutex_);
  reclaimers_.erase(id);
}

ScratchBlock& ScratchBlock::operator=(ScratchBlock&& other) noexcept {
  if (this != &other) {
    ScratchBlock gone(std::move(*this));
    allocator_ = other.allocator_;
    memory_ = other.memory_;
    other.memory_ = {};
  }
  return *this;
}

ScratchBlock::~ScratchBlock() {
  if (memory_ && allocator_) allocator_->release({memory_});
}

// Defined here rather than in backend.cpp: the seam knows the allocator only by name.
ScratchBlock BackendDevice::scratch(std::uint64_t count, std::size_t item_bytes) {
  if (!allocator_)
    throw Internal("scratch on " + display_name() +
                   ": the device has no caching allocator (no nbx::Device owns it).");
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, std::uint64_t(item_bytes), &bytes))
    bytes = std::numeric_limits<std::uint64_t>::max();  // refused by the allocator as such
  if (bytes > std::numeric_limits<std::size_t>::max())
    bytes = std::numeric_limits<std::size_t>::max();
  return ScratchBlock(allocator_, allocator_->allocate(std::size_t(bytes)).memory);
}

}  // namespace nbx
