#include "core/device.hpp"

#include <cstdlib>
#include <map>

#include "core/errors.hpp"
#include "core/registry.hpp"

namespace nbx {
namespace {

// Capabilities from the runtime's own answers only. Used until the device-file resolver
// is wired in; every value says it came from the runtime.
Capabilities interim_capabilities(const BackendDevice& dev) {
  const DeviceProperties& p = dev.properties();
  Capabilities c;
  c.device = dev.display_name();
  const std::string rt = "runtime (" + dev.id().backend + ")";
  auto set_bool = [&](Capability<bool>& cap, const std::optional<bool>& v) {
    if (v) cap = {*v, rt};
  };
  set_bool(c.fp64, p.fp64);
  set_bool(c.fp16, p.fp16);
  set_bool(c.int64, p.int64);
  set_bool(c.int8, p.int8);
  if (p.bf16) c.bf16 = {*p.bf16 ? Bf16Support::kNative : Bf16Support::kEmulated, rt};
  if (p.subgroup_size) c.subgroup_size = {*p.subgroup_size, rt};
  if (p.max_threads_per_block) c.max_threads_per_block = {*p.max_threads_per_block, rt};
  if (p.shared_memory_per_block) c.shared_memory_per_block = {*p.shared_memory_per_block, rt};
  return c;
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::map<DeviceId, std::shared_ptr<DeviceContext>>& open_devices() {
  static auto* devices = new std::map<DeviceId, std::shared_ptr<DeviceContext>>();
  return *devices;
}

}  // namespace

DeviceContext::DeviceContext(std::unique_ptr<BackendDevice> device, Capabilities caps)
    : device_(std::move(device)), allocator_(*device_), caps_(std::move(caps)) {}

DeviceContext::~DeviceContext() = default;

Device::Device() : Device(host_device()) {}

std::string Device::display_name() const {
  std::string s = ctx_->backend_device().display_name();
  if (!capabilities().overlay.empty())
    s.insert(s.size() - 1, ", overlay: " + capabilities().overlay);
  return s;
}

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
  Capabilities caps = interim_capabilities(*dev);
  auto ctx = std::make_shared<DeviceContext>(std::move(dev), std::move(caps));
  devices.emplace(id, ctx);
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
