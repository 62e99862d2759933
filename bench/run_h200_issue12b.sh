#!/usr/bin/env bash
# The H200 run of issue 12's index writes (2026-12-02, fifth session): the scatter and search
# families' unit and fault tests, their conformance on cuda:0 and vulkan:0 (atomic and
# deterministic), compute-sanitizer over the index conformance (bad indices included), the
# PyTorch differential test against PyTorch on CUDA, then the wave-1 benchmarks with PyTorch's
# figures in the same call. Each step has its own time limit and writes its log under OUT.
#
#   [PHASE=check|bench] [ONLY="step …"] bench/run_h200_issue12b.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
for d in cuda:0 vulkan:0; do
  "$B/nbx" explain scatter_add --dtype float32,int64 --shape 67108864 --device $d >>"$O/explain.txt" 2>&1
  NBX_DETERMINISTIC=1 "$B/nbx" explain index_add --dtype float32,int64 --shape 4096,64 --device $d >>"$O/explain.txt" 2>&1
  "$B/nbx" explain embedding --dtype bfloat16,int64 --shape 65536,4096 --device $d >>"$O/explain.txt" 2>&1
done
TD=(python3 tests/torch/torch_diff.py --runner "$B/tests/torch/torch_diff_runner" --torch-device cuda)
IW=$(python3 -c "import sys; sys.path.insert(0, 'tests/torch'); import torch_diff_ops_index_write as m; print(','.join(sorted(m.CPU_ONLY)))" 2>/dev/null)

if [ "${PHASE:-check}" = check ]; then
for t in index_write index_write_faults index_compact search index_write_modes index index_faults explain explain_agrees launch_validation sort; do
  [ -x "$B/tests/unit/test_$t" ] && step "unit_$t" 200 "$B/tests/unit/test_$t" &
done
NBX_DETERMINISTIC=1 step unit_index_write_det 200 "$B/tests/unit/test_index_write_modes" &
step memcheck_index 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/nbx" conformance --backend cuda --families index_write,search,gather &
step memcheck_faults 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/unit/test_index_write_faults" &
step conf_cuda 240 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
NBX_DETERMINISTIC=1 step conf_cuda_det 200 "$B/nbx" conformance --backend cuda --families index_write,search --json "$O/conf_cuda_det.json" &
for fam in index_write search gather sort shape; do
  step "conf_vulkan_$fam" 240 "$B/nbx" conformance --backend vulkan --families $fam --json "$O/conf_vulkan_$fam.json" &
done
step torch_cuda 240 "${TD[@]}" --device cuda:0 &
[ -n "$IW" ] && step torch_vulkan_iw 240 "${TD[@]}" --device vulkan:0 --ops "$IW" &
wait
fi

if [ "${PHASE:-bench}" = bench ]; then
step bench_cuda_wave1 100 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
step torch_wave1 60 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
step bench_vk_wave1 80 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
fi
cat "$O/steps.log"
tar czf /tmp/issue12b-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue12b-results.tgz "$O/"
