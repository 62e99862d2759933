// CUDA result codes → nbx errors (see cuda_errors.hpp).
#include "backends/cuda/cuda_errors.hpp"

#include "core/errors.hpp"

namespace nbx::cuda {
namespace {

// Errors after which the context is unusable: every later call fails the same way.
bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorDevicesUnavailable:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string describe(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

bool means_unavailable(cudaError_t e) {
  switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorInitializationError:
      return true;
    default:
      return false;
  }
}

void throw_error(cudaError_t e, const std::string& call, const std::string& device,
                 std::size_t requested) {
  const std::string text = call + " on " + device + " failed (" + describe(e) + ").";
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // allocation failures are not sticky; clear the record
    std::size_t free_bytes = 0, total = 0;
    (void)cudaMemGetInfo(&free_bytes, &total);
    throw OutOfMemory(device, requested, free_bytes, 0, total - free_bytes,
                      call + " on " + device + ": out of memory; " + std::to_string(requested) +
                          " bytes requested, " + std::to_string(free_bytes) + " of " +
                          std::to_string(total) + " bytes free (" + describe(e) + ").");
  }
  if (means_unavailable(e)) throw Unavailable("cuda", describe(e), text);
  if (is_sticky(e)) throw DeviceLost(device, text + " The device must be reopened.");
  throw Internal(text);
}

}  // namespace nbx::cuda
