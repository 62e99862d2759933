#!/usr/bin/env bash
# The H200 run of issue 12's eleventh session (2026-12-04): the scatter family's partitioned
# variant, and the first GPU run of the tenth session's checks (the Tensor view check, the
# registry's lazy loading, the CLI) — every unit test on every device, the index writes' tests
# again with NBX_SCATTER=partitioned, compute-sanitizer over the index-write conformance in
# that variant, the whole cuda:0 conformance, Vulkan's families, the PyTorch differential
# test; then the wave-1 benchmarks beside PyTorch's, and with AB=1 the same with the
# partitioned variant forced (NBX_SCATTER=partitioned; the plan keeps the plain atomics). Each step has its own time limit, its log under OUT.
#
#   [PHASE=check|bench|both] [ONLY="step …"] bench/run_h200_issue12e.sh BUILD_DIR OUT_DIR
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
for d in cuda:0 vulkan:0; do
  for s in "67108864;67108864" "67108864;1048576" "1048576;67108864"; do
    "$B/nbx" explain scatter_add --dtype float32,int64 --shape "$s" --device $d >>"$O/explain.txt" 2>&1
  done
done
TD=(python3 tests/torch/torch_diff.py --runner "$B/tests/torch/torch_diff_runner" --torch-device cuda)
PHASE=${PHASE:-both}

if [ "$PHASE" != bench ]; then
# Every unit test (the ones pack_build.sh keeps), four at a time.
(
  for t in "$B"/tests/unit/test_* "$B"/tests/gpu/test_* "$B"/tests/vulkan/test_*; do
    [ -x "$t" ] || continue
    n=$(basename "$t")
    step "unit_$n" 200 "$t" &
    while [ "$(jobs -rp | wc -l)" -ge 4 ]; do sleep 1; done
  done
  wait
) &
for t in scatter_partitioned index_write index_write_modes index_write_faults index_faults index_compact; do
  step "part_$t" 200 env NBX_SCATTER=partitioned "$B/tests/unit/test_$t" &
done
step memcheck_index_write_part 240 env NBX_SCATTER=partitioned compute-sanitizer --tool memcheck --error-exitcode 9 "$B/nbx" conformance --backend cuda --families index_write &
step racecheck_scatter_part 240 env NBX_SCATTER=partitioned compute-sanitizer --tool racecheck --error-exitcode 9 "$B/nbx" conformance --backend cuda --families index_write &
step conf_cuda 240 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
step conf_vulkan 300 "$B/nbx" conformance --backend vulkan --families sort,gather,index_write,shape --json "$O/conf_vulkan.json" &
step conf_vulkan_part 200 env NBX_SCATTER=partitioned "$B/nbx" conformance --backend vulkan --families index_write &
step torch_cuda 240 "${TD[@]}" --device cuda:0 &
step torch_vulkan 240 "${TD[@]}" --device vulkan:0 --ops sort,topk,cat,scatter_add,index_add,gather,scatter,scatter_reduce,index_copy &
wait
fi

if [ "$PHASE" != check ]; then
step bench_cuda_wave1 100 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
step torch_wave1 70 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
step bench_vk_wave1 100 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
if [ -n "${AB:-}" ]; then
  step bench_cuda_wave1_part 100 env NBX_SCATTER=partitioned "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1_part.json"
  step bench_vk_wave1_part 100 env NBX_SCATTER=partitioned "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1_part.json"
fi
NCU=(ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats)
[ -n "${NCU_SCATTER:-}" ] && command -v ncu >/dev/null && step ncu_scatter 150 "${NCU[@]}" -k regex:scatter_ -c 8 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1 --quick
fi
cat "$O/steps.log"
tar czf /tmp/issue12e-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue12e-results.tgz "$O/"
