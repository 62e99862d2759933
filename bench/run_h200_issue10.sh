#!/usr/bin/env bash
# The family-table run on the lent H200 (issue 10): the cross-backend launch validation and
# explain-agrees tests on cuda:0 and vulkan:0, the GPU and Vulkan backend tests, conformance
# on both backends, then every benchmark (the elementwise suite with PyTorch's reference,
# the wave-1 row ops, matmul), nbx and PyTorch back to back. Each step has its own time limit
# and writes its log under OUT as it goes; everything is packed into one file at the end.
#
#   [PHASE=check|bench] bench/run_h200_issue10.sh BUILD_DIR OUT_DIR   (BUILD_DIR: bench/pack_build.sh)
# PHASE runs one half (each fits one 10-minute device call); unset, both.
set -u
B=$1 O=$2
export LD_LIBRARY_PATH=$PWD/$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$O"
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2 t0=$SECONDS
  shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return 0; fi
  timeout "$limit" "$@" >"$O/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - t0))s" >>"$O/steps.log"
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$O/gpu.txt" 2>&1
"$B/nbx" devices -v >"$O/devices.txt" 2>&1
for d in cuda:0 vulkan:0; do
  for op in softmax sum layer_norm cumsum matmul; do
    "$B/nbx" explain $op --dtype bfloat16 --shape 4096,4096 --device $d >>"$O/explain.txt" 2>&1
  done
done

if [ "${PHASE:-check}" = check ]; then
# Correctness, concurrently (16 cores).
step launch_validation 120 "$B/tests/unit/test_launch_validation" &
step explain_agrees 120 "$B/tests/unit/test_explain_agrees" &
for t in index index_faults scan explain; do step "unit_$t" 120 "$B/tests/unit/test_$t" & done
NBX_GPU_BATCH=0 step explain_agrees_nobatch 120 "$B/tests/unit/test_explain_agrees" &
step memcheck_gather 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/nbx" conformance --backend cuda --families gather &
step memcheck_faults 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/unit/test_index_faults" &
rows="fast rows*,*softmax fast*,*norm fast*"
NBX_TEST_GPU_BACKEND=cuda step gpu_tests 200 "$B/tests/gpu/test_gpu_backend" -tce="$rows" &
NBX_TEST_GPU_BACKEND=cuda NBX_GPU_ROWS=fast-only step gpu_rows_fast 200 "$B/tests/gpu/test_gpu_backend" -tc="$rows" &
NBX_GPU_ROWS=general step conf_cuda_general 90 "$B/nbx" conformance --backend cuda --families reduce,softmax,norm --json "$O/conf_cuda_general.json" &
step conf_cuda 240 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
for fam in elementwise reduce scan softmax norm linalg creation gather; do
  step "conf_vulkan_$fam" 240 "$B/nbx" conformance --backend vulkan --families $fam --json "$O/conf_vulkan_$fam.json" &
done
for t in "$B"/tests/vulkan/test_vk_*; do
  step "$(basename "$t")" 200 "$t" &
done
wait
fi

if [ "${PHASE:-bench}" = bench ]; then
# Benchmarks, one at a time.
step bench_cuda_elementwise 120 "$B/bench/nbx-bench-gpu" --device cuda:0 --json "$O/nbx_cuda_elementwise.json"
step torch_elementwise 90 python3 bench/torch_reference.py --json "$O/torch_elementwise.json"
step bench_vk_elementwise 120 "$B/bench/nbx-bench-gpu" --device vulkan:0 --json "$O/nbx_vk_elementwise.json"
step bench_cuda_wave1 90 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
step torch_wave1 60 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
step bench_cuda_matmul 60 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite matmul --variants blas --json "$O/nbx_cuda_matmul.json"
step torch_matmul 60 python3 bench/torch_matmul.py --json "$O/torch_matmul.json"
step bench_vk_wave1 60 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
step bench_vk_matmul 90 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite matmul --json "$O/nbx_vk_matmul.json"
fi
cat "$O/steps.log"
tar czf /tmp/issue10-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue10-results.tgz "$O/"
