// vk-elementwise-bench: contiguous add and cast at 2^28 elements on a Vulkan device, timed
// with GPU timestamps (the backend's "vk_timestamp" kernel), in the case names of
// bench/torch_reference.py so the two JSON files compare row by row.
//
//   vk-elementwise-bench [--device-index 0] [--elements N] [--json FILE] [--torch FILE]
//
// --torch reads bench/torch_reference.py's JSON and prints each case's ratio to PyTorch.
// Two controls come first: the driver's buffer copy and the plain copy shader "vk_copy_probe".
//
// Two alternating buffer sets, random non-zero data, a second of GPU warm-up, then per case
// 10 warm-ups and the median of 31 runs; each
// run is bracketed by timestamps written after all earlier work finished. Every case is
// spot-checked against a host computation, so a fast wrong kernel cannot report a figure.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
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

struct Case {
  const char* name;
  std::int32_t op;
  DType in, out;
  int arity;
};

nbx::abi::ElementwiseParams flat_params(const Case& c, std::int64_t n) {
  nbx::abi::ElementwiseParams p{};
  p.op = c.op;
  p.num_inputs = c.arity;
  p.ndim = 1;
  p.compute_dtype = std::int32_t(c.in == DType::kBFloat16 ? DType::kFloat32 : c.in);
  p.numel = p.sizes[0] = n;
  p.contiguous = 1;
  p.attrs[0] = {1.0, 1};
  p.out.dtype = std::int32_t(c.out);
  p.out.strides[0] = 1;
  for (int k = 0; k < c.arity; ++k) {
    p.in[k].dtype = std::int32_t(c.in);
    p.in[k].strides[0] = 1;
  }
  return p;
}

double as_double(const std::vector<std::uint8_t>& b, DType t, std::size_t i) {
  if (t == DType::kFloat32) {
    float f;
    std::memcpy(&f, b.data() + i * 4, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, b.data() + i * 2, 2);
  return nbx::bf16_bits_to_double(h);
}

// PyTorch's GB/s for case `name` in the JSON of bench/torch_reference.py --json (0 if absent).
double torch_gbps(const std::string& json, const std::string& name) {
  const std::size_t at = json.find("\"name\": \"" + name + "\"");
  if (at == std::string::npos) return 0;
  const std::size_t g = json.find("\"gbps\":", at);
  const std::size_t next = json.find("\"name\":", at + 1);
  if (g == std::string::npos || (next != std::string::npos && g > next)) return 0;
  return std::atof(json.c_str() + g + 7);
}

// A copy control must have copied: three spot elements of dst equal src's.
void check_copy(nbx::BackendDevice& dev, nbx::DeviceMemory dst, nbx::DeviceMemory src,
                std::int64_t n) {
  for (std::int64_t i : {std::int64_t(0), n / 3, n / 4 * 4 - 1}) {  // whole 16-byte words
    float a = 0, b = 1;
    dev.copy_to_host(&a, src, std::size_t(i) * 4, 4);
    dev.copy_to_host(&b, dst, std::size_t(i) * 4, 4);
    if (a != b)
      throw nbx::Internal("copy control: element " + std::to_string(i) + " is " +
                          std::to_string(b) + ", expected " + std::to_string(a) + ".");
  }
}

// Per case: warm-up runs, then the median of kRuns timed runs; run r uses buffer set r % 2.
constexpr int kWarmup = 10, kRuns = 31;
constexpr int kLastSet = (kWarmup + kRuns - 1) % 2;

}  // namespace

int main(int argc, char** argv) {
  int index = 0;
  std::int64_t n = std::int64_t(1) << 28;
  std::string json_path, torch_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--device-index")
      index = std::atoi(argv[i + 1]);
    else if (a == "--elements")
      n = std::atoll(argv[i + 1]);
    else if (a == "--json")
      json_path = argv[i + 1];
    else if (a == "--torch")
      torch_path = argv[i + 1];
  }
  std::string torch_json;
  if (!torch_path.empty()) {
    std::ifstream in(torch_path);
    torch_json.assign(std::istreambuf_iterator<char>(in), {});
  }
  try {
    auto dev = nbx::backend_by_name("vulkan").open(index);
    if (!dev->offers(nbx::KernelFamily::kTimestamp))
      throw nbx::Unavailable("vulkan", "no timestamps", "This Vulkan queue has no timestamps.");
    const double period_ns = std::stod(dev->properties().extra.at("timestamp_period_ns"));
    // Random non-zero float32 data, made once on the host; bf16 inputs are cast on the device.
    std::vector<float> host(std::size_t(n) + 1);
    std::uint64_t s = 0x9e3779b97f4a7c15ull;
    for (float& v : host) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      const float mag = 0.25f + 1.75f * float(s >> 40) / float(1 << 24);
      v = (s & 1) ? mag : -mag;
    }
    const std::size_t f32_bytes = std::size_t(n) * 4, bf_bytes = std::size_t(n) * 2;
    nbx::DeviceMemory f32[2][2], bf[2][2], out32 = dev->allocate(f32_bytes),
                                           out16 = dev->allocate(bf_bytes);
    const Case to_bf16{"cast_f32_to_bf16", nbx::abi::kOp_copy, DType::kFloat32, DType::kBFloat16,
                       1};
    for (int set = 0; set < 2; ++set) {
      for (int k = 0; k < 2; ++k) {
        f32[set][k] = dev->allocate(f32_bytes);
        bf[set][k] = dev->allocate(bf_bytes);
        dev->copy_from_host(f32[set][k], 0, host.data() + (set * 2 + k) % 2, f32_bytes);
        const auto p = flat_params(to_bf16, n);
        const nbx::KernelBuffer b[2] = {{bf[set][k], true}, {f32[set][k], false}};
        dev->launch({nbx::KernelFamily::kElementwise, b, std::as_bytes(std::span(&p, 1))});
      }
    }
    std::string json = "{\"device\": \"" + dev->display_name() +
                       "\", \"timer\": \"vulkan timestamps\", \"results\": [";
    bool first_row = true;
    const char* wg = std::getenv("NBX_VULKAN_WORKGROUP_SIZE");
    std::printf("%s, GPU timestamps (period %.3f ns), workgroup size %s\n%-20s %12s %10s %10s%s\n",
                dev->display_name().c_str(), period_ns, wg ? wg : "default", "case", "elements",
                "ms", "GB/s", torch_json.empty() ? "" : "  torch GB/s   ratio");
    nbx::DeviceMemory ts = dev->allocate(2 * kRuns * 8);
    // Median GPU time of `runs` calls of issue(r), each bracketed by timestamps.
    auto median_ms = [&](auto&& issue) {
      const nbx::KernelBuffer tb[1] = {{ts, true}};
      for (int r = 0; r < kWarmup + kRuns; ++r) {
        const std::int64_t slot0 = 2 * (r - kWarmup), slot1 = slot0 + 1;
        if (r >= kWarmup)
          dev->launch({nbx::KernelFamily::kTimestamp, tb, std::as_bytes(std::span(&slot0, 1))});
        issue(r);
        if (r >= kWarmup)
          dev->launch({nbx::KernelFamily::kTimestamp, tb, std::as_bytes(std::span(&slot1, 1))});
      }
      std::vector<std::uint64_t> t(2 * kRuns);
      dev->copy_to_host(t.data(), ts, 0, t.size() * 8);
      dev->synchronize();
      std::vector<double> ms;
      for (int r = 0; r < kRuns; ++r)
        ms.push_back(double(t[2 * r + 1] - t[2 * r]) * period_ns * 1e-6);
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    auto report = [&](const char* name, double bytes, double med) {
      const double gbps = bytes / (med * 1e-3) / 1e9;
      const double ref = torch_gbps(torch_json, name);
      std::printf("%-20s %12lld %10.4f %10.0f", name, (long long)n, med, gbps);
      if (ref > 0) std::printf(" %10.0f %7.2fx", ref, gbps / ref);
      std::printf("\n");
      char row[256];
      std::snprintf(row, sizeof row,
                    "%s{\"name\": \"%s\", \"shape\": \"%lld\", \"bytes\": %.0f, \"median_ms\": "
                    "%.5f, \"gbps\": %.1f}",
                    first_row ? "" : ", ", name, (long long)n, bytes, med, gbps);
      first_row = false;
      json += row;
    };
    // The GPU idled while the host made the data: its clocks are low and take a while to
    // rise. Keep it busy for a second (plain copies) before anything is timed.
    {
      const auto start = std::chrono::steady_clock::now();
      const nbx::KernelBuffer b[2] = {{out32, true}, {f32[0][0], false}};
      while (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) {
        for (int r = 0; r < 50; ++r) {
          if (dev->offers(nbx::KernelFamily::kCopyProbe))
            dev->launch(
                nbx::kernel_launch(nbx::abi::CopyProbeParams{std::int64_t(f32_bytes / 16)}, b));
          else
            dev->copy_on_device(out32, 0, f32[0][0], 0, f32_bytes);
        }
        dev->synchronize();
      }
    }
    // Controls: the driver's buffer copy and the plainest 16-byte copy shader, the ceilings
    // the elementwise kernel is measured against (read + write bytes).
    {
      const double med =
          median_ms([&](int r) { dev->copy_on_device(out32, 0, f32[r % 2][0], 0, f32_bytes); });
      check_copy(*dev, out32, f32[kLastSet][0], n);
      report("copy_buffer_f32", 2.0 * double(f32_bytes), med);
    }
    if (dev->offers(nbx::KernelFamily::kCopyProbe)) {
      // Poisoned first (other data), so the check below sees what the probe wrote.
      dev->copy_on_device(out32, 0, f32[0][1], 0, f32_bytes);
      const double med = median_ms([&](int r) {
        const nbx::KernelBuffer b[2] = {{out32, true}, {f32[r % 2][0], false}};
        dev->launch(nbx::kernel_launch(nbx::abi::CopyProbeParams{std::int64_t(f32_bytes / 16)}, b));
      });
      check_copy(*dev, out32, f32[kLastSet][0], n);
      report("copy_shader_f32", 2.0 * double(f32_bytes), med);
    }
    const Case cases[] = {
        {"add_f32", nbx::abi::kOp_add, DType::kFloat32, DType::kFloat32, 2},
        {"cast_f32_to_bf16", nbx::abi::kOp_copy, DType::kFloat32, DType::kBFloat16, 1},
        {"add_bf16", nbx::abi::kOp_add, DType::kBFloat16, DType::kBFloat16, 2},
        {"cast_bf16_to_f32", nbx::abi::kOp_copy, DType::kBFloat16, DType::kFloat32, 1},
    };
    for (const Case& c : cases) {
      const auto p = flat_params(c, n);
      const bool in32 = c.in == DType::kFloat32;
      nbx::DeviceMemory out = c.out == DType::kFloat32 ? out32 : out16;
      const double med = median_ms([&](int r) {
        auto& in = in32 ? f32[r % 2] : bf[r % 2];
        const nbx::KernelBuffer b[3] = {{out, true}, {in[0], false}, {in[1], false}};
        dev->launch({nbx::KernelFamily::kElementwise, std::span(b, std::size_t(1 + c.arity)),
                     std::as_bytes(std::span(&p, 1))});
      });
      const double bytes =
          double(n) * (c.arity * (in32 ? 4 : 2) + (c.out == DType::kFloat32 ? 4 : 2));
      // Spot check the last run (set (warmup + runs - 1) % 2) against the host.
      const int set = kLastSet;
      const std::size_t esz_in = in32 ? 4 : 2, esz_out = c.out == DType::kFloat32 ? 4 : 2;
      for (std::int64_t i : {std::int64_t(0), n / 3, n - 8, n - 1}) {
        std::vector<std::uint8_t> a(esz_in), b2(esz_in), o(esz_out);
        auto& in = in32 ? f32[set] : bf[set];
        dev->copy_to_host(a.data(), in[0], std::size_t(i) * esz_in, esz_in);
        dev->copy_to_host(b2.data(), in[1], std::size_t(i) * esz_in, esz_in);
        dev->copy_to_host(o.data(), out, std::size_t(i) * esz_out, esz_out);
        const double x = as_double(a, c.in, 0), y = as_double(b2, c.in, 0),
                     got = as_double(o, c.out, 0);
        const double want = c.arity == 2 ? x + y : x;
        if (std::fabs(got - want) > 1.6e-2 * std::fabs(want) + 1e-5) {
          std::fprintf(stderr, "%s: element %lld is %g, expected %g\n", c.name, (long long)i, got,
                       want);
          return 1;
        }
      }
      report(c.name, bytes, med);
    }
    json += "]}\n";
    if (!json_path.empty()) std::ofstream(json_path) << json;
  } catch (const nbx::Error& e) {
    std::fprintf(stderr, "vk-elementwise-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
