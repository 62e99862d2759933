#!/usr/bin/env python3
"""PyTorch's figures for `nbx-bench-gpu --suite matmul`, measured the same way.

Square products m = n = k (4096, 8192; --quick: 1024, 2048) in bfloat16, float16 and
float32 (TF32 off: PyTorch's default for matmul), random non-zero operands in ±[0.25, 2],
10 warm-up runs, the median of 30 timed with CUDA events around the eager torch.matmul
(output allocation included, as for nbx). Named like nbx's "[blas]" cases: PyTorch runs
cuBLAS/cuBLASLt.

    python3 bench/torch_matmul.py [--json FILE] [--quick]

The lead's script imports matmul_results(quick) and merges the list.
"""
import argparse

import torch

# The same data and timing as the row-wise suite (this folder is on sys.path when run).
from torch_wave1 import random_nonzero, timed, write_json

NAMES = ((torch.bfloat16, "bf16"), (torch.float16, "f16"), (torch.float32, "f32"))


def matmul_results(quick=False):
    torch.backends.cuda.matmul.allow_tf32 = False
    results = []
    for n in ((1024, 2048) if quick else (4096, 8192)):
        for dtype, short in NAMES:
            a = random_nonzero((n, n), dtype, 11 + n)
            b = random_nonzero((n, n), dtype, 12 + n)
            ms = timed(lambda: torch.matmul(a, b), runs=30, warmup=10)
            results.append({"name": f"matmul_{short}[blas]", "shape": f"{n}x{n}x{n}",
                            "variant": "torch", "median_ms": ms,
                            "tflops": 2.0 * n * n * n / (ms * 1e-3) / 1e12})
            del a, b
        torch.cuda.empty_cache()
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    results = matmul_results(args.quick)
    for r in results:
        print(f"{r['name']:28s}{r['shape']:18s}{r['median_ms']:10.3f}{r['tflops']:10.1f}")
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
