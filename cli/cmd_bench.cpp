// `nbx bench [--device D] [--suite elementwise|wave1|matmul] [--json FILE] [--quick]`: a
// benchmark suite on one device — elementwise GB/s and the host-side dispatch overhead; the
// row-wise ops of wave 1 (reductions, softmax, norms, cumsum); matrix products (TFLOP/s).
// Timed with GPU timestamps on Vulkan, else the host clock around synchronize(), so it works
// on every backend; bench/nbx-bench-gpu times CUDA kernels with events, and
// bench/torch_reference.py, torch_wave1.py and torch_matmul.py give PyTorch's figures.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "bench/bench_elementwise.hpp"
#include "bench/bench_index.hpp"
#include "bench/bench_matmul.hpp"
#include "bench/bench_rowops.hpp"
#include "bench/bench_scan.hpp"
#include "bench/bench_sort.hpp"
#include "cli/cli_main_commands.hpp"
#include "core/device.hpp"
#include "core/errors.hpp"

namespace nbx::cli {
namespace {

struct BenchOptions {
  std::string device, json, suite = "elementwise";
  bool quick = false;
};

std::unique_ptr<bench::KernelTimer> timer_for(const Device& device) {
  BackendDevice& bd = device.context().backend_device();
  if (device.id().backend == "vulkan" && bd.offers(nbx::KernelFamily::kTimestamp))
    return bench::vulkan_timestamp_timer(bd);
  return bench::host_clock_timer();
}

// The --json file, when asked for; a folder that went away during the run is an error.
void write_json(const std::string& path, const std::string& text) {
  if (path.empty()) return;
  std::ofstream f(path);
  f << text << "\n";
  if (!f) throw Error("bench: could not write the JSON results to " + path + ".");
  std::cout << "  wrote " << path << "\n";
}

void run_wave1(const Device& device, const BenchOptions& o) {
  auto timer = timer_for(device);
  bench::RowOpsOptions options;
  if (o.quick) options.rows = 1024, options.cols = 1024, options.vocab_rows = 16, options.runs = 5;
  std::cout << "bench wave1 on " << device.display_name() << " (timer: " << timer->name() << ")\n";
  // The same cases in the same order as nbx-bench-gpu --suite wave1.
  const auto results = bench::with_sort_cases(
      bench::with_index_cases(
          bench::with_scan_cases(bench::run_rowops_suite(device, options, *timer), device, options,
                                 *timer),
          device, options, *timer),
      device, options, *timer);
  bench::progress_done();
  for (const bench::BenchResult& r : results) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-28s %-14s %9.3f ms %9.1f GB/s\n", r.name.c_str(),
                  r.shape.c_str(), r.median_ms, r.gbps);
    std::cout << line;
  }
  write_json(o.json,
             bench::results_json("wave1", device.display_name(), timer->name(), results, nullptr));
}

void run_bench(const BenchOptions& o) {
  require_writable(o.json, "bench");
  // Which case is being timed, on a terminal only (nothing extra when piped).
  if (isatty(STDERR_FILENO)) bench::set_progress(&std::cerr);
  const Device device = o.device.empty() ? default_device() : open(o.device);
  if (o.suite == "wave1") return run_wave1(device, o);
  if (o.suite == "matmul") {
    auto timer = timer_for(device);
    bench::run_matmul_main(device, *timer, o.quick, o.json);
    return;
  }
  bench::SuiteOptions options;
  options.launches_per_run = 10;
  if (o.quick) options.contiguous_elements = 1 << 22, options.matrix_edge = 2048, options.runs = 5;
  auto timer = bench::host_clock_timer();
  std::cout << "bench on " << device.display_name() << " (timer: " << timer->name() << ")\n";
  const auto results =
      bench::run_elementwise_suite(device.context().backend_device(), options, *timer);
  bench::progress_done();
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
  write_json(o.json,
             bench::results_json("elementwise", device.display_name(), timer->name(), results, &d));
}

}  // namespace

void register_bench_command(CLI::App& app) {
  static BenchOptions o;
  auto* cmd = app.add_subcommand(
      "bench", "Run a benchmark suite on a device (GB/s, TFLOP/s, dispatch overhead).");
  cmd->add_option("--device", o.device, "The device (default: the default device).");
  cmd->add_option("--suite", o.suite,
                  "elementwise (default), wave1 (reductions, softmax, norms, cumsum) or matmul.")
      ->check(CLI::IsMember({"elementwise", "wave1", "matmul"}));
  cmd->add_option("--json", o.json, "Also write the results as JSON to this file.");
  cmd->add_flag("--quick", o.quick, "Small sizes: a smoke run, not a measurement.");
  cmd->callback([] { run_bench(o); });
}

}  // namespace nbx::cli
