#!/usr/bin/env bash
# One device call for what 2026-12-07's calls left open (issues 13 and 15). First, side by side:
# flash_mma's staged schedule (NBX_FLASH_MMA_SCHEDULE=v2) through the fused-attention unit
# tests and the attention conformance on cuda:0 with the own kernels; Vulkan's rewritten
# cooperative-matrix flash shader (a backend module built from the branch wip-attention-v2,
# W = its folder, loaded through NBX_BACKEND_PATH) through the same tests on vulkan:0; and
# compute-sanitizer — racecheck one family a process (--quick, three dtypes), synccheck over
# conformance shard 2/3 with the own attention kernels, the four tools over tests/gpu. Then,
# each alone on the GPU: PyTorch's transformer figures, nbx-bench-gpu --suite transformer
# (default plan and v2), Vulkan attention (main's shader, the branch's, the branch's without
# prefetch) and Nsight Compute's view of v2. Logs under OUT, packed into one file.
# ONLY="step …" runs a subset; CAP bounds the sanitizer steps.
#
#   bench/run_h200_issue13e.sh BUILD_DIR WIP_MODULE_DIR OUT_DIR
set -u
B=$1 W=$2 O=$3
source "$(dirname "$0")/h200_steps.sh"
S=${CAP:-240}
W=$PWD/$W
NBX_FLASH_MMA_SCHEDULE=v2 step unit_fused_v2 150 "$B/tests/unit/test_attention_fused" &
NBX_FLASH_MMA_SCHEDULE=v2 step unit_attention_v2 100 "$B/tests/unit/test_attention" &
NBX_FLASH_MMA_SCHEDULE=v2 NBX_ATTENTION=own step conf_attention_own_v2 150 "$B/nbx" conformance \
  --backend cuda --families attention &
NBX_BACKEND_PATH=$W step unit_fused_vkwip 150 "$B/tests/unit/test_attention_fused" &
NBX_BACKEND_PATH=$W step conf_attention_vkwip 150 "$B/nbx" conformance --backend vulkan \
  --families attention &
NBX_BACKEND_PATH=$W NBX_VULKAN_ATTENTION_COOPMAT=sync step conf_attention_vkwip_sync 150 \
  "$B/nbx" conformance --backend vulkan --families attention --dtypes float16 &
for tool in memcheck racecheck initcheck synccheck; do
  NBX_TEST_GPU_BACKEND=cuda san $tool ${tool}_gpu "$B/tests/gpu/test_gpu_backend" \
    "--test-case-exclude=*larger than the device*"
done
NBX_ATTENTION=own san synccheck synccheck_conf_2of3_own "$B/nbx" conformance --backend cuda \
  --quick --shard 2/3
for f in reduce scan softmax norm linalg sort search attention loss moe gather index_write; do
  san racecheck racecheck_$f "$B/nbx" conformance --backend cuda --quick --families $f \
    --dtypes float32,bfloat16,int32
done
NBX_FLASH_MMA_SCHEDULE=v2 NBX_ATTENTION=own san racecheck racecheck_attention_v2 "$B/nbx" \
  conformance --backend cuda --quick --families attention --dtypes bfloat16,float16
wait
grep -h "test cases:\|conformance: [0-9]" "$O"/unit_*.log "$O"/conf_*.log
step torch_transformer 70 python3 bench/torch_transformer.py --json "$O/torch_transformer.json"
step nbx_transformer 80 "$B/bench/nbx-bench-gpu" --suite transformer --json "$O/nbx_transformer.json"
NBX_FLASH_MMA_SCHEDULE=v2 step nbx_flash_v2 40 "$B/bench/nbx-bench-gpu" --suite transformer \
  --cases sdpa_causal_bf16,sdpa_causal_gqa_bf16,sdpa_full_bf16 --json "$O/nbx_flash_v2.json"
step vk_attention_main 40 "$B/bench/vk-attention-bench" vulkan:0 float16 4096
NBX_BACKEND_PATH=$W step vk_attention_wip 40 "$B/bench/vk-attention-bench" vulkan:0 float16 4096
NBX_BACKEND_PATH=$W NBX_VULKAN_ATTENTION_COOPMAT=sync step vk_attention_wip_sync 40 \
  "$B/bench/vk-attention-bench" vulkan:0 float16 4096
cat "$O/torch_transformer.log" "$O/nbx_transformer.log" "$O/nbx_flash_v2.log" \
  "$O"/vk_attention_*.log 2>&1 | grep -v "^\s*$" | cut -c1-150
NBX_FLASH_MMA_SCHEDULE=v2 NBX_ATTENTION=own step ncu_flash_v2 90 ncu --clock-control none \
  -k regex:flash_mma --launch-skip 2 --launch-count 1 --section SpeedOfLight \
  --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy \
  --section LaunchStats --section WarpStateStats --section InstructionStats \
  "$B/bench/nbx-bench-gpu" --device cuda:0 --suite transformer --quick --cases sdpa_causal_bf16
cat "$O/steps.log"
grep -h "Duration\|Throughput\|Registers\|Achieved Occupancy\|Theoretical Occupancy\|Block Limit\|Stall\|Bank\|Issue Slot\|Pipe\|Spill" \
  "$O/ncu_flash_v2.log" 2>/dev/null | head -50
grep -H "test cases:\|ERROR SUMMARY\|RACECHECK SUMMARY\|conformance: [0-9]" "$O"/*.log | head -60
grep -h "FAIL\|ERROR:" "$O"/unit_*.log "$O"/conf_*.log 2>/dev/null | head -30
tar czf /tmp/issue13e-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue13e-results.tgz "$O/"
