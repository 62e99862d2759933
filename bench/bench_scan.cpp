// The scan cases of the row-wise suite (bench_scan.hpp).
#include "bench/bench_scan.hpp"

#include <algorithm>
#include <string>

#include "core/ops/scan.hpp"

namespace nbx::bench {

std::vector<BenchResult> with_scan_cases(std::vector<BenchResult> results, const Device& device,
                                         const RowOpsOptions& o, KernelTimer& timer) {
  BackendDevice& bd = device.context().backend_device();
  auto run = [&](const std::string& name, const Tensor& x) {
    // float32 in, float32 out
    results.push_back(time_case(
        name, std::to_string(x.shape()[0]) + "x" + std::to_string(x.shape()[1]),
        2.0 * double(x.numel()) * double(x.itemsize()), [&] { return ops::cumsum(x, -1); }, o, bd,
        timer));
  };
  run("cumsum_rows_f32", random_tensor(device, {o.rows, o.cols}, DType::kFloat32, 11));
  run("cumsum_long_f32", random_tensor(device, {1, o.rows * o.cols / 8}, DType::kFloat32, 12));
  return results;
}

}  // namespace nbx::bench
