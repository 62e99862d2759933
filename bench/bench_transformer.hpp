// Issue 13's transformer cases through the public ops on any device, timed like
// bench_rowops.cpp's cases and compared with bench/torch_transformer.py (same shapes):
//  sdpa_causal_bf16      — causal, b4 h32 s4096 d128 (quick: s1024);
//  sdpa_causal_gqa_bf16  — the same with 8 kv heads (enable_gqa);
//  sdpa_full_bf16        — no mask;
//  sdpa_decode_gqa_bf16  — q_len 1, kv 32768 (quick: 8192), 32/8 heads, batch 16;
//  each sdpa case once more as "<case>[<path>]" for every fused path the device offers
//  (NBX_ATTENTION forced: flash_mma is the own kernel on the matrix units; the FMA flash
//  kernel only where there is no flash_mma);
//  cross_entropy_bf16    — 4096 x 128256 bfloat16 logits (quick: 1024 rows), int64 targets.
// BenchResult::bytes holds FLOPs for the sdpa cases (4·b·h·sq·skv·d, halved when causal, as
// FlashAttention counts) and the logits' bytes for cross_entropy; the printer says which.
#pragma once

#include <vector>

#include "bench/bench_rowops.hpp"

namespace nbx::bench {

std::vector<BenchResult> run_transformer_suite(const Device& device, const RowOpsOptions& options,
                                               KernelTimer& timer, bool quick);

}  // namespace nbx::bench
