// HIP result codes → nbx errors, in one place. Every message names the runtime call and
// carries HIP's own name and text for the code.
#pragma once

#include <cstddef>
#include <string>

#include <hip/hip_runtime_api.h>

namespace nbx::hip {

// "hipErrorNoDevice", or "<name>: <text>" where HIP has a text of its own
std::string describe(hipError_t e);

// Throws the nbx error that fits `e` (never returns):
//   hipErrorOutOfMemory          → OutOfMemory (with `requested` bytes and the free bytes)
//   no driver / no device / no code object for the GPU → Unavailable
//   sticky errors (illegal address, launch failure, ECC, …) → DeviceLost
//   anything else                      → Internal (a broken invariant of ours)
// `call` names the runtime call ("hipMalloc(1073741824 bytes)"), `device` the device
// ("hip:0 (AMD Instinct MI210)") or the backend ("hip") when no device is open.
[[noreturn]] void throw_error(hipError_t e, const std::string& call, const std::string& device,
                              std::size_t requested = 0);

inline void check(hipError_t e, const char* call, const std::string& device) {
  if (e != hipSuccess) throw_error(e, call, device);
}

// True for the codes that mean the HIP runtime cannot reach any device on this machine.
bool means_unavailable(hipError_t e);

}  // namespace nbx::hip
