#!/usr/bin/env python3
"""Runs a command under the Khronos validation layer and fails on any validation message.

usage: run_with_validation.py COMMAND [ARGS...]

The Vulkan backend's own switch, NBX_VULKAN_VALIDATION=sync, enables the layer with its
synchronization validation (hazards between commands no barrier orders) and a debug
messenger whose messages make the next synchronize() throw, so a message fails the cell
that caused it; this script also fails on any message printed (what the layer says while a
device or the instance closes, after the last synchronize, goes to stderr). VK_INSTANCE_LAYERS is left alone:
the loader reports that variable itself as a warning. The loader is asked to say which
layers it inserts, so a run without the layer fails instead of passing unchecked.
Exit 77 (SKIP: no Vulkan device) passes through.
"""
import os
import re
import subprocess
import sys

LAYER = "VK_LAYER_KHRONOS_validation"
# The layer's own log lines, and nbx's report of what its debug messenger collected.
MESSAGE = re.compile(r"Validation (Error|Warning|Performance Warning)|VUID-|validation layer")
LOADER_CHATTER = re.compile(r"^(\w+ \| )?LAYER:")


def main() -> int:
    env = dict(os.environ)
    env["NBX_VULKAN_VALIDATION"] = "sync"
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
        if "is not installed" in proc.stdout:
            print(f"run_with_validation: {LAYER} is missing, so Vulkan was unavailable; install "
                  "vulkan-validationlayers (Debian) so the run is actually validated.")
            return 1
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
