// The moe suite (bench_moe.hpp).
#include "bench/bench_moe.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/ops/elementwise.hpp"
#include "core/ops/glu.hpp"
#include "core/ops/index.hpp"
#include "core/ops/moe.hpp"
#include "core/ops/shape.hpp"

namespace nbx::bench {
namespace {

// rows × cols of ±[0.25, 2] · scale drawn on the host for every element (xorshift), made
// bfloat16 on the device: nothing repeats that a kernel could exploit.
Tensor random_rows(const Device& device, std::int64_t rows, std::int64_t cols, double scale,
                   std::uint64_t seed) {
  std::vector<float> host(static_cast<std::size_t>(rows * cols));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (float& v : host) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const float mag = float(scale) * (0.25f + 1.75f * float(s >> 40) / float(1 << 24));
    v = (s & 1) ? mag : -mag;
  }
  return Tensor::from_host(host, {rows, cols}, device).to(DType::kBFloat16);
}

// [experts, rows, cols], an expert at a time so the host holds one float32 slab.
Tensor random_experts(const Device& device, std::int64_t experts, std::int64_t rows,
                      std::int64_t cols, double scale, std::uint64_t seed) {
  std::vector<Tensor> slabs;
  for (std::int64_t e = 0; e < experts; ++e)
    slabs.push_back(random_rows(device, rows, cols, scale, seed + std::uint64_t(e)));
  return ops::cat(slabs, 0).view({experts, rows, cols});
}

struct MoeResult {
  std::string name, shape;
  double median_ms = 0, tflops = 0;
};

MoeResult timed(const std::string& name, const std::string& shape, double flops,
                const Device& device, KernelTimer& timer, const std::function<Tensor()>& run) {
  BackendDevice& bd = device.context().backend_device();
  progress_case(name);
  for (int w = 0; w < 3; ++w) (void)run();
  std::vector<double> ms;
  for (int r = 0; r < 10; ++r) {
    timer.begin(bd);
    const Tensor y = run();
    ms.push_back(timer.end_ms(bd));
  }
  std::sort(ms.begin(), ms.end());
  MoeResult res{name, shape, ms[ms.size() / 2], 0};
  res.tflops = flops / (res.median_ms * 1e-3) / 1e12;
  return res;
}

}  // namespace

int run_moe_main(const Device& device, KernelTimer& timer, bool quick,
                 const std::string& json_path) {
  const std::int64_t tokens = quick ? 1024 : 4096, d = 4096, ffn = 14336, experts = 8, top_k = 2;
  // PyTorch's script: hidden · 0.1, weights · 0.02 (randn there; uniform magnitudes here).
  const Tensor hidden = random_rows(device, tokens, d, 0.1, 20);
  const Tensor logits = random_rows(device, tokens, experts, 1.0, 21);
  const Tensor w13 = random_experts(device, experts, 2 * ffn, d, 0.02, 22);
  const Tensor w2 = random_experts(device, experts, d, ffn, 0.02, 40);
  const std::string shape = "t" + std::to_string(tokens) + " d" + std::to_string(d) + " ffn" +
                            std::to_string(ffn) + " e" + std::to_string(experts) + " top" +
                            std::to_string(top_k);
  const double rows = double(tokens * top_k);
  std::vector<MoeResult> results;
  results.push_back(timed("fused_moe_bf16", shape, 2.0 * rows * 3 * double(d) * double(ffn), device,
                          timer, [&] { return ops::fused_moe(hidden, logits, w13, w2, top_k); }));
  // The same with the project's own grouped GEMM (the default on CUDA is cuBLASLt a group).
  const char* chosen = std::getenv("NBX_GROUPED_MATMUL");
  const std::string saved = chosen ? chosen : "";
  setenv("NBX_GROUPED_MATMUL", "own", 1);
  results.push_back(timed("fused_moe_bf16[own]", shape, 2.0 * rows * 3 * double(d) * double(ffn),
                          device, timer,
                          [&] { return ops::fused_moe(hidden, logits, w13, w2, top_k); }));
  if (chosen)
    setenv("NBX_GROUPED_MATMUL", saved.c_str(), 1);
  else
    unsetenv("NBX_GROUPED_MATMUL");
  // The GEMMs alone, on fused_moe's own routing and grouped rows.
  const ops::MoeRouting route = ops::moe_route(logits, top_k);
  const ops::MoePermutation perm = ops::moe_permute(route.expert_ids, experts);
  const Tensor a = ops::index_select(hidden, 0, ops::floor_divide(perm.order, top_k));
  const Tensor act = ops::silu_and_mul(ops::grouped_matmul(a, w13, perm.group_offsets));
  results.push_back(timed(
      "grouped_matmul_w13_bf16",
      std::to_string(tokens * top_k) + "x" + std::to_string(2 * ffn) + "x" + std::to_string(d),
      2.0 * rows * double(2 * ffn) * double(d), device, timer,
      [&] { return ops::grouped_matmul(a, w13, perm.group_offsets); }));
  results.push_back(
      timed("grouped_matmul_w2_bf16",
            std::to_string(tokens * top_k) + "x" + std::to_string(d) + "x" + std::to_string(ffn),
            2.0 * rows * double(d) * double(ffn), device, timer,
            [&] { return ops::grouped_matmul(act, w2, perm.group_offsets); }));
  // The stages around the GEMMs, each alone (fused_moe's time less the two GEMMs is theirs):
  // FLOPs 0, so their TFLOP/s column reads 0.
  const Tensor gate_up = ops::grouped_matmul(a, w13, perm.group_offsets);
  const Tensor down = ops::grouped_matmul(act, w2, perm.group_offsets);
  results.push_back(timed("moe_route", shape, 0, device, timer,
                          [&] { return ops::moe_route(logits, top_k).weights; }));
  results.push_back(timed("moe_permute", shape, 0, device, timer,
                          [&] { return ops::moe_permute(route.expert_ids, experts).order; }));
  results.push_back(timed("gather_rows", shape, 0, device, timer, [&] {
    return ops::index_select(hidden, 0, ops::floor_divide(perm.order, top_k));
  }));
  results.push_back(
      timed("silu_and_mul", shape, 0, device, timer, [&] { return ops::silu_and_mul(gate_up); }));
  results.push_back(timed("moe_combine", shape, 0, device, timer,
                          [&] { return ops::moe_combine(down, route.weights, perm.inverse); }));
  progress_done();
  std::cout << device.display_name() << ", timer: " << timer.name() << "\n";
  std::cout << std::left << std::setw(28) << "case" << std::setw(32) << "shape" << std::right
            << std::setw(10) << "ms" << std::setw(10) << "TFLOP/s\n";
  for (const auto& r : results)
    std::cout << std::left << std::setw(28) << r.name << std::setw(32) << r.shape << std::right
              << std::fixed << std::setprecision(3) << std::setw(10) << r.median_ms
              << std::setprecision(1) << std::setw(10) << r.tflops << "\n";
  if (!json_path.empty()) {
    nlohmann::json j;
    j["schema"] = "nbx.bench-moe/1";
    j["device"] = device.display_name();
    j["timer"] = timer.name();
    j["results"] = nlohmann::json::array();
    for (const auto& r : results)
      j["results"].push_back(
          {{"name", r.name}, {"shape", r.shape}, {"median_ms", r.median_ms}, {"tflops", r.tflops}});
    std::ofstream(json_path) << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                             << "\n";
  }
  return 0;
}

}  // namespace nbx::bench
