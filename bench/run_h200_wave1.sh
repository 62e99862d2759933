#!/usr/bin/env bash
# The wave-1 run on the lent H200 (docs/performance.md): correctness first, all at once
# (the host references are CPU-bound and the machine has 16 cores), then the benchmarks one
# at a time, nbx and PyTorch back to back. Every step has its own time limit and writes its
# log under OUT as it goes, so a run cut short still returns what finished.
#
#   bench/run_h200_wave1.sh BUILD_DIR OUT_DIR
# BUILD_DIR holds nbx, libnbx.so, the backend modules, bench/ and tests/ as meson lays them out
# (bench/pack_build.sh makes one). ONLY="name name…" runs just those steps.
set -u
B=$1 O=$2
export LD_LIBRARY_PATH=$PWD/$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$O"
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2 t0=$SECONDS
  shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return 0; fi
  timeout "$limit" "$@" >"$O/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - t0))s" >>"$O/steps.log"
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$O/gpu.txt" 2>&1

# Correctness, concurrently.
# The contiguous-row kernels' cases (reduce, softmax, norm) run apart from the rest: the
# host references of their long rows take a while.
rows="fast rows*,*softmax fast*,*norm fast*"
NBX_TEST_GPU_BACKEND=cuda step gpu_tests 150 "$B/tests/gpu/test_gpu_backend" -tce="$rows" &
NBX_TEST_GPU_BACKEND=cuda NBX_BLAS_TUNE=1 step gpu_blas_tuned 150 "$B/tests/gpu/test_gpu_backend" -tc="matmul large enough to tune*" &
NBX_TEST_GPU_BACKEND=cuda step gpu_rows_fast 150 "$B/tests/gpu/test_gpu_backend" -tc="$rows" &
NBX_GPU_ROWS=general step conf_cuda_general 60 "$B/nbx" conformance --backend cuda --families reduce,softmax,norm --json "$O/conf_cuda_general.json" &
step conf_cuda 60 "$B/nbx" conformance --backend cuda --json "$O/conf_cuda.json" &
for fam in elementwise reduce scan softmax norm linalg creation; do
  step "conf_vulkan_$fam" 200 "$B/nbx" conformance --backend vulkan --families $fam --json "$O/conf_vulkan_$fam.json" &
done  # by family, concurrently: the first pipeline compiles take a while
for t in matmul reduce softmax_norm scan fill backend; do
  step "vk_$t" 60 "$B/tests/vulkan/test_vk_$t" &
done
wait

# Benchmarks, one at a time (--suite wave1 on CUDA/HIP also runs the NBX_GPU_ROWS=general
# device: rows named "[general]"; matmul against PyTorch with the vendor BLAS only, so the
# long tiled products do not change the clocks between compared cases, then the rest).
step bench_cuda_wave1 80 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite wave1 --json "$O/nbx_cuda_wave1.json"
step torch_wave1 40 python3 bench/torch_wave1.py --json "$O/torch_wave1.json"
step bench_cuda_matmul 60 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite matmul --variants blas --json "$O/nbx_cuda_matmul.json"
step torch_matmul 60 python3 bench/torch_matmul.py --json "$O/torch_matmul.json"
step bench_cuda_matmul_tiled 90 "$B/bench/nbx-bench-gpu" --device cuda:0 --suite matmul --variants tiled --json "$O/nbx_cuda_matmul_tiled.json"
step bench_vk_wave1 40 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite wave1 --json "$O/nbx_vk_wave1.json"
step bench_vk_matmul 90 "$B/bench/nbx-bench-gpu" --device vulkan:0 --suite matmul --json "$O/nbx_vk_matmul.json"
cat "$O/steps.log"
# The machine returns at most 8 files: pack everything into one.
tar czf /tmp/wave1-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/wave1-results.tgz "$O/"
