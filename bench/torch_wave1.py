#!/usr/bin/env python3
"""PyTorch's figures for `nbx-bench-gpu --suite wave1`, measured the same way.

Same shapes and byte counts (each input element read once, each output element written
once), random non-zero values in ±[0.25, 2], 3 warm-up runs, the median of 25 runs timed
with CUDA events around the eager call (output allocation by the caching allocator
included, as for nbx).

    python3 bench/torch_wave1.py [--json FILE] [--quick] [--cases a,b]

--cases times only the cases named (as nbx-bench-gpu's --cases).
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def random_nonzero(shape, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    mag = torch.empty(shape, device="cuda").uniform_(0.25, 2.0, generator=g)
    sign = torch.randint(0, 2, shape, device="cuda", generator=g) * 2 - 1
    return (mag * sign).to(dtype)


def write_json(path, results):
    """The report make_table.py reads: the device, the timer, PyTorch's version, the cases."""
    with open(path, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "timer": "torch.cuda.Event",
                   "torch": torch.__version__, "results": results}, f, indent=2)


def timed(fn, warmup=3, runs=25):
    for _ in range(warmup):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    ms = []
    for _ in range(runs):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        ms.append(start.elapsed_time(stop))
    return statistics.median(ms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cases", help="comma-separated case names: time only these")
    args = ap.parse_args()
    only = set(args.cases.split(",")) if args.cases else None
    rows, cols, vrows, vocab = (1024, 1024, 16, 128256) if args.quick else (32768, 4096, 4096, 128256)
    results = []

    def case(name, x, out_bytes, fn):
        if only is not None and name not in only:
            return
        ms = timed(fn)
        nbytes = x.numel() * x.element_size() + out_bytes
        results.append({"name": name, "shape": "x".join(map(str, x.shape)), "bytes": nbytes,
                        "median_ms": ms, "gbps": nbytes / (ms * 1e-3) / 1e9})

    for t, s in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        x = random_nonzero((rows, cols), t, 7)
        item = x.element_size()
        case(f"sum_rows_{s}", x, rows * item, lambda: x.sum(-1))
        case(f"amax_rows_{s}", x, rows * item, lambda: x.amax(-1))
        case(f"argmax_rows_{s}", x, rows * 8, lambda: x.argmax(-1))
        case(f"softmax_{s}", x, x.numel() * item, lambda: torch.softmax(x, -1))
        w = random_nonzero((cols,), t, 8)
        b = random_nonzero((cols,), t, 9)
        case(f"layer_norm_{s}", x, x.numel() * item, lambda: F.layer_norm(x, (cols,), w, b))
        case(f"rms_norm_{s}", x, x.numel() * item, lambda: F.rms_norm(x, (cols,), w))
        del x
    for t, s in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        x = random_nonzero((vrows, vocab), t, 10)
        case(f"softmax_vocab_{s}", x, x.numel() * x.element_size(), lambda: torch.softmax(x, -1))
        del x
        torch.cuda.empty_cache()

    x = random_nonzero((rows, cols), torch.float32, 11)
    case("cumsum_rows_f32", x, x.numel() * 4, lambda: torch.cumsum(x, -1))
    x = random_nonzero((1, rows * cols // 8), torch.float32, 12)
    case("cumsum_long_f32", x, x.numel() * 4, lambda: torch.cumsum(x, -1))
    del x

    # Index reads (bench/bench_index.hpp): bytes are the output read and written once and the
    # indices read once, as nbx counts them.
    def index_case(name, shape, nbytes, fn):
        if only is not None and name not in only:
            return
        ms = timed(fn)
        results.append({"name": name, "shape": shape, "bytes": nbytes, "median_ms": ms,
                        "gbps": nbytes / (ms * 1e-3) / 1e9})

    g = torch.Generator(device="cuda").manual_seed(22)
    w = random_nonzero((2 * rows, cols), torch.bfloat16, 21)
    idx = torch.randint(0, 2 * rows, (rows,), device="cuda", generator=g)
    index_case("embedding_bf16", f"{2 * rows}x{cols}", 2 * rows * cols * 2 + rows * 8,
               lambda: F.embedding(idx, w))
    del w
    half = rows // 2
    x = random_nonzero((half, cols), torch.float32, 23)
    idx = torch.randint(0, half, (half,), device="cuda", generator=g)
    index_case("index_select_f32", f"{half}x{cols}", 2 * half * cols * 4 + half * 8,
               lambda: torch.index_select(x, 0, idx))
    idx = torch.randint(0, cols, (half, cols), device="cuda", generator=g)
    index_case("gather_f32", f"{half}x{cols}", 2 * half * cols * 4 + half * cols * 8,
               lambda: torch.gather(x, 1, idx))
    n = half * cols
    dst = random_nonzero((n,), torch.float32, 26)
    src = random_nonzero((n,), torch.float32, 27)
    idx = torch.randint(0, n, (n,), device="cuda", generator=g)
    index_case("scatter_add_f32", f"{n}", n * (4 * 2 + 4 + 8 + 4 * 2),
               lambda: torch.scatter_add(dst, 0, idx, src))
    sorted_idx = idx.sort().values
    index_case("scatter_add_sorted_f32", f"{n}", n * (4 * 2 + 4 + 8 + 4 * 2),
               lambda: torch.scatter_add(dst, 0, sorted_idx, src))
    del sorted_idx
    m = n // 64
    small = random_nonzero((m,), torch.float32, 31)
    near = torch.randint(0, m, (n,), device="cuda", generator=g)
    index_case("scatter_add_l2_f32", f"{n}->{m}", n * (4 + 8) + m * 4 * 2,
               lambda: torch.scatter_add(small, 0, near, src))
    del dst, src, small, near
    idx = torch.randint(0, half, (half,), device="cuda", generator=g)
    index_case("index_add_f32", f"{half}x{cols}", n * (4 * 2 + 4 + 4 * 2) + half * 8,
               lambda: torch.index_add(x, 0, idx, x))
    parts = [random_nonzero((half // 8, cols), torch.float32, 30 + k) for k in range(8)]
    index_case("cat8_f32", f"8x{half // 8}x{cols}", 2 * half * cols * 4,
               lambda: torch.cat(parts, 0))
    del x, idx, parts

    # Sorts (bench/bench_sort.hpp): keys read once, values and int64 indices written once.
    def sort_case(name, x, out_elements, fn):
        index_case(name, "x".join(map(str, x.shape)), x.numel() * 4 + out_elements * 12, fn)

    x = random_nonzero((1, rows * cols // 2), torch.float32, 31)
    sort_case("sort_long_f32", x, x.numel(), lambda: torch.sort(x, -1))
    x = random_nonzero((rows, cols), torch.float32, 32)
    sort_case("sort_rows_f32", x, x.numel(), lambda: torch.sort(x, -1))
    x = random_nonzero((vrows, vocab), torch.float32, 33)
    sort_case("topk50_vocab_f32", x, vrows * 50, lambda: torch.topk(x, 50, -1))
    del x

    for r in results:
        print(f"{r['name']:36s}{r['shape']:16s}{r['median_ms']:10.3f}{r['gbps']:10.0f}")
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
