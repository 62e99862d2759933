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

// The host "elementwise" kernel. Buffers hold host pointers (DeviceMemory::handle).
// Throws DeviceFault for an integer division by zero (the host reports faults at once).
void run_elementwise(const abi::ElementwiseParams& params, std::span<const KernelBuffer> buffers);

// The host "reduce" kernel (abi::ReduceParams).
void run_reduce(const abi::ReduceParams& params, std::span<const KernelBuffer> buffers);

// The host kernels of op wave 1 (core/kernel_abi_families.hpp).
void run_softmax(const abi::SoftmaxParams& params, std::span<const KernelBuffer> buffers);
void run_norm(const abi::NormParams& params, std::span<const KernelBuffer> buffers);
void run_scan(const abi::ScanParams& params, std::span<const KernelBuffer> buffers);
void run_matmul(const abi::MatmulParams& params, std::span<const KernelBuffer> buffers);
void run_fill(const abi::FillParams& params, std::span<const KernelBuffer> buffers);

// The memory cap from NBX_HOST_MEMORY_LIMIT ("512M", "2G", "1048576"); 0 when unset.
// Throws InvalidArgument for a malformed value.
std::uint64_t host_memory_limit_from_env();

}  // namespace nbx::host
