#!/usr/bin/python3
"""The PyTorch differential test (README.md): draws seeded cases from the op table, runs
them through nbx on one device (torch_diff_runner), computes each in PyTorch and compares.

    torch_diff.py --runner build/tests/torch/torch_diff_runner --device vulkan:0
                  [--seed 11] [--scale 1.0] [--ops add,sum] [--only add#17] [--shard 1/2]
                  [--torch-device cuda] [--keep DIR] [--all-failures]

Exit status: 0 when nothing failed, 1 on any failure, 77 (SKIP) without torch or without the
device.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

try:
    import torch
except ImportError as e:  # CI installs python3-torch; anywhere else this is a skip
    print(f"torch-diff: PyTorch cannot be imported ({e}); skipped.")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_diff_compare import Ctx, first_difference  # noqa: E402
from torch_diff_gen import DTYPES, NAMES, Gen, TensorIn, plain, write_manifest  # noqa: E402
from torch_diff_lists import (DELIBERATE_DIFFERENCES, DOCUMENTED_REFUSALS,  # noqa: E402
                              KNOWN_DIFFERENCES, WIDENINGS)
from torch_diff_ops import OPS  # noqa: E402
import torch_diff_ops_inplace  # noqa: E402,F401 — registers the in-place and out= forms
import torch_diff_ops_shape  # noqa: E402,F401 — registers the shape ops
import torch_diff_ops_sort  # noqa: E402,F401 — registers the sort family's ops
import torch_diff_ops_index_write  # noqa: E402 — registers the index writes
import torch_diff_ops_attention  # noqa: E402,F401 — registers scaled_dot_product_attention
import torch_diff_ops_rotary  # noqa: E402,F401 — registers the rotary family's ops
import torch_diff_ops_loss  # noqa: E402,F401 — registers the losses
import torch_diff_ops_moe  # noqa: E402,F401 — registers the MoE ops

TYPED_REFUSALS = ("InvalidArgument", "Unsupported", "DeviceFault")
# Ops whose PyTorch answer is always computed on the CPU (exact data movement, the same on
# every device): an out-of-range index trips a device-side assert in PyTorch's CUDA kernels,
# which leaves the CUDA context unusable for every later case.
CPU_ONLY = {"index_select", "gather", "take_along_dim", "embedding", "take"} | \
    torch_diff_ops_index_write.CPU_ONLY | torch_diff_ops_moe.CPU_ONLY


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runner", required=True)
    p.add_argument("--device", default="host")
    p.add_argument("--seed", default="11")
    p.add_argument("--scale", type=float, default=1.0, help="multiplies every op's case count")
    p.add_argument("--ops", default="", help="comma-separated op names (default: all)")
    p.add_argument("--only", default="", help="one case, as the report names it: add#17")
    p.add_argument("--shard", default="1/1", help="K/N: every N-th case from the K-th")
    p.add_argument("--torch-device", default="cpu")
    p.add_argument("--keep", default="", help="write the manifest and results here")
    p.add_argument("--all-failures", action="store_true")
    p.add_argument("--timing", action="store_true", help="the runner's slowest ops")
    return p.parse_args()


def make_cases(args):
    wanted = set(filter(None, args.ops.split(",")))
    only = args.only.split("#") if args.only else None
    shard, shards = (int(v) for v in args.shard.split("/"))
    cases, drawn = [], 0
    for name, (generator, _, _, count, _) in OPS.items():
        if wanted and name not in wanted: continue
        if only and name != only[0]: continue
        for k in range(max(1, round(count * args.scale))):
            if only and k != int(only[1]): continue
            drawn += 1
            if (drawn - 1) % shards != shard - 1: continue
            inputs, attrs = generator(Gen(f"{args.seed}:{name}:{k}"))
            cases.append({"id": len(cases), "name": f"{name}#{k}", "op": name,
                          "inputs": inputs, "attrs": attrs})
    return cases


def start_runner(args, manifest, out, start=0):
    cmd = [args.runner, "--device", args.device, "--cases", manifest, "--out", out]
    if start: cmd += ["--start", str(start)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_runner(args, first, manifest, out, total):
    """Waits for the runner, restarting it after the case a crash took down. Returns the
    device header and one result per case."""
    results, header, start, runner = {}, None, 0, first
    while start < total:
        runner = runner or start_runner(args, manifest, out, start)
        stdout, stderr = runner.communicate()
        proc = subprocess.CompletedProcess(runner.args, runner.returncode, stdout, stderr)
        runner = None
        if proc.returncode == 77 and start == 0:
            print(proc.stdout.strip() or f"torch-diff: {args.device} does not open; skipped.")
            sys.exit(77)
        lines = [json.loads(l) for l in open(out + ".jsonl") if l.strip()]
        header = header or lines[0]
        for line in lines[1:]: results[line["id"]] = line
        done = max(results) + 1 if results else 0
        if proc.returncode == 0 and done >= total: break
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        results[done] = {"id": done, "status": "error", "error": f"crash (exit {proc.returncode})",
                         "message": " | ".join(tail)}
        start = done + 1
    return header, results


def nbx_outputs(result, out):
    data = open(out + ".bin", "rb").read()
    tensors = []
    for o in result["outputs"]:
        dtype = DTYPES[o["dtype"]]
        if o["nbytes"] == 0:
            t = torch.empty(o["shape"], dtype=dtype)
        else:
            chunk = bytearray(data[o["offset"]:o["offset"] + o["nbytes"]])
            t = torch.frombuffer(chunk, dtype=torch.uint8 if dtype == torch.bool else dtype)
            t = t.to(torch.bool) if dtype == torch.bool else t
            t = t.reshape(o["shape"])
        tensors.append(t)
    return tensors


HALVES = (torch.float16, torch.bfloat16)


def upcast_halves(x):
    return [v.float() if isinstance(v, torch.Tensor) and v.dtype in HALVES else v for v in x]


def torch_answer(case, call, device, may_upcast=True):
    """(inputs, attrs, PyTorch's outputs or the exception it raised), as 2.x computes them:
    - float16/bfloat16 operands: values computed in float32 and rounded once to the dtype
      PyTorch gives (2.x and CUDA do; 1.13's CPU rounds some intermediates to bfloat16 and
      sums float16 means in float16);
    - an op missing for a dtype or device in this PyTorch ("not implemented for 'Half'" on
      1.13's CPU, integer matmul on CUDA): on the CPU, half types through float32."""
    attrs = plain(case["attrs"])

    # A requested half dtype (sum(x, dtype=float16)) is the cast, then float32.
    half_attr = DTYPES.get(attrs.get("dtype") or "") if case["inputs"] else None
    half_attr = half_attr if half_attr in HALVES else None

    def attempt(dev, upcast):
        x = [v.build(dev) if isinstance(v, TensorIn) else v for v in case["inputs"]]
        if not upcast: out = call(x, attrs)
        elif half_attr is None: out = call(upcast_halves(x), attrs)
        else:
            out = call([v.to(half_attr).float() if isinstance(v, torch.Tensor) else v for v in x],
                       dict(attrs, dtype="float32"))
        return x, [o.cpu() for o in (list(out) if isinstance(out, tuple) else [out])]

    if case["op"] in CPU_ONLY: device = "cpu"
    if device != "cpu":
        # A case PyTorch refuses on the CPU (an index out of range, above all) is not run on
        # the GPU: there its device-side assert kills the CUDA context, and every later case
        # then fails (H100, 2026-12-07: one rotary position past the cache took 438 cases).
        # Only an index refusal counts: other CPU errors (a reference that builds its index on
        # the GPU meets CPU tensors) say nothing of what the GPU would do.
        try:
            attempt("cpu", False)
        except Exception as e:  # noqa: BLE001 — PyTorch raises many types for a refusal
            text = str(e)
            if isinstance(e, IndexError) or "out of range" in text or "out of bounds" in text:
                return None, attrs, e
    has_half = half_attr is not None or any(
        isinstance(v, TensorIn) and v.base.dtype in HALVES for v in case["inputs"])
    tries = [(device, False)] + ([("cpu", False)] if device != "cpu" else []) + [("cpu", True)]
    for i, (dev, upcast) in enumerate(tries):
        try:
            x, out = attempt(dev, upcast)
            break
        except Exception as e:  # noqa: BLE001 — PyTorch raises many types for a refusal
            missing = "not implemented for" in str(e)
            half = "'Half'" in str(e) or "'BFloat16'" in str(e)
            if i + 1 == len(tries) or not missing or (tries[i + 1][1] and not half):
                return None, attrs, e
    if has_half and may_upcast and not upcast:
        try:
            _, wide = attempt(dev, True)
            out = [w.to(o.dtype) if o.dtype in HALVES and w.shape == o.shape else o
                   for o, w in zip(out, wide)]
        except Exception:  # noqa: BLE001 — the dtype's own answer stands
            pass
    if upcast:  # rounded back to the half dtype requested or the inputs had
        halves = {half_attr} if half_attr else {v.base.dtype for v in case["inputs"]
                                                if isinstance(v, TensorIn) and v.base.dtype in HALVES}
        if len(halves) == 1:
            out = [o.to(next(iter(halves))) if o.dtype == torch.float32 else o for o in out]
    return [v.build("cpu") if isinstance(v, TensorIn) else v for v in case["inputs"]], attrs, out


def describe_case(case):
    parts = []
    for v in case["inputs"]:
        if v is None: parts.append("None")
        elif isinstance(v, TensorIn):
            view = "".join(f"/{w[0]}" for w in v.views)
            parts.append(f"{v.dtype}{list(v.build('cpu').shape)}{view}")
        else: parts.append(repr(v))
    attrs = plain(case["attrs"])
    return f"{case['name']}({', '.join(parts)}{', ' if attrs and parts else ''}" + \
        ", ".join(f"{k}={v!r}" for k, v in attrs.items()) + ")"


def documented_refusal(case, result):
    for ops, kind, words, _, *applies in DOCUMENTED_REFUSALS:
        if (ops is None or case["op"] in ops) and (kind is None or result["error"] == kind) \
                and words in result["message"] and all(f(case) for f in applies):
            return True
    return False


def widening_allowed(case, header, torch_dtype, nbx_dtype):
    return any(case["op"] in ops and torch_dtype == t and nbx_dtype == n and applies(header)
               for ops, t, n, applies, _ in WIDENINGS)


def check(case, result, header, tol, call, torch_answer_, out, alternative=None):
    """('pass' | 'refused-agree' | 'refused-documented' | 'fail', detail). `alternative`:
    PyTorch's outputs for the flushed operands; each element may match either answer."""
    x, attrs, answer = torch_answer_
    torch_refused = isinstance(answer, Exception)
    status = result["status"]
    if status == "refused" and result["error"] in TYPED_REFUSALS:
        if torch_refused: return "refused-agree", ""
        if documented_refusal(case, result): return "refused-documented", ""
        return "fail", f"nbx refused ({result['error']}: {result['message']}); PyTorch computes"
    if status != "ok":
        return "fail", f"nbx {status} ({result.get('error')}: {result.get('message', '')})"
    if torch_refused:
        return "fail", f"PyTorch refuses ({type(answer).__name__}: {str(answer).splitlines()[0]})" \
                       f"; nbx computes"
    got = nbx_outputs(result, out)
    if len(got) != len(answer):
        return "fail", f"{len(got)} outputs, PyTorch has {len(answer)}"
    for i, (g, e) in enumerate(zip(got, answer)):
        which = f"output {i}: " if len(answer) > 1 else ""
        if list(g.shape) != list(e.shape):
            return "fail", f"{which}shape {list(g.shape)}, PyTorch {list(e.shape)}"
        if g.dtype != e.dtype:
            if not widening_allowed(case, header, NAMES[e.dtype], NAMES[g.dtype]):
                return "fail", f"{which}dtype {NAMES[g.dtype]}, PyTorch {NAMES[e.dtype]}"
            g = g.to(e.dtype)
        alt = alternative[i] if alternative is not None else None
        if alt is not None and (alt.shape != e.shape or alt.dtype != e.dtype): alt = None
        diff = first_difference(g, e, tol, Ctx(call, x, attrs, e), alt)
        if diff: return "fail", which + diff
    return "pass", ""


def flushing(header):
    """The float dtypes the device may flush subnormals of (bfloat16 computes in float32)."""
    f32 = header.get("float32_subnormals", "").startswith("may flush")
    f64 = header.get("float64_subnormals", "").startswith("may flush")
    return ({torch.float32, torch.bfloat16} if f32 else set()) | ({torch.float64} if f64 else set())


def flush(t, header):
    """t with its subnormals as zeros of their sign, where the device may flush t's dtype."""
    if not isinstance(t, torch.Tensor) or t.dtype not in flushing(header): return t
    tiny = torch.finfo(t.dtype).tiny
    return torch.where(t.abs() < tiny, torch.zeros_like(t) * t.sign(), t)


def flushed_case(case, header):
    """The case with its subnormal operands flushed, or None where the device flushes none."""
    if not flushing(header): return None
    return dict(case, inputs=[TensorIn(flush(v.base, header), v.views) if isinstance(v, TensorIn)
                              else v for v in case["inputs"]])


def listed_difference(case, device, table):
    for entry in table:
        op, devices, matches, _ = entry
        named = case["op"] in op if isinstance(op, frozenset) else case["op"] == op
        if named and (devices == "*" or device in devices) and matches(case):
            return entry
    return None


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # meson's timeout: clean up
    args = parse_args()
    started = time.time()
    torch.set_num_threads(1)  # CI's two cores: one for the runner, one for PyTorch
    cases = make_cases(args)
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or tmp
        os.makedirs(where, exist_ok=True)
        manifest = write_manifest(cases, where)
        out = os.path.join(where, args.device.replace(":", ""))
        # PyTorch answers while the runner runs: one core each.
        runner = start_runner(args, manifest, out)
        try:
            answers = [torch_answer(c, OPS[c["op"]][1], args.torch_device, OPS[c["op"]][4])
                       for c in cases]
            header, results = finish_runner(args, runner, manifest, out, len(cases))
        finally:  # a timeout or ^C here must not leave the runner behind
            if runner.poll() is None: runner.kill()
        ran = time.time()
        counts = {"pass": 0, "pass-flushed": 0, "fail": 0, "refused-agree": 0,
                  "refused-documented": 0, "known": 0, "deliberate": 0}
        failures, per_op, seen_known = [], {}, set()
        for case, answer in zip(cases, answers):
            verdict, detail = check(case, results[case["id"]], header, OPS[case["op"]][2],
                                    OPS[case["op"]][1], answer, out)
            flushed = flushed_case(case, header) if verdict == "fail" else None
            if flushed is not None:  # the device may flush: PyTorch on the flushed operands
                again = torch_answer(flushed, OPS[case["op"]][1], args.torch_device,
                                     OPS[case["op"]][4])
                if not isinstance(again[2], Exception) and not isinstance(answer[2], Exception) \
                        and len(again[2]) == len(answer[2]):
                    flushed_out = [flush(o, header) for o in again[2]]
                    if check(case, results[case["id"]], header, OPS[case["op"]][2],
                             OPS[case["op"]][1], answer, out, flushed_out)[0] != "fail":
                        verdict = "pass-flushed"
            if verdict == "fail":
                for table, name in ((KNOWN_DIFFERENCES, "known"),
                                    (DELIBERATE_DIFFERENCES, "deliberate")):
                    entry = listed_difference(case, args.device, table)
                    if entry is not None:
                        verdict = name
                        seen_known.add(id(entry))
                        break
                else:
                    failures.append(f"{describe_case(case)}: {detail}")
            counts[verdict] += 1
            per_op.setdefault(case["op"], {}).setdefault(verdict, 0)
            per_op[case["op"]][verdict] += 1
    name = header.get("display_name", args.device)
    print(f"torch-diff {name} vs PyTorch {torch.__version__} ({args.torch_device}), "
          f"seed {args.seed}: {len(cases)} cases in {time.time() - started:.0f} s "
          f"(runner and PyTorch {ran - started:.0f} s)")
    bad_ops = {op: c for op, c in per_op.items() if c.get("fail")}
    for op_name, c in sorted(bad_ops.items()):
        print(f"  {op_name}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    if args.timing:
        per_op_ms = {}
        for case in cases:
            per_op_ms[case["op"]] = per_op_ms.get(case["op"], 0) + results[case["id"]].get("ms", 0)
        slowest = sorted(per_op_ms.items(), key=lambda kv: -kv[1])[:10]
        print("  slowest: " + ", ".join(f"{k} {v / 1000:.1f} s" for k, v in slowest))
    shown = failures if args.all_failures else failures[:40]
    for f in shown: print("  FAIL " + f)
    if len(shown) < len(failures):
        print(f"  … {len(failures) - len(shown)} more (--all-failures)")
    for entry in KNOWN_DIFFERENCES + DELIBERATE_DIFFERENCES:
        if id(entry) not in seen_known and (entry[1] == "*" or args.device in entry[1]):
            ops = ", ".join(sorted(entry[0])) if isinstance(entry[0], frozenset) else entry[0]
            print(f"  listed difference not seen (remove it from the list?): {ops}: {entry[3]}")
    refused = counts["refused-agree"] + counts["refused-documented"]
    flushed = counts["pass-flushed"]
    flushed = f" (+{flushed} with subnormals flushed, as the device may)" if flushed else ""
    print(f"torch-diff {args.device} (shard {args.shard}): {counts['pass']} passed{flushed}, "
          f"{counts['fail']} failed, "
          f"{refused} refused ({counts['refused-agree']} as PyTorch, "
          f"{counts['refused-documented']} documented), {counts['known']} known differences, "
          f"{counts['deliberate']} deliberate differences")
    print(f"reproduce one: {sys.argv[0]} --runner {args.runner} --device {args.device} "
          f"--seed {args.seed} --only OP#K")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
