// HIP result codes → nbx errors (see hip_errors.hpp).
#include "backends/hip/hip_errors.hpp"

#include "core/errors.hpp"

namespace nbx::hip {
namespace {

// Errors after which the context is unusable: every later call fails the same way.
bool is_sticky(hipError_t e) {
  switch (e) {
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorECCNotCorrectable:
    case hipErrorLaunchTimeOut:
    case hipErrorContextIsDestroyed:
    case hipErrorAssert:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string describe(hipError_t e) {
  // HIP's text for many codes is the code's name again: say it once.
  const std::string name = hipGetErrorName(e), text = hipGetErrorString(e);
  return text == name ? name : name + ": " + text;
}

bool means_unavailable(hipError_t e) {
  switch (e) {
    case hipErrorNoDevice:
    case hipErrorInsufficientDriver:
    case hipErrorInitializationError:
    case hipErrorNoBinaryForGpu:  // a device none of -Dhip-archs was compiled for
      return true;
    default:
      return false;
  }
}

void throw_error(hipError_t e, const std::string& call, const std::string& device,
                 std::size_t requested) {
  const std::string text = call + " on " + device + " failed (" + describe(e) + ").";
  if (e == hipErrorOutOfMemory) {
    (void)hipGetLastError();  // allocation failures are not sticky; clear the record
    std::size_t free_bytes = 0, total = 0;
    (void)hipMemGetInfo(&free_bytes, &total);
    throw OutOfMemory(device, requested, free_bytes, 0, total - free_bytes,
                      call + " on " + device + ": out of memory; " + std::to_string(requested) +
                          " bytes requested, " + std::to_string(free_bytes) + " of " +
                          std::to_string(total) + " bytes free (" + describe(e) + ").");
  }
  if (means_unavailable(e)) throw Unavailable("hip", describe(e), text);
  if (is_sticky(e)) throw DeviceLost(device, text + " The device must be reopened.");
  throw Internal(text);
}

}  // namespace nbx::hip
