// vk-matmul-bench: TFLOP/s of the Vulkan "matmul" kernel for square products (4096^3 and
// 8192^3 by default) in float32, float16 (float32 output, as the wrapper sends on Vulkan) and
// bfloat16, each variant the device has: the tiled kernel at the tiles that fit its shared
// memory and, for float16, the cooperative-matrix kernel. Timed with GPU timestamps (the
// backend's "vk_timestamp" kernel) around each launch.
//
//   vk-matmul-bench [--device-index 0] [--sizes 4096,8192] [--json FILE]
//
// Random non-zero data in ±[0.25, 1] made on the host; a second of GPU warm-up, then per
// case 3 warm-up launches and the median of 10 timed ones. Every case is spot-checked: 16
// output elements against a float64 dot product on the host, so a fast wrong kernel cannot
// report a figure.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/half.hpp"
#include "core/kernel_abi.hpp"
#include "core/registry.hpp"

namespace {

using nbx::DType;

constexpr int kWarmup = 3, kRuns = 10;

std::vector<std::uint8_t> encode(const std::vector<double>& v, DType t) {
  std::vector<std::uint8_t> out(v.size() * nbx::dtype_size(t));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (t == DType::kFloat32) {
      const float f = float(v[i]);
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else {
      const std::uint16_t h =
          t == DType::kFloat16 ? nbx::double_to_half_bits(v[i]) : nbx::double_to_bf16_bits(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

double decode(const std::uint8_t* p, DType t) {
  if (t == DType::kFloat32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return t == DType::kFloat16 ? nbx::half_bits_to_double(h) : nbx::bf16_bits_to_double(h);
}

struct Case {
  const char* dtype_name;
  DType in, out;
  std::int32_t variant;
  int tile_m, tile_n, tile_k;
};

}  // namespace

int main(int argc, char** argv) {
  int index = 0;
  std::vector<std::int64_t> sizes = {4096, 8192};
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--device-index") {
      index = std::atoi(argv[i + 1]);
    } else if (a == "--json") {
      json_path = argv[i + 1];
    } else if (a == "--sizes") {
      sizes.clear();
      for (const char* s = argv[i + 1]; *s;) {
        sizes.push_back(std::atoll(s));
        while (*s && *s != ',') ++s;
        if (*s) ++s;
      }
    }
  }
  try {
    auto dev = nbx::backend_by_name("vulkan").open(index);
    if (!dev->offers(nbx::KernelFamily::kTimestamp))
      throw nbx::Unavailable("vulkan", "no timestamps", "This Vulkan queue has no timestamps.");
    const auto& extra = dev->properties().extra;
    const double period_ns = std::stod(extra.at("timestamp_period_ns"));
    const std::string coop = extra.count("matmul.coopmat") ? extra.at("matmul.coopmat") : "none";
    const std::int64_t shared = dev->properties().shared_memory_per_block.value_or(0);
    std::printf(
        "%s, GPU timestamps (period %.3f ns), shared memory %lld bytes\n"
        "matmul.coopmat: %s\n%-8s %-8s %-10s %-12s %10s %10s\n",
        dev->display_name().c_str(), period_ns, (long long)shared, coop.c_str(), "size", "dtype",
        "variant", "tile", "ms", "TFLOP/s");
    std::vector<Case> cases;
    for (auto [name, in, out] : {std::tuple{"f32", DType::kFloat32, DType::kFloat32},
                                 std::tuple{"f16", DType::kFloat16, DType::kFloat32},
                                 std::tuple{"bf16", DType::kBFloat16, DType::kBFloat16}}) {
      for (auto [tm, tn, tk] : {std::tuple{128, 128, 32}, std::tuple{128, 64, 32}})
        if ((tm + tn) * tk * 4 <= shared)
          cases.push_back({name, in, out, nbx::abi::kMatmulTiled, tm, tn, tk});
      if (in == DType::kFloat16 && coop.rfind("float16", 0) == 0)
        cases.push_back({name, in, out, nbx::abi::kMatmulCoopMatrix, 128, 128, 32});
    }

    std::string json = "{\"device\": \"" + dev->display_name() +
                       "\", \"timer\": \"vulkan timestamps\", \"results\": [";
    bool first_row = true;
    nbx::DeviceMemory ts = dev->allocate(2 * kRuns * 8);
    bool warmed = false;
    for (std::int64_t n : sizes) {
      // Values once per size (float64 on the host, encoded per dtype).
      std::vector<double> a(std::size_t(n * n)), b(std::size_t(n * n));
      std::uint64_t s = 0x9e3779b97f4a7c15ull ^ std::uint64_t(n);
      for (auto* v : {&a, &b})
        for (double& x : *v) {
          s ^= s << 13, s ^= s >> 7, s ^= s << 17;
          const double mag = 0.25 + 0.75 * double(s >> 40) / double(1 << 24);
          x = (s & 1) ? mag : -mag;
        }
      for (const Case& c : cases) {
        const std::size_t in_bytes = std::size_t(n * n) * nbx::dtype_size(c.in);
        const std::size_t out_bytes = std::size_t(n * n) * nbx::dtype_size(c.out);
        nbx::DeviceMemory da = dev->allocate(in_bytes), db = dev->allocate(in_bytes),
                          dout = dev->allocate(out_bytes);
        // The operands as the device stores them: the spot check uses the rounded values.
        const std::vector<std::uint8_t> ea = encode(a, c.in), eb = encode(b, c.in);
        dev->copy_from_host(da, 0, ea.data(), in_bytes);
        dev->copy_from_host(db, 0, eb.data(), in_bytes);
        nbx::abi::MatmulParams p{};
        p.a_dtype = std::int32_t(c.in);
        p.out_dtype = std::int32_t(c.out);
        p.accumulate_dtype = std::int32_t(DType::kFloat32);
        p.tile_m = c.tile_m, p.tile_n = c.tile_n, p.tile_k = c.tile_k, p.num_stages = 1;
        p.variant = c.variant;
        p.m = p.n = p.k = n;
        p.batch = 1;
        p.a_row_stride = p.b_row_stride = p.out_row_stride = n;
        p.a_col_stride = p.b_col_stride = p.out_col_stride = 1;
        p.alpha = 1;
        const nbx::KernelBuffer bufs[3] = {{dout, true}, {da, false}, {db, false}};
        const nbx::KernelLaunch launch{nbx::KernelFamily::kMatmul, bufs,
                                       std::as_bytes(std::span(&p, 1))};
        if (!warmed) {  // the GPU idled while the host made data: raise its clocks first
          const auto start = std::chrono::steady_clock::now();
          while (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) {
            dev->launch(launch);
            dev->synchronize();
          }
          warmed = true;
        }
        const nbx::KernelBuffer tb[1] = {{ts, true}};
        for (int r = 0; r < kWarmup + kRuns; ++r) {
          const std::int64_t slot0 = 2 * (r - kWarmup), slot1 = slot0 + 1;
          if (r >= kWarmup)
            dev->launch({nbx::KernelFamily::kTimestamp, tb, std::as_bytes(std::span(&slot0, 1))});
          dev->launch(launch);
          if (r >= kWarmup)
            dev->launch({nbx::KernelFamily::kTimestamp, tb, std::as_bytes(std::span(&slot1, 1))});
        }
        std::vector<std::uint64_t> t(2 * kRuns);
        dev->copy_to_host(t.data(), ts, 0, t.size() * 8);
        std::vector<std::uint8_t> out(out_bytes);
        dev->copy_to_host(out.data(), dout, 0, out_bytes);
        dev->synchronize();
        std::vector<double> ms;
        for (int r = 0; r < kRuns; ++r)
          ms.push_back(double(t[2 * r + 1] - t[2 * r]) * period_ns * 1e-6);
        std::sort(ms.begin(), ms.end());
        const double med = ms[ms.size() / 2];
        // Spot check: 16 elements against float64 dot products of the stored operands.
        for (int q = 0; q < 16; ++q) {
          const std::int64_t i = (q * 7919) % n, j = (q * 104729 + 13) % n;
          double want = 0;
          for (std::int64_t k = 0; k < n; ++k)
            want += decode(ea.data() + std::size_t(i * n + k) * nbx::dtype_size(c.in), c.in) *
                    decode(eb.data() + std::size_t(k * n + j) * nbx::dtype_size(c.in), c.in);
          const double got =
              decode(out.data() + std::size_t(i * n + j) * nbx::dtype_size(c.out), c.out);
          const double rtol = c.out == DType::kBFloat16 ? 1.6e-2 : 1e-5;
          if (!(std::fabs(got - want) <= rtol * std::fabs(want) + 8 * 1.2e-7 * double(n))) {
            std::fprintf(stderr, "%s %lld: element (%lld, %lld) is %g, expected %g\n", c.dtype_name,
                         (long long)n, (long long)i, (long long)j, got, want);
            return 1;
          }
        }
        const double tflops = 2.0 * double(n) * double(n) * double(n) / (med * 1e-3) / 1e12;
        const char* variant = c.variant == nbx::abi::kMatmulCoopMatrix ? "coopmat" : "tiled";
        char tile[32];
        std::snprintf(tile, sizeof tile, "%dx%dx%d", c.tile_m, c.tile_n, c.tile_k);
        std::printf("%-8lld %-8s %-10s %-12s %10.3f %10.3f\n", (long long)n, c.dtype_name, variant,
                    tile, med, tflops);
        char row[320];
        std::snprintf(row, sizeof row,
                      "%s{\"name\": \"matmul_%s_%s_%s\", \"shape\": \"%lldx%lldx%lld\", "
                      "\"median_ms\": %.4f, \"tflops\": %.3f}",
                      first_row ? "" : ", ", c.dtype_name, variant, tile, (long long)n,
                      (long long)n, (long long)n, med, tflops);
        first_row = false;
        json += row;
        dev->free(da);
        dev->free(db);
        dev->free(dout);
      }
    }
    json += "]}\n";
    if (!json_path.empty()) std::ofstream(json_path) << json;
  } catch (const nbx::Error& e) {
    std::fprintf(stderr, "vk-matmul-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
