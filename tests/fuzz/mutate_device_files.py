#!/usr/bin/env python3
"""Mutates the shipped device files and overlays the way issue 15's outside run did, and runs
each mutant through the CLI: a device file replaces its original in a copy of device_files/,
checked by `nbx device-files check DIR` and, when that passes, used by `nbx caps [--json]` for
every present device (NBX_DEVICE_FILES=DIR); an overlay goes to `nbx caps [--json] --overlay`
on every present device or on an architecture (--arch). Reports every run that died of a
signal or refused without file:line. The libFuzzer targets (run_fuzzers.sh) are the CI check; this is the outside view
through the real CLI, kept to reproduce such reports.

usage: mutate_device_files.py NBX [--count N] [--seed S] [--keep DIR]
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HUGE = ["9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551616",
        "4294967296", "0x100010005", "2147483648", "-1", "0", "--1024", "-0x-40", "1e999", "inf",
        ".nan", "-0", "0x", "1_000", "+5", "99999999999999999999999999"]
WRONG = ["[1, 2]", "{a: 1}", "\"text\"", "~", "", "true", "[[[[]]]]", "!!binary aGVsbG8="]
NUMBER = re.compile(r"(?<=: )(-?0x[0-9a-fA-F]+|-?[0-9][0-9.]*)")
VALUE = re.compile(r"(?<=: )([^\s#{}\[\],][^#{}\[\],]*)")


def mutate(text, rng):
    lines = text.splitlines(keepends=True)
    kind = rng.choice(["truncate", "huge", "wrong", "alias", "bomb", "deep", "lines", "bytes"])
    if kind == "truncate":
        return kind, text[: rng.randrange(len(text))]
    if kind == "huge":
        spots = list(NUMBER.finditer(text))
        if spots:
            m = rng.choice(spots)
            return kind, text[: m.start()] + rng.choice(HUGE) + text[m.end():]
    if kind == "wrong":
        spots = list(VALUE.finditer(text))
        if spots:
            m = rng.choice(spots)
            return kind, text[: m.start()] + rng.choice(WRONG) + text[m.end():]
    if kind == "alias":
        spots = list(VALUE.finditer(text))
        if len(spots) >= 2:
            a, b = sorted(rng.sample(spots, 2), key=lambda m: m.start())
            return kind, (text[: a.start()] + "&x " + text[a.start(): b.start()] + "*x" +
                          text[b.end():])
    if kind == "bomb":
        bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for i in range(1, 9):
            bomb += f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n"
        if rng.random() < 0.5 or "device_name: [" not in text:
            return kind, bomb + text
        return kind, bomb + text.replace("device_name: [", "device_name: *a8\n#[", 1)
    if kind == "deep":
        depth = rng.choice([50, 500, 5000, 50000])
        return kind, text + "deep: " + "[" * depth + "]" * depth + "\n"
    if kind == "lines" and len(lines) > 2:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        op = rng.choice(["drop", "dup", "swap"])
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        return kind, "".join(lines)
    data = bytearray(text.encode())
    for _ in range(rng.randrange(1, 4)):
        data[rng.randrange(len(data))] = rng.choice([0xff, 0x00, 0xc3, ord(":"), ord("-"), ord("&")])
    return "bytes", data.decode("latin-1")


LOCATED = re.compile(r"\.yml:[1-9][0-9]*[:)\s]")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("nbx")
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--keep", default="")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    files = []
    for d, _, names in os.walk(os.path.join(ROOT, "device_files")):
        files += [os.path.join(d, n) for n in names if n.endswith(".yml")]
    overlays = [os.path.join(ROOT, "tests/data/overlays", n)
                for n in os.listdir(os.path.join(ROOT, "tests/data/overlays"))]
    overlays.append(os.path.join(ROOT, "tests/fuzz/seeds/overlay/every_key.yml"))
    files.sort(), overlays.sort()
    bad = 0
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.count):
            as_overlay = i % 3 == 2
            src = rng.choice(overlays if as_overlay else files)
            kind, text = mutate(open(src).read(), rng)
            files_dir = os.path.join(tmp, "files")
            env = dict(os.environ)
            json = ["--json"] if rng.random() < 0.5 else []
            if as_overlay:
                path = os.path.join(tmp, "overlay.yml")
                where = rng.choice([[], ["--arch", "host/host"], ["--arch", "mesa/llvmpipe"]])
                cmds = [[args.nbx, "caps"] + where + json + ["--overlay", path]]
            else:
                shutil.rmtree(files_dir, ignore_errors=True)
                shutil.copytree(os.path.join(ROOT, "device_files"), files_dir,
                                ignore=shutil.ignore_patterns("*.md", "*.py", "*.build"))
                rel = os.path.relpath(src, os.path.join(ROOT, "device_files"))
                path = os.path.join(files_dir, rel)
                env["NBX_DEVICE_FILES"] = files_dir
                cmds = [[args.nbx, "device-files", "check", files_dir], [args.nbx, "caps"] + json]
            with open(path, "w", encoding="latin-1") as f:
                f.write(text)
            problem = None
            for cmd in cmds:
                try:
                    p = subprocess.run(cmd, capture_output=True, timeout=60, env=env)
                    rc, err = p.returncode, p.stderr.decode("latin-1")
                except subprocess.TimeoutExpired:
                    rc, err = "timeout", ""
                if rc == "timeout" or (isinstance(rc, int) and (rc < 0 or rc >= 128)):
                    problem = f"died ({rc})"
                elif rc != 0 and not LOCATED.search(err):
                    problem = "refused without file:line"
                if problem or rc != 0:
                    break
            counts[kind] = counts.get(kind, 0) + 1
            if problem:
                bad += 1
                print(f"{problem}: mutant {i} of {os.path.relpath(src, ROOT)} ({kind}): "
                      f"{' '.join(cmd[1:])}\n  {err.strip()[:300]}", flush=True)
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    with open(os.path.join(args.keep, f"mutant-{i}-{kind}.yml"), "w",
                              encoding="latin-1") as f:
                        f.write(text)
            if as_overlay:
                os.remove(path)
    print(f"mutants: {args.count} ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}); "
          f"{bad} died or were refused without file:line")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
