// Scan cases for the row-wise suite (--suite wave1): cumsum through the public op on any
// device, timed like bench_rowops.cpp's cases (median of `runs` after `warmup`).
#pragma once

#include <vector>

#include "bench/bench_rowops.hpp"

namespace nbx::bench {

// Appends to `results`: cumsum_rows_f32 (options.rows × options.cols along the last dim:
// many rows, a warp each) and cumsum_long_f32 (one row of options.rows × options.cols / 8
// elements: one block per row, the scan's single-row limit). GB/s counts the input read
// once and the output written once.
std::vector<BenchResult> with_scan_cases(std::vector<BenchResult> results, const Device& device,
                                         const RowOpsOptions& options, KernelTimer& timer);

}  // namespace nbx::bench
