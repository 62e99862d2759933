#include "core/storage.hpp"

#include <mutex>

namespace nbx {

Storage::Storage(Device device, std::size_t bytes)
    : device_(std::move(device)),
      block_(device_.context().allocator().allocate(bytes)),
      bytes_(bytes) {}

Storage::Storage(Device device, DeviceMemory borrowed, std::size_t bytes,
                 std::function<void()> release)
    : device_(std::move(device)),
      block_{borrowed},
      bytes_(bytes),
      release_(release ? std::move(release) : [] {}) {}

Storage::~Storage() {
  if (release_) {
    {
      // Ordered with launches from other threads, as Device::synchronize is.
      std::lock_guard lock(device_.context().launch_mutex());
      device_.context().backend_device().end_borrow(block_.memory);
    }
    release_();
  } else {
    device_.context().allocator().release(block_);
  }
}

}  // namespace nbx
