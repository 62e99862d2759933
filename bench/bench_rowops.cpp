// The row-wise suite (bench_rowops.hpp).
#include "bench/bench_rowops.hpp"

#include <algorithm>
#include <functional>
#include <random>
#include <string>

#include "core/ops/norm.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/softmax.hpp"
#include "core/tensor.hpp"

namespace nbx::bench {
namespace {

std::string dims(const Shape& s) {
  std::string out;
  for (int d = 0; d < s.size(); ++d) out += (d ? "x" : "") + std::to_string(s[d]);
  return out;
}

const char* suffix(DType t) {
  return t == DType::kBFloat16 ? "bf16" : t == DType::kFloat16 ? "f16" : "f32";
}

}  // namespace

Tensor random_tensor(const Device& device, const Shape& shape, DType dtype, unsigned seed) {
  const std::int64_t n = numel(shape);
  std::int64_t block = std::min<std::int64_t>(n, std::int64_t(1) << 20);
  while (n % block != 0) --block;  // a divisor of n: the copies tile it exactly
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mag(0.25f, 2.0f);
  std::vector<float> host(static_cast<std::size_t>(block));
  for (float& v : host) v = (rng() & 1 ? 1.0f : -1.0f) * mag(rng);
  const Tensor b = Tensor::from_host(host, {1, block}, device).to(dtype);
  return b.expand({n / block, block}).contiguous().view(shape);
}

BenchResult time_case(const std::string& name, const std::string& shape, double bytes,
                      const std::function<Tensor()>& op, const RowOpsOptions& o, BackendDevice& bd,
                      KernelTimer& timer) {
  if (!o.cases.empty() && std::find(o.cases.begin(), o.cases.end(), name) == o.cases.end())
    return BenchResult{name, shape, bytes, -1.0, 0.0};
  progress_case(name);
  for (int w = 0; w < o.warmup; ++w) op();
  std::vector<double> ms;
  for (int r = 0; r < o.runs; ++r) {
    timer.begin(bd);
    const Tensor y = op();
    ms.push_back(timer.end_ms(bd));
  }
  std::sort(ms.begin(), ms.end());
  BenchResult res;
  res.name = name;
  res.shape = shape;
  res.bytes = bytes;
  res.median_ms = ms[ms.size() / 2];
  res.gbps = res.bytes / (res.median_ms * 1e-3) / 1e9;
  return res;
}

bool skipped(const BenchResult& r) {
  return r.median_ms < 0;
}

std::vector<BenchResult> run_rowops_suite(const Device& device, const RowOpsOptions& o,
                                          KernelTimer& timer) {
  BackendDevice& bd = device.context().backend_device();
  std::vector<BenchResult> results;
  auto run = [&](const std::string& name, const Tensor& x, double out_bytes,
                 const std::function<Tensor()>& op) {
    results.push_back(time_case(name, dims(x.shape()),
                                double(x.numel()) * double(x.itemsize()) + out_bytes, op, o, bd,
                                timer));
  };
  for (DType t : {DType::kFloat32, DType::kBFloat16}) {
    const std::string s = suffix(t);
    const Tensor x = random_tensor(device, {o.rows, o.cols}, t, 7);
    const double rows = double(o.rows), item = double(x.itemsize());
    run("sum_rows_" + s, x, rows * item, [&] { return ops::sum(x, {-1}); });
    run("amax_rows_" + s, x, rows * item, [&] { return ops::amax(x, {-1}); });
    run("argmax_rows_" + s, x, rows * 8, [&] { return ops::argmax(x, -1); });
    run("softmax_" + s, x, double(x.numel()) * item, [&] { return ops::softmax(x, -1); });
    const Tensor w = random_tensor(device, {o.cols}, t, 8),
                 b = random_tensor(device, {o.cols}, t, 9);
    run("layer_norm_" + s, x, double(x.numel()) * item,
        [&] { return ops::layer_norm(x, {o.cols}, w, b); });
    run("rms_norm_" + s, x, double(x.numel()) * item,
        [&] { return ops::rms_norm(x, {o.cols}, w); });
  }
  for (DType t : {DType::kFloat32, DType::kBFloat16}) {
    const Tensor x = random_tensor(device, {o.vocab_rows, o.vocab}, t, 10);
    run(std::string("softmax_vocab_") + suffix(t), x, double(x.numel()) * double(x.itemsize()),
        [&] { return ops::softmax(x, -1); });
  }
  return results;
}

}  // namespace nbx::bench
