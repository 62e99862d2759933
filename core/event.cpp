#include "core/event.hpp"

#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include "core/errors.hpp"
#include "core/storage.hpp"

namespace nbx {
namespace {

// The GPU clock's period and width, as the Vulkan backend reports them.
double extra_number(const DeviceProperties& p, const char* key, double fallback) {
  const auto it = p.extra.find(key);
  return it == p.extra.end() ? fallback : std::stod(it->second);
}

std::uint64_t read_stamp(const Device& device, const Storage& stamp) {
  std::uint64_t ticks = 0;
  std::lock_guard lock(device.context().launch_mutex());
  device.context().backend_device().copy_to_host(&ticks, stamp.memory(), 0, sizeof ticks);
  return ticks;
}

}  // namespace

Event::Event(Device device) : device_(std::move(device)) {}
Event::~Event() = default;
Event::Event(Event&&) noexcept = default;
Event& Event::operator=(Event&&) noexcept = default;

bool Event::recorded() const {
  return recorded_;
}

void Event::record() {
  DeviceContext& ctx = device_.context();
  BackendDevice& backend = ctx.backend_device();
  // The stamp is allocated before the launch mutex is taken: the caching allocator takes that
  // mutex itself to call the device.
  if (!native_ && !stamp_ && backend.offers(KernelFamily::kTimestamp))
    stamp_ = std::make_shared<Storage>(device_, sizeof(std::uint64_t));
  std::lock_guard lock(ctx.launch_mutex());
  if (std::unique_ptr<TimingEvent> native = backend.record_timing_event()) {
    native_ = std::move(native);
  } else if (backend.offers(KernelFamily::kTimestamp)) {
    const std::int64_t slot = 0;
    const KernelBuffer buffers[] = {{stamp_->memory(), true}};
    backend.launch({KernelFamily::kTimestamp, buffers, std::as_bytes(std::span(&slot, 1))});
  } else {
    throw Unsupported("Event", device_.str(), "timestamps",
                      "Event on " + device_.display_name() +
                          ": the device's queue has no timer (no timestamps); refused.");
  }
  recorded_ = true;
}

void Event::synchronize() const {
  if (!recorded_)
    throw InvalidArgument("Event", "Event on " + device_.display_name() +
                                       ": synchronize before the event was recorded.");
  if (native_)
    native_->ms_since(*native_);  // waits for the event
  else
    read_stamp(device_, *stamp_);  // the read waits for the stamp's write
}

double Event::elapsed_ms(const Event& end) const {
  if (!recorded_ || !end.recorded_)
    throw InvalidArgument(
        "Event", "Event on " + device_.display_name() + ": elapsed_ms needs two recorded events.");
  if (!(device_ == end.device_))
    throw InvalidArgument("Event", "Event: elapsed_ms between events of " + device_.str() +
                                       " and " + end.device_.str() + "; one device's clock only.");
  if (native_) return end.native_->ms_since(*native_);
  const DeviceProperties& p = device_.properties();
  const double period_ns = extra_number(p, "timestamp_period_ns", 1.0);
  const int bits = static_cast<int>(extra_number(p, "timestamp_valid_bits", 64));
  const std::uint64_t mask = bits >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits) - 1;
  const std::uint64_t t0 = read_stamp(device_, *stamp_);
  const std::uint64_t t1 = read_stamp(device_, *end.stamp_);
  // Unsigned difference under the mask: a clock of fewer than 64 bits wraps.
  return double((t1 - t0) & mask) * period_ns * 1e-6;
}

}  // namespace nbx
