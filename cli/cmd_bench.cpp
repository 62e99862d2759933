// `nbx bench [--device D] [--json FILE] [--quick]`: the benchmark suite on one device —
// elementwise GB/s and the host-side dispatch overhead. Timed with the host clock around
// synchronize() over 10 launches a run, so it works on every backend; bench/nbx-bench-gpu
// times CUDA kernels with events and bench/torch_reference.py gives PyTorch's figures.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "bench/bench_elementwise.hpp"
#include "cli/cli_main_commands.hpp"
#include "core/device.hpp"

namespace nbx::cli {
namespace {

struct BenchOptions {
  std::string device, json;
  bool quick = false;
};

void run_bench(const BenchOptions& o) {
  const Device device = o.device.empty() ? default_device() : open(o.device);
  bench::SuiteOptions options;
  options.launches_per_run = 10;
  if (o.quick) options.contiguous_elements = 1 << 22, options.matrix_edge = 2048, options.runs = 5;
  auto timer = bench::host_clock_timer();
  std::cout << "bench on " << device.display_name() << " (timer: " << timer->name() << ")\n";
  const auto results =
      bench::run_elementwise_suite(device.context().backend_device(), options, *timer);
  for (const bench::BenchResult& r : results) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-28s %-12s %9.3f ms %9.1f GB/s\n", r.name.c_str(),
                  r.shape.c_str(), r.median_ms, r.gbps);
    std::cout << line;
  }
  const bench::DispatchResult d = bench::measure_dispatch(device, o.quick ? 2000 : 20000);
  std::printf(
      "  dispatch: %.2f us per 16-element add through nbx::ops::add, %.2f us through "
      "BackendDevice::launch (%d iterations)\n",
      d.ops_add_us, d.backend_launch_us, d.iterations);
  if (!o.json.empty()) {
    std::ofstream(o.json) << bench::results_json(device.display_name(), timer->name(), results, d);
    std::cout << "  wrote " << o.json << "\n";
  }
}

}  // namespace

void register_bench_command(CLI::App& app) {
  static BenchOptions o;
  auto* cmd =
      app.add_subcommand("bench", "Run the benchmark suite on a device (GB/s, dispatch overhead).");
  cmd->add_option("--device", o.device, "The device (default: the default device).");
  cmd->add_option("--json", o.json, "Also write the results as JSON to this file.");
  cmd->add_flag("--quick", o.quick, "Small sizes: a smoke run, not a measurement.");
  cmd->callback([] { run_bench(o); });
}

}  // namespace nbx::cli
