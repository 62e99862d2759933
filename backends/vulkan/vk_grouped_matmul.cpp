// Kernel family "grouped_matmul" on Vulkan: this backend's own limits on an
// abi::GroupedMatmulParams launch (the 32-bit index path of kernels/vulkan/grouped_matmul.comp,
// maxStorageBufferRange), the shader's uniform block, one dispatch. BackendDevice::launch
// validated the block (core/families/grouped_matmul_family.cpp); only the tiled variant is
// offered here.
#include <string>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::vulkan {
namespace {

// The uniform block of grouped_matmul.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t sizes[4];    // rows, n, k, groups
  std::uint32_t grid[4];     // m slots, column blocks, tiles, the fault record's op
  std::uint32_t a[4];        // offset, row stride, column stride
  std::uint32_t b[4];        // offset, group stride, n stride, k stride
  std::uint32_t o[4];        // offset, row stride, column stride
  std::uint32_t offsets[4];  // offset, stride
};
static_assert(sizeof(GpuParams) == 96);

constexpr std::int64_t kMaxIndex = INT32_MAX;  // the shader's uint arithmetic, with room
constexpr std::int64_t kTileM = 16;            // grouped_matmul.comp's kTileM

}  // namespace

void launch_family(VulkanDevice& dev, const abi::GroupedMatmulParams& p,
                   const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  const LaunchChecks chk(ctx, family_spec(KernelFamily::kGroupedMatmul).op_name(p.op));
  const std::uint32_t wg = dev.workgroup_size();
  const std::int64_t m_slots = (p.rows + kTileM - 1) / kTileM + p.groups;
  // With no columns one block still checks the offsets.
  const std::int64_t blocks = p.n > 0 ? (p.n + wg - 1) / wg : 1;
  const std::int64_t tiles = m_slots * blocks;
  if (tiles > kMaxIndex || p.groups >= kMaxIndex)
    chk.refuse("max_elements",
               std::to_string(tiles) + " tiles exceed the 2^31 - 1 the 32-bit index path supports");
  const DType t = DType(p.dtype), ot = DType(p.offsets_dtype);
  if (p.rows > 0 && p.n > 0) {
    std::int64_t last = p.out_offset;
    chk.reach(last, p.rows, p.out_row_stride, "the output");
    chk.reach(last, p.n, p.out_col_stride, "the output");
    chk.inside("the output", p.out_offset, last, t, launch.buffers[0].memory, kMaxIndex);
    last = p.a_offset;
    chk.reach(last, p.rows, p.a_row_stride, "a");
    chk.reach(last, p.k, p.a_col_stride, "a");
    chk.inside("a", p.a_offset, last, t, launch.buffers[1].memory, kMaxIndex);
    last = p.b_offset;
    chk.reach(last, p.groups, p.b_group_stride, "b");
    chk.reach(last, p.n, p.b_n_stride, "b");
    chk.reach(last, p.k, p.b_k_stride, "b");
    chk.inside("b", p.b_offset, last, t, launch.buffers[2].memory, kMaxIndex);
  }
  // int64 offsets are read as word pairs: word 2 · last + 1 stays on the index path.
  std::int64_t last = p.offsets_offset;
  chk.reach(last, p.groups + 1, p.offsets_stride, "the offset array");
  chk.inside("the offset array", p.offsets_offset, last, ot, launch.buffers[3].memory,
             ot == DType::kInt64 ? kMaxIndex / 2 - 1 : kMaxIndex);

  GpuParams g{};
  g.sizes[0] = std::uint32_t(p.rows);
  g.sizes[1] = std::uint32_t(p.n);
  g.sizes[2] = std::uint32_t(p.k);
  g.sizes[3] = std::uint32_t(p.groups);
  g.grid[0] = std::uint32_t(m_slots);
  g.grid[1] = std::uint32_t(blocks);
  g.grid[2] = std::uint32_t(tiles);
  g.grid[3] = std::uint32_t(abi::fault_op(abi::kFamily_grouped_matmul, p.op));
  g.a[0] = std::uint32_t(p.a_offset);
  g.a[1] = std::uint32_t(p.a_row_stride);
  g.a[2] = std::uint32_t(p.a_col_stride);
  g.b[0] = std::uint32_t(p.b_offset);
  g.b[1] = std::uint32_t(p.b_group_stride);
  g.b[2] = std::uint32_t(p.b_n_stride);
  g.b[3] = std::uint32_t(p.b_k_stride);
  g.o[0] = std::uint32_t(p.out_offset);
  g.o[1] = std::uint32_t(p.out_row_stride);
  g.o[2] = std::uint32_t(p.out_col_stride);
  g.offsets[0] = std::uint32_t(p.offsets_offset);
  g.offsets[1] = std::uint32_t(p.offsets_stride);
  const std::uint32_t spec[] = {wg, std::uint32_t(p.dtype), ot == DType::kInt64 ? 1u : 0u};
  const bool any = p.rows > 0 && p.n > 0;
  const DispatchBuffer bufs[4] = {{any ? launch.buffers[0].memory : DeviceMemory{}, true},
                                  {any ? launch.buffers[1].memory : DeviceMemory{}, false},
                                  {any ? launch.buffers[2].memory : DeviceMemory{}, false},
                                  {launch.buffers[3].memory, false}};
  const std::uint64_t groups = chk.grid_groups(std::uint64_t(tiles), 1);
  dev.record({.module = "grouped_matmul",
              .spec = spec,
              .params = &g,
              .param_bytes = sizeof g,
              .buffers = bufs,
              .groups = {std::uint32_t(groups), 1, 1}});
}

}  // namespace nbx::vulkan
