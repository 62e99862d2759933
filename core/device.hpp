// The user's handle on a device: `nbx::Device gpu = nbx::open("vulkan:0");`.
//
// A Device owns (shared, process-wide per id) the backend's BackendDevice, its caching
// allocator and its resolved Capabilities. Handles are cheap to copy. Launches on one
// device are serialised by the device's mutex, so handles may be used from several threads.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/backend.hpp"
#include "core/caching_allocator.hpp"
#include "core/capabilities.hpp"
#include "core/device_id.hpp"

namespace nbx {

class DeviceContext {
 public:
  DeviceContext(std::unique_ptr<BackendDevice> device, Capabilities caps);
  ~DeviceContext();

  BackendDevice& backend_device() { return *device_; }
  CachingAllocator& allocator() { return allocator_; }
  const Capabilities& capabilities() const { return caps_; }
  LaunchMutex& launch_mutex() { return launch_mutex_; }
  // Names computed once at open: every op passes them to its planner.
  const std::string& id_string() const { return id_string_; }
  const std::string& display_name() const { return display_name_; }

 private:
  std::unique_ptr<BackendDevice> device_;
  std::string id_string_;
  std::string display_name_;
  CachingAllocator allocator_;
  Capabilities caps_;
  LaunchMutex launch_mutex_;
};

class Device {
 public:
  // The host device.
  Device();
  explicit Device(std::shared_ptr<DeviceContext> ctx) : ctx_(std::move(ctx)) {}

  const DeviceId& id() const { return ctx_->backend_device().id(); }
  const std::string& str() const { return ctx_->id_string(); }
  // "cuda:0 (NVIDIA H200)", and the overlay when one restricts it.
  const std::string& display_name() const { return ctx_->display_name(); }
  bool is_host() const { return id().is_host(); }
  const DeviceProperties& properties() const { return ctx_->backend_device().properties(); }
  const Capabilities& capabilities() const { return ctx_->capabilities(); }

  // Waits for all work issued on this device; throws DeviceFault / DeviceLost if a kernel
  // recorded a fault or the device was lost.
  void synchronize() const;
  AllocatorStats memory_stats() const { return ctx_->allocator().stats(); }
  void empty_cache() const { ctx_->allocator().empty_cache(); }

  DeviceContext& context() const { return *ctx_; }
  friend bool operator==(const Device& a, const Device& b) { return a.ctx_ == b.ctx_; }

 private:
  std::shared_ptr<DeviceContext> ctx_;
};

// Opens (once per process) the device named "host", "cuda:0", "vulkan:1" … Throws
// InvalidArgument for a malformed name and Unavailable when the backend or device is absent.
Device open(std::string_view name);
Device open(const DeviceId& id);
// $NBX_DEVICE if set, else the first device of the first available GPU backend
// (cuda, hip, vulkan), else the host.
Device default_device();
Device host_device();

}  // namespace nbx
