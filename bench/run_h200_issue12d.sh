#!/usr/bin/env bash
# The H200 run of issue 12's last speed steps (2026-12-03, eighth and ninth sessions: onesweep
# passes of their own stage, the join family, Vulkan's radix sorts and index writes, topk's
# one-read filter) — the unit tests of those families on every device, their
# conformance on cuda:0 and vulkan:0, compute-sanitizer over the sort and shape conformance, the
# whole cuda:0 conformance and the PyTorch differential test, then the wave-1 benchmarks beside
# PyTorch's in the same call, and with SUITES=1 the other suites once each. Each step has its
# own time limit and writes its log under OUT.
#
#   [PHASE=check|bench|both] [ONLY="step …"] bench/run_h200_issue12d.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
for d in cuda:0 vulkan:0; do
  for s in 67108864 32768,4096 8,300000; do
    "$B/nbx" explain sort --dtype float32 --shape $s --device $d >>"$O/explain.txt" 2>&1
  done
  "$B/nbx" explain topk --dtype float32 --shape 4096,128256 --device $d >>"$O/explain.txt" 2>&1
  "$B/nbx" explain cat --dtype float32,float32 --shape "2048,4096;2048,4096" --device $d >>"$O/explain.txt" 2>&1
  "$B/nbx" explain scatter_add --dtype float32,int64 --shape 67108864 --device $d >>"$O/explain.txt" 2>&1
done
TD=(python3 tests/torch/torch_diff.py --runner "$B/tests/torch/torch_diff_runner" --torch-device cuda)
PHASE=${PHASE:-both}

if [ "$PHASE" != bench ]; then
for t in sort join shape_ops explain explain_agrees launch_validation index index_faults index_write index_write_faults index_write_modes index_compact; do
  [ -x "$B/tests/unit/test_$t" ] && step "unit_$t" 240 "$B/tests/unit/test_$t" &
done
step memcheck_sort 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/nbx" conformance --backend cuda --families sort &
step racecheck_sort 240 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/nbx" conformance --backend cuda --families sort &
step memcheck_shape 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/nbx" conformance --backend cuda --families shape &
step conf_cuda 240 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
step conf_vulkan 300 "$B/nbx" conformance --backend vulkan --families sort,gather,index_write,shape --json "$O/conf_vulkan.json" &
step conf_vulkan_sort_prescan 240 env NBX_VULKAN_SORT_LOOKBACK=0 "$B/nbx" conformance --backend vulkan --families sort &
step torch_cuda 240 "${TD[@]}" --device cuda:0 &
step torch_vulkan 240 "${TD[@]}" --device vulkan:0 --ops sort,argsort,msort,topk,kthvalue,median_dim,mode,cat,stack,scatter_add,index_add,gather,scatter,scatter_reduce,index_copy &
wait
fi

if [ "$PHASE" != check ]; then
step bench_cuda_wave1 100 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
step torch_wave1 60 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
step bench_vk_wave1 100 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
NCU=(ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats)
# The select filter at the benchmark's size (4096 × 128256), with its stall sampling.
command -v ncu >/dev/null && step ncu_filter_select 150 "${NCU[@]}" --section SourceCounters -k regex:select_kernel -c 1 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1
# The workgroup size's effect on the Vulkan cases (256 by default).
[ -n "${WG128:-}" ] && step bench_vk_wave1_wg128 100 env NBX_VULKAN_WORKGROUP_SIZE=128 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1_wg128.json"
[ -n "${WG512:-}" ] && step bench_vk_wave1_wg512 100 env NBX_VULKAN_WORKGROUP_SIZE=512 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1_wg512.json"
# AB=1: whether CUDA's float32 atomicAdd on global memory flushes a subnormal (PyTorch's
# scatter_add).
if [ -n "${AB:-}" ]; then
  step probe_atomic_ftz 60 python3 -c "import torch; z=torch.zeros(2,device='cuda'); s=torch.tensor([1e-40,1e-40],device='cuda'); i=torch.tensor([0,0],device='cuda'); print('torch cuda scatter_add of two 1e-40:', z.scatter_add(0,i,s).tolist(), 'plain add:', (s[0]+s[1]).item())"
fi
if [ -n "${SUITES:-}" ]; then
  step bench_cuda_elementwise 150 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite elementwise --json "$O/nbx_cuda_elementwise.json"
  step bench_cuda_matmul 150 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite matmul --json "$O/nbx_cuda_matmul.json"
fi
fi
cat "$O/steps.log"
tar czf /tmp/issue12d-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue12d-results.tgz "$O/"
