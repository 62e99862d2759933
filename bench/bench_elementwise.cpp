// The elementwise benchmark suite (see bench_elementwise.hpp): memory-bound cases whose
// figure of merit is bytes moved per second, timed on data far larger than the 60 MB L2
// of an H200, alternating between two sets of buffers, on random non-zero values.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <span>

#include "bench/bench_elementwise.hpp"
#include "core/dtype.hpp"
#include "core/half.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::bench {
namespace {

class HostClockTimer final : public KernelTimer {
 public:
  const char* name() const override { return "host clock around synchronize()"; }
  void begin(BackendDevice& device) override {
    device.synchronize();
    start_ = std::chrono::steady_clock::now();
  }
  double end_ms(BackendDevice& device) override {
    device.synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

enum class Layout { kFlat, kBias, kTransposed };

struct CaseSpec {
  const char* name;
  abi::ElementwiseOp op;
  DType in, out;
  int arity;
  Layout layout;
};

constexpr CaseSpec kCases[] = {
    {"add_f32", abi::kOp_add, DType::kFloat32, DType::kFloat32, 2, Layout::kFlat},
    {"mul_f32", abi::kOp_mul, DType::kFloat32, DType::kFloat32, 2, Layout::kFlat},
    {"gelu_f32", abi::kOp_gelu_erf, DType::kFloat32, DType::kFloat32, 1, Layout::kFlat},
    {"cast_f32_to_bf16", abi::kOp_copy, DType::kFloat32, DType::kBFloat16, 1, Layout::kFlat},
    {"add_bf16", abi::kOp_add, DType::kBFloat16, DType::kBFloat16, 2, Layout::kFlat},
    {"mul_bf16", abi::kOp_mul, DType::kBFloat16, DType::kBFloat16, 2, Layout::kFlat},
    {"gelu_bf16", abi::kOp_gelu_erf, DType::kBFloat16, DType::kBFloat16, 1, Layout::kFlat},
    {"cast_bf16_to_f32", abi::kOp_copy, DType::kBFloat16, DType::kFloat32, 1, Layout::kFlat},
    {"bias_add_f32", abi::kOp_add, DType::kFloat32, DType::kFloat32, 2, Layout::kBias},
    {"transposed_add_f32", abi::kOp_add, DType::kFloat32, DType::kFloat32, 2, Layout::kTransposed},
};

// Fills n elements with a repeating block of random values in ±[0.25, 2] (never zero):
// one block is uploaded, then broadcast over the buffer by the device's own copy kernel.
void fill_random(BackendDevice& d, DeviceMemory m, DType t, std::int64_t n, unsigned seed) {
  const std::int64_t block = std::min<std::int64_t>(n, std::int64_t(1) << 20);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> mag(0.25, 2.0);
  std::vector<std::byte> host(std::size_t(block) * dtype_size(t));
  for (std::int64_t i = 0; i < block; ++i) {
    const double v = (rng() & 1 ? 1 : -1) * mag(rng);
    if (t == DType::kBFloat16) {
      const std::uint16_t bits = double_to_bf16_bits(v);
      std::memcpy(host.data() + i * 2, &bits, 2);
    } else {
      const float f = float(v);
      std::memcpy(host.data() + i * 4, &f, 4);
    }
  }
  DeviceMemory src = d.allocate(host.size());
  d.copy_from_host(src, 0, host.data(), host.size());
  const std::int64_t rows = n / block;  // the tail past rows × block stays as allocated
  abi::ElementwiseParams p{};
  p.op = abi::kOp_copy, p.num_inputs = 1, p.ndim = 2, p.numel = rows * block;
  p.compute_dtype = p.out.dtype = p.in[0].dtype = std::int32_t(t);
  p.sizes[0] = rows, p.sizes[1] = block;
  p.out.strides[0] = block, p.out.strides[1] = 1, p.in[0].strides[1] = 1;
  const KernelBuffer bufs[] = {{m, true}, {src, false}};
  d.launch({"elementwise", bufs, std::as_bytes(std::span<const abi::ElementwiseParams>(&p, 1))});
  d.synchronize();
  d.free(src);
}

struct Prepared {
  abi::ElementwiseParams params{};
  KernelBuffer buffers[3];
  int count = 0;
};

Prepared prepare(const CaseSpec& c, std::int64_t n, std::int64_t edge, DeviceMemory out,
                 DeviceMemory a, DeviceMemory b) {
  Prepared pr;
  abi::ElementwiseParams& p = pr.params;
  p.op = c.op;
  p.num_inputs = c.arity;
  p.compute_dtype = std::int32_t(DType::kFloat32);
  p.out.dtype = std::int32_t(c.out);
  p.in[0].dtype = p.in[1].dtype = std::int32_t(c.in);
  p.attrs[0] = {1.0, 1};  // add's alpha
  if (c.layout == Layout::kFlat) {
    p.ndim = 1, p.numel = n, p.sizes[0] = n, p.contiguous = 1;
    p.out.strides[0] = p.in[0].strides[0] = p.in[1].strides[0] = 1;
  } else {
    p.ndim = 2, p.numel = edge * edge, p.sizes[0] = p.sizes[1] = edge;
    p.out.strides[0] = p.in[0].strides[0] = edge;
    p.out.strides[1] = p.in[0].strides[1] = 1;
    // Bias: b is a row [edge] broadcast down the rows. Transposed: b viewed as b.T.
    p.in[1].strides[0] = c.layout == Layout::kBias ? 0 : 1;
    p.in[1].strides[1] = c.layout == Layout::kBias ? 1 : edge;
  }
  pr.buffers[0] = {out, true};
  pr.buffers[1] = {a, false};
  pr.buffers[2] = {b, false};
  pr.count = 1 + c.arity;
  return pr;
}

double bytes_of(const CaseSpec& c, std::int64_t n, std::int64_t edge) {
  const double in = double(dtype_size(c.in)), out = double(dtype_size(c.out));
  if (c.layout == Layout::kFlat) return double(n) * (c.arity * in + out);
  const double elems = double(edge) * double(edge);
  if (c.layout == Layout::kBias) return elems * (in + out) + double(edge) * in;
  return elems * (2 * in + out);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::unique_ptr<KernelTimer> host_clock_timer() {
  return std::make_unique<HostClockTimer>();
}

std::vector<BenchResult> run_elementwise_suite(BackendDevice& device, const SuiteOptions& o,
                                               KernelTimer& timer,
                                               const std::vector<Variant>& variants) {
  const std::int64_t n = std::max(o.contiguous_elements, o.matrix_edge * o.matrix_edge);
  // Two sets of (a, b, out) per dtype: consecutive runs never find their inputs in L2.
  struct Set {
    DeviceMemory a, b, out;
  };
  Set sets[2][2];  // [dtype: f32, bf16][set]
  const DType dtypes[2] = {DType::kFloat32, DType::kBFloat16};
  for (int t = 0; t < 2; ++t)
    for (int s = 0; s < 2; ++s) {
      const std::size_t bytes = std::size_t(n) * dtype_size(dtypes[t]);
      sets[t][s] = {device.allocate(bytes), device.allocate(bytes), device.allocate(bytes)};
      fill_random(device, sets[t][s].a, dtypes[t], n, 11 + 4 * t + 2 * s);
      fill_random(device, sets[t][s].b, dtypes[t], n, 12 + 4 * t + 2 * s);
    }
  std::vector<BenchResult> results;
  auto run = [&](const CaseSpec& c, BackendDevice& dev, const std::string& suffix) {
    const int tin = c.in == DType::kFloat32 ? 0 : 1, tout = c.out == DType::kFloat32 ? 0 : 1;
    Prepared pr[2];
    for (int s = 0; s < 2; ++s)
      pr[s] = prepare(c, o.contiguous_elements, o.matrix_edge, sets[tout][s].out, sets[tin][s].a,
                      sets[tin][s].b);
    auto launch = [&](int s) {
      dev.launch({"elementwise", std::span<const KernelBuffer>(pr[s].buffers, pr[s].count),
                  std::as_bytes(std::span<const abi::ElementwiseParams>(&pr[s].params, 1))});
    };
    for (int w = 0; w < o.warmup; ++w) launch(w % 2);
    std::vector<double> ms;
    for (int r = 0; r < o.runs; ++r) {
      timer.begin(dev);
      for (int j = 0; j < o.launches_per_run; ++j) launch((r + j) % 2);
      ms.push_back(timer.end_ms(dev) / o.launches_per_run);
    }
    BenchResult res;
    res.name = c.name + suffix;
    res.shape = c.layout == Layout::kFlat
                    ? std::to_string(o.contiguous_elements)
                    : std::to_string(o.matrix_edge) + "x" + std::to_string(o.matrix_edge);
    res.bytes = bytes_of(c, o.contiguous_elements, o.matrix_edge);
    res.median_ms = median(ms);
    res.gbps = res.bytes / (res.median_ms * 1e-3) / 1e9;
    results.push_back(res);
  };
  for (const CaseSpec& c : kCases) run(c, device, "");
  for (const Variant& v : variants)
    for (const CaseSpec& c : kCases)
      if (c.layout != Layout::kFlat) run(c, *v.device, "[" + v.name + "]");
  for (auto& t : sets)
    for (Set& s : t) device.free(s.a), device.free(s.b), device.free(s.out);
  return results;
}

}  // namespace nbx::bench
