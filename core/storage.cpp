#include "core/storage.hpp"

namespace nbx {

Storage::Storage(Device device, std::size_t bytes)
    : device_(std::move(device)),
      block_(device_.context().allocator().allocate(bytes)),
      bytes_(bytes) {}

Storage::~Storage() {
  device_.context().allocator().release(block_);
}

}  // namespace nbx
