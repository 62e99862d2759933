// The host reference backend: plain C++ loops over the kernel ABI, computing in float64
// (floats) and int64 (integers) and rounding once to the output dtype. It is the oracle the
// conformance suite compares every GPU backend with, and the device used where no GPU is.
// It is a reference, not tuned for speed.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "core/backend.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::host {

class HostBackend final : public Backend {
 public:
  std::string_view name() const override { return "host"; }
  DeviceListing list_devices() override;
  std::unique_ptr<BackendDevice> open(int index) override;
};

// The host kernels, one overload per family (host_<family>.cpp defines it; every family
// is declared, so a new family needs no line here). Buffers hold host pointers
// (DeviceMemory::handle). BackendDevice::launch has validated the block. Faults (an integer
// division by zero, an index out of range) are thrown as DeviceFault at once.
#define NBX_KERNEL_FAMILY(kId, id, Params) \
  void run_family(const Params& params, std::span<const KernelBuffer> buffers);
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY

// The memory cap from NBX_HOST_MEMORY_LIMIT ("512M", "2G", "1048576"); 0 when unset.
// Throws InvalidArgument for a malformed value.
std::uint64_t host_memory_limit_from_env();

}  // namespace nbx::host
