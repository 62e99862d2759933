// The row-wise suite of op wave 1 (reductions over rows, softmax, layer/rms norm), driven
// through the public op API on any device: what a user's call costs, output allocation
// from the caching allocator included. Compared with bench/torch_wave1.py.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_elementwise.hpp"
#include "core/device.hpp"
#include "core/tensor.hpp"

namespace nbx::bench {

struct RowOpsOptions {
  std::int64_t rows = 32768, cols = 4096;          // reductions, softmax, norms
  std::int64_t vocab_rows = 4096, vocab = 128256;  // softmax over vocabulary rows
  int warmup = 3;
  int runs = 25;  // the median of these is reported
  // Only these cases are timed (--cases), every one when empty; the others are still set up.
  std::vector<std::string> cases;
};

// One case timed the suite's way: `options.warmup` untimed runs of `op`, then the median of
// `options.runs` timed ones; GB/s from `bytes`. A case `options.cases` leaves out is not run:
// its median_ms is negative (skipped(), which the suite's printer drops).
BenchResult time_case(const std::string& name, const std::string& shape, double bytes,
                      const std::function<Tensor()>& op, const RowOpsOptions& options,
                      BackendDevice& device, KernelTimer& timer);

bool skipped(const BenchResult& r);

// GB/s counts each input element read once and each output element written once.
std::vector<BenchResult> run_rowops_suite(const Device& device, const RowOpsOptions& options,
                                          KernelTimer& timer);

// A device tensor of `shape` filled with random values in ±[0.25, 2] (never zero): a 2^20
// block drawn on the host, uploaded once, repeated by a device-side copy.
Tensor random_tensor(const Device& device, const Shape& shape, DType dtype, unsigned seed);

}  // namespace nbx::bench
