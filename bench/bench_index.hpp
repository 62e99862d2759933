// Index-read cases for the row-wise suite (--suite wave1): the gather family through the
// public ops on any device, timed like bench_rowops.cpp's cases (median of `runs`).
#pragma once

#include <vector>

#include "bench/bench_rowops.hpp"

namespace nbx::bench {

// Appends to `results` (rows, cols from `options`; the defaults give issue 12's shapes):
//  embedding_bf16 — 2·rows × cols bfloat16 weight, `rows` random int64 indices (65536 × 4096,
//    32768 rows gathered);
//  index_select_f32 — rows/2 × cols float32, rows/2 random rows along dim 0 (2^26 elements);
//  gather_f32 — rows/2 × cols float32, a random int64 index of the same shape along dim 1.
// GB/s counts each output element read once and written once, and the indices read once.
std::vector<BenchResult> with_index_cases(std::vector<BenchResult> results, const Device& device,
                                          const RowOpsOptions& options, KernelTimer& timer);

}  // namespace nbx::bench
