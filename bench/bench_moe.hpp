// The moe suite: fused_moe at Mixtral's shapes (8 experts, top-2, d 4096, ffn 14336, 4096
// tokens, bfloat16) through nbx::ops::fused_moe, and its two grouped GEMMs alone on the same
// routing, in TFLOP/s (2 · tokens · top_k · 3 · d · ffn for fused_moe). Compared with PyTorch's
// loop over experts (bench/torch_moe.py; bench/torch_transformer.py's moe case).
#pragma once

#include <string>

#include "bench/bench_elementwise.hpp"
#include "core/device.hpp"

namespace nbx::bench {

// nbx-bench-gpu --suite moe: 3 warm-ups, the median of 10 runs (PyTorch's script times its
// loop so), output allocation included; --quick: 1024 tokens. Prints the table and writes
// `json_path` (when not empty). Returns the exit status.
int run_moe_main(const Device& device, KernelTimer& timer, bool quick,
                 const std::string& json_path);

}  // namespace nbx::bench
