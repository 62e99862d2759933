#!/usr/bin/env bash
# The H200 run of issue 12's thirteenth session (2026-12-06). PHASE=probe: where vulkan:0's
# topk loses to cuda:0 — topk-probe with two or four chunks in flight
# (NBX_VULKAN_SELECT_PREFETCH=2|4),
# with half the shared memory (bench/select_2048.yml: 2048 candidates), and over 132·m rows
# (when the time steps up, the rows a pass holds: the workgroups a multiprocessor keeps); the
# row reductions' four loads a lane (NBX_VULKAN_REDUCE_UNROLL=4, amax in topk-probe); cat8 on
# cuda:0 in the join kernel's forms (NBX_GPU_JOIN) beside PyTorch's, twice. PHASE=check:
# test_sort on every device with the forms the probe may keep. PHASE=bench: the wave-1 suite on
# cuda:0, vulkan:0 and PyTorch. Each step has its own time limit, its log under OUT.
#
#   [PHASE=probe|check|bench|all] [ONLY="step …"] bench/run_h200_issue12g.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
PHASE=${PHASE:-all}
TP="$B/bench/topk-probe"
BG="$B/bench/nbx-bench-gpu"

if [[ "$PHASE" == *probe* || "$PHASE" == all ]]; then
  step topk_vk_base 60 env NBX_VULKAN_PIPELINE_STATS=1 "$TP" vulkan:0 1 50
  for pf in 2 4; do
    step "topk_vk_pf$pf" 60 env NBX_VULKAN_SELECT_PREFETCH=$pf NBX_VULKAN_PIPELINE_STATS=1 "$TP" vulkan:0 1 50
    step "topk_vk_c2048_pf$pf" 60 env NBX_DEVICE_OVERLAY=bench/select_2048.yml NBX_VULKAN_SELECT_PREFETCH=$pf NBX_VULKAN_PIPELINE_STATS=1 "$TP" vulkan:0 50
  done
  step topk_vk_c2048 60 env NBX_DEVICE_OVERLAY=bench/select_2048.yml NBX_VULKAN_PIPELINE_STATS=1 "$TP" vulkan:0 50
  step topk_vk_wg512_pf4 60 env NBX_VULKAN_WORKGROUP_SIZE=512 NBX_VULKAN_SELECT_PREFETCH=4 "$TP" vulkan:0 50
  step topk_vk_unroll4 60 env NBX_VULKAN_REDUCE_UNROLL=4 "$TP" vulkan:0 50
  step topk_cuda 60 "$TP" cuda:0 1 50
  for m in 1 2 3 4 6 8; do
    step "rows_vk_$m" 40 "$TP" vulkan:0 --rows $((132 * m)) 50
    step "rows_vk_pf4_$m" 40 env NBX_VULKAN_SELECT_PREFETCH=4 "$TP" vulkan:0 --rows $((132 * m)) 50
    step "rows_cuda_$m" 40 "$TP" cuda:0 --rows $((132 * m)) 50
  done
  for form in 8plain 4plain 2plain; do
    step "join_$form" 100 env NBX_GPU_JOIN=$form "$B/tests/unit/test_join" &
  done
  wait
  for rep in 1 2; do
    for form in 8 8plain 4plain 2plain; do
      step "cat_${form}_$rep" 60 env NBX_GPU_JOIN=$form "$BG" --device cuda:0 --suite wave1 --cases cat8_f32,index_select_f32
    done
    step "cat_torch_$rep" 60 python3 bench/torch_wave1.py --cases cat8_f32,index_select_f32
  done
fi

if [[ "$PHASE" == *check* || "$PHASE" == all ]]; then
  step unit_sort 200 "$B/tests/unit/test_sort" &
  step unit_sort_pf 200 env NBX_VULKAN_SELECT_PREFETCH=${PREFETCH:-4} "$B/tests/unit/test_sort" &
  step unit_join 200 env NBX_GPU_JOIN=${JOIN_FORM:-8} "$B/tests/unit/test_join" &
  step conf_vulkan_sort 300 "$B/nbx" conformance --backend vulkan --families sort --json "$O/conf_vulkan_sort.json" &
  wait
fi

if [[ "$PHASE" == *bench* || "$PHASE" == all ]]; then
  step bench_cuda_wave1 100 "$BG" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
  step torch_wave1 70 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
  step bench_vk_wave1 100 "$BG" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw --format=csv >>"$O/gpu.txt" 2>&1
cat "$O/steps.log"
grep -h "ms$\|cat8\|index_select\|registers\|sort_select" "$O"/topk_*.log "$O"/rows_*.log "$O"/cat_*.log 2>/dev/null | head -150
tar czf /tmp/issue12g-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue12g-results.tgz "$O/"
