#!/usr/bin/env bash
# Copies what a device run needs from a meson build folder into a small, stripped one that
# travels to the lent H200 (`carry`): the CLI, libnbx, its yaml-cpp, the backend modules, the
# GPU benchmark, the GPU/Vulkan test programs and the unit tests that run on every present
# device, the Python module (and what compiling it there takes), in meson's layout.
#
#   bench/pack_build.sh BUILD_DIR PACKED_DIR      (e.g. build-h200all build-h200final)
set -eu
src=$1 dst=$2
rm -rf "$dst"
mkdir -p "$dst/bench" "$dst/tests/gpu" "$dst/tests/vulkan" "$dst/tests/unit"
for f in nbx bench/nbx-bench-gpu bench/vk-attention-bench bench/scatter-passes bench/topk-probe tests/gpu/test_gpu_backend 'tests/vulkan/test_vk_*' \
  tests/unit/test_launch_validation tests/unit/test_explain_agrees tests/unit/test_index \
  tests/unit/test_index_faults tests/unit/test_scan tests/unit/test_explain tests/unit/test_pytorch_parity \
  tests/unit/test_vk_accuracy tests/unit/test_sort tests/unit/test_shape_ops tests/unit/test_inplace_out tests/unit/test_linalg tests/unit/test_index_write tests/unit/test_index_write_faults tests/unit/test_index_compact tests/unit/test_search tests/unit/test_index_write_modes tests/unit/test_join tests/unit/test_attention tests/unit/test_attention_fused tests/unit/test_rotary tests/unit/test_moe tests/unit/test_loss tests/unit/test_glu \
  tests/unit/test_scatter_partitioned tests/unit/test_registry tests/unit/test_tensor tests/unit/test_errors_wave1 \
  tests/unit/test_allocator tests/unit/test_reduce tests/unit/test_reduce_wave2 tests/unit/test_softmax_norm \
  tests/unit/test_creation tests/unit/test_shape tests/unit/test_cast tests/unit/test_elementwise_binary \
  tests/unit/test_elementwise_unary tests/unit/test_elementwise_promotion tests/unit/test_elementwise_ternary \
  tests/unit/test_dlpack tests/unit/test_event tests/unit/test_format tests/unit/test_npy tests/unit/test_collectives tests/unit/test_device_copy tests/unit/test_views_that_lie tests/unit/test_soak tests/nbx-tensor-parallel tests/large/test_large_tensors \
  'python/nbxtensor*.so' tests/torch/torch_diff_runner; do
  for g in "$src"/$f; do
    [ -f "$g" ] && [ -x "$g" -o "${g%.so}" != "$g" ] || continue
    mkdir -p "$dst/$(dirname "${g#"$src"/}")"
    strip -o "$dst/${g#"$src"/}" "$g"
  done
done
# libnbx under its soname (libnbx.so.0.1), the name the binaries ask for.
strip -o "$dst/$(readelf -d "$src/libnbx.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" "$src/libnbx.so"
for m in "$src"/backends/*/libnbx_backend_*.so; do
  mkdir -p "$dst/$(dirname "${m#"$src"/}")"
  strip -o "$dst/${m#"$src"/}" "$m"
done
# The Python module's sources compile there when its Python is not this machine's
# (bench/run_h200_interop.sh): the generated op bindings, the build's config header and
# DLPack's header (the H200 has no libdlpack-dev).
mkdir -p "$dst/python" "$dst/include/dlpack"
cp "$src"/python/ops_bindings_*.cpp "$dst/python/" 2>/dev/null || true
cp "$src/nbx_config.h" "$dst/"
cp /usr/include/dlpack/dlpack.h "$dst/include/dlpack/"
cp -L "$(ldconfig -p | awk '/libyaml-cpp.so.0.7 /{print $NF; exit}')" "$dst/libyaml-cpp.so.0.7"
du -sh "$dst"
