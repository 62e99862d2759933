#!/usr/bin/env python3
"""PyTorch's figure for nbx-bench-gpu --suite moe: Mixtral's loop over experts (softmax in
float32, top-2, renormalise, each expert's routed tokens through SwiGLU and back, index_add'ed
with their weights) at 4096 tokens, d 4096, ffn 14336, 8 experts, bfloat16; CUDA events,
2 warm-ups, the median of 10 runs. The same loop as bench/torch_transformer.py's moe case.

    python3 bench/torch_moe.py [--json FILE] [--quick]
"""
import argparse
import json
import statistics

import torch

from torch_transformer import moe_loop  # the one loop both scripts time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    tokens, d, ffn, experts, topk = (1024 if args.quick else 4096), 4096, 14336, 8, 2
    g = torch.Generator(device="cuda").manual_seed(20)
    x = (torch.randn((tokens, d), device="cuda", generator=g) * 0.1).bfloat16()
    logits = torch.randn((tokens, experts), device="cuda", generator=g).bfloat16()
    w1 = (torch.randn((experts, ffn, d), device="cuda", generator=g) * 0.02).bfloat16()
    w3 = (torch.randn((experts, ffn, d), device="cuda", generator=g) * 0.02).bfloat16()
    w2 = (torch.randn((experts, d, ffn), device="cuda", generator=g) * 0.02).bfloat16()
    for _ in range(2):
        moe_loop(x, logits, w1, w3, w2, topk)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for _ in range(10):
        start.record()
        moe_loop(x, logits, w1, w3, w2, topk)
        stop.record()
        stop.synchronize()
        ms.append(start.elapsed_time(stop))
    med = statistics.median(ms)
    flops = 2.0 * tokens * topk * 3 * d * ffn
    print(f"{'fused_moe_loop_bf16':38s}{med:10.3f} ms{flops / (med * 1e-3) / 1e12:9.1f} TFLOP/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "name": "fused_moe_loop_bf16", "median_ms": med,
                       "tflops": flops / (med * 1e-3) / 1e12}, f, indent=2)


if __name__ == "__main__":
    main()
