#!/usr/bin/env bash
# The device call after the attention kernels' rewrite (2026-12-07, issues 13–15): first the
# new kernels' correctness, side by side (the fused-attention unit tests on every device, the
# attention conformance on cuda:0 with the own kernels and on vulkan:0); then the timings,
# each alone on the GPU: PyTorch's transformer figures, nbx-bench-gpu --suite transformer
# (default plan, flash_mma, cuDNN), flash_mma's staged schedule as an A/B
# (NBX_FLASH_MMA_SCHEDULE=v2, opt-in until this call's checks pass), Vulkan's
# cooperative-matrix flash (bench/vk-attention-bench); then side by side the Python module's tests on cuda:0 (issue 14) and
# compute-sanitizer initcheck over the CUDA conformance (issue 15). Logs under OUT, packed into
# one file. ONLY="step …" runs a subset; CAP bounds the last steps.
#
#   bench/run_h200_issue13d.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
step unit_attention 100 "$B/tests/unit/test_attention" &
step unit_fused_all 150 "$B/tests/unit/test_attention_fused" &
NBX_FLASH_MMA_SCHEDULE=v2 step unit_fused_v2 150 "$B/tests/unit/test_attention_fused" &
NBX_FLASH_MMA_SCHEDULE=v2 NBX_ATTENTION=own step conf_attention_own_v2 100 "$B/nbx" conformance \
  --backend cuda --families attention &
NBX_ATTENTION=own step conf_attention_own 100 "$B/nbx" conformance --backend cuda \
  --families attention &
step conf_attention_vk 150 "$B/nbx" conformance --backend vulkan --families attention &
wait
grep -h "test cases:\|conformance: [0-9]" "$O"/unit_*.log "$O"/conf_attention*.log
step torch_transformer 70 python3 bench/torch_transformer.py --json "$O/torch_transformer.json"
step nbx_transformer 80 "$B/bench/nbx-bench-gpu" --suite transformer --json "$O/nbx_transformer.json"
NBX_FLASH_MMA_SCHEDULE=v2 step nbx_flash_v2 40 "$B/bench/nbx-bench-gpu" --suite transformer \
  --cases sdpa_causal_bf16,sdpa_full_bf16 --json "$O/nbx_flash_v2.json"
step vk_attention_f16 40 "$B/bench/vk-attention-bench" vulkan:0 float16 4096
cat "$O/torch_transformer.log" "$O/nbx_transformer.log" "$O/nbx_flash_v2.log" \
  "$O/vk_attention_f16.log" 2>&1 | grep -v "^\s*$" | cut -c1-150
S=${CAP:-200}
(ONLY="python_module zero_copy python_tests" bash bench/run_h200_interop.sh "$B" "$O/interop" \
  >"$O/interop.log" 2>&1) &
for k in 1 2 3 4; do
  step initcheck_conf_${k}of4 "$S" compute-sanitizer --tool initcheck --error-exitcode 1 \
    "$B/nbx" conformance --backend cuda --quick --shard $k/4 &
done
wait
cat "$O/steps.log"
tail -8 "$O/interop.log"
grep -H "test cases:\|ERROR SUMMARY\|conformance: [0-9]" "$O"/*.log | head -40
grep -h "FAIL\|ERROR:" "$O"/unit_*.log "$O"/conf_*.log 2>/dev/null | head -30
for k in 1 2 3 4; do
  grep -h "^=========     at\|Uninitialized" "$O/initcheck_conf_${k}of4.log" 2>/dev/null |
    sort | uniq -c | sort -rn | head -6
done
tar czf /tmp/issue13d-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue13d-results.tgz "$O/"
