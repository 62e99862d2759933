// nbx-bench-gpu: the elementwise suite and the dispatch overhead on one device, as a table
// and as JSON (compared with bench/torch_reference.py by bench/make_table.py; on CUDA/HIP
// the broadcast and transposed cases once more on devices opened with
// NBX_GPU_ELEMENTWISE=generic and NBX_GPU_TILE=64, "…[generic]", "…[tile64]"); with
// --suite wave1, the row-wise suite of op wave 1 (bench_rowops.hpp; compared with
// bench/torch_wave1.py); on CUDA/HIP it runs once more on a device opened with
// NBX_GPU_ROWS=general (cases named "…[general]"); with --suite transformer, attention and
// cross_entropy (bench_transformer.hpp; compared with bench/torch_transformer.py).
//
//   nbx-bench-gpu [--device cuda:0] [--json FILE] [--quick] [--dispatch-only]
//                 [--suite elementwise|wave1|matmul|transformer|moe] [--variants
//                 blas,tiled,coopmat]
//                 [--cases topk50_vocab_f32,cat8_f32]
//
// --suite moe: fused_moe at Mixtral's shapes and its two grouped GEMMs (bench_moe.hpp).
// --cases times only the wave-1 cases named (the others are set up but not run): A/B runs of
// one case under a launcher's environment switches, without the whole suite's minutes.
// --dispatch-only skips the kernel suite and measures the dispatch overhead at 16 to 4096
// elements (around the largest op the CUDA/HIP launch batch takes); run it once more with
// NBX_GPU_BATCH=0 for the figures without batching, or NBX_GPU_BATCH=<elements> to batch
// larger ops.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "bench/bench_elementwise.hpp"
#include "bench/bench_index.hpp"
#include "bench/bench_matmul.hpp"
#include "bench/bench_moe.hpp"
#include "bench/bench_rowops.hpp"
#include "bench/bench_scan.hpp"
#include "bench/bench_sort.hpp"
#include "bench/bench_transformer.hpp"
#include "core/capability_resolver.hpp"
#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/registry.hpp"
#if NBX_BENCH_CUDA_EVENTS
#include "bench/bench_cuda_events.hpp"
#endif

namespace {

// Another BackendDevice on the same GPU, opened with `var`=`value` (the launcher reads its
// options at open); the variable is put back as it was. Its memory is its own: nothing
// allocated on one device may be launched on the other.
std::unique_ptr<nbx::BackendDevice> open_variant(const std::string& backend, const char* var,
                                                 const char* value) {
  const char* given = std::getenv(var);
  const std::optional<std::string> saved = given ? std::optional<std::string>(given) : std::nullopt;
  setenv(var, value, 1);
  auto dev = nbx::backend_by_name(backend).open(0);
  if (saved)
    setenv(var, saved->c_str(), 1);
  else
    unsetenv(var);
  return dev;
}

// The best timer for `device`: CUDA events, Vulkan GPU timestamps (these time `device`
// only), else the host clock around synchronize() (`host_clock` says so: the suite then
// amortises it over several launches per run).
std::unique_ptr<nbx::bench::KernelTimer> make_timer(const std::string& backend,
                                                    nbx::BackendDevice& device, bool& host_clock) {
  host_clock = false;
#if NBX_BENCH_CUDA_EVENTS
  if (backend == "cuda") return nbx::bench::cuda_event_timer();
#endif
  if (backend == "vulkan" && device.offers(nbx::KernelFamily::kTimestamp))
    return nbx::bench::vulkan_timestamp_timer(device);
  host_clock = true;
  return nbx::bench::host_clock_timer();
}

// A variant of the elementwise suite: the device, and a timer of its own, destroyed first.
struct OpenVariant {
  std::string name;
  std::unique_ptr<nbx::BackendDevice> device;
  std::unique_ptr<nbx::bench::KernelTimer> timer;
};

// The wave-1 suite: row-wise ops through the public API.
int run_wave1(const nbx::Device& device, nbx::bench::KernelTimer& timer, bool quick,
              const std::string& json_path, const std::vector<std::string>& cases) {
  nbx::bench::RowOpsOptions o;
  if (quick) o.rows = 1024, o.cols = 1024, o.vocab_rows = 16, o.vocab = 128256;
  o.cases = cases;
  auto results = nbx::bench::with_sort_cases(
      nbx::bench::with_index_cases(
          nbx::bench::with_scan_cases(nbx::bench::run_rowops_suite(device, o, timer), device, o,
                                      timer),
          device, o, timer),
      device, o, timer);
  // CUDA/HIP: the same suite on the general kernels (NBX_GPU_ROWS=general; the default takes
  // the contiguous-row kernels), named "<case>[general]": what the row kernels are worth.
  const std::string backend = device.id().backend;
  if (backend == "cuda" || backend == "hip") {
    auto dev = open_variant(backend, "NBX_GPU_ROWS", "general");
    auto caps = nbx::resolve_capabilities(backend, dev->properties(), dev->display_name());
    const nbx::Device general(
        std::make_shared<nbx::DeviceContext>(std::move(dev), std::move(caps)));
    for (auto r : nbx::bench::run_rowops_suite(general, o, timer)) {
      r.name += "[general]";
      results.push_back(std::move(r));
    }
  }
  std::erase_if(results, nbx::bench::skipped);
  std::cout << device.display_name() << ", timer: " << timer.name() << "\n";
  std::cout << std::left << std::setw(36) << "case" << std::setw(16) << "shape" << std::right
            << std::setw(10) << "ms" << std::setw(10) << "GB/s\n";
  for (const auto& r : results)
    std::cout << std::left << std::setw(36) << r.name << std::setw(16) << r.shape << std::right
              << std::fixed << std::setprecision(3) << std::setw(10) << r.median_ms
              << std::setprecision(0) << std::setw(10) << r.gbps << "\n";
  if (!json_path.empty())
    std::ofstream(json_path) << nbx::bench::results_json("wave1", device.display_name(),
                                                         timer.name(), results, nullptr);
  return 0;
}

// The transformer suite (bench_transformer.hpp): attention in TFLOP/s, cross_entropy in GB/s.
int run_transformer(const nbx::Device& device, nbx::bench::KernelTimer& timer, bool quick,
                    const std::string& json_path, const std::vector<std::string>& cases) {
  nbx::bench::RowOpsOptions o;
  o.cases = cases;
  o.runs = 20;
  auto results = nbx::bench::run_transformer_suite(device, o, timer, quick);
  std::erase_if(results, nbx::bench::skipped);
  std::cout << device.display_name() << ", timer: " << timer.name() << "\n";
  std::cout << std::left << std::setw(36) << "case" << std::setw(20) << "shape" << std::right
            << std::setw(10) << "ms" << std::setw(14) << "TFLOP/s|GB/s\n";
  for (const auto& r : results) {
    const bool flops = r.name.rfind("sdpa", 0) == 0;
    std::cout << std::left << std::setw(36) << r.name << std::setw(20) << r.shape << std::right
              << std::fixed << std::setprecision(3) << std::setw(10) << r.median_ms
              << std::setprecision(flops ? 1 : 0) << std::setw(10)
              << (flops ? r.gbps / 1e3 : r.gbps) << (flops ? " TFLOP/s" : " GB/s") << "\n";
  }
  if (!json_path.empty())
    std::ofstream(json_path) << nbx::bench::results_json("transformer", device.display_name(),
                                                         timer.name(), results, nullptr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device_name = "cuda:0", json_path;
  std::string suite = "elementwise";
  bool quick = false, dispatch_only = false;
  std::vector<std::string> variants;  // --variants blas,tiled (matmul suite)
  std::vector<std::string> cases;     // --cases a,b (wave-1 suite)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc)
      device_name = argv[++i];
    else if (a == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else if (a == "--quick")
      quick = true;
    else if (a == "--variants" && i + 1 < argc) {
      std::stringstream list(argv[++i]);
      for (std::string v; std::getline(list, v, ',');) variants.push_back(v);
    } else if (a == "--cases" && i + 1 < argc) {
      std::stringstream list(argv[++i]);
      for (std::string c; std::getline(list, c, ',');) cases.push_back(c);
    } else if (a == "--dispatch-only")
      dispatch_only = true;
    else if (a == "--suite" && i + 1 < argc &&
             (std::strcmp(argv[i + 1], "elementwise") == 0 ||
              std::strcmp(argv[i + 1], "wave1") == 0 || std::strcmp(argv[i + 1], "matmul") == 0 ||
              std::strcmp(argv[i + 1], "transformer") == 0 || std::strcmp(argv[i + 1], "moe") == 0))
      suite = argv[++i];
    else {
      std::cerr << "usage: nbx-bench-gpu [--device cuda:0] [--json FILE] [--quick] "
                   "[--dispatch-only] [--suite elementwise|wave1|matmul|transformer|moe] "
                   "[--variants "
                   "blas,tiled,coopmat] [--cases a,b]\n";
      return 2;
    }
  }
  try {
    const nbx::Device device = nbx::open(device_name);
    if (dispatch_only) {
      const char* batch = std::getenv("NBX_GPU_BATCH");
      std::cout << device.display_name() << ", NBX_GPU_BATCH=" << (batch ? batch : "(unset)")
                << "\n";
      for (int elements : {16, 256, 1024, 2048, 4096}) {
        const auto d = nbx::bench::measure_dispatch(device, 20000, elements);
        std::cout << std::fixed << std::setprecision(2) << "dispatch (" << d.iterations << " "
                  << elements << "-element adds, one synchronize; issue-only in brackets): "
                  << "nbx::ops::add " << d.ops_add_us << " us/op [" << d.ops_add_issue_us
                  << "], BackendDevice::launch " << d.backend_launch_us << " us/op ["
                  << d.backend_launch_issue_us << "]\n";
      }
#if NBX_BENCH_CUDA_EVENTS
      if (device.id().backend == "cuda")
        std::cout << "empty CUDA kernel <<<1, 256>>>: " << nbx::bench::raw_empty_launch_us(20000)
                  << " us/launch\n";
#endif
      return 0;
    }
    const std::string backend = device.id().backend;
    nbx::BackendDevice& bd = device.context().backend_device();
    bool host_clock = false;
    const auto timer = make_timer(backend, bd, host_clock);
    nbx::bench::SuiteOptions options;
    if (host_clock) options.launches_per_run = 10;
    if (suite == "wave1") return run_wave1(device, *timer, quick, json_path, cases);
    if (suite == "transformer") return run_transformer(device, *timer, quick, json_path, cases);
    if (suite == "matmul")
      return nbx::bench::run_matmul_main(device, *timer, quick, json_path, variants);
    if (suite == "moe") return nbx::bench::run_moe_main(device, *timer, quick, json_path);
    if (quick) options.contiguous_elements = 1 << 22, options.matrix_edge = 2048;
    // CUDA/HIP: the same GPU with the launcher's other choices (kernels/gpu reads these at
    // open; Vulkan and the host read neither, so there they would re-time the same kernels):
    // generic kernel only, and the 64-wide tile that wavefront-64 AMD GPUs take. Each is a
    // device of its own, with its own buffers and timer.
    std::vector<OpenVariant> open_variants;
    if (backend == "cuda" || backend == "hip")
      for (auto [name, var, value] : {std::tuple{"generic", "NBX_GPU_ELEMENTWISE", "generic"},
                                      std::tuple{"tile64", "NBX_GPU_TILE", "64"}}) {
        OpenVariant v{name, open_variant(backend, var, value), nullptr};
        bool unused = false;
        v.timer = make_timer(backend, *v.device, unused);
        open_variants.push_back(std::move(v));
      }
    std::vector<nbx::bench::Variant> suite_variants;
    for (const OpenVariant& v : open_variants)
      suite_variants.push_back({v.name, v.device.get(), v.timer.get()});
    const auto results = nbx::bench::run_elementwise_suite(bd, options, *timer, suite_variants);
    auto dispatch = nbx::bench::measure_dispatch(device, 20000);
#if NBX_BENCH_CUDA_EVENTS
    if (device.id().backend == "cuda")
      dispatch.raw_launch_us = nbx::bench::raw_empty_launch_us(20000);
#endif

    std::cout << device.display_name() << ", timer: " << timer->name() << "\n";
    std::cout << std::left << std::setw(36) << "case" << std::setw(14) << "shape" << std::right
              << std::setw(10) << "ms" << std::setw(10) << "GB/s"
              << "\n";
    for (const auto& r : results)
      std::cout << std::left << std::setw(36) << r.name << std::setw(14) << r.shape << std::right
                << std::fixed << std::setprecision(3) << std::setw(10) << r.median_ms
                << std::setprecision(0) << std::setw(10) << r.gbps << "\n";
    std::cout << std::setprecision(2) << "dispatch (" << dispatch.iterations
              << " 16-element adds, one synchronize; issue-only in brackets): nbx::ops::add "
              << dispatch.ops_add_us << " us/op [" << dispatch.ops_add_issue_us
              << "], BackendDevice::launch " << dispatch.backend_launch_us << " us/op ["
              << dispatch.backend_launch_issue_us << "], empty CUDA kernel "
              << dispatch.raw_launch_us << " us/op\n";
    if (!json_path.empty())
      std::ofstream(json_path) << nbx::bench::results_json("elementwise", device.display_name(),
                                                           timer->name(), results, &dispatch);
  } catch (const nbx::Error& e) {
    std::cerr << "nbx-bench-gpu: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
