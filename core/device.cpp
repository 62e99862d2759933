#include "core/device.hpp"

#include <cstdlib>
#include <map>

#include "core/capability_resolver.hpp"
#include "core/errors.hpp"
#include "core/registry.hpp"

namespace nbx {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::map<DeviceId, std::shared_ptr<DeviceContext>>& open_devices() {
  static std::map<DeviceId, std::shared_ptr<DeviceContext>> devices;
  return devices;
}

// At exit: drops the registry's share of every device (each closes with its last handle, so a
// device a static object still holds closes when that object goes), then the backends. Runs
// before the exit handlers a vendor runtime registered while a device opened (it is
// registered after each open), so a driver still has its threads while its devices close.
void close_devices_at_exit() {
  std::map<DeviceId, std::shared_ptr<DeviceContext>> closing;
  {
    std::lock_guard lock(registry_mutex());
    closing.swap(open_devices());
  }
  closing.clear();
  release_backends_at_exit();
}

}  // namespace

DeviceContext::DeviceContext(std::unique_ptr<BackendDevice> device, Capabilities caps)
    : device_(std::move(device)),
      id_string_(device_->id().str()),
      display_name_(device_->display_name()),
      allocator_(*device_, launch_mutex_),
      caps_(std::move(caps)) {
  device_->attach_allocator(&allocator_);
  if (!caps_.overlay.empty())
    display_name_.insert(display_name_.size() - 1, ", overlay: " + caps_.overlay);
}

DeviceContext::~DeviceContext() {
  device_->attach_allocator(nullptr);  // the allocator goes first (declared after device_)
}

Device::Device() : Device(host_device()) {}

void Device::synchronize() const {
  std::lock_guard lock(ctx_->launch_mutex());
  ctx_->backend_device().synchronize();
}

Device open(const DeviceId& id) {
  std::lock_guard lock(registry_mutex());
  auto& devices = open_devices();
  if (auto it = devices.find(id); it != devices.end()) return Device(it->second);
  Backend& backend = backend_by_name(id.backend);
  std::unique_ptr<BackendDevice> dev = backend.open(id.index);
  Capabilities caps = resolve_capabilities(id.backend, dev->properties(), dev->display_name());
  auto ctx = std::make_shared<DeviceContext>(std::move(dev), std::move(caps));
  devices.emplace(id, ctx);
  std::atexit(close_devices_at_exit);
  return Device(ctx);
}

Device open(std::string_view name) {
  return open(DeviceId::parse(name));
}

Device host_device() {
  static const Device host = open(DeviceId::host());
  return host;
}

Device default_device() {
  if (const char* env = std::getenv("NBX_DEVICE"); env && *env) return open(env);
  for (const BackendStatus& s : backend_statuses()) {
    if (s.name == "host" || !s.backend) continue;
    if (!s.backend->list_devices().devices.empty()) return open(DeviceId{s.name, 0});
  }
  return host_device();
}

}  // namespace nbx
