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
    for (int w = 0; w < o.warmup; ++w) ops::cumsum(x, -1);
    std::vector<double> ms;
    for (int r = 0; r < o.runs; ++r) {
      timer.begin(bd);
      const Tensor y = ops::cumsum(x, -1);
      ms.push_back(timer.end_ms(bd));
    }
    std::sort(ms.begin(), ms.end());
    BenchResult res;
    res.name = name;
    res.shape = std::to_string(x.shape()[0]) + "x" + std::to_string(x.shape()[1]);
    res.bytes = 2.0 * double(x.numel()) * double(x.itemsize());  // float32 in, float32 out
    res.median_ms = ms[ms.size() / 2];
    res.gbps = res.bytes / (res.median_ms * 1e-3) / 1e9;
    results.push_back(res);
  };
  run("cumsum_rows_f32", random_tensor(device, {o.rows, o.cols}, DType::kFloat32, 11));
  run("cumsum_long_f32", random_tensor(device, {1, o.rows * o.cols / 8}, DType::kFloat32, 12));
  return results;
}

}  // namespace nbx::bench
