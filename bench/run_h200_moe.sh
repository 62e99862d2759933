#!/usr/bin/env bash
# The H200 checks of issue 13's MoE ops (2026-12-06): the grouped_matmul family and
# fused_moe on cuda:0 and vulkan:0 — the unit test (hand-computed values, the fault path for
# bad offsets) on every device, conformance of family moe on each backend, the PyTorch
# differential test against PyTorch on CUDA (fused_moe against Mixtral's loop over experts),
# compute-sanitizer memcheck over the unit test (its faults included), and conformance once
# more with NBX_GROUPED_MATMUL=tiled (the kernel HIP runs, checked on CUDA) — then the bench alone
# on the GPU: PyTorch's loop over experts first, then nbx-bench-gpu --suite moe (fused_moe at
# Mixtral's shapes: 8 experts, top-2, d 4096, ffn 14336, 4096 tokens, bf16; target >= 0.8x
# PyTorch's loop) on cuda:0, and a quick run on vulkan:0. Logs under OUT, packed at the end.
#
#   bench/run_h200_moe.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
MOE=grouped_matmul,moe_route,moe_permute,moe_combine,fused_moe
step unit_moe 300 "$B/tests/unit/test_moe" &
step conf_cuda_moe 300 "$B/nbx" conformance --backend cuda --families moe \
  --json "$O/conf_cuda_moe.json" &
step conf_vulkan_moe 400 "$B/nbx" conformance --backend vulkan --families moe \
  --json "$O/conf_vulkan_moe.json" &
step conf_cuda_moe_tiled 300 env NBX_GROUPED_MATMUL=tiled "$B/nbx" conformance --backend cuda \
  --families moe --json "$O/conf_cuda_moe_tiled.json" &
step torch_diff_cuda_moe 300 python3 tests/torch/torch_diff.py \
  --runner "$B/tests/torch/torch_diff_runner" --device cuda:0 --torch-device cuda --ops $MOE &
step torch_diff_vulkan_moe 300 python3 tests/torch/torch_diff.py \
  --runner "$B/tests/torch/torch_diff_runner" --device vulkan:0 --ops $MOE &
step memcheck_moe 400 compute-sanitizer --tool memcheck --error-exitcode 1 "$B/tests/unit/test_moe" &
# The explain-agrees and launch-validation tests see the new family on every device.
step explain_agrees 200 "$B/tests/unit/test_explain_agrees" &
step launch_validation 200 "$B/tests/unit/test_launch_validation" &
wait
# Timings alone on the GPU: PyTorch's loop, then nbx's fused_moe and its two GEMMs.
step torch_moe 200 python3 bench/torch_moe.py --json "$O/torch_moe.json"
step bench_moe_cuda 300 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite moe --json "$O/bench_moe_cuda.json"
step bench_moe_cuda_tiled 300 env NBX_GROUPED_MATMUL=tiled "$B/bench/nbx-bench-gpu" --device cuda:0 \
  --suite moe --quick --json "$O/bench_moe_cuda_tiled.json"
step bench_moe_vulkan 300 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite moe --quick \
  --json "$O/bench_moe_vulkan.json"
step explain_moe 30 "$B/nbx" explain fused_moe --dtype bfloat16,bfloat16,bfloat16,bfloat16 \
  --shape "4096,4096;4096,8;8,28672,4096;8,4096,14336" --device cuda:0
cat "$O/steps.log" "$O/torch_moe.log" "$O/bench_moe_cuda.log" "$O/bench_moe_cuda_tiled.log" \
  "$O/bench_moe_vulkan.log" "$O/explain_moe.log"
grep -H "conformance: [0-9]\|torch-diff .*shard\|Status\|ERROR SUMMARY" "$O"/*.log 2>/dev/null | head -40
grep -h "FAIL" "$O"/unit_moe.log "$O"/conf_*.log "$O"/torch_diff_*.log 2>/dev/null | head -20
tar czf /tmp/moe-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/moe-results.tgz "$O/"
