// One device allocation shared by every tensor view of it. When the last view drops it,
// the block goes back to its device's caching allocator (not to the driver) — or, for memory
// borrowed from another library (DLPack), the borrow ends and the lender's release runs.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "core/caching_allocator.hpp"
#include "core/device.hpp"

namespace nbx {

class Storage {
 public:
  // Allocates `bytes` on `device`; throws OutOfMemory.
  Storage(Device device, std::size_t bytes);
  // Takes memory `device` borrowed (BackendDevice::borrow, `bytes` as lent): the last view's
  // end calls end_borrow, then `release` (which must not throw), once.
  Storage(Device device, DeviceMemory borrowed, std::size_t bytes, std::function<void()> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  const Device& device() const { return device_; }
  DeviceMemory memory() const { return block_.memory; }
  std::size_t bytes() const { return bytes_; }  // as requested (the block may be larger)
  bool borrowed() const { return static_cast<bool>(release_); }

 private:
  Device device_;
  AllocatedBlock block_;
  std::size_t bytes_;
  std::function<void()> release_;  // set for borrowed memory only
};

}  // namespace nbx
