#!/usr/bin/env bash
# The H200 runs of issue 12's thirteenth and fourteenth sessions (2026-12-06; the lender gave
# H100s). PHASE=probe: topk over 4096 x 128256 on vulkan:0 (two chunks of loads in flight, at
# most sm_90.yml's 2048 candidates for k <= 256) beside cuda:0, with both plans' explain.
# PHASE=check: the sort, join and reduce tests on every device, conformance on cuda:0 and
# vulkan:0's sort, reduce, shape, gather, index_write and attention families; the attention
# unit test (issue 13's math path) on every device. PHASE=bench: the wave-1 suite on
# cuda:0, PyTorch and vulkan:0, then vulkan:0 again while another process holds a CUDA context
# on the GPU (NVIDIA's driver runs vulkan:0's random-access kernels at half speed without one:
# docs/performance.md, the thirteenth session). PHASE=suites: the elementwise and matmul
# suites on cuda:0 beside PyTorch, elementwise on vulkan:0. Each step has its own time limit, its log
# under OUT; everything is packed into one file at the end.
#
#   [PHASE=probe|check|bench|suites|all] [ONLY="step …"] bench/run_h200_issue12g.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
PHASE=${PHASE:-all}
TP="$B/bench/topk-probe"
BG="$B/bench/nbx-bench-gpu"

if [[ "$PHASE" == *probe* || "$PHASE" == all ]]; then
  for d in vulkan:0 cuda:0; do
    "$B/nbx" explain topk --dtype float32 --shape 4096,128256 --device $d >>"$O/explain_topk.txt" 2>&1
  done
  step topk_vk 60 "$TP" vulkan:0 1 50 256 1024
  step topk_cuda 60 "$TP" cuda:0 1 50 256 1024
fi

if [[ "$PHASE" == *check* || "$PHASE" == all ]]; then
  step unit_sort 240 "$B/tests/unit/test_sort" &
  step unit_join 120 "$B/tests/unit/test_join" &
  step unit_reduce 200 "$B/tests/unit/test_reduce" &
  step unit_reduce_wave2 200 "$B/tests/unit/test_reduce_wave2" &
  step unit_attention 200 "$B/tests/unit/test_attention" &
  step conf_cuda 200 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
  step torch_diff_attention 150 python3 tests/torch/torch_diff.py --runner "$B/tests/torch/torch_diff_runner" \
    --device cuda:0 --torch-device cuda --ops scaled_dot_product_attention --scale 3 &
  step conf_vulkan 280 "$B/nbx" conformance --backend vulkan --families sort,reduce,shape,gather,index_write,attention --json "$O/conf_vulkan.json" &
  wait
fi

if [[ "$PHASE" == *bench* || "$PHASE" == all ]]; then
  step bench_cuda_wave1 100 "$BG" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
  step torch_wave1 70 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
  step bench_vk_wave1 100 "$BG" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
  python3 -c "import torch, time; torch.ones(1, device='cuda'); time.sleep(150)" &
  holder=$!
  sleep 8
  step bench_vk_wave1_ctx 100 "$BG" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1_ctx.json"
  kill $holder
fi
if [[ "$PHASE" == *suites* ]]; then  # the rest of the bench suite, beside PyTorch
  step bench_cuda_elementwise 120 "$BG" --device cuda:0 --json "$O/nbx_cuda_elementwise.json"
  step torch_elementwise 90 python3 bench/torch_reference.py --json "$O/torch_elementwise.json"
  step bench_cuda_matmul 120 "$BG" --device cuda:0 --suite matmul --json "$O/nbx_cuda_matmul.json"
  step torch_matmul 90 python3 bench/torch_matmul.py --json "$O/torch_matmul.json"
  step bench_vk_elementwise 100 "$BG" --device vulkan:0 --json "$O/nbx_vk_elementwise.json"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw --format=csv >>"$O/gpu.txt" 2>&1
cat "$O/steps.log"
grep -H "ms$\|passed\|Status\|candidates" "$O"/*.log "$O"/*.txt 2>/dev/null | grep -v "pipeline " | head -150
tar czf /tmp/issue12g-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue12g-results.tgz "$O/"
