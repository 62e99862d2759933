#!/usr/bin/env python3
"""PyTorch's figures for issue 13's transformer cases, timed as nbx-bench-gpu times them.

CUDA events, 3 warm-up runs, the median of 20 runs, random non-zero inputs (normal values,
never zeros), two alternating input sets where an input is larger than the 60 MB L2.
SDPA is timed through each of PyTorch's backends (flash, cuDNN, memory-efficient) and its
default choice; TFLOP/s counts 4*b*h*sq*skv*d, halved for causal (as FlashAttention counts).

    python3 bench/torch_transformer.py [--json FILE] [--quick]
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def timed(fn, sets, warmup=3, runs=20):
    for w in range(warmup):
        fn(*sets[w % len(sets)])
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    ms = []
    for r in range(runs):
        start.record()
        fn(*sets[r % len(sets)])
        stop.record()
        stop.synchronize()
        ms.append(start.elapsed_time(stop))
    return statistics.median(ms)


def randn(shape, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, device="cuda", generator=g).to(dtype)


def sdpa_cases(quick):
    s = 1024 if quick else 4096
    # name, b, hq, hkv, sq, skv, d, causal
    return [
        ("sdpa_causal_bf16", 4, 32, 32, s, s, 128, True),
        ("sdpa_causal_gqa_bf16", 4, 32, 8, s, s, 128, True),
        ("sdpa_full_bf16", 4, 32, 32, s, s, 128, False),
        ("sdpa_decode_gqa_bf16", 16, 32, 8, 1, 8192 if quick else 32768, 128, False),
    ]


def sdpa_results(quick):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"default": None, "flash": SDPBackend.FLASH_ATTENTION,
                "cudnn": SDPBackend.CUDNN_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
    out = []
    for name, b, hq, hkv, sq, skv, d, causal in sdpa_cases(quick):
        q = randn((b, hq, sq, d), torch.bfloat16, 1)
        k = randn((b, hkv, skv, d), torch.bfloat16, 2)
        v = randn((b, hkv, skv, d), torch.bfloat16, 3)
        flops = 4.0 * b * hq * sq * skv * d * (0.5 if causal else 1.0)
        for bname, backend in backends.items():
            def run(q, k, v):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                      enable_gqa=hkv != hq)
            try:
                if backend is None:
                    ms = timed(run, [(q, k, v)])
                else:
                    with sdpa_kernel(backend):
                        ms = timed(run, [(q, k, v)])
            except Exception as e:  # a backend that refuses the shape is reported, not fatal
                print(f"{name:28s}{bname:10s} refused: {str(e).splitlines()[0][:90]}")
                continue
            r = {"name": name, "backend": bname, "shape": f"b{b} hq{hq} hkv{hkv} sq{sq} "
                 f"skv{skv} d{d}", "median_ms": ms, "tflops": flops / (ms * 1e-3) / 1e12}
            out.append(r)
            print(f"{name:28s}{bname:10s}{ms:10.3f} ms{r['tflops']:9.1f} TFLOP/s")
    return out


def cross_entropy_result(quick):
    rows, vocab = (1024 if quick else 4096), 128256
    sets = [(randn((rows, vocab), torch.bfloat16, 10 + s),
             torch.randint(0, vocab, (rows,), device="cuda")) for s in range(2)]
    ms = timed(lambda x, t: F.cross_entropy(x, t), sets)
    nbytes = rows * vocab * 2
    print(f"{'cross_entropy_bf16':38s}{ms:10.3f} ms{nbytes / (ms * 1e-3) / 1e9:9.0f} GB/s")
    return {"name": "cross_entropy_bf16", "shape": f"{rows}x{vocab}", "median_ms": ms,
            "gbps": nbytes / (ms * 1e-3) / 1e9}


def moe_loop(x, logits, w1, w3, w2, topk):
    """Mixtral's expert loop as its reference code writes it: softmax, top-k, renormalise,
    then for each expert the tokens routed to it through SwiGLU and back, weighted."""
    probs = torch.softmax(logits.float(), dim=-1)
    weights, experts = torch.topk(probs, topk, dim=-1)
    weights = (weights / weights.sum(-1, keepdim=True)).to(x.dtype)
    out = torch.zeros_like(x)
    for e in range(w1.shape[0]):
        token, slot = torch.where(experts == e)
        if token.numel() == 0:
            continue
        h = x[token]
        y = (F.silu(h @ w1[e].t()) * (h @ w3[e].t())) @ w2[e].t()
        out.index_add_(0, token, y * weights[token, slot, None])
    return out


def moe_result(quick):
    tokens, d, ffn, experts, topk = (1024 if quick else 4096), 4096, 14336, 8, 2
    x = randn((tokens, d), torch.bfloat16, 20) * 0.1
    logits = randn((tokens, experts), torch.bfloat16, 21)
    w1 = randn((experts, ffn, d), torch.bfloat16, 22) * 0.02
    w3 = randn((experts, ffn, d), torch.bfloat16, 23) * 0.02
    w2 = randn((experts, d, ffn), torch.bfloat16, 24) * 0.02
    ms = timed(lambda: moe_loop(x, logits, w1, w3, w2, topk), [()], warmup=2, runs=10)
    flops = 2.0 * tokens * topk * 3 * d * ffn
    print(f"{'fused_moe_loop_bf16':38s}{ms:10.3f} ms{flops / (ms * 1e-3) / 1e12:9.1f} TFLOP/s")
    return {"name": "fused_moe_loop_bf16", "shape": f"t{tokens} d{d} ffn{ffn} e{experts} "
            f"top{topk}", "median_ms": ms, "tflops": flops / (ms * 1e-3) / 1e12}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "cudnn": torch.backends.cudnn.version(), "timer": "torch.cuda.Event"}
    results["sdpa"] = sdpa_results(args.quick)
    results["cross_entropy"] = cross_entropy_result(args.quick)
    results["moe"] = moe_result(args.quick)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
