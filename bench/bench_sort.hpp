// Sort cases for the row-wise suite (--suite wave1): the sort family through the public ops
// on any device, timed like bench_rowops.cpp's cases (median of `runs`), side by side with
// bench/torch_wave1.py's torch.sort / torch.topk.
#pragma once

#include <vector>

#include "bench/bench_rowops.hpp"

namespace nbx::bench {

// Appends to `results` (the defaults give issue 12's shapes):
//  sort_long_f32 — one row of rows × cols / 2 float32 keys (2^26), values and int64 indices;
//  sort_rows_f32 — rows × cols float32 (32768 × 4096) along the last dim;
//  topk50_vocab_f32 — k = 50 of each vocab_rows × vocab float32 row (4096 × 128256).
// GB/s counts the keys read once and the values and int64 indices written once.
std::vector<BenchResult> with_sort_cases(std::vector<BenchResult> results, const Device& device,
                                         const RowOpsOptions& options, KernelTimer& timer);

}  // namespace nbx::bench
