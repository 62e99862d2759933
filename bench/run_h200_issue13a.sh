#!/usr/bin/env bash
# The H200 checks of issue 13's first ops (2026-12-06): scaled_dot_product_attention (math
# path), the rotary family, the losses and the GLU ops on cuda:0 and vulkan:0 — their unit
# tests on every device, conformance (cuda:0 every family; vulkan:0 the new families and
# ops), the PyTorch differential test against PyTorch on CUDA, and compute-sanitizer memcheck
# over the rotary test (its bad-position faults included). Steps run side by side, each under
# its own time limit, logs under OUT; packed into one file at the end.
#
#   bench/run_h200_issue13a.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
GLU=glu,silu_and_mul,gelu_and_mul,gelu_tanh_and_mul,log_sigmoid,threshold,softmax_with_temperature
LOSS=cross_entropy,nll_loss,mse_loss,l1_loss,smooth_l1_loss,kl_div,binary_cross_entropy_with_logits
# PyTorch's transformer figures first, alone on the GPU (timings are not shared).
step torch_transformer 150 python3 bench/torch_transformer.py --json "$O/torch_transformer.json"
step cudnn_where 30 bash -c 'python3 -c "import nvidia,os;print(os.path.dirname(nvidia.__file__))"; \
  find / -name "libcudnn*.so*" -not -path "/proc/*" 2>/dev/null | head -20; nvidia-smi topo -m'
for t in attention rotary loss glu; do
  step unit_$t 240 "$B/tests/unit/test_$t" &
done
step conf_cuda 300 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
step conf_vulkan 400 "$B/nbx" conformance --backend vulkan --families attention,rotary,loss,softmax \
  --json "$O/conf_vulkan.json" &
step conf_vulkan_glu 200 "$B/nbx" conformance --backend vulkan --ops $GLU --json "$O/conf_vulkan_glu.json" &
step torch_diff_cuda 300 python3 tests/torch/torch_diff.py --runner "$B/tests/torch/torch_diff_runner" \
  --device cuda:0 --torch-device cuda --ops scaled_dot_product_attention,rotary_embedding,rotary_embedding_,$GLU,$LOSS &
step memcheck_rotary 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$B/tests/unit/test_rotary" &
wait
cat "$O/steps.log" "$O/torch_transformer.log" "$O/cudnn_where.log"
grep -H "conformance: [0-9]\|torch-diff cuda\|Status\|ERROR SUMMARY" "$O"/*.log 2>/dev/null | head -40
grep -h "FAIL" "$O"/conf_*.log "$O"/torch_diff_cuda.log 2>/dev/null | head -20
tar czf /tmp/issue13a-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue13a-results.tgz "$O/"
