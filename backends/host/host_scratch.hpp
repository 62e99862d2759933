// Scratch memory for the host kernel running on this thread (a reduced row, a softmax row, a
// sort row …), from the host device's caching allocator (BackendDevice::scratch): it counts
// against NBX_HOST_MEMORY_LIMIT with the tensors, and a row the host cannot hold is an
// OutOfMemory with the allocator's figures — a sum over expand({6, 2^40}) asked std::vector
// for 2^40 values and threw std::bad_alloc, past the cap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>

#include "core/backend.hpp"

namespace nbx::host {

// While one lives, launch_scratch takes memory from `device` (HostDevice::launch_impl makes
// one per launch; host launches run to completion on the calling thread).
class LaunchScope {
 public:
  explicit LaunchScope(BackendDevice& device);
  ~LaunchScope();
  LaunchScope(const LaunchScope&) = delete;
  LaunchScope& operator=(const LaunchScope&) = delete;

 private:
  BackendDevice* previous_;
};

// `count` items of `item_bytes` from the device of this thread's LaunchScope; throws
// OutOfMemory (BackendDevice::scratch), Internal outside a launch.
ScratchBlock launch_scratch(std::int64_t count, std::size_t item_bytes);

// `count` value-initialised T in launch scratch. T is trivially destructible: nothing runs
// when the memory goes back to the pool.
template <class T>
class Scratch {
  static_assert(std::is_trivially_destructible_v<T>);

 public:
  explicit Scratch(std::int64_t count)
      : block_(launch_scratch(count, sizeof(T))),
        items_(static_cast<T*>(block_.memory().handle), static_cast<std::size_t>(count)) {
    std::uninitialized_value_construct(items_.begin(), items_.end());
  }
  T& operator[](std::size_t i) const { return items_[i]; }
  std::size_t size() const { return items_.size(); }
  T* data() const { return items_.data(); }
  T* begin() const { return items_.data(); }
  T* end() const { return items_.data() + items_.size(); }

 private:
  ScratchBlock block_;
  std::span<T> items_;
};

}  // namespace nbx::host
