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
  const std::int64_t rows = n / block, tail = n - rows * block;
  abi::ElementwiseParams p{};
  p.op = abi::kOp_copy, p.num_inputs = 1, p.ndim = 2, p.numel = rows * block;
  p.compute_dtype = p.out.dtype = p.in[0].dtype = std::int32_t(t);
  p.sizes[0] = rows, p.sizes[1] = block;
  p.out.strides[0] = block, p.out.strides[1] = 1, p.in[0].strides[1] = 1;
  const KernelBuffer bufs[] = {{m, true}, {src, false}};
  d.launch({nbx::KernelFamily::kElementwise, bufs,
            std::as_bytes(std::span<const abi::ElementwiseParams>(&p, 1))});
  // The tail past rows × block (n not a multiple of the block) takes the block's start, so
  // no case reads memory left as allocated.
  if (tail > 0)
    d.copy_on_device(m, std::size_t(rows * block) * dtype_size(t), src, 0,
                     std::size_t(tail) * dtype_size(t));
  d.synchronize();
  d.free(src);
}

// One device's operands: two sets of (a, b, out) per dtype, so consecutive runs never find
// their inputs in L2. Allocated, filled and freed by that device, the only one that launches
// on them. Every device draws the same values (the seeds depend on dtype and set only).
class DeviceBuffers {
 public:
  struct Set {
    DeviceMemory a, b, out;
  };
  DeviceBuffers(BackendDevice& device, std::int64_t n, bool with_bf16) : device_(device) {
    for (int t = 0; t < (with_bf16 ? 2 : 1); ++t)
      for (int s = 0; s < 2; ++s) {
        const std::size_t bytes = std::size_t(n) * dtype_size(kDtypes[t]);
        Set& set = sets_[t][s];
        set.a = device.allocate(bytes), set.b = device.allocate(bytes);
        set.out = device.allocate(bytes);
        fill_random(device, set.a, kDtypes[t], n, 11 + 4 * t + 2 * s);
        fill_random(device, set.b, kDtypes[t], n, 12 + 4 * t + 2 * s);
      }
  }
  ~DeviceBuffers() {
    for (auto& t : sets_)
      for (Set& s : t) device_.free(s.a), device_.free(s.b), device_.free(s.out);
  }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  const Set& set(DType t, int s) const { return sets_[t == DType::kFloat32 ? 0 : 1][s]; }

 private:
  static constexpr DType kDtypes[2] = {DType::kFloat32, DType::kBFloat16};
  BackendDevice& device_;
  Set sets_[2][2] = {};  // [dtype: f32, bf16][set]; a dtype not asked for stays empty
};

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

bool every_case(const CaseSpec&) {
  return true;
}
// What a variant re-runs: the broadcast and transposed layouts, where the launcher's options
// pick the kernel.
bool matrix_case(const CaseSpec& c) {
  return c.layout != Layout::kFlat;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::ostream* progress_out = nullptr;  // set_progress's stream

}  // namespace

void set_progress(std::ostream* out) {
  progress_out = out;
}
void progress_case(const std::string& name) {
  if (progress_out) *progress_out << "\r\033[K  timing " << name << std::flush;
}
void progress_done() {
  if (progress_out) *progress_out << "\r\033[K" << std::flush;
}

std::unique_ptr<KernelTimer> host_clock_timer() {
  return std::make_unique<HostClockTimer>();
}

std::vector<BenchResult> run_elementwise_suite(BackendDevice& device, const SuiteOptions& o,
                                               KernelTimer& timer,
                                               const std::vector<Variant>& variants) {
  std::vector<BenchResult> results;
  // Runs the cases `wanted` on `dev`, timed by `dev_timer`, on buffers of `dev`'s own.
  auto run_on = [&](BackendDevice& dev, KernelTimer& dev_timer, bool (*wanted)(const CaseSpec&),
                    const std::string& suffix) {
    std::int64_t n = 0;
    bool with_bf16 = false;
    for (const CaseSpec& c : kCases)
      if (wanted(c)) {
        n = std::max(
            n, c.layout == Layout::kFlat ? o.contiguous_elements : o.matrix_edge * o.matrix_edge);
        with_bf16 = with_bf16 || c.in == DType::kBFloat16 || c.out == DType::kBFloat16;
      }
    const DeviceBuffers buffers(dev, n, with_bf16);
    for (const CaseSpec& c : kCases) {
      if (!wanted(c)) continue;
      progress_case(c.name + suffix);
      Prepared pr[2];
      for (int s = 0; s < 2; ++s)
        pr[s] = prepare(c, o.contiguous_elements, o.matrix_edge, buffers.set(c.out, s).out,
                        buffers.set(c.in, s).a, buffers.set(c.in, s).b);
      auto launch = [&](int s) {
        dev.launch({nbx::KernelFamily::kElementwise,
                    std::span<const KernelBuffer>(pr[s].buffers, pr[s].count),
                    std::as_bytes(std::span<const abi::ElementwiseParams>(&pr[s].params, 1))});
      };
      for (int w = 0; w < o.warmup; ++w) launch(w % 2);
      std::vector<double> ms;
      for (int r = 0; r < o.runs; ++r) {
        dev_timer.begin(dev);
        for (int j = 0; j < o.launches_per_run; ++j) launch((r + j) % 2);
        ms.push_back(dev_timer.end_ms(dev) / o.launches_per_run);
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
    }
  };
  run_on(device, timer, every_case, "");
  // `device`'s buffers are freed by now: a variant allocates its own (f32 only) in their place.
  for (const Variant& v : variants)
    run_on(*v.device, v.timer ? *v.timer : timer, matrix_case, "[" + v.name + "]");
  return results;
}

}  // namespace nbx::bench
