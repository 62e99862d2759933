// The CUDA device: gpu_runtime::GpuDevice (backends/gpu_runtime/) over the CUDA
// runtime API, which CudaRuntime below wraps. Internal to the CUDA backend
// module.
#pragma once

#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_errors.hpp"
#include "backends/gpu_runtime/gpu_device.hpp"

namespace nbx::cuda {

// Runtime facts of device `index` (cudaGetDeviceProperties and attributes).
// Throws the translated CUDA error when the runtime cannot answer.
DeviceProperties query_properties(int index);

// The runtime calls GpuDevice makes, and how CUDA names them in messages.
struct CudaRuntime {
  using Error = cudaError_t;
  using Stream = cudaStream_t;
  using Event = cudaEvent_t;
  static constexpr Error kSuccess = cudaSuccess;
  static constexpr const char* kBackend = "cuda";
  static constexpr const char* kPrefix = "cuda";  // + "Malloc", "StreamSynchronize", …
  static constexpr const char* kPinnedAlloc = "cudaMallocHost";
  static constexpr const char* kMappedAlloc = "cudaHostAlloc";

  static Error get_device(int* index) { return cudaGetDevice(index); }
  static Error set_device(int index) { return cudaSetDevice(index); }
  static Error stream_create(Stream* s) { return cudaStreamCreate(s); }
  static Error stream_destroy(Stream s) { return cudaStreamDestroy(s); }
  static Error stream_synchronize(Stream s) { return cudaStreamSynchronize(s); }
  static Error event_create(Event* e) {
    return cudaEventCreateWithFlags(e, cudaEventDisableTiming);
  }
  static Error timed_event_create(Event* e) { return cudaEventCreate(e); }
  static Error event_elapsed_ms(float* ms, Event start, Event end) {
    return cudaEventElapsedTime(ms, start, end);
  }
  static Error event_destroy(Event e) { return cudaEventDestroy(e); }
  static Error event_record(Event e, Stream s) { return cudaEventRecord(e, s); }
  static Error event_synchronize(Event e) { return cudaEventSynchronize(e); }
  static Error pinned_alloc(void** p, std::size_t n) { return cudaMallocHost(p, n); }
  static Error mapped_alloc(void** p, std::size_t n) {
    return cudaHostAlloc(p, n, cudaHostAllocMapped);
  }
  static Error pinned_free(void* p) { return cudaFreeHost(p); }
  static Error device_pointer(void** device, void* host) {
    return cudaHostGetDevicePointer(device, host, 0);
  }
  // The device whose memory `p` is, and whether it is device (or managed) memory; host
  // memory the runtime does not know is cudaMemoryTypeUnregistered, not an error.
  static Error pointer_device(const void* p, int* device, bool* device_memory) {
    cudaPointerAttributes a{};
    const Error e = cudaPointerGetAttributes(&a, p);
    *device = a.device;
    *device_memory = a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
    return e;
  }
  static Error device_alloc(void** p, std::size_t n) { return cudaMalloc(p, n); }
  static Error device_free(void* p) { return cudaFree(p); }
  static Error mem_get_info(std::size_t* free, std::size_t* total) {
    return cudaMemGetInfo(free, total);
  }
  static Error copy_to_device_async(void* dst, const void* src, std::size_t n, Stream s) {
    return cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s);
  }
  static Error copy_to_host_async(void* dst, const void* src, std::size_t n, Stream s) {
    return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s);
  }
  static Error copy_any_async(void* dst, const void* src, std::size_t n, Stream s) {
    return cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s);
  }
  // Peer copies (Tensor::to between two CUDA devices).
  static Error stream_wait_event(Stream s, Event e) { return cudaStreamWaitEvent(s, e, 0); }
  static Error can_access_peer(int* can, int device, int peer) {
    return cudaDeviceCanAccessPeer(can, device, peer);
  }
  // For the current device; enabling twice is not an error here (and leaves none pending).
  static Error enable_peer_access(int peer) {
    const Error e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e != cudaErrorPeerAccessAlreadyEnabled) return e;
    (void)cudaGetLastError();
    return cudaSuccess;
  }
  static Error copy_peer_async(void* dst, int dst_device, const void* src, int src_device,
                               std::size_t n, Stream s) {
    return cudaMemcpyPeerAsync(dst, dst_device, src, src_device, n, s);
  }
  [[noreturn]] static void fail(Error e, const std::string& call, const std::string& device,
                                std::size_t requested = 0) {
    throw_error(e, call, device, requested);
  }
};

using CudaDevice = gpu_runtime::GpuDevice<CudaRuntime>;

}  // namespace nbx::cuda

// Instantiated once, in cuda_device.cpp.
extern template class nbx::gpu_runtime::GpuDevice<nbx::cuda::CudaRuntime>;
