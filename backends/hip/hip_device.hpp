// The HIP device: gpu_runtime::GpuDevice (backends/gpu_runtime/) over the HIP
// runtime API, which HipRuntime below wraps. Internal to the HIP backend
// module.
#pragma once

#include <cstddef>
#include <string>

#include <hip/hip_runtime_api.h>

#include "backends/gpu_runtime/gpu_device.hpp"
#include "backends/hip/hip_errors.hpp"

namespace nbx::hip {

// Runtime facts of device `index` (hipGetDeviceProperties and attributes).
// Throws the translated HIP error when the runtime cannot answer.
DeviceProperties query_properties(int index);

// The runtime calls GpuDevice makes, and how HIP names them in messages.
struct HipRuntime {
  using Error = hipError_t;
  using Stream = hipStream_t;
  using Event = hipEvent_t;
  static constexpr Error kSuccess = hipSuccess;
  static constexpr const char* kBackend = "hip";
  static constexpr const char* kPrefix = "hip";  // + "Malloc", "StreamSynchronize", …
  static constexpr const char* kPinnedAlloc = "hipHostMalloc";
  static constexpr const char* kMappedAlloc = "hipHostMalloc";

  static Error get_device(int* index) { return hipGetDevice(index); }
  static Error set_device(int index) { return hipSetDevice(index); }
  static Error stream_create(Stream* s) { return hipStreamCreate(s); }
  static Error stream_destroy(Stream s) { return hipStreamDestroy(s); }
  static Error stream_synchronize(Stream s) { return hipStreamSynchronize(s); }
  static Error event_create(Event* e) { return hipEventCreateWithFlags(e, hipEventDisableTiming); }
  static Error timed_event_create(Event* e) { return hipEventCreate(e); }
  static Error event_elapsed_ms(float* ms, Event start, Event end) {
    return hipEventElapsedTime(ms, start, end);
  }
  static Error event_destroy(Event e) { return hipEventDestroy(e); }
  static Error event_record(Event e, Stream s) { return hipEventRecord(e, s); }
  static Error event_synchronize(Event e) { return hipEventSynchronize(e); }
  static Error pinned_alloc(void** p, std::size_t n) {
    return hipHostMalloc(p, n, hipHostMallocDefault);
  }
  static Error mapped_alloc(void** p, std::size_t n) {
    return hipHostMalloc(p, n, hipHostMallocMapped);
  }
  static Error pinned_free(void* p) { return hipHostFree(p); }
  static Error device_pointer(void** device, void* host) {
    return hipHostGetDevicePointer(device, host, 0);
  }
  // The device whose memory `p` is, and whether it is device (or managed) memory. ROCm 5
  // answers hipErrorInvalidValue for host memory it does not know: not device memory, and
  // not an error (cleared). ROCm 6 renames memoryType to type.
  static Error pointer_device(const void* p, int* device, bool* device_memory) {
    hipPointerAttribute_t a{};
    const Error e = hipPointerGetAttributes(&a, p);
    *device = a.device;
    *device_memory = e == hipSuccess && (a.memoryType == hipMemoryTypeDevice || a.isManaged);
    if (e == hipErrorInvalidValue) {
      (void)hipGetLastError();
      return hipSuccess;
    }
    return e;
  }
  static Error device_alloc(void** p, std::size_t n) { return hipMalloc(p, n); }
  static Error device_free(void* p) { return hipFree(p); }
  static Error mem_get_info(std::size_t* free, std::size_t* total) {
    return hipMemGetInfo(free, total);
  }
  static Error copy_to_device_async(void* dst, const void* src, std::size_t n, Stream s) {
    return hipMemcpyAsync(dst, src, n, hipMemcpyHostToDevice, s);
  }
  static Error copy_to_host_async(void* dst, const void* src, std::size_t n, Stream s) {
    return hipMemcpyAsync(dst, src, n, hipMemcpyDeviceToHost, s);
  }
  static Error copy_any_async(void* dst, const void* src, std::size_t n, Stream s) {
    return hipMemcpyAsync(dst, src, n, hipMemcpyDefault, s);
  }
  // Peer copies (Tensor::to between two HIP devices).
  static Error stream_wait_event(Stream s, Event e) { return hipStreamWaitEvent(s, e, 0); }
  static Error can_access_peer(int* can, int device, int peer) {
    return hipDeviceCanAccessPeer(can, device, peer);
  }
  // For the current device; enabling twice is not an error here (and leaves none pending).
  static Error enable_peer_access(int peer) {
    const Error e = hipDeviceEnablePeerAccess(peer, 0);
    if (e != hipErrorPeerAccessAlreadyEnabled) return e;
    (void)hipGetLastError();
    return hipSuccess;
  }
  static Error copy_peer_async(void* dst, int dst_device, const void* src, int src_device,
                               std::size_t n, Stream s) {
    return hipMemcpyPeerAsync(dst, dst_device, src, src_device, n, s);
  }
  [[noreturn]] static void fail(Error e, const std::string& call, const std::string& device,
                                std::size_t requested = 0) {
    throw_error(e, call, device, requested);
  }
};

using HipDevice = gpu_runtime::GpuDevice<HipRuntime>;

}  // namespace nbx::hip

// Instantiated once, in hip_device.cpp.
extern template class nbx::gpu_runtime::GpuDevice<nbx::hip::HipRuntime>;
