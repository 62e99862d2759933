#!/usr/bin/env bash
# The H200 checks of issue 13 in one call (2026-12-06): first the timings, each alone on the
# GPU — PyTorch's transformer and MoE figures (bench/torch_transformer.py, torch_moe.py), then
# nbx's (nbx-bench-gpu --suite transformer and --suite moe on cuda:0, quick runs on vulkan:0,
# flash_mma's 64-row tile as an A/B through a copy of the device files); then side by side the
# unit tests of attention (math and fused paths), rotary, losses, GLU and MoE on every device,
# conformance (cuda:0 every family; vulkan:0 the issue's families), the PyTorch differential
# test on CUDA, and compute-sanitizer memcheck over the fused-attention and MoE tests. Logs
# under OUT, packed into one file at the end. ONLY="step …" runs a subset; CAP (seconds,
# default 200) bounds each test step.
#
#   bench/run_h200_issue13c.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
GLU=glu,silu_and_mul,gelu_and_mul,gelu_tanh_and_mul,log_sigmoid,threshold,softmax_with_temperature
LOSS=cross_entropy,nll_loss,mse_loss,l1_loss,smooth_l1_loss,kl_div,binary_cross_entropy_with_logits
MOE=grouped_matmul,moe_route,moe_permute,moe_combine,fused_moe
step torch_transformer 70 python3 bench/torch_transformer.py --json "$O/torch_transformer.json"
step nbx_transformer 80 "$B/bench/nbx-bench-gpu" --suite transformer --json "$O/nbx_transformer.json"
rm -rf /tmp/df64 && cp -r device_files /tmp/df64 &&
  sed -i 's/^    block_ceiling: 128 /    block_ceiling: 64  /' /tmp/df64/nvidia/sm_90.yml
NBX_DEVICE_FILES=/tmp/df64 step nbx_transformer_tile64 30 "$B/bench/nbx-bench-gpu" --suite transformer \
  --cases sdpa_causal_bf16,sdpa_full_bf16 --json "$O/nbx_transformer_tile64.json"
step torch_moe 40 python3 bench/torch_moe.py --json "$O/torch_moe.json"
step bench_moe_cuda 40 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite moe --json "$O/bench_moe_cuda.json"
step nbx_transformer_vk 40 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite transformer --quick \
  --cases sdpa_causal_bf16,sdpa_decode_gqa_bf16,cross_entropy_bf16 --json "$O/nbx_transformer_vk.json"
# Vulkan's cooperative-matrix flash (float16) against its scalar kernel (s 4096).
step vk_attention_f16 30 "$B/bench/vk-attention-bench" vulkan:0 float16 4096
NBX_VULKAN_ATTENTION_COOPMAT=off step vk_attention_f16_scalar 30 "$B/bench/vk-attention-bench" \
  vulkan:0 float16 4096
# The MoE stages and GEMMs with the project's own grouped GEMM beside cuBLASLt's (the bench
# times fused_moe both ways; here the GEMMs alone too).
NBX_GROUPED_MATMUL=own step bench_moe_cuda_own 40 "$B/bench/nbx-bench-gpu" --device cuda:0 \
  --suite moe --json "$O/bench_moe_cuda_own.json"
# The timings now, so a later step that overruns the call cannot take them along.
cat "$O/torch_transformer.log" "$O/nbx_transformer.log" "$O/nbx_transformer_tile64.log" \
"$O/torch_moe.log" "$O/bench_moe_cuda.log" "$O/bench_moe_cuda_own.log" "$O/nbx_transformer_vk.log" "$O/vk_attention_f16.log" \
  "$O/vk_attention_f16_scalar.log" 2>&1 | grep -v "^\s*$" | cut -c1-150
for t in attention attention_fused rotary loss glu moe explain_agrees launch_validation; do
  step unit_$t "${CAP:-200}" "$B/tests/unit/test_$t" &
done
step conf_cuda "${CAP:-200}" "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
step conf_vulkan "${CAP:-200}" "$B/nbx" conformance --backend vulkan --families attention,rotary,loss,moe \
  --json "$O/conf_vulkan.json" &
step conf_vulkan_glu 120 "$B/nbx" conformance --backend vulkan --ops $GLU --json "$O/conf_vulkan_glu.json" &
step torch_diff_cuda "${CAP:-200}" python3 tests/torch/torch_diff.py --runner "$B/tests/torch/torch_diff_runner" \
  --device cuda:0 --torch-device cuda \
  --ops scaled_dot_product_attention,rotary_embedding,rotary_embedding_,$GLU,$LOSS,$MOE &
step memcheck_fused "${CAP:-200}" compute-sanitizer --tool memcheck --error-exitcode 1 \
  "$B/tests/unit/test_attention_fused" &
step memcheck_moe "${CAP:-200}" compute-sanitizer --tool memcheck --error-exitcode 1 "$B/tests/unit/test_moe" &
wait
grep -h "attention.cudnn\|matmul.blas" "$O/devices.txt" | cut -c1-200
cat "$O/steps.log"
grep -H "conformance: [0-9]\|torch-diff cuda\|Status\|ERROR SUMMARY" "$O"/*.log 2>/dev/null | head -40
grep -h "FAIL\|ERROR:" "$O"/conf_*.log "$O"/torch_diff_cuda.log "$O"/unit_*.log 2>/dev/null | head -30
tar czf /tmp/issue13c-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue13c-results.tgz "$O/"
