// Kernel family "sort" on Vulkan: this backend's own limits on an abi::SortParams launch (the
// 32-bit index path, shared memory for the rows variant's tile, maxStorageBufferRange), the
// uniform block of kernels/vulkan/sort_common.glsl, and the dispatches: one for the rows
// variant (sort_rows.comp), one for topk's select variant (sort_select.comp), 2 + 4 per digit
// for the radix variant (sort_radix.comp), in order — the hazard tracker puts a barrier
// between dispatches that share the workspace.
// BackendDevice::launch validated the block (core/families/sort_family.cpp).
#include <algorithm>
#include <span>
#include <string>
#include <string_view>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::vulkan {
namespace {

struct GpuParams {
  std::uint32_t head[4];     // rows, row_len, outer_ndim, workgroups in the grid
  std::uint32_t key[4];      // bits, kind, mantissa, descending
  std::uint32_t strides[4];  // input, values, indices row strides
  std::uint32_t offsets[4];  // input, values, indices
  std::uint32_t misc[4];  // rows: segment, log2(segment), tile; radix: tiles, source, shift, chunks
  std::uint32_t sizes[8], in_strides[8], values_strides[8], indices_strides[8];
};
static_assert(sizeof(GpuParams) == 208);

constexpr std::int64_t kMaxIndex = INT32_MAX;   // the shaders' uint arithmetic, with room
constexpr std::uint32_t kRadixGroupSize = 256;  // sort_radix.comp's kItems assumes it

std::uint32_t key_kind(DType t) {
  if (is_floating(t)) return 2;
  return t == DType::kBool || t == DType::kUInt8 ? 0 : 1;
}

std::uint32_t mantissa_bits(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 10;
    case DType::kBFloat16:
      return 7;
    case DType::kFloat32:
      return 23;
    default:
      return 52;
  }
}

}  // namespace

void launch_family(VulkanDevice& dev, const abi::SortParams& p, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  const LaunchChecks chk(ctx, "sort");
  if (p.rows == 0 || p.row_len == 0) return;
  const DType t = DType(p.dtype);
  const std::int64_t n = p.rows * p.row_len;
  if (n > kMaxIndex)
    chk.refuse("max_elements",
               std::to_string(n) + " elements exceed the 2^31 - 1 the 32-bit index path supports");
  chk.rows_view(p, p.in_offset, p.in_outer_strides, p.in_row_stride, t, launch.buffers[2].memory,
                "the input");
  // sort writes whole rows, topk the first k of each.
  const std::int64_t out_len = p.op == abi::kSort_topk ? p.k : p.row_len;
  chk.rows_view("the values", p.values_offset, p.values_row_stride, out_len, p.rows, p.outer_ndim,
                p.outer_sizes, p.values_outer_strides, t, launch.buffers[0].memory);
  // int64 indices are written as word pairs: word 2 · last + 1 stays on the index path.
  std::int64_t last = chk.last_element(p.indices_offset, p.outer_ndim, p.outer_sizes,
                                       p.indices_outer_strides, "the indices");
  chk.reach(last, out_len, p.indices_row_stride, "the indices");
  chk.inside("the indices", p.indices_offset, last, DType::kInt64, launch.buffers[1].memory,
             kMaxIndex / 2 - 1);
  const std::uint32_t key_words = std::uint32_t(abi::sort_key_words(p.key_bits));

  GpuParams g{};
  g.head[0] = std::uint32_t(p.rows);
  g.head[1] = std::uint32_t(p.row_len);
  g.head[2] = std::uint32_t(p.outer_ndim);
  g.key[0] = std::uint32_t(p.key_bits);
  g.key[1] = key_kind(t);
  g.key[2] = mantissa_bits(t);
  g.key[3] = std::uint32_t(p.descending);
  g.strides[0] = std::uint32_t(p.in_row_stride);
  g.strides[1] = std::uint32_t(p.values_row_stride);
  g.strides[2] = std::uint32_t(p.indices_row_stride);
  g.offsets[0] = std::uint32_t(p.in_offset);
  g.offsets[1] = std::uint32_t(p.values_offset);
  g.offsets[2] = std::uint32_t(p.indices_offset);
  for (int d = 0; d < p.outer_ndim; ++d) {
    g.sizes[d] = std::uint32_t(p.outer_sizes[d]);
    g.in_strides[d] = std::uint32_t(p.in_outer_strides[d]);
    g.values_strides[d] = std::uint32_t(p.values_outer_strides[d]);
    g.indices_strides[d] = std::uint32_t(p.indices_outer_strides[d]);
  }
  const std::uint64_t max_groups =
      std::min<std::uint64_t>(ctx.features.max_workgroup_count_x, 1u << 16);
  const DispatchBuffer bufs[4] = {{launch.buffers[0].memory, true},
                                  {launch.buffers[1].memory, true},
                                  {launch.buffers[2].memory, false},
                                  {launch.buffers[3].memory, true}};
  const std::uint32_t item = std::uint32_t(dtype_size(t));
  // One dispatch of `module` over `wanted` workgroups (at most max_groups: the shaders loop).
  const auto record = [&](std::string_view module, std::span<const std::uint32_t> spec,
                          std::uint64_t wanted) {
    const std::uint64_t groups = std::clamp<std::uint64_t>(wanted, 1, max_groups);
    g.head[3] = std::uint32_t(groups);
    Dispatch d;
    d.module = module;
    d.spec = spec;
    d.params = &g;
    d.param_bytes = sizeof g;
    d.buffers = bufs;
    d.groups[0] = std::uint32_t(groups);
    dev.record(d);
  };

  if (p.variant == abi::kSortRows) {
    const std::int64_t smem = p.tile * (4 * std::int64_t(key_words) + 4);
    if (smem > std::int64_t(ctx.features.max_shared_memory))
      chk.refuse("shared_memory.per_block", "a tile of " + std::to_string(p.tile) + " keys needs " +
                                                std::to_string(smem) +
                                                " bytes of shared memory; the device has " +
                                                std::to_string(ctx.features.max_shared_memory));
    int shift = 0;
    while ((std::int64_t(1) << shift) < p.segment) ++shift;
    const std::uint32_t wg = dev.workgroup_size();
    const std::uint64_t per_group = std::uint64_t(p.tile >> shift);
    g.misc[0] = std::uint32_t(p.segment);
    g.misc[1] = std::uint32_t(shift);
    g.misc[2] = std::uint32_t(p.tile);
    const std::uint32_t spec[] = {wg, item, std::uint32_t(p.tile), key_words,
                                  std::uint32_t(p.tile) * key_words};
    record("sort_rows", spec, (std::uint64_t(p.rows) + per_group - 1) / per_group);
    return;
  }

  if (p.variant == abi::kSortSelect) {
    // The candidates' keys and positions, the scan's words and three more (sort_select.comp).
    const std::uint32_t wg = dev.workgroup_size();
    const std::int64_t words = p.tile * (std::int64_t(key_words) + 1);
    const std::int64_t smem = 4 * (words + wg + 3);
    if (smem > std::int64_t(ctx.features.max_shared_memory))
      chk.refuse("shared_memory.per_block", std::to_string(p.tile) + " candidates need " +
                                                std::to_string(smem) +
                                                " bytes of shared memory; the device has " +
                                                std::to_string(ctx.features.max_shared_memory));
    std::uint32_t first_bits = 12;  // the first digit's counts fit the candidates' buffer
    while ((std::int64_t(1) << first_bits) > words) --first_bits;
    g.misc[0] = std::uint32_t(p.k);
    const std::uint32_t spec[] = {
        wg, item, std::uint32_t(p.tile), key_words, std::uint32_t(words), first_bits};
    record("sort_select", spec, std::uint64_t(p.rows));
    return;
  }

  const std::int64_t words = abi::sort_workspace_words(p.rows, p.row_len, p.key_bits);
  chk.inside("the workspace", 0, words - 1, DType::kInt32, launch.buffers[3].memory, kMaxIndex);
  const std::int64_t tiles = abi::sort_radix_tiles(p.row_len);
  const std::int64_t chunks = abi::sort_scan_chunks(p.row_len);
  g.misc[0] = std::uint32_t(tiles);
  g.misc[3] = std::uint32_t(chunks);
  const auto dispatch = [&](std::uint32_t stage, std::uint64_t wanted) {
    const std::uint32_t spec[] = {kRadixGroupSize, item, stage, key_words};
    record("sort_radix", spec, wanted);
  };
  const std::uint64_t element_groups = (std::uint64_t(n) + kRadixGroupSize - 1) / kRadixGroupSize;
  dispatch(1, element_groups);
  for (int shift = 0; shift < p.key_bits; shift += abi::kSortRadixBits) {
    g.misc[2] = std::uint32_t(shift);
    dispatch(2, std::uint64_t(p.rows * tiles));
    dispatch(3, std::uint64_t(p.rows));
    dispatch(4, std::uint64_t(p.rows * chunks));
    dispatch(5, std::uint64_t(p.rows * tiles));
    g.misc[1] ^= 1u;
  }
  g.misc[1] = 0;
  dispatch(6, element_groups);
}

}  // namespace nbx::vulkan
