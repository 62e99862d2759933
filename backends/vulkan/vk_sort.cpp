// Kernel family "sort" on Vulkan: this backend's own limits on an abi::SortParams launch (the
// 32-bit index path, the subgroup operations and shared memory the radix ranking takes,
// maxStorageBufferRange), the uniform block of kernels/vulkan/sort_common.glsl, and the
// dispatches: one for the rows variant (sort_rows.comp, a block radix sort), one for topk's
// select variant (sort_select.comp), and clear, histogram, scan and a pass per 8-bit digit for
// the onesweep variant (sort_onesweep.comp; on CPU devices a tile count and a tile scan before
// each pass), in order — the hazard tracker puts a barrier between dispatches that share the
// workspace.
// BackendDevice::launch validated the block (core/families/sort_family.cpp).
#include <algorithm>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/families/kernel_family.hpp"
#include "core/kernel_abi_sort_select.hpp"

namespace nbx::vulkan {
namespace {

// sort_select.comp's PREFETCH: the filter's chunks of loads in flight an invocation (topk50
// over 4096 x 128256 float32 on an H100, 2026-12-06: 3.97 ms with one, 3.34 with two, 3.57
// with four, whose registers cost more than the loads gain).
constexpr std::uint32_t kSelectPrefetch = 2;

struct GpuParams {
  std::uint32_t head[4];     // rows, row_len, outer_ndim, workgroups in the grid
  std::uint32_t key[4];      // bits, kind, mantissa, descending
  std::uint32_t strides[4];  // input, values, indices row strides
  std::uint32_t offsets[4];  // input, values, indices
  // rows: segment, log2(segment), tile; select: k; onesweep: tiles per row, pass, histogram
  // tiles per workgroup
  std::uint32_t misc[4];
  std::uint32_t sizes[8], in_strides[8], values_strides[8], indices_strides[8];
};
static_assert(sizeof(GpuParams) == 208);

constexpr std::int64_t kMaxIndex = INT32_MAX;  // the shaders' uint arithmetic, with room
// The radix shaders' workgroup (kernels/vulkan/sort_rank.glsl: an invocation per digit value).
constexpr std::uint32_t kRankGroup = 256;
constexpr std::uint32_t kRankOps = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT |
                                   VK_SUBGROUP_FEATURE_SHUFFLE_BIT |
                                   VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;

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

// What the radix shaders need of the device: a workgroup of kRankGroup in whole subgroups, and
// the ballot, shuffle and arithmetic subgroup operations.
void check_rank_device(const LaunchChecks& chk, const DeviceFeatures& f) {
  if ((f.subgroup_ops & kRankOps) != kRankOps)
    chk.refuse("subgroup_ops",
               "the radix sort ranks keys by subgroup ballots, shuffles and scans, which the "
               "device does not offer in compute shaders");
  if (f.max_workgroup_invocations < kRankGroup || f.max_workgroup_size_x < kRankGroup ||
      f.subgroup_size > kRankGroup || kRankGroup % f.subgroup_size != 0)
    chk.refuse("workgroup_size", "the radix sort runs workgroups of " + std::to_string(kRankGroup) +
                                     " in subgroups of " + std::to_string(f.subgroup_size));
}

// sort_rank.glsl's buffer: `exchange` words for the includer, at least the 16-bit counters of
// every subgroup (128 words each).
std::uint32_t rank_buffer_words(std::uint32_t exchange, std::uint32_t subgroup) {
  return std::max(exchange, 128 * (kRankGroup / subgroup));
}

// The shared memory of a ranking shader: the buffer, the digits' starts and counts, the
// subgroups' totals and `extra` words of its own; refused past the device's.
void check_rank_shared(const LaunchChecks& chk, const DeviceFeatures& f, std::uint32_t buffer,
                       std::uint32_t extra, const std::string& what) {
  const std::int64_t bytes =
      4 * (std::int64_t(buffer) + 2 * 256 + kRankGroup / f.subgroup_size + extra);
  if (bytes > std::int64_t(f.max_shared_memory))
    chk.refuse("shared_memory.per_block", what + " needs " + std::to_string(bytes) +
                                              " bytes of shared memory; the device has " +
                                              std::to_string(f.max_shared_memory));
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

  const DeviceFeatures& f = ctx.features;
  if (p.variant == abi::kSortRows) {
    // Items an invocation: the fewest that hold the tile (4 at least: smaller tiles are rare
    // and short, so they share the 1024-element shader with pads), as CUDA's rows kernel.
    check_rank_device(chk, f);
    const std::uint32_t items = p.tile <= 1024 ? 4 : p.tile <= 2048 ? 8 : 16;
    const std::uint32_t buffer = rank_buffer_words(kRankGroup * items, f.subgroup_size);
    check_rank_shared(chk, f, buffer, 0, "a tile of " + std::to_string(p.tile) + " keys");
    int shift = 0;
    while ((std::int64_t(1) << shift) < p.segment) ++shift;
    const std::uint64_t per_group = std::uint64_t(p.tile >> shift);
    g.misc[0] = std::uint32_t(p.segment);
    g.misc[1] = std::uint32_t(shift);
    g.misc[2] = std::uint32_t(p.tile);
    const std::uint32_t spec[] = {kRankGroup, item, items, f.subgroup_size, buffer};
    record("sort_rows", spec, (std::uint64_t(p.rows) + per_group - 1) / per_group);
    return;
  }

  if (p.variant == abi::kSortSelect) {
    // The candidates' keys and positions, the scan's words, three more, the gather's counts
    // (8 items × at most 64 subgroups: its gather ranks by ballots) and the filter's 256
    // digit counts and one key (sort_select.comp).
    check_rank_device(chk, f);
    const std::uint32_t wg = dev.workgroup_size();
    const std::int64_t words = p.tile * (std::int64_t(key_words) + 1);
    const std::int64_t smem = 4 * (words + wg + 3 + 8 * 64 + 256 + 2);
    if (smem > std::int64_t(ctx.features.max_shared_memory))
      chk.refuse("shared_memory.per_block", std::to_string(p.tile) + " candidates need " +
                                                std::to_string(smem) +
                                                " bytes of shared memory; the device has " +
                                                std::to_string(ctx.features.max_shared_memory));
    std::uint32_t first_bits = 12;  // the first digit's counts fit the candidates' buffer
    while ((std::int64_t(1) << first_bits) > words) --first_bits;
    // The filter method (abi::sort_select_filters) in chunks of at most the ABI's, 16
    // elements an invocation at most (8 in the default workgroup of 256; a workgroup wider
    // than the chunk narrows instead).
    const std::uint32_t filter_items = std::uint32_t(
        std::min<std::int64_t>(abi::sort_select_filter_chunk(p.tile) / std::int64_t(wg), 16));
    const bool filter = abi::sort_select_filters(p.k, p.tile) && filter_items > 0;
    // 16-byte reads where every row of 4-byte elements is whole quads at aligned places.
    bool quads = item == 4 && key_words == 1 && p.in_row_stride == 1 && p.in_offset % 4 == 0 &&
                 p.row_len % 4 == 0 && filter_items % 4 == 0;
    for (int d = 0; d < p.outer_ndim; ++d) quads = quads && p.in_outer_strides[d] % 4 == 0;
    g.misc[0] = std::uint32_t(p.k);
    // The filter's pretest of raw elements against the bound's value (sort_select.comp).
    std::uint32_t pretest = 0;
    if (filter && key_words == 1)
      pretest = t == DType::kFloat32    ? 1
                : t == DType::kBFloat16 ? 2
                : t == DType::kFloat16  ? 3
                : key_kind(t) == 1      ? 4
                                        : 5;
    const std::uint32_t spec[] = {wg,
                                  item,
                                  std::uint32_t(p.tile),
                                  key_words,
                                  std::uint32_t(words),
                                  first_bits,
                                  std::max(filter_items, 1u),
                                  quads ? 1u : 0u,
                                  filter ? 1u : 0u,
                                  pretest,
                                  kSelectPrefetch};
    record("sort_select", spec, std::uint64_t(p.rows));
    return;
  }

  // The onesweep variant (the only workspace variant this backend offers).
  check_rank_device(chk, f);
  const std::int64_t words = abi::sort_onesweep_workspace_words(p.rows, p.row_len, p.key_bits);
  chk.inside("the workspace", 0, words - 1, DType::kInt32, launch.buffers[3].memory, kMaxIndex);
  // The pass's exchange holds a tile of one-word keys or positions at a time; s_base and
  // s_tile are its own (sort_onesweep.comp).
  const std::uint32_t buffer =
      rank_buffer_words(std::uint32_t(abi::kSortOnesweepTile), f.subgroup_size);
  check_rank_shared(chk, f, buffer, 257,
                    "a tile of " + std::to_string(abi::kSortOnesweepTile) + " keys");
  // The histogram's copies of every counter, in the same buffer.
  const std::uint32_t passes = std::uint32_t(abi::sort_onesweep_passes(p.key_bits));
  const std::uint32_t parts = std::clamp<std::uint32_t>(buffer / (passes * 256), 1, 4);
  const std::int64_t tiles = abi::sort_onesweep_tiles(p.row_len);
  const std::uint64_t all_tiles = std::uint64_t(p.rows * tiles);
  g.misc[0] = std::uint32_t(tiles);
  // Decoupled look-back spins on other workgroups' words; a CPU device (llvmpipe) ends every
  // shader invocation's loops after 65535 iterations in all, so there each pass's tile
  // offsets come from a count and a scan dispatch instead (sort_onesweep.comp).
  // NBX_VULKAN_SORT_LOOKBACK=0 or 1 overrides (a GPU's prescan path; llvmpipe's look-back is
  // right only single-threaded, LP_NUM_THREADS=1).
  std::uint32_t lookback = f.device_type != VK_PHYSICAL_DEVICE_TYPE_CPU;
  if (const char* e = std::getenv("NBX_VULKAN_SORT_LOOKBACK"); e && (*e == '0' || *e == '1'))
    lookback = std::uint32_t(*e - '0');
  const auto dispatch = [&](std::uint32_t stage, std::uint64_t wanted) {
    const std::uint32_t spec[] = {kRankGroup, item,  stage,   f.subgroup_size,
                                  buffer,     parts, lookback};
    record("sort_onesweep", spec, wanted);
  };
  const std::int64_t cleared = p.rows * passes * 256 + passes + passes * p.rows * tiles * 256;
  dispatch(1, (std::uint64_t(cleared) + kRankGroup - 1) / kRankGroup);
  // Histogram: about 8 workgroups a compute unit (256 where the device does not say), each
  // over consecutive tiles.
  const int units = dev.properties().compute_units;
  const std::uint64_t hist_groups = std::min<std::uint64_t>(
      all_tiles, std::min<std::uint64_t>(max_groups, units > 0 ? 8 * std::uint64_t(units) : 256));
  const std::uint64_t per_group = (all_tiles + hist_groups - 1) / hist_groups;
  g.misc[2] = std::uint32_t(per_group);
  dispatch(2, (all_tiles + per_group - 1) / per_group);
  dispatch(3, std::uint64_t(p.rows) * passes);
  for (std::uint32_t pass = 0; pass < passes; ++pass) {
    g.misc[1] = pass;
    if (!lookback) {
      dispatch(5, all_tiles);
      dispatch(6, std::uint64_t(p.rows) * 256);
    }
    dispatch(4, all_tiles);
  }
}

}  // namespace nbx::vulkan
