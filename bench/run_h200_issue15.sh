#!/usr/bin/env bash
# The H200 checks of issue 15 in one call: tensors past 2^31 elements on cuda:0
# (tests/large/test_large_tensors: elementwise, reductions, scans, softmax, the index family,
# sampled against closed forms), then compute-sanitizer's four tools — memcheck, racecheck,
# initcheck, synccheck — each over the CUDA conformance (every family, the quick subset) and
# the GPU backend tests (tests/gpu), side by side. Each step time-limited (CAP seconds,
# default 300); logs under OUT, packed into one file at the end. ONLY="step …" runs a subset.
#
#   bench/run_h200_issue15.sh BUILD_DIR OUT_DIR      (BUILD_DIR from bench/pack_build.sh)
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
NBX_LARGE_DEVICES=cuda:0 step large "${CAP:-300}" "$B/tests/large/test_large_tensors"
for tool in memcheck racecheck initcheck synccheck; do
  step "${tool}_conformance" "${CAP:-300}" compute-sanitizer --tool "$tool" --error-exitcode 1 \
    "$B/nbx" conformance --backend cuda --quick &
  NBX_TEST_GPU_BACKEND=cuda step "${tool}_gpu" "${CAP:-300}" compute-sanitizer --tool "$tool" \
    --error-exitcode 1 "$B/tests/gpu/test_gpu_backend" &
done
wait
cat "$O/steps.log"
grep -H "test cases:\|ERROR SUMMARY\|RACECHECK SUMMARY\|conformance: [0-9]" "$O"/*.log | head -40
tar czf /tmp/issue15-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue15-results.tgz "$O/"
