#!/usr/bin/env bash
# The device call after flash_mma became one schedule (two K/V stages, or one where shared
# memory is short; O rescaled lazily under NBX_FLASH_MMA_RESCALE=lazy, the A/B) and Vulkan's
# cooperative-matrix flash shader was replaced (issues 13, 15).
# First, side by side: the fused-attention unit tests on every device, again under overlays
# that lower shared_memory.per_block_optin so the plan takes the other tiles (99 KB: 64 rows in
# two stages at head dim 128, one stage at 256, as sm_86; 80000 bytes: 128 rows in one stage,
# head dim 256 refused by name); the attention conformance with the own kernels and on vulkan:0;
# racecheck over the own attention and over index_write a dtype a process; compute-sanitizer's
# four tools over tests/gpu in six shards each. Then, each alone on the GPU, the whole bench
# suite beside PyTorch: transformer (attention, cross_entropy), moe, wave1, matmul,
# elementwise on cuda:0; Vulkan's attention, wave1 and elementwise on vulkan:0. Steps that could
# end past DEADLINE (default 570 s) are skipped and said so. Logs under OUT, packed into one file.
#
#   bench/run_h200_issue13f.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
export DEADLINE=${DEADLINE:-570}
S=${CAP:-240}
U=${UNIT_LIMIT:-200}  # the unit and conformance steps' limit
# An overlay may only lower what a device has, and applies to every device the test opens:
# per_block comes down to 48 KB too (the host's 256 KB would stand above the lowered opt-in),
# and vulkan:0 (whose 48 KB opt-in the overlay would raise) is kept away by a loader that is not
# there.
overlay() {  # file, per_block_optin
  printf 'overlay: 1\ndescription: flash_mma tiles of a smaller device\ncapabilities:\n  shared_memory: {per_block: 49152, per_block_optin: %s}\n' \
    "$2" >"$1"
}
overlay "$O/optin_99k.yml" 101376
overlay "$O/optin_80k.yml" 80000
step unit_fused "$U" "$B/tests/unit/test_attention_fused" &
NBX_VULKAN_LOADER=libvulkan-absent.so.1 NBX_DEVICE_OVERLAY=$O/optin_99k.yml step unit_fused_99k "$U" "$B/tests/unit/test_attention_fused" \
  -tc="flash_mma*" &
NBX_VULKAN_LOADER=libvulkan-absent.so.1 NBX_DEVICE_OVERLAY=$O/optin_80k.yml step unit_fused_80k "$U" "$B/tests/unit/test_attention_fused" \
  -tc="flash_mma*" &
NBX_FLASH_MMA_RESCALE=lazy step unit_fused_lazy "$U" "$B/tests/unit/test_attention_fused" \
  -tc="flash_mma*" &
step unit_attention 100 "$B/tests/unit/test_attention" &
for o in 99k 80k; do  # the tile the plan takes on cuda:0 under each overlay (head dims 128, 256)
  for d in 128 256; do
    NBX_ATTENTION=flash_mma step explain_${o}_d$d 30 "$B/nbx" explain scaled_dot_product_attention \
      --device cuda:0 --overlay "$O/optin_$o.yml" --dtype bfloat16,bfloat16,bfloat16 \
      --shape "1,8,1024,$d" --causal
  done
done
step explain_d128 30 "$B/nbx" explain scaled_dot_product_attention --device cuda:0 \
  --dtype bfloat16,bfloat16,bfloat16 --shape "4,32,4096,128" --causal
NBX_ATTENTION=own step conf_attention_own "$U" "$B/nbx" conformance --backend cuda \
  --families attention &
step conf_attention_vk 150 "$B/nbx" conformance --backend vulkan --families attention &
NBX_ATTENTION=own san racecheck racecheck_attention_own "$B/nbx" conformance --backend cuda \
  --quick --families attention --dtypes bfloat16,float16,float32
for t in float32 int32; do
  san racecheck racecheck_index_write_$t "$B/nbx" conformance --backend cuda --quick \
    --families index_write --dtypes $t
done
shards=("-sf=*test_gpu_elementwise.cpp -tc=every*" "-sf=*test_gpu_elementwise.cpp -tc=casts*"
  "-sf=*test_gpu_elementwise.cpp -tc=queued*"
  "-sf=*test_gpu_batch.cpp,*test_gpu_fill.cpp,*test_gpu_device.cpp,*test_gpu_peer.cpp,*test_gpu_plan.cpp"
  "-sf=*test_gpu_matmul.cpp,*test_gpu_norm*.cpp" "-sf=*test_gpu_reduce*.cpp,*test_gpu_scan.cpp,*test_gpu_softmax*.cpp")
for tool in memcheck racecheck initcheck synccheck; do
  for i in "${!shards[@]}"; do
    # shellcheck disable=SC2086  # each shard is two doctest flags
    NBX_TEST_GPU_BACKEND=cuda san $tool ${tool}_gpu_$((i + 1))of6 "$B/tests/gpu/test_gpu_backend" \
      ${shards[$i]} "--test-case-exclude=*larger than the device*"
  done
done
wait
BG=$B/bench/nbx-bench-gpu
step torch_transformer 70 python3 bench/torch_transformer.py --json "$O/torch_transformer.json"
step nbx_transformer 60 "$BG" --suite transformer --json "$O/nbx_transformer.json"
NBX_FLASH_MMA_RESCALE=lazy step nbx_flash_lazy 40 "$BG" --suite transformer --cases \
  "sdpa_causal_bf16[flash_mma],sdpa_causal_gqa_bf16[flash_mma],sdpa_full_bf16[flash_mma]" \
  --json "$O/nbx_flash_lazy.json"
step nbx_moe 60 "$BG" --suite moe --json "$O/nbx_moe.json"
step vk_attention 40 "$B/bench/vk-attention-bench" vulkan:0 float16 4096
step vk_attention_bf16 40 "$B/bench/vk-attention-bench" vulkan:0 bfloat16 1024
step bench_cuda_wave1 80 "$BG" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
step torch_wave1 60 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
step bench_cuda_matmul 70 "$BG" --device cuda:0 --suite matmul --json "$O/nbx_cuda_matmul.json"
step torch_matmul 50 python3 bench/torch_matmul.py --json "$O/torch_matmul.json"
step bench_cuda_elementwise 60 "$BG" --device cuda:0 --json "$O/nbx_cuda_elementwise.json"
step torch_elementwise 50 python3 bench/torch_reference.py --json "$O/torch_elementwise.json"
step bench_vk_wave1 60 "$BG" --device vulkan:0 --suite wave1 --quick --json "$O/nbx_vk_wave1.json"
step bench_vk_elementwise 60 "$BG" --device vulkan:0 --json "$O/nbx_vk_elementwise.json"
cat "$O/steps.log"
grep -h "ms\|GB/s\|TFLOP" "$O/nbx_transformer.log" "$O/nbx_flash_lazy.log" "$O/torch_transformer.log" "$O/nbx_moe.log" \
  "$O"/vk_attention*.log 2>/dev/null | grep -v "^\s*$" | cut -c1-150 | head -60
grep -H "test cases:\|ERROR SUMMARY\|RACECHECK SUMMARY\|conformance: [0-9]" "$O"/*.log | head -70
grep -H "block\|refused\|path" "$O"/explain_*.log | cut -c1-200
grep -h "FAIL\|ERROR:" "$O"/unit_*.log "$O"/conf_*.log 2>/dev/null | head -30
tar czf /tmp/issue13f-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue13f-results.tgz "$O/"
