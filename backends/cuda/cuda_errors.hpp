// CUDA result codes → nbx errors, in one place. Every message names the runtime call and
// carries CUDA's own name and text for the code.
#pragma once

#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

namespace nbx::cuda {

// "cudaErrorNoDevice: no CUDA-capable device is detected"
std::string describe(cudaError_t e);

// Throws the nbx error that fits `e` (never returns):
//   cudaErrorMemoryAllocation          → OutOfMemory (with `requested` bytes and the free bytes)
//   no driver / no device / the toolkit's driver-less libcuda → Unavailable
//   sticky errors (illegal address, launch failure, ECC, …) → DeviceLost
//   anything else                      → Internal (a broken invariant of ours)
// `call` names the runtime call ("cudaMalloc(1073741824 bytes)"), `device` the device
// ("cuda:0 (NVIDIA H200)") or the backend ("cuda") when no device is open.
[[noreturn]] void throw_error(cudaError_t e, const std::string& call, const std::string& device,
                              std::size_t requested = 0);

inline void check(cudaError_t e, const char* call, const std::string& device) {
  if (e != cudaSuccess) throw_error(e, call, device);
}

// True for the codes that mean the CUDA runtime cannot reach any device on this machine.
bool means_unavailable(cudaError_t e);

}  // namespace nbx::cuda
