#!/usr/bin/env python3
"""Markdown table of nbx-bench-gpu's JSON against torch_reference.py's or torch_wave1.py's
(same call; cases matched by name).

    python3 bench/make_table.py nbx.json torch.json
"""
import json
import sys


def main():
    nbx = json.load(open(sys.argv[1]))
    ref = json.load(open(sys.argv[2]))
    torch_by_name = {r["name"]: r for r in ref["results"]}
    print(f"Device: {nbx['device']}; nbx timer: {nbx['timer']}; "
          f"PyTorch {ref.get('torch', '?')} timer: {ref['timer']}.\n")
    print("| case | shape | nbx ms | nbx GB/s | PyTorch GB/s | nbx / PyTorch |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in nbx["results"]:
        base = r["name"].split("[")[0]
        t = torch_by_name.get(base)
        ratio = f"{r['gbps'] / t['gbps']:.2f}" if t else "—"
        tg = f"{t['gbps']:.0f}" if t else "—"
        print(f"| {r['name']} | {r['shape']} | {r['median_ms']:.3f} | {r['gbps']:.0f} | {tg} | {ratio} |")
    d, td = nbx.get("dispatch") or {}, ref.get("dispatch")
    if not td or not d.get("iterations"):
        return  # a suite without the dispatch measurement (--suite wave1)
    print(f"\nDispatch overhead (host time per op, {d['iterations']} 16-element float32 adds, "
          f"one synchronize at the end; in brackets the loop alone, before it):\n")
    print("| path | µs per op | issue only |")
    print("| --- | ---: | ---: |")
    print(f"| nbx::ops::add | {d['ops_add_us']:.2f} | {d['ops_add_issue_us']:.2f} |")
    print(f"| BackendDevice::launch | {d['backend_launch_us']:.2f} | "
          f"{d['backend_launch_issue_us']:.2f} |")
    if d.get("raw_launch_us", -1) >= 0:
        print(f"| empty CUDA kernel (runtime floor) | {d['raw_launch_us']:.2f} | |")
    print(f"| torch.add (PyTorch eager) | {td['torch_add_us']:.2f} | |")


if __name__ == "__main__":
    main()
