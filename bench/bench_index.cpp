// The index-read cases of the row-wise suite (bench_index.hpp).
#include "bench/bench_index.hpp"

#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "core/ops/index.hpp"
#include "core/ops/index_write.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/sort.hpp"

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
  {
    // scatter_add of half·cols elements into as many destinations, indices uniform (about
    // 1/e of the destinations take none, some several): the clone of self, then one
    // read-modify-write per source element.
    const std::int64_t n = half * cols;
    const Tensor self = random_tensor(device, {n}, DType::kFloat32, 26);
    const Tensor src = random_tensor(device, {n}, DType::kFloat32, 27);
    const Tensor idx = random_indices(device, {n}, n, 28);
    run("scatter_add_f32", std::to_string(n), double(n) * (4 * 2 + 4 + 8 + 4 * 2),
        [&] { return ops::scatter_add(self, 0, idx, src); });
    // The same indices in ascending order (a segment sum): neighbours write neighbours, the
    // atomics already in the cache's order.
    const Tensor sorted_idx = ops::sort(idx).values;
    run("scatter_add_sorted_f32", std::to_string(n), double(n) * (4 * 2 + 4 + 8 + 4 * 2),
        [&] { return ops::scatter_add(self, 0, sorted_idx, src); });
    // The same sources into n / 64 destinations (4 MiB, resident in L2): the atomics' own
    // rate, apart from the DRAM traffic and address translation of a 256 MiB destination.
    const std::int64_t m = n / 64;
    const Tensor small = random_tensor(device, {m}, DType::kFloat32, 31);
    const Tensor near = random_indices(device, {n}, m, 32);
    run("scatter_add_l2_f32", std::to_string(n) + "->" + std::to_string(m),
        double(n) * (4 + 8) + double(m) * 4 * 2,
        [&] { return ops::scatter_add(small, 0, near, src); });
    const Tensor rows_idx = random_indices(device, {half}, half, 29);
    run("index_add_f32", std::to_string(half) + "x" + std::to_string(cols),
        double(n) * (4 * 2 + 4 + 4 * 2) + double(half) * 8,
        [&] { return ops::index_add(x, 0, rows_idx, x); });
  }
  {
    // cat of 8 tensors along dim 0 into one of half x cols.
    std::vector<Tensor> parts;
    for (int k = 0; k < 8; ++k)
      parts.push_back(random_tensor(device, {half / 8, cols}, DType::kFloat32, 30 + unsigned(k)));
    run("cat8_f32", "8x" + std::to_string(half / 8) + "x" + std::to_string(cols),
        2.0 * double(half * cols) * 4, [&] { return ops::cat(parts, 0); });
  }
  return results;
}

}  // namespace nbx::bench
