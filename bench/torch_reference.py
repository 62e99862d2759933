#!/usr/bin/env python3
"""PyTorch's figures for the cases of nbx-bench-gpu, measured the same way.

Same shapes and byte counts, two alternating sets of buffers (inputs far larger than the
60 MB L2), random non-zero values, 3 warm-up runs, the median of 25 runs timed with CUDA
events; then host time per op of a 16-element add issued 20,000 times, synchronised once.

    python3 bench/torch_reference.py [--json FILE] [--quick]
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F


def random_nonzero(n, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    mag = torch.empty(n, device="cuda").uniform_(0.25, 2.0, generator=g)
    sign = torch.randint(0, 2, (n,), device="cuda", generator=g) * 2 - 1
    return (mag * sign).to(dtype)


def timed(fn, sets, warmup=3, runs=25):
    for w in range(warmup):
        fn(*sets[w % 2])
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    ms = []
    for r in range(runs):
        start.record()
        fn(*sets[r % 2])
        stop.record()
        stop.synchronize()
        ms.append(start.elapsed_time(stop))
    return statistics.median(ms)


def dispatch_us(elements, iters=20000):
    """Host µs per torch.add of `elements` float32 elements, synchronised once at the end."""
    x = torch.arange(elements, dtype=torch.float32, device="cuda") % 16 + 1
    y = x * 2
    for _ in range(1000):
        torch.add(x, y)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        torch.add(x, y)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dispatch-only", action="store_true",
                    help="only the host time per small add (16 to 4096 elements)")
    args = ap.parse_args()
    if args.dispatch_only:
        for elements in (16, 256, 1024, 2048, 4096):
            print(f"dispatch: torch.add of {elements} elements {dispatch_us(elements):.2f} us/op")
        return
    n = 1 << 22 if args.quick else 1 << 28
    edge = 2048 if args.quick else 16384
    f32, bf16 = torch.float32, torch.bfloat16
    data = {t: [(random_nonzero(n, t, 11 + 2 * s), random_nonzero(n, t, 12 + 2 * s))
                for s in range(2)] for t in (f32, bf16)}

    def flat(name, fn, t_in, t_out, arity):
        ms = timed(fn, data[t_in])
        nbytes = n * (arity * t_in.itemsize + t_out.itemsize)
        return {"name": name, "shape": str(n), "bytes": nbytes, "median_ms": ms,
                "gbps": nbytes / (ms * 1e-3) / 1e9}

    results = [
        flat("add_f32", lambda a, b: torch.add(a, b), f32, f32, 2),
        flat("mul_f32", lambda a, b: torch.mul(a, b), f32, f32, 2),
        flat("gelu_f32", lambda a, b: F.gelu(a), f32, f32, 1),
        flat("cast_f32_to_bf16", lambda a, b: a.to(bf16), f32, bf16, 1),
        flat("add_bf16", lambda a, b: torch.add(a, b), bf16, bf16, 2),
        flat("mul_bf16", lambda a, b: torch.mul(a, b), bf16, bf16, 2),
        flat("gelu_bf16", lambda a, b: F.gelu(a), bf16, bf16, 1),
        flat("cast_bf16_to_f32", lambda a, b: a.to(f32), bf16, f32, 1),
    ]
    mats = [(a[: edge * edge].view(edge, edge), b[: edge * edge].view(edge, edge))
            for a, b in data[f32]]
    bias_sets = [(a, b[0]) for a, b in mats]
    ms = timed(lambda a, bias: a + bias, bias_sets)
    nbytes = edge * edge * 8 + edge * 4
    results.append({"name": "bias_add_f32", "shape": f"{edge}x{edge}", "bytes": nbytes,
                    "median_ms": ms, "gbps": nbytes / (ms * 1e-3) / 1e9})
    ms = timed(lambda a, b: a + b.t(), mats)
    nbytes = edge * edge * 12
    results.append({"name": "transposed_add_f32", "shape": f"{edge}x{edge}", "bytes": nbytes,
                    "median_ms": ms, "gbps": nbytes / (ms * 1e-3) / 1e9})

    iters = 20000
    add_us = dispatch_us(16, iters)

    out = {"device": torch.cuda.get_device_name(), "timer": "torch.cuda.Event",
           "torch": torch.__version__, "results": results,
           "dispatch": {"iterations": iters, "torch_add_us": add_us}}
    for r in results:
        print(f"{r['name']:36s}{r['shape']:14s}{r['median_ms']:10.3f}{r['gbps']:10.0f}")
    print(f"dispatch: torch.add {add_us:.2f} us/op")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
