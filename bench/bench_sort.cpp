// The sort cases of the row-wise suite (bench_sort.hpp).
#include "bench/bench_sort.hpp"

#include <string>

#include "core/ops/sort.hpp"

namespace nbx::bench {

std::vector<BenchResult> with_sort_cases(std::vector<BenchResult> results, const Device& device,
                                         const RowOpsOptions& o, KernelTimer& timer) {
  BackendDevice& bd = device.context().backend_device();
  const auto run = [&](const std::string& name, const Tensor& x, std::int64_t out_elements,
                       const std::function<Tensor()>& op) {
    const double bytes = double(x.numel()) * 4 + double(out_elements) * (4 + 8);
    results.push_back(time_case(name,
                                std::to_string(x.shape()[0]) + "x" + std::to_string(x.shape()[1]),
                                bytes, op, o, bd, timer));
  };
  {
    const Tensor x = random_tensor(device, {1, o.rows * o.cols / 2}, DType::kFloat32, 31);
    run("sort_long_f32", x, x.numel(), [&] { return ops::sort(x, -1).values; });
  }
  {
    const Tensor x = random_tensor(device, {o.rows, o.cols}, DType::kFloat32, 32);
    run("sort_rows_f32", x, x.numel(), [&] { return ops::sort(x, -1).values; });
  }
  {
    const Tensor x = random_tensor(device, {o.vocab_rows, o.vocab}, DType::kFloat32, 33);
    run("topk50_vocab_f32", x, o.vocab_rows * 50, [&] { return ops::topk(x, 50, -1).values; });
  }
  return results;
}

}  // namespace nbx::bench
