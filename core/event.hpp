// nbx::Event: time one's own work on a device the way CUDA events do.
//
//   nbx::Event start(gpu), end(gpu);
//   start.record();  …ops on gpu…  end.record();
//   double ms = start.elapsed_ms(end);   // waits for `end`
//
// An event marks a point in the device's queue: it completes once every launch and copy
// issued before record() has finished. Not thread-safe per object.
#pragma once

#include <memory>

#include "core/device.hpp"

namespace nbx {

class Storage;
class TimingEvent;

class Event {
 public:
  // An event of `device`, not yet recorded.
  explicit Event(Device device);
  ~Event();
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;

  // Records (again) after the work issued on the device so far. CUDA and HIP record a
  // stream event, the host reads its clock (its work is done when an op returns), Vulkan
  // writes a GPU timestamp where the queue has them (timestampValidBits > 0); elsewhere
  // this throws Unsupported (capability "timestamps").
  void record();
  bool recorded() const;
  // Waits until the event has completed. Throws InvalidArgument before record().
  void synchronize() const;
  // Milliseconds from this event to `end`, a later one of the same device; waits for `end`.
  // Throws InvalidArgument for an unrecorded event or events of two devices.
  double elapsed_ms(const Event& end) const;
  const Device& device() const { return device_; }

 private:
  Device device_;
  std::unique_ptr<TimingEvent> native_;  // the backend's own event (CUDA, HIP, host)
  std::shared_ptr<Storage> stamp_;       // else: a uint64 the "timestamp" family writes
  bool recorded_ = false;
};

}  // namespace nbx
