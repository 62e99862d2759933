#!/usr/bin/env bash
# The H200 run of issue 12 (and issue 11's last checks): the sort and shape families' unit tests
# and conformance on cuda:0 and vulkan:0, compute-sanitizer over the sort family, the PyTorch
# differential test of both devices against PyTorch on CUDA, then the wave-1 benchmarks (sort,
# topk and the index reads among them) with PyTorch's figures in the same call. Each step has
# its own time limit and writes its log under OUT as it goes; everything is packed into one
# file at the end.
#
#   [PHASE=check|bench] [ONLY="step …"] bench/run_h200_issue12.sh BUILD_DIR OUT_DIR
# BUILD_DIR: bench/pack_build.sh's stripped build. PHASE runs one half; unset, both.
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
for d in cuda:0 vulkan:0; do
  for shape in 32768,4096 1,67108864 4096,128256; do
    "$B/nbx" explain sort --dtype float32 --shape $shape --device $d >>"$O/explain.txt" 2>&1
  done
done
# The PyTorch differential test against PyTorch on CUDA: "${TD[@]}" --device D [ARGS…].
TD=(python3 tests/torch/torch_diff.py --runner "$B/tests/torch/torch_diff_runner" --torch-device cuda)

if [ "${PHASE:-check}" = check ]; then
# Correctness, concurrently (16 cores, one GPU).
for t in sort shape_ops explain explain_agrees launch_validation inplace_out pytorch_parity linalg; do
  [ -x "$B/tests/unit/test_$t" ] && step "unit_$t" 200 "$B/tests/unit/test_$t" &
done
step memcheck_sort 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/nbx" conformance --backend cuda --families sort &
step memcheck_unit_sort 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/unit/test_sort" &
step conf_cuda 300 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
for fam in sort shape gather elementwise reduce scan creation; do
  step "conf_vulkan_$fam" 300 "$B/nbx" conformance --backend vulkan --families $fam --json "$O/conf_vulkan_$fam.json" &
done
step torch_cuda 400 "${TD[@]}" --device cuda:0 &
step torch_vulkan 400 "${TD[@]}" --device vulkan:0 &
NBX_MATMUL=tiled step torch_linear_tiled 120 "${TD[@]}" --device cuda:0 --ops linear --all-failures &
NBX_MATMUL=blas step torch_linear_blas 120 "${TD[@]}" --device cuda:0 --ops linear --all-failures &
wait
fi

if [ "${PHASE:-bench}" = bench ]; then
# Benchmarks, one at a time.
step bench_cuda_wave1 150 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
step torch_wave1 90 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
step bench_vk_wave1 120 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
fi
cat "$O/steps.log"
tar czf /tmp/issue12-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue12-results.tgz "$O/"
