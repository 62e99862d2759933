// One device allocation shared by every tensor view of it. When the last view drops it,
// the block goes back to its device's caching allocator (not to the driver).
#pragma once

#include <cstddef>
#include <memory>

#include "core/caching_allocator.hpp"
#include "core/device.hpp"

namespace nbx {

class Storage {
 public:
  // Allocates `bytes` on `device`; throws OutOfMemory.
  Storage(Device device, std::size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  const Device& device() const { return device_; }
  DeviceMemory memory() const { return block_.memory; }
  std::size_t bytes() const { return bytes_; }  // as requested (the block may be larger)

 private:
  Device device_;
  AllocatedBlock block_;
  std::size_t bytes_;
};

}  // namespace nbx
