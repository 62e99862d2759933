#!/usr/bin/env bash
# The H200 checks of issue 14's interop (DLPack, the Python module, Event, .npy, the printer)
# in one call: the Python tests on cuda:0 with the machine's PyTorch (torch.cuda), zero copy
# checked by pointer both ways; the C++ unit tests of DLPack, Event, .npy/.npz and format on
# every present device; compute-sanitizer over the DLPack test (kernels on borrowed memory).
# The packed build's module is used when its Python ABI is the machine's, else the module is
# compiled here from the sources, the packed generated bindings and pip's pybind11; pytest
# runs the tests where it is installed, python/tests/minipytest.py where not. Logs under
# OUT, packed into one file at the end. ONLY="step …" runs a subset.
#
#   bench/run_h200_interop.sh BUILD_DIR OUT_DIR      (BUILD_DIR from bench/pack_build.sh)
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
python3 - >"$O/python.txt" 2>&1 <<'PY'
import sys, sysconfig
print("python", sys.version.split()[0], sysconfig.get_config_var("EXT_SUFFIX"))
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.cuda.is_available(), torch.version.cuda)
except ImportError as e:
    print("no torch:", e)
for m in ("numpy", "pytest", "pybind11"):
    try:
        print(m, __import__(m).__version__)
    except ImportError:
        print("no", m)
PY
cat "$O/python.txt"

SUFFIX=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
PYMOD=$PWD/$B/python
if [ ! -f "$PYMOD/nbxtensor$SUFFIX" ]; then
  # Another Python than the build machine's 3.11: compile the module here (16 cores, ~2 min).
  PYMOD=/tmp/nbx-python
  rm -rf "$PYMOD" && mkdir -p "$PYMOD"
  FLAGS="-std=c++20 -O2 -fPIC -fvisibility=hidden -I. -I$B -I$B/include $(python3 -m pybind11 --includes)"
  step python_module 400 bash -c "ls python/*.cpp $B/python/ops_bindings_*.cpp |
    xargs -P 16 -I{} sh -c 'c++ $FLAGS -c {} -o $PYMOD/\$(basename {} .cpp).o' &&
    c++ -shared $PYMOD/*.o $PWD/$B/libnbx.so.0.1 -Wl,-rpath,$PWD/$B -o $PYMOD/nbxtensor$SUFFIX"
  tail -5 "$O/python_module.log"
fi
export PYTHONPATH=$PYMOD

# Zero copy by pointer, both ways, on cuda:0 (the tests assert it too; this prints it).
step zero_copy 60 python3 - <<'PY'
import torch, nbxtensor as nbx
gpu = nbx.open("cuda:0")
t = nbx.ops.mul(nbx.arange(0, 1 << 20, device=gpu).to(nbx.float32), 0.5)
x = torch.from_dlpack(t)
print("nbx -> torch:", hex(t.data_ptr()), hex(x.data_ptr()), x.device, x.dtype, float(x.sum()))
y = torch.arange(1 << 20, device="cuda", dtype=torch.bfloat16)[1::2]
u = nbx.from_dlpack(y)
print("torch -> nbx:", hex(y.data_ptr()), hex(u.data_ptr()), u.device, u.dtype, u.stride())
assert t.data_ptr() == x.data_ptr() and u.data_ptr() == y.data_ptr()
e0, e1 = nbx.Event(gpu), nbx.Event(gpu)
a = nbx.ones(4096, 4096, dtype=nbx.bfloat16, device=gpu)
e0.record(); b = a @ a; e1.record()
print("nbx.Event: 4096^3 bf16 matmul %.3f ms" % e0.elapsed_ms(e1))
print("zero copy: ok")
PY
cat "$O/zero_copy.log"

if python3 -c "import pytest" 2>/dev/null; then
  RUN_TESTS=(python3 -m pytest -q -p no:cacheprovider python/tests)
else
  RUN_TESTS=(python3 python/tests/minipytest.py)
fi
NBX_PY_DEVICES=host,cuda:0 step python_tests 300 "${RUN_TESTS[@]}"
tail -15 "$O/python_tests.log"
for t in dlpack event format npy; do
  step unit_$t 120 "$B/tests/unit/test_$t" &
done
step memcheck_dlpack 200 compute-sanitizer --tool memcheck --error-exitcode 1 \
  "$B/tests/unit/test_dlpack" &
wait
cat "$O/steps.log"
grep -h "test cases:\|ERROR SUMMARY\|passed\|FAILED" "$O"/unit_*.log "$O"/memcheck_*.log \
  "$O/python_tests.log" 2>/dev/null | head -30
tar czf /tmp/interop-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/interop-results.tgz "$O/"
