// The device of the CUDA and HIP backends, written once over the runtime's API: one blocking
// stream per device, memory through the runtime's malloc, host copies through a pair of
// pinned staging buffers, a fault record in mapped pinned memory that kernels write and
// synchronize() reads, and launches into kernels/gpu with small elementwise ops batched.
//
// `Rt` is a traits struct of static functions over one runtime (cuda::CudaRuntime in
// backends/cuda/cuda_runtime_traits.hpp, hip::HipRuntime in backends/hip/): each backend
// instantiates GpuDevice<Rt> once, in its own module. Member definitions:
// gpu_device_impl.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/backend.hpp"
#include "core/families/backend_variants.hpp"
#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_batch.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu_runtime {

template <class Rt>
class GpuDevice final : public BackendDevice {
 public:
  // Opens device `index`: makes it current, creates the stream, events, staging buffers
  // and the fault record. Throws Unavailable / Internal on runtime failures.
  GpuDevice(int index, DeviceProperties properties);
  ~GpuDevice() override;

 private:
  using Error = typename Rt::Error;

  DeviceMemory allocate_impl(std::size_t bytes) override;
  void free_impl(DeviceMemory memory) override;
  MemoryInfo memory_info_impl() const override;
  void copy_from_host_impl(DeviceMemory dst, std::size_t dst_offset, const void* src,
                           std::size_t bytes) override;
  void copy_to_host_impl(void* dst, DeviceMemory src, std::size_t src_offset,
                         std::size_t bytes) override;
  void copy_on_device_impl(DeviceMemory dst, std::size_t dst_offset, DeviceMemory src,
                           std::size_t src_offset, std::size_t bytes) override;
  void synchronize_impl() override;
  int launch_impl(const KernelLaunch& launch) override;
  bool offers_impl(KernelFamily family, int variant) const override;

  // One launcher per family, in family order (kLaunchers): each reads its parameter block
  // and calls its kernels/gpu launcher.
  using Launcher = gpu::ElementwiseLaunchResult (GpuDevice::*)(const KernelLaunch&,
                                                               const gpu::BoundBuffer*, int);
  gpu::ElementwiseLaunchResult launch_elementwise(const KernelLaunch&, const gpu::BoundBuffer*,
                                                  int);
  gpu::ElementwiseLaunchResult launch_reduce(const KernelLaunch&, const gpu::BoundBuffer*, int);
  gpu::ElementwiseLaunchResult launch_softmax(const KernelLaunch&, const gpu::BoundBuffer*, int);
  gpu::ElementwiseLaunchResult launch_norm(const KernelLaunch&, const gpu::BoundBuffer*, int);
  gpu::ElementwiseLaunchResult launch_scan(const KernelLaunch&, const gpu::BoundBuffer*, int);
  gpu::ElementwiseLaunchResult launch_matmul(const KernelLaunch&, const gpu::BoundBuffer*, int);
  gpu::ElementwiseLaunchResult launch_fill(const KernelLaunch&, const gpu::BoundBuffer*, int);
  // The variants each runs (backend_variants.hpp); offers_impl narrows them at run time:
  // the vendor BLAS needs cuBLASLt loaded, NBX_GPU_ROWS picks the row kernels.
  static constexpr std::array<FamilyEntry<Launcher>, kKernelFamilyCount> kLaunchers = {{
      {KernelFamily::kElementwise, &GpuDevice::launch_elementwise,
       implemented_variants(backend_kind(Rt::kBackend), KernelFamily::kElementwise)},
      {KernelFamily::kReduce, &GpuDevice::launch_reduce,
       implemented_variants(backend_kind(Rt::kBackend), KernelFamily::kReduce)},
      {KernelFamily::kSoftmax, &GpuDevice::launch_softmax,
       implemented_variants(backend_kind(Rt::kBackend), KernelFamily::kSoftmax)},
      {KernelFamily::kNorm, &GpuDevice::launch_norm,
       implemented_variants(backend_kind(Rt::kBackend), KernelFamily::kNorm)},
      {KernelFamily::kScan, &GpuDevice::launch_scan,
       implemented_variants(backend_kind(Rt::kBackend), KernelFamily::kScan)},
      {KernelFamily::kMatmul, &GpuDevice::launch_matmul,
       implemented_variants(backend_kind(Rt::kBackend), KernelFamily::kMatmul)},
      {KernelFamily::kFill, &GpuDevice::launch_fill,
       implemented_variants(backend_kind(Rt::kBackend), KernelFamily::kFill)},
      {KernelFamily::kTimestamp, nullptr, 0},  // benchmarks time CUDA/HIP with events
      {KernelFamily::kCopyProbe, nullptr, 0},  // copy_on_device is the runtime's own copy
  }};

  // Throws the translated error when `e` is not success. `call` is the runtime call
  // without its prefix ("Malloc"): messages name it as the runtime does ("cudaMalloc").
  void check(Error e, const char* call) const;
  // Makes this device current for the calling thread (cheap when it already is).
  void make_current() const;
  // Throws DeviceFault when a kernel recorded one since the last call, and clears it.
  void raise_recorded_fault();
  // Launches the queued small elementwise ops, before anything that must see them in the
  // stream's order (another launch, a copy, a synchronize, a free).
  void flush_batch();

  static constexpr int kStagingSlots = 2;
  static constexpr std::size_t kStagingBytes = std::size_t(8) << 20;  // per slot

  int index_;
  std::string name_;  // display_name(), kept for messages
  typename Rt::Stream stream_ = nullptr;
  void* staging_[kStagingSlots] = {};
  typename Rt::Event staging_free_[kStagingSlots] = {};
  int next_slot_ = 0;
  abi::FaultRecord* fault_host_ = nullptr;    // mapped pinned memory
  abi::FaultRecord* fault_device_ = nullptr;  // the same bytes, as kernels address them
  gpu::ElementwiseOptions options_;
  std::optional<gpu::ElementwiseBatch> batch_;  // absent with NBX_GPU_BATCH=0
  std::uint64_t allocated_ = 0;
};

}  // namespace nbx::gpu_runtime
