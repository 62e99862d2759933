#!/usr/bin/env bash
# The H200 checks of issue 13's attention family (2026-12-06): PyTorch's transformer figures
# and nbx's (bench/torch_transformer.py, nbx-bench-gpu --suite transformer) one after the
# other, alone on the GPU; then side by side the unit tests of attention, rotary, losses and
# GLU ops on every device, the fused-path tests, conformance (cuda:0 every family; vulkan:0
# the new families), the PyTorch differential test on CUDA, and compute-sanitizer memcheck
# over the fused-path tests. Logs under OUT, packed into one file at the end.
#
#   bench/run_h200_issue13b.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
GLU=glu,silu_and_mul,gelu_and_mul,gelu_tanh_and_mul,log_sigmoid,threshold,softmax_with_temperature
LOSS=cross_entropy,nll_loss,mse_loss,l1_loss,smooth_l1_loss,kl_div,binary_cross_entropy_with_logits
step torch_transformer 120 python3 bench/torch_transformer.py --json "$O/torch_transformer.json"
step nbx_transformer 150 "$B/bench/nbx-bench-gpu" --suite transformer --json "$O/nbx_transformer.json"
# A/B of flash_mma's tile: the same cases with sm_90's attention.block_ceiling at 64 rows (a
# copy of the device files, NBX_DEVICE_FILES), so the plan takes 64-row blocks.
rm -rf /tmp/df64 && cp -r device_files /tmp/df64 &&
  sed -i 's/^    block_ceiling: 128 /    block_ceiling: 64  /' /tmp/df64/nvidia/sm_90.yml
NBX_DEVICE_FILES=/tmp/df64 step nbx_transformer_tile64 120 "$B/bench/nbx-bench-gpu" --suite transformer \
  --cases sdpa_causal_bf16,sdpa_full_bf16 --json "$O/nbx_transformer_tile64.json"
step nbx_transformer_vk 200 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite transformer \
  --cases sdpa_causal_bf16,sdpa_decode_gqa_bf16,cross_entropy_bf16 --json "$O/nbx_transformer_vk.json"
for t in attention attention_fused rotary loss glu; do
  step unit_$t 300 "$B/tests/unit/test_$t" &
done
step conf_cuda 300 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
step conf_vulkan 400 "$B/nbx" conformance --backend vulkan --families attention,rotary,loss,softmax \
  --json "$O/conf_vulkan.json" &
step conf_vulkan_glu 200 "$B/nbx" conformance --backend vulkan --ops $GLU --json "$O/conf_vulkan_glu.json" &
step torch_diff_cuda 300 python3 tests/torch/torch_diff.py --runner "$B/tests/torch/torch_diff_runner" \
  --device cuda:0 --torch-device cuda --ops scaled_dot_product_attention,rotary_embedding,rotary_embedding_,$GLU,$LOSS &
step memcheck_fused 300 compute-sanitizer --tool memcheck --error-exitcode 1 \
  "$B/tests/unit/test_attention_fused" &
step memcheck_rotary 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$B/tests/unit/test_rotary" &
wait
cat "$O/steps.log" "$O/torch_transformer.log" "$O/nbx_transformer.log" "$O/nbx_transformer_tile64.log" \
  "$O/nbx_transformer_vk.log"
grep -H "conformance: [0-9]\|torch-diff cuda\|Status\|ERROR SUMMARY" "$O"/*.log 2>/dev/null | head -40
grep -h "FAIL\|ERROR:" "$O"/conf_*.log "$O"/torch_diff_cuda.log "$O"/unit_*.log 2>/dev/null | head -30
tar czf /tmp/issue13b-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue13b-results.tgz "$O/"
