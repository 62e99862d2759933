#include "core/backend.hpp"

#include <string>

#include "core/errors.hpp"

namespace nbx {
namespace {

void check_range(const BackendDevice& dev, const char* what, DeviceMemory mem, std::size_t offset,
                 std::size_t bytes) {
  if (offset > mem.bytes || bytes > mem.bytes - offset)
    throw InvalidArgument(std::string(what), std::string(what) + " on " + dev.display_name() +
                                                 ": bytes [" + std::to_string(offset) + ", " +
                                                 std::to_string(offset + bytes) +
                                                 ") fall outside a buffer of " +
                                                 std::to_string(mem.bytes) + " bytes.");
}

}  // namespace

std::string BackendDevice::display_name() const {
  return id_.str() + " (" + properties_.name + ")";
}

DeviceMemory BackendDevice::allocate(std::size_t bytes) {
  if (bytes == 0) return {};
  const DeviceMemory m = allocate_impl(bytes);
  std::lock_guard<std::mutex> lock(owned_mutex_);
  owned_[m.handle] = m.bytes;
  return m;
}

void BackendDevice::require_owned(std::string_view what,
                                  std::initializer_list<DeviceMemory> memories) const {
  std::lock_guard<std::mutex> lock(owned_mutex_);
  for (const DeviceMemory& m : memories) check_owned(what, m);
}

void BackendDevice::check_owned(std::string_view what, DeviceMemory memory) const {
  if (!memory) return;
  const auto it = owned_.find(memory.handle);
  if (it == owned_.end())
    throw InvalidArgument(std::string(what), std::string(what) + " on " + display_name() +
                                                 ": a buffer that is not live memory of this "
                                                 "device (another device's, or already freed).");
  if (memory.bytes > it->second)
    throw InvalidArgument(std::string(what), std::string(what) + " on " + display_name() +
                                                 ": a buffer of " + std::to_string(memory.bytes) +
                                                 " bytes names an allocation of " +
                                                 std::to_string(it->second) + ".");
}

void BackendDevice::free(DeviceMemory memory) {
  if (!memory) return;
  require_owned("free", {memory});
  free_impl(memory);
  std::lock_guard<std::mutex> lock(owned_mutex_);
  owned_.erase(memory.handle);
}

void BackendDevice::copy_from_host(DeviceMemory dst, std::size_t dst_offset, const void* src,
                                   std::size_t bytes) {
  if (bytes == 0) return;
  require_owned("copy_from_host", {dst});
  check_range(*this, "copy_from_host", dst, dst_offset, bytes);
  copy_from_host_impl(dst, dst_offset, src, bytes);
}

void BackendDevice::copy_to_host(void* dst, DeviceMemory src, std::size_t src_offset,
                                 std::size_t bytes) {
  if (bytes == 0) return;
  require_owned("copy_to_host", {src});
  check_range(*this, "copy_to_host", src, src_offset, bytes);
  copy_to_host_impl(dst, src, src_offset, bytes);
}

void BackendDevice::copy_on_device(DeviceMemory dst, std::size_t dst_offset, DeviceMemory src,
                                   std::size_t src_offset, std::size_t bytes) {
  if (bytes == 0) return;
  require_owned("copy_on_device", {dst, src});
  check_range(*this, "copy_on_device", dst, dst_offset, bytes);
  check_range(*this, "copy_on_device", src, src_offset, bytes);
  copy_on_device_impl(dst, dst_offset, src, src_offset, bytes);
}

void BackendDevice::synchronize() {
  synchronize_impl();
}

void BackendDevice::launch(const KernelLaunch& launch) {
  if (!has_kernel_impl(launch.kernel))
    throw Unsupported(std::string(launch.kernel), id_.str(), "kernel:" + std::string(launch.kernel),
                      "The " + std::string(launch.kernel) + " kernel is not available on " +
                          display_name() + ".");
  {
    std::lock_guard<std::mutex> lock(owned_mutex_);  // once per launch, not per buffer
    for (const KernelBuffer& b : launch.buffers) check_owned(launch.kernel, b.memory);
  }
  ++launches_;
  launch_impl(launch);
}

}  // namespace nbx
