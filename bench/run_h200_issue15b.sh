#!/usr/bin/env bash
# One device call for what the H100 calls of 2026-12-07 left open (issues 13–15): first, alone
# on the GPU, Nsight Compute's view of the own flash kernel (flash_mma, NBX_ATTENTION=own,
# causal bf16 b4 h32 s4096 d128: one launch, the sections that say what bounds it) and the
# Vulkan device's capabilities (its cooperative-matrix shapes); then side by side the Python
# module's tests on cuda:0 (bench/run_h200_interop.sh's Python steps), compute-sanitizer's four
# tools over tests/gpu, synccheck over conformance shard 2/3 on the own attention kernels
# (cuDNN's kernels overflowed the tool's barrier tracking) and racecheck one family a process
# (--quick, three dtypes). Logs under OUT, packed into one file. ONLY="step …", CAP seconds.
#
#   bench/run_h200_issue15b.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
S=${CAP:-280}
NBX_ATTENTION=own step ncu_flash_mma 120 ncu --clock-control none -k regex:flash_mma \
  --launch-skip 2 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
  --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
  --section WarpStateStats --section InstructionStats \
  "$B/bench/nbx-bench-gpu" --device cuda:0 --suite transformer --quick --cases sdpa_causal_bf16
step caps_vulkan 30 "$B/nbx" caps vulkan:0
san() {  # tool, step name, command…
  local tool=$1 name=$2
  shift 2
  step "$name" "$S" compute-sanitizer --tool "$tool" --error-exitcode 1 "$@" &
}
ONLY_SAVED=${ONLY:-}
if [ -z "$ONLY_SAVED" ] || [[ " $ONLY_SAVED " == *" interop "* ]]; then
  (ONLY="python_module zero_copy python_tests" bash bench/run_h200_interop.sh "$B" "$O/interop" \
    >"$O/interop.log" 2>&1) &
fi
for tool in memcheck racecheck initcheck synccheck; do
  NBX_TEST_GPU_BACKEND=cuda san $tool ${tool}_gpu "$B/tests/gpu/test_gpu_backend" \
    "--test-case-exclude=*larger than the device*"
done
NBX_ATTENTION=own san synccheck synccheck_conf_2of3_own "$B/nbx" conformance --backend cuda \
  --quick --shard 2/3
for f in reduce scan softmax norm linalg sort search attention loss moe gather index_write; do
  san racecheck racecheck_$f "$B/nbx" conformance --backend cuda --quick --families $f \
    --dtypes float32,bfloat16,int32
done
wait
cat "$O/steps.log"
grep -h "Duration\|Throughput\|Registers\|Achieved Occupancy\|Theoretical Occupancy\|Block Limit\|Stall\|Bank\|Issue Slot\|Pipe" \
  "$O/ncu_flash_mma.log" 2>/dev/null | head -60
grep -i "cooperative\|coopmat" "$O/caps_vulkan.log" | head -20
tail -8 "$O/interop.log"
grep -H "test cases:\|ERROR SUMMARY\|RACECHECK SUMMARY\|conformance: [0-9]" "$O"/*.log | head -60
tar czf /tmp/issue15b-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue15b-results.tgz "$O/"
