// The elementwise benchmark suite and the dispatch-overhead measurement, backend-neutral:
// they drive a BackendDevice (kernel figures) and the public op API (dispatch overhead).
// `nbx bench` and the nbx-bench-gpu program call these.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/device.hpp"

namespace nbx::bench {

// Times device work issued between begin() and end(). The default implementation
// brackets it with synchronize() and the host clock; the CUDA one records events.
class KernelTimer {
 public:
  virtual ~KernelTimer() = default;
  virtual const char* name() const = 0;
  virtual void begin(BackendDevice& device) = 0;
  // Milliseconds of device time since begin().
  virtual double end_ms(BackendDevice& device) = 0;
};
std::unique_ptr<KernelTimer> host_clock_timer();
// GPU timestamps through the Vulkan backend's "vk_timestamp" kernel (bench_timers.cpp);
// Unavailable where the queue has none. It times `device` only (its timestamp slots are that
// device's memory): handed another device, it throws InvalidArgument.
std::unique_ptr<KernelTimer> vulkan_timestamp_timer(BackendDevice& device);

// Where the suites say which case they are timing: a terminal's status line, rewritten in
// place ("\r", erase to the end of the line). Null, the default, says nothing, so piped or
// redirected output has nothing extra. progress_done() clears the line.
void set_progress(std::ostream* out);
void progress_case(const std::string& name);
void progress_done();

struct SuiteOptions {
  std::int64_t contiguous_elements = std::int64_t(1) << 28;
  std::int64_t matrix_edge = 16384;  // broadcast-bias and transposed adds: edge × edge
  int warmup = 3;
  int runs = 25;             // the median of these is reported
  int launches_per_run = 1;  // > 1 amortises a host-clock timer's synchronize()
};

struct BenchResult {
  std::string name;   // "add_f32", "transposed_add_f32[tile64]", …
  std::string shape;  // "268435456", "16384x16384"
  double bytes = 0;   // bytes the op must move (reads + writes, each element once)
  double median_ms = 0;
  double gbps = 0;  // bytes / median time
};

// Runs every case on `device`. `variants` are more devices (same GPU, other launcher
// options) on which the broadcast and transposed cases run again, named "[variant]". Each
// device launches only on buffers it allocated and filled itself (a BackendDevice refuses
// another's memory), so a variant costs its own f32 buffers, made after `device`'s are freed.
struct Variant {
  std::string name;
  BackendDevice* device;
  // Times `device`'s runs; null: the suite's timer, which must then time any device it is
  // handed (the host clock and CUDA events do; a Vulkan timestamp timer only its own).
  KernelTimer* timer = nullptr;
};
std::vector<BenchResult> run_elementwise_suite(BackendDevice& device, const SuiteOptions& options,
                                               KernelTimer& timer,
                                               const std::vector<Variant>& variants = {});

// Host time per op for a 16-element float32 add issued `iterations` times and synchronised
// once at the end: through nbx::ops::add on `device`, and through BackendDevice::launch
// with a prepared parameter block (the floor under the op layer).
struct DispatchResult {
  double ops_add_us = 0;        // per op, synchronize included
  double ops_add_issue_us = 0;  // per op, the loop alone (before synchronize)
  double backend_launch_us = 0;
  double backend_launch_issue_us = 0;
  double raw_launch_us = -1;  // the vendor runtime's own floor, where measured (< 0: not)
  int iterations = 0;
  int elements = 16;  // of each add
};
// Host time per float32 add of `elements` elements, issued `iterations` times in a loop and
// synchronised once: through nbx::ops::add, and through BackendDevice::launch.
DispatchResult measure_dispatch(const Device& device, int iterations = 20000, int elements = 16);

// One JSON object for every suite (schema "nbx.bench/2", README's "JSON output"): {"schema",
// "suite", "device", "timer", "results": [{"name", "shape", "median_ms", "bytes", "gbps"}],
// "dispatch": {…} or null when the suite does not measure it}. Text that is not UTF-8 (a
// driver's device name) is written as U+FFFD.
std::string results_json(const std::string& suite, const std::string& device,
                         const std::string& timer, const std::vector<BenchResult>& results,
                         const DispatchResult* dispatch);

}  // namespace nbx::bench
