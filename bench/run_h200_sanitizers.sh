#!/usr/bin/env bash
# compute-sanitizer's racecheck, initcheck and synccheck over the CUDA conformance (--quick,
# in SHARDS shards a tool, side by side: these tools run kernels far slower than memcheck, so
# one process a tool does not end within a device call) and all four tools over the GPU
# backend tests (tests/gpu) but their out-of-memory case. Each step time-limited (CAP seconds); logs under OUT, packed
# into one file at the end. memcheck over the conformance: bench/run_h200_reliability.sh.
#
#   bench/run_h200_sanitizers.sh BUILD_DIR OUT_DIR      (BUILD_DIR from bench/pack_build.sh)
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
S=${CAP:-420}
# --nvtx yes (the default, said): the CUDA backend marks what cuBLASLt and cuDNN wrote as
# initialized, since initcheck does not see their kernels' stores (issue 15).
for spec in racecheck:${RACE_SHARDS:-6} initcheck:${INIT_SHARDS:-4} synccheck:${SYNC_SHARDS:-3}; do
  tool=${spec%%:*} n=${spec##*:}
  for k in $(seq 1 "$n"); do
    san "$tool" "${tool}_conf_${k}of${n}" "$B/nbx" conformance --backend cuda --quick --shard "$k/$n"
  done
done
# Less the case that asks cudaMalloc for more than the device has: the tools report the
# runtime's out-of-memory error it provokes on purpose.
for tool in memcheck racecheck initcheck synccheck; do
  NBX_TEST_GPU_BACKEND=cuda san $tool ${tool}_gpu "$B/tests/gpu/test_gpu_backend" \
    "--test-case-exclude=*larger than the device*"
done
wait
cat "$O/steps.log"
grep -H "test cases:\|ERROR SUMMARY\|RACECHECK SUMMARY\|conformance: [0-9]" "$O"/*.log | head -60
tar czf /tmp/sanitizer-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/sanitizer-results.tgz "$O/"
