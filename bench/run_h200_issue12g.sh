#!/usr/bin/env bash
# The H200 run of issue 12's thirteenth session (2026-12-06; the lender gave H100s). PHASE=probe:
# vulkan:0's topk with two chunks of loads in flight (the default; NBX_VULKAN_SELECT_PREFETCH=1
# the single one) and with half the shared memory (bench/select_2048.yml: 2048 candidates),
# beside cuda:0. PHASE=check: the sort, join and reduce tests on every device, conformance on
# cuda:0 and vulkan:0's sort, reduce and shape families. PHASE=bench: the wave-1 suite on cuda:0,
# vulkan:0 and PyTorch; vulkan:0's row reductions with one load a lane
# (NBX_VULKAN_REDUCE_UNROLL=1), cat8 in the join kernel's old form (NBX_GPU_JOIN=8).
# Each step has its own time limit, its log under OUT. The first calls' probes (GROUP=4, four
# register sets, the rows sweep) are in docs/performance.md.
#
#   [PHASE=probe|check|bench|all] [ONLY="step …"] bench/run_h200_issue12g.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
PHASE=${PHASE:-all}
TP="$B/bench/topk-probe"
BG="$B/bench/nbx-bench-gpu"

if [[ "$PHASE" == *probe* || "$PHASE" == all ]]; then
  step topk_vk_pf2 60 env NBX_VULKAN_PIPELINE_STATS=1 "$TP" vulkan:0 1 50 256 1024
  step topk_vk_pf1 60 env NBX_VULKAN_SELECT_PREFETCH=1 "$TP" vulkan:0 50
  step topk_vk_pf2_c2048 60 env NBX_DEVICE_OVERLAY=bench/select_2048.yml "$TP" vulkan:0 50
  step topk_cuda 60 "$TP" cuda:0 1 50 256 1024
fi

if [[ "$PHASE" == *check* || "$PHASE" == all ]]; then
  step unit_sort 240 "$B/tests/unit/test_sort" &
  step unit_join 120 "$B/tests/unit/test_join" &
  step unit_reduce 200 "$B/tests/unit/test_reduce" &
  step unit_reduce_wave2 200 "$B/tests/unit/test_reduce_wave2" &
  step conf_cuda 120 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
  step conf_vulkan_sort 240 "$B/nbx" conformance --backend vulkan --families sort,reduce,shape --json "$O/conf_vulkan.json" &
  wait
fi

if [[ "$PHASE" == *bench* || "$PHASE" == all ]]; then
  step bench_cuda_wave1 100 "$BG" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
  step torch_wave1 70 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
  step bench_vk_wave1 100 "$BG" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
  step bench_vk_wave1_unroll1 100 env NBX_VULKAN_REDUCE_UNROLL=1 "$BG" --device vulkan:0 --suite wave1 --cases sum_rows_f32,amax_rows_f32,argmax_rows_f32,sum_rows_bf16,amax_rows_bf16,argmax_rows_bf16 --json "$O/nbx_vk_wave1_unroll1.json"
  for form in 8 4plain; do
    step "cat_$form" 60 env NBX_GPU_JOIN=$form "$BG" --device cuda:0 --suite wave1 --cases cat8_f32
  done
  step cat_torch 60 python3 bench/torch_wave1.py --cases cat8_f32
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw --format=csv >>"$O/gpu.txt" 2>&1
cat "$O/steps.log"
grep -H "ms$\|cat8\|sort_select\|passed\|Status" "$O"/*.log 2>/dev/null | grep -v "pipeline elementwise\|sort_onesweep" | head -150
tar czf /tmp/issue12g-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue12g-results.tgz "$O/"
