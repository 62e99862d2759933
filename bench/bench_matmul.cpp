// The matmul suite (bench_matmul.hpp).
#include "bench/bench_matmul.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/ops/linalg.hpp"

namespace nbx::bench {
namespace {

// Every element drawn on the host (xorshift: 8192^2 floats in well under a second), so no
// structure repeats that a kernel could exploit.
Tensor random_operand(const Device& device, std::int64_t rows, std::int64_t cols, DType dtype,
                      std::uint64_t seed) {
  std::vector<float> host(static_cast<std::size_t>(rows * cols));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (float& v : host) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const float mag = 0.25f + 1.75f * float(s >> 40) / float(1 << 24);
    v = (s & 1) ? mag : -mag;
  }
  return Tensor::from_host(host, {rows, cols}, device).to(dtype);
}

const char* short_name(DType t) {
  return t == DType::kBFloat16 ? "bf16" : t == DType::kFloat16 ? "f16" : "f32";
}

}  // namespace

std::vector<MatmulBenchResult> run_matmul_suite(const Device& device, const MatmulBenchOptions& o,
                                                KernelTimer& timer) {
  BackendDevice& bd = device.context().backend_device();
  struct Variant {
    const char* name;
    ops::MatmulRequest request;
  };
  std::vector<Variant> variants;
  if (bd.offers(nbx::KernelFamily::kMatmul, nbx::abi::kMatmulVendorBlas))
    variants.push_back({"blas", ops::MatmulRequest::kBlas});
  variants.push_back({"tiled", ops::MatmulRequest::kTiled});
  // Vulkan's cooperative-matrix kernel takes float16 only (the others are refused by name).
  if (bd.offers(nbx::KernelFamily::kMatmul, nbx::abi::kMatmulCoopMatrix))
    variants.push_back({"coopmat", ops::MatmulRequest::kCoopMatrix});
  if (!o.variants.empty())
    std::erase_if(variants, [&](const Variant& v) {
      return std::find(o.variants.begin(), o.variants.end(), v.name) == o.variants.end();
    });
  const ops::MatmulRequest saved = ops::matmul_variant_request();
  std::vector<MatmulBenchResult> results;
  for (std::int64_t n : o.sizes) {
    for (DType t : {DType::kBFloat16, DType::kFloat16, DType::kFloat32}) {
      const Tensor a = random_operand(device, n, n, t, 11 + n);
      const Tensor b = random_operand(device, n, n, t, 12 + n);
      for (const Variant& v : variants) {
        if (v.request == ops::MatmulRequest::kCoopMatrix && t != DType::kFloat16) continue;
        ops::set_matmul_variant_request(v.request);
        progress_case("matmul " + std::to_string(n) + " " + std::string(dtype_name(t)) + " " +
                      v.name);
        for (int w = 0; w < o.warmup; ++w) (void)ops::matmul(a, b);
        std::vector<double> ms;
        for (int r = 0; r < o.runs; ++r) {
          timer.begin(bd);
          const Tensor y = ops::matmul(a, b);
          ms.push_back(timer.end_ms(bd));
        }
        std::sort(ms.begin(), ms.end());
        MatmulBenchResult res;
        res.name = std::string("matmul_") + short_name(t) + "[" + v.name + "]";
        res.shape = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
        res.variant = v.name;
        res.median_ms = ms[ms.size() / 2];
        res.tflops = 2.0 * double(n) * double(n) * double(n) / (res.median_ms * 1e-3) / 1e12;
        results.push_back(res);
      }
    }
  }
  ops::set_matmul_variant_request(saved);
  return results;
}

int run_matmul_main(const Device& device, KernelTimer& timer, bool quick,
                    const std::string& json_path, const std::vector<std::string>& variants) {
  MatmulBenchOptions o;
  o.variants = variants;
  if (quick) o.sizes = {1024, 2048};
  const auto results = run_matmul_suite(device, o, timer);
  progress_done();
  std::cout << device.display_name() << ", timer: " << timer.name() << ", matmul.blas: "
            << (device.properties().extra.count("matmul.blas")
                    ? device.properties().extra.at("matmul.blas")
                    : std::string("-"))
            << "\n";
  std::cout << std::left << std::setw(28) << "case" << std::setw(18) << "shape" << std::right
            << std::setw(10) << "ms" << std::setw(10) << "TFLOP/s\n";
  for (const auto& r : results)
    std::cout << std::left << std::setw(28) << r.name << std::setw(18) << r.shape << std::right
              << std::fixed << std::setprecision(3) << std::setw(10) << r.median_ms
              << std::setprecision(1) << std::setw(10) << r.tflops << "\n";
  if (!json_path.empty()) {
    // The object of every suite (results_json), a product's row with its variant and TFLOP/s.
    nlohmann::ordered_json j = {{"schema", "nbx.bench/2"},
                                {"suite", "matmul"},
                                {"device", device.display_name()},
                                {"timer", timer.name()},
                                {"results", nlohmann::ordered_json::array()},
                                {"dispatch", nullptr}};
    for (const auto& r : results)
      j["results"].push_back({{"name", r.name},
                              {"shape", r.shape},
                              {"median_ms", r.median_ms},
                              {"variant", r.variant},
                              {"tflops", r.tflops}});
    std::ofstream f(json_path);
    f << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    if (!f) throw Error("bench: could not write the JSON results to " + json_path + ".");
  }
  return 0;
}

}  // namespace nbx::bench
