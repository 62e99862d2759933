// The index-read cases of the row-wise suite (bench_index.hpp).
#include "bench/bench_index.hpp"

#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "core/ops/index.hpp"

namespace nbx::bench {
namespace {

// `n` indices uniform in [0, bound), drawn on the host (seeded) and uploaded.
Tensor random_indices(const Device& device, const Shape& shape, std::int64_t bound, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> u(0, bound - 1);
  std::vector<std::int64_t> v(std::size_t(numel(shape)));
  for (std::int64_t& x : v) x = u(rng);
  return Tensor::from_host(v, shape, device);
}

}  // namespace

std::vector<BenchResult> with_index_cases(std::vector<BenchResult> results, const Device& device,
                                          const RowOpsOptions& o, KernelTimer& timer) {
  BackendDevice& bd = device.context().backend_device();
  auto run = [&](const std::string& name, const std::string& shape, double bytes,
                 const std::function<Tensor()>& op) {
    results.push_back(time_case(name, shape, bytes, op, o, bd, timer));
  };
  const std::int64_t rows = o.rows, cols = o.cols, half = rows / 2;
  {
    const Tensor w = random_tensor(device, {2 * rows, cols}, DType::kBFloat16, 21);
    const Tensor idx = random_indices(device, {rows}, 2 * rows, 22);
    run("embedding_bf16", std::to_string(2 * rows) + "x" + std::to_string(cols),
        2.0 * double(rows * cols) * 2 + double(rows) * 8, [&] { return ops::embedding(idx, w); });
  }
  const Tensor x = random_tensor(device, {half, cols}, DType::kFloat32, 23);
  {
    const Tensor idx = random_indices(device, {half}, half, 24);
    run("index_select_f32", std::to_string(half) + "x" + std::to_string(cols),
        2.0 * double(half * cols) * 4 + double(half) * 8,
        [&] { return ops::index_select(x, 0, idx); });
  }
  {
    const Tensor idx = random_indices(device, {half, cols}, cols, 25);
    run("gather_f32", std::to_string(half) + "x" + std::to_string(cols),
        2.0 * double(half * cols) * 4 + double(half * cols) * 8,
        [&] { return ops::gather(x, 1, idx); });
  }
  return results;
}

}  // namespace nbx::bench
