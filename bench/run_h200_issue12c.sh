#!/usr/bin/env bash
# The H200 run of issue 12's sort kernels (2026-12-03, seventh session): the block radix sort
# of rows, the onesweep long sort and topk's select on cuda:0 (select and gather rows on
# vulkan:0) — the sort and index unit tests on every device, the sort
# conformance on cuda:0 and vulkan:0, compute-sanitizer's memcheck and racecheck over the sort
# conformance, the whole cuda:0 conformance and the PyTorch differential test, then the wave-1
# benchmarks with PyTorch's figures in the same call. Each step has its own time limit and
# writes its log under OUT.
#
#   [PHASE=check|bench] [ONLY="step …"] bench/run_h200_issue12c.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
for d in cuda:0 vulkan:0; do
  for s in 67108864 32768,4096 8,300000; do
    "$B/nbx" explain sort --dtype float32 --shape $s --device $d >>"$O/explain.txt" 2>&1
  done
  "$B/nbx" explain topk --dtype float32 --shape 4096,128256 --device $d >>"$O/explain.txt" 2>&1
done
TD=(python3 tests/torch/torch_diff.py --runner "$B/tests/torch/torch_diff_runner" --torch-device cuda)

if [ "${PHASE:-check}" = check ]; then
for t in sort explain explain_agrees launch_validation index index_faults index_write index_write_faults; do
  [ -x "$B/tests/unit/test_$t" ] && step "unit_$t" 240 "$B/tests/unit/test_$t" &
done
step memcheck_sort 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/nbx" conformance --backend cuda --families sort &
step racecheck_sort 240 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/nbx" conformance --backend cuda --families sort &
step conf_cuda 240 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
step conf_vulkan_index_write 240 "$B/nbx" conformance --backend vulkan --families index_write --json "$O/conf_vulkan_index_write.json" &
step conf_vulkan_gather 240 "$B/nbx" conformance --backend vulkan --families gather --json "$O/conf_vulkan_gather.json" &
step conf_vulkan_sort 240 "$B/nbx" conformance --backend vulkan --families sort --json "$O/conf_vulkan_sort.json" &
step torch_cuda 240 "${TD[@]}" --device cuda:0 &
step torch_vulkan_sort 240 "${TD[@]}" --device vulkan:0 --ops sort,argsort,msort,topk,kthvalue,median_dim,nanmedian_dim,mode &
step conf_cuda_sort 240 "$B/nbx" conformance --backend cuda --families sort --json "$O/conf_cuda_sort.json" &
wait
fi

if [ "${PHASE:-bench}" = bench ]; then
step bench_cuda_wave1 100 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
step torch_wave1 60 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
# Where the sort kernels spend their time: Nsight Compute over the first launches of each.
NCU=(ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats)
for k in onesweep_pass:2 onesweep_histogram:1 sort_rows_kernel:1 select_kernel:1; do
  command -v ncu >/dev/null && step "ncu_${k%%:*}" 120 "${NCU[@]}" -k "regex:${k%%:*}" -c "${k##*:}" "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1
done
step bench_vk_wave1 80 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
fi
cat "$O/steps.log"
tar czf /tmp/issue12c-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue12c-results.tgz "$O/"
