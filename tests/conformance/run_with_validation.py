#!/usr/bin/env python3
"""Runs a command under the Khronos validation layer and fails on any validation message.

usage: run_with_validation.py COMMAND [ARGS...]

The loader is asked to report which layers it inserts, so a validation layer that is not
installed fails the run instead of passing it unchecked. Exit 77 (SKIP) passes through.
"""
import os
import re
import subprocess
import sys

LAYER = "VK_LAYER_KHRONOS_validation"
MESSAGE = re.compile(r"Validation (Error|Warning|Performance Warning)|VUID-")
LOADER_CHATTER = re.compile(r"^(\w+ \| )?LAYER:")


def main() -> int:
    env = dict(os.environ)
    layers = [l for l in env.get("VK_INSTANCE_LAYERS", "").split(":") if l]
    if LAYER not in layers:
        layers.append(LAYER)
    env["VK_INSTANCE_LAYERS"] = ":".join(layers)
    env["VK_LOADER_DEBUG"] = "layer"
    proc = subprocess.run(sys.argv[1:], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace")
    loaded = False
    messages = []
    for line in proc.stdout.splitlines():
        if "Insert instance layer" in line and LAYER in line:
            loaded = True
        if LOADER_CHATTER.match(line):
            continue
        print(line)
        if MESSAGE.search(line):
            messages.append(line)
    if proc.returncode == 77:
        return 77
    if not loaded:
        print(f"run_with_validation: the loader never inserted {LAYER}; install "
              "vulkan-validationlayers (Debian) so the run is actually validated.")
        return 1
    if messages:
        print(f"run_with_validation: {len(messages)} validation message(s); failing.")
        return 1
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
