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
#include <memory>
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
  // Memory shared with other libraries (DLPack): device pointers both ways; a borrowed
  // pointer must be this device's memory (or managed memory), as the runtime says.
  void* address_of_impl(DeviceMemory memory) const override { return memory.handle; }
  bool accepts_foreign_impl(const void* address, std::size_t bytes) const override;
  void wait_idle_impl() noexcept override;
  // nbx::Event: a timing event on the stream, after the queued batch.
  std::unique_ptr<TimingEvent> record_timing_event_impl() override;
  class StreamEvent;
  // Collectives (NCCL): the stream, after the queued batch, the device current.
  void* native_queue_impl() override;
  // Copies from another device of this runtime (gpu_device_peer.hpp): the runtime's peer
  // copy where it says the two can access each other, else through this device's pinned
  // slots (NBX_PEER_COPY=staged forces that), ordered by events both ways.
  PeerRoute peer_route_impl(const BackendDevice& src, std::string* why) const override;
  void copy_from_peer_impl(DeviceMemory dst, std::size_t dst_offset, BackendDevice& src,
                           DeviceMemory src_memory, std::size_t src_offset,
                           std::size_t bytes) override;
  // Makes `stream_` wait for the work issued to `other` so far (an event `other` records).
  void wait_for(GpuDevice& other);

  // One launcher per family, in family order: each reads its parameter block and calls its
  // kernels/gpu launch_family overload (family_launch.hpp). A family the backend does not
  // implement (backend_variants.hpp: the Vulkan-only diagnostics) has none and is refused.
  // offers_impl narrows the variants at run time: the vendor BLAS needs cuBLASLt loaded,
  // NBX_GPU_ROWS picks the row kernels.
  using Launcher = gpu::ElementwiseLaunchResult (*)(GpuDevice&, const KernelLaunch&,
                                                    const gpu::BoundBuffer*, int);
  template <class Params>
  static gpu::ElementwiseLaunchResult run(GpuDevice& device, const KernelLaunch& launch,
                                          const gpu::BoundBuffer* buffers, int n);
  template <class Params, KernelFamily F>
  static constexpr FamilyEntry<Launcher> entry() {
    constexpr std::uint32_t variants = implemented_variants(backend_kind(Rt::kBackend), F);
    if constexpr (variants == 0)
      return {F, nullptr, 0};
    else
      return {F, &GpuDevice::run<Params>, variants};
  }
  // The table, checked complete and in order at compile time.
  static const std::array<FamilyEntry<Launcher>, kKernelFamilyCount>& launchers() {
    static constexpr std::array<FamilyEntry<Launcher>, kKernelFamilyCount> table = {{
#define NBX_KERNEL_FAMILY(kId, id, Params) entry<Params, KernelFamily::kId>(),
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY
    }};
    static_assert(covers_every_family(table));
    return table;
  }

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
  typename Rt::Event handoff_ = nullptr;  // recorded where another device's stream waits
  std::uint64_t peers_enabled_ = 0;       // bit i: peer access to device i enabled (i < 64)
  int next_slot_ = 0;
  abi::FaultRecord* fault_host_ = nullptr;    // mapped pinned memory
  abi::FaultRecord* fault_device_ = nullptr;  // the same bytes, as kernels address them
  gpu::ElementwiseOptions options_;
  std::optional<gpu::ElementwiseBatch> batch_;  // absent with NBX_GPU_BATCH=0
  std::uint64_t allocated_ = 0;
};

}  // namespace nbx::gpu_runtime
