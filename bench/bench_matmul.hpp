// The matmul suite: square products (4096^3, 8192^3) in bfloat16, float16 and float32
// through nbx::ops::matmul, once per variant the device offers (vendor BLAS and the own
// tiled kernel, each forced through set_matmul_variant_request), in TFLOP/s. Compared with
// bench/torch_matmul.py.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_elementwise.hpp"
#include "core/device.hpp"

namespace nbx::bench {

struct MatmulBenchOptions {
  std::vector<std::int64_t> sizes = {4096, 8192};  // m = n = k
  int warmup = 10;  // sustained load first: the clocks settle (H200: ±10% otherwise)
  int runs = 30;    // the median of these is reported
  // Only these variants ("blas", "tiled", "coopmat"; empty: every one the device offers):
  // a vendor-BLAS-only run keeps the long, low-power tiled products from changing the
  // clocks between the cases compared with PyTorch.
  std::vector<std::string> variants;
};

struct MatmulBenchResult {
  std::string name;     // "matmul_bf16[blas]"
  std::string shape;    // "4096x4096x4096"
  std::string variant;  // "blas", "tiled"
  double median_ms = 0;
  double tflops = 0;  // 2 m n k / median time
};

// Random non-zero operands (±[0.25, 2], drawn on the host for every element), output
// allocation included in the timing, as PyTorch's eager call.
std::vector<MatmulBenchResult> run_matmul_suite(const Device& device,
                                                const MatmulBenchOptions& options,
                                                KernelTimer& timer);

// nbx-bench-gpu --suite matmul: runs the suite (--quick: 1024 and 2048), prints the table
// and writes `json_path` (when not empty). Returns the exit status.
int run_matmul_main(const Device& device, KernelTimer& timer, bool quick,
                    const std::string& json_path, const std::vector<std::string>& variants = {});

}  // namespace nbx::bench
