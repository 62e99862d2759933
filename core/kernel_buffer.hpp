// Raw device memory as a backend hands it out, and one buffer bound to a kernel launch.
// Split from backend.hpp so the family table (core/families) can name them.
#pragma once

#include <cstddef>

namespace nbx {

// `handle` is backend-defined (a device pointer on CUDA/HIP/host, a sub-allocation record
// on Vulkan); `bytes` is the size given.
struct DeviceMemory {
  void* handle = nullptr;
  std::size_t bytes = 0;
  explicit operator bool() const { return handle != nullptr; }
};

// One buffer bound to a kernel launch: the whole allocation. Element offsets of views
// travel in the parameter block, so no backend has to honour sub-buffer alignment rules.
// `written` must agree with the family's buffer role (core/families): backends track
// hazards with it.
struct KernelBuffer {
  DeviceMemory memory;
  bool written = false;
};

}  // namespace nbx
