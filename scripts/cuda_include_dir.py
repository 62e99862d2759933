#!/usr/bin/env python3
"""Print the CUDA toolkit's include directory (the one holding cuda_runtime_api.h).

The CUDA backend's plain C++ files need the runtime headers, and the toolkit is not always
where `nvcc` appears to be: a machine may put nvcc on PATH through a wrapper script or a
symlink in /usr/bin, whose ../include is the system one. So ask nvcc itself (its --dryrun
prints the INCLUDES it passes to the host compiler), then fall back to the resolved nvcc
path, $CUDA_PATH, $CUDA_HOME and /usr/local/cuda. Used by backends/cuda/meson.build.
"""
import os
import re
import subprocess
import sys

HEADER = "cuda_runtime_api.h"


def from_dryrun(nvcc):
    try:
        out = subprocess.run([nvcc, "--dryrun", "-c", "-x", "cu", os.devnull, "-o", os.devnull],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    dirs = []
    for line in (out.stdout + out.stderr).splitlines():
        if "INCLUDES=" in line:
            dirs += re.findall(r'-I"?([^"\s]+)', line)
    return dirs


def candidates(nvcc):
    yield from from_dryrun(nvcc)
    real = os.path.realpath(nvcc)
    yield os.path.join(os.path.dirname(os.path.dirname(real)), "include")
    for var in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(var):
            yield os.path.join(os.environ[var], "include")
    yield "/usr/local/cuda/include"


def main():
    nvcc = sys.argv[1] if len(sys.argv) > 1 else "nvcc"
    for d in candidates(nvcc):
        if os.path.isfile(os.path.join(d, HEADER)):
            print(os.path.realpath(d))
            return 0
    print(f"cuda_include_dir.py: no {HEADER} found for nvcc '{nvcc}' "
          "(tried nvcc --dryrun, its resolved path, $CUDA_PATH, $CUDA_HOME, /usr/local/cuda)",
          file=sys.stderr)
    return 1


sys.exit(main())
