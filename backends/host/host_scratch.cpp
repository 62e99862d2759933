#include "backends/host/host_scratch.hpp"

#include "core/errors.hpp"

namespace nbx::host {
namespace {

// Host launches run to completion on the thread that issued them, so the launch in progress
// is a property of the thread.
thread_local BackendDevice* launching = nullptr;

}  // namespace

LaunchScope::LaunchScope(BackendDevice& device) : previous_(launching) {
  launching = &device;
}

LaunchScope::~LaunchScope() {
  launching = previous_;
}

ScratchBlock launch_scratch(std::int64_t count, std::size_t item_bytes) {
  if (!launching) throw Internal("host scratch requested outside a host launch.");
  if (count < 0) throw Internal("host scratch of " + std::to_string(count) + " items.");
  return launching->scratch(std::uint64_t(count), item_bytes);
}

}  // namespace nbx::host
