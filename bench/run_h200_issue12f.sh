#!/usr/bin/env bash
# The H200 run of issue 12's twelfth session (2026-12-04): where vulkan:0's time goes in the
# two cases below 0.7x cuda:0. scatter_add into 256 MiB: scatter-passes in fresh processes,
# cuda:0 and vulkan:0 in turn with the time since the run began, then the suite's earlier
# cases before its index cases (PRELUDE) and its index cases one by one (steps:...) — the same
# code ran 3.9 or 9.7 ms from process to process (docs/performance.md). topk over vocabulary
# rows: topk-probe beside a read of the same bytes, on sorted rows, with the pipeline's
# registers. Then the checks of the select and reduce shaders' changes and the wave-1 benchmarks beside
# PyTorch's, vulkan:0's twice. Each step has its own time limit, its log under OUT.
#
#   [PHASE=probe|check|bench|all] [ONLY="step …"] bench/run_h200_issue12f.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
PHASE=${PHASE:-all}
SP=("$B/bench/scatter-passes")
T0=$SECONDS

if [[ "$PHASE" == *probe* || "$PHASE" == all ]]; then
  for rep in 1 2 3 4 5 6; do
    for d in vulkan:0 cuda:0; do
      echo "t=$((SECONDS - T0))s" >"$O/start_${d%:0}_$rep.txt"
      step "scatter_${d%:0}_$rep" 60 "${SP[@]}" $d 20 67108864 uniform 0
    done
  done
  for prelude in rowops scans; do
    step "prelude_vk_$prelude" 120 "${SP[@]}" vulkan:0 20 1048576 uniform 0 $prelude
  done
  # The suite's index cases one by one (scatter-passes' step lists), each in a fresh process.
  for rep in 1 2; do
    for steps in emb,x,isel,gather,scatter x,emb,isel,gather,scatter emb,x,isel,gather,scatter-new \
      scatter emb,scatter x,isel,gather,scatter; do
      step "steps_vk_${steps//,/_}_$rep" 120 "${SP[@]}" vulkan:0 20 1048576 uniform 0 steps:$steps
    done
  done
  step topk_cuda 60 "$B/bench/topk-probe" cuda:0 1 50 256 1024
  step topk_vk 60 env NBX_VULKAN_PIPELINE_STATS=1 "$B/bench/topk-probe" vulkan:0 1 50 256 1024
fi

if [[ "$PHASE" == *check* || "$PHASE" == all ]]; then
  step unit_sort 200 "$B/tests/unit/test_sort" &
  step conf_vulkan_sort 300 "$B/nbx" conformance --backend vulkan --families sort --json "$O/conf_vulkan_sort.json" &
  step unit_reduce 200 "$B/tests/unit/test_reduce" &
  step unit_reduce_unroll4 200 env NBX_VULKAN_REDUCE_UNROLL=4 "$B/tests/unit/test_reduce" &
  step unit_reduce_wave2 200 "$B/tests/unit/test_reduce_wave2" &
  step conf_vulkan_reduce 300 "$B/nbx" conformance --backend vulkan --families reduce --json "$O/conf_vulkan_reduce.json" &
  step torch_vulkan 240 python3 tests/torch/torch_diff.py --runner "$B/tests/torch/torch_diff_runner" --torch-device cuda --device vulkan:0 --ops sort,topk,kthvalue,median_dim,mode,unique &
  wait
fi

if [[ "$PHASE" == *bench* || "$PHASE" == all ]]; then
  step bench_cuda_wave1 100 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
  step torch_wave1 70 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
  step bench_vk_wave1 100 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
  # reduce.comp's UNROLL=4 (not yet measured: the next call decides it).
  step bench_vk_wave1_unroll4 100 env NBX_VULKAN_REDUCE_UNROLL=4 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1_unroll4.json"
  step bench_vk_wave1_again 100 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1_again.json"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw --format=csv >>"$O/gpu.txt" 2>&1
cat "$O/steps.log"
tar czf /tmp/issue12f-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue12f-results.tgz "$O/"
