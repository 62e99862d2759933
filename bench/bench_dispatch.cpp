// Dispatch overhead (host time per tiny op) and the suite's JSON (see bench_elementwise.hpp).
#include <chrono>
#include <nlohmann/json.hpp>
#include <span>

#include "bench/bench_elementwise.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/variant_plan.hpp"
#include "core/tensor.hpp"

namespace nbx::bench {
namespace {

using Clock = std::chrono::steady_clock;

double us_per(Clock::time_point t0, Clock::time_point t1, int n) {
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
}

}  // namespace

DispatchResult measure_dispatch(const Device& device, int iterations, int elements) {
  DispatchResult r;
  r.iterations = iterations;
  r.elements = elements;
  const float pattern[16] = {1.5f, -2.f, 3.25f, 4.f,  -5.5f, 6.f,  7.f,  -8.f,
                             9.f,  10.f, -11.f, 12.f, 13.5f, 14.f, 15.f, 16.f};
  std::vector<float> values(static_cast<std::size_t>(elements));
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = pattern[k % 16];
  const std::int64_t n = elements;
  const std::size_t bytes = values.size() * sizeof(float);
  const Tensor x = Tensor::from_host(values, {n}).to(device);
  const Tensor y = Tensor::from_host(values, {n}).to(device);
  // Through the public op API: validation, promotion, output allocation, launch.
  for (int i = 0; i < 1000; ++i) ops::add(x, y);
  device.synchronize();
  auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) ops::add(x, y);
  r.ops_add_issue_us = us_per(t0, Clock::now(), iterations);
  device.synchronize();
  r.ops_add_us = us_per(t0, Clock::now(), iterations);

  // Through the backend seam alone, with the parameter block built once.
  BackendDevice& bd = device.context().backend_device();
  DeviceMemory a = bd.allocate(bytes), b = bd.allocate(bytes), out = bd.allocate(bytes);
  bd.copy_from_host(a, 0, values.data(), bytes);
  bd.copy_from_host(b, 0, values.data(), bytes);
  abi::ElementwiseParams p{};
  p.op = abi::kOp_add, p.num_inputs = 2, p.ndim = 1, p.numel = n, p.sizes[0] = n;
  p.compute_dtype = p.out.dtype = p.in[0].dtype = p.in[1].dtype = std::int32_t(DType::kFloat32);
  p.out.strides[0] = p.in[0].strides[0] = p.in[1].strides[0] = 1;
  p.contiguous = 1;
  p.attrs[0] = {1.0, 1};
  p.variant = ops::elementwise_variant_for(bd, n);  // what ops::add above plans
  const KernelBuffer bufs[] = {{out, true}, {a, false}, {b, false}};
  const KernelLaunch launch{nbx::KernelFamily::kElementwise, bufs,
                            std::as_bytes(std::span<const abi::ElementwiseParams>(&p, 1))};
  for (int i = 0; i < 1000; ++i) bd.launch(launch);
  bd.synchronize();
  t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) bd.launch(launch);
  r.backend_launch_issue_us = us_per(t0, Clock::now(), iterations);
  bd.synchronize();
  r.backend_launch_us = us_per(t0, Clock::now(), iterations);
  bd.free(a), bd.free(b), bd.free(out);
  return r;
}

std::string results_json(const std::string& suite, const std::string& device,
                         const std::string& timer, const std::vector<BenchResult>& results,
                         const DispatchResult* d) {
  nlohmann::ordered_json j = {{"schema", "nbx.bench/2"},
                              {"suite", suite},
                              {"device", device},
                              {"timer", timer},
                              {"results", nlohmann::ordered_json::array()},
                              {"dispatch", nullptr}};
  for (const BenchResult& r : results)
    j["results"].push_back({{"name", r.name},
                            {"shape", r.shape},
                            {"median_ms", r.median_ms},
                            {"bytes", r.bytes},
                            {"gbps", r.gbps}});
  if (d)
    j["dispatch"] = {{"iterations", d->iterations},
                     {"elements", d->elements},
                     {"ops_add_us", d->ops_add_us},
                     {"ops_add_issue_us", d->ops_add_issue_us},
                     {"backend_launch_us", d->backend_launch_us},
                     {"backend_launch_issue_us", d->backend_launch_issue_us},
                     {"raw_launch_us", d->raw_launch_us}};
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace nbx::bench
