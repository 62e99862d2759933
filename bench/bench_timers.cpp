// KernelTimer over the Vulkan backend's "vk_timestamp" kernel (GPU clock written after all
// earlier work finished), so Vulkan figures count device time, not submission overhead.
#include <cstring>
#include <span>
#include <string>

#include "bench/bench_elementwise.hpp"
#include "core/errors.hpp"

namespace nbx::bench {
namespace {

class VulkanTimestampTimer final : public KernelTimer {
 public:
  explicit VulkanTimestampTimer(BackendDevice& device)
      : device_(device),
        slots_(device.allocate(16)),
        period_ns_(std::stod(device.properties().extra.at("timestamp_period_ns"))) {}
  ~VulkanTimestampTimer() override { device_.free(slots_); }
  const char* name() const override { return "vulkan timestamps"; }
  void begin(BackendDevice& device) override { stamp(device, 0); }
  double end_ms(BackendDevice& device) override {
    stamp(device, 1);
    std::uint64_t t[2];
    device.copy_to_host(t, slots_, 0, sizeof t);  // waits for the batch
    return double(t[1] - t[0]) * period_ns_ * 1e-6;
  }

 private:
  void stamp(BackendDevice& device, std::int64_t slot) {
    // The slots are device_'s memory; another device (one opened with other options for the
    // same GPU) would refuse them, and its clock is not ours to compare with.
    if (&device != &device_)
      throw InvalidArgument("timer", "The Vulkan timestamp timer of " + device_.display_name() +
                                         " was handed another device (" + device.display_name() +
                                         "); make a timer for that device.");
    const KernelBuffer b[] = {{slots_, true}};
    device.launch({nbx::KernelFamily::kTimestamp, b, std::as_bytes(std::span(&slot, 1))});
  }
  BackendDevice& device_;
  DeviceMemory slots_;
  double period_ns_;
};

}  // namespace

std::unique_ptr<KernelTimer> vulkan_timestamp_timer(BackendDevice& device) {
  if (!device.offers(nbx::KernelFamily::kTimestamp))
    throw Unavailable(device.display_name(), "no timestamps",
                      device.display_name() + " has no GPU timestamps on its queue.");
  return std::make_unique<VulkanTimestampTimer>(device);
}

}  // namespace nbx::bench
