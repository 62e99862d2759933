// Kernel family "rotary" on Vulkan: this backend's own limits on an abi::RotaryParams launch
// (the 32-bit index path of kernels/vulkan/rotary.comp, maxStorageBufferRange, shaderFloat64
// for float64), the shader's uniform block, one dispatch. BackendDevice::launch validated the
// block (core/families/rotary_family.cpp).
#include <algorithm>
#include <string>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::vulkan {
namespace {

// The uniform block of rotary.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];   // work items, token dims, grid invocations, pairs
  std::uint32_t heads[4];  // q heads, k heads, max_position, the fault record's op
  std::uint32_t q[4];      // offset, head stride, dim stride
  std::uint32_t k[4];
  std::uint32_t cache[4];  // offset, row stride, column stride, the positions' offset
  std::uint32_t sizes[8], q_strides[8], k_strides[8], pos_strides[8];
};
static_assert(sizeof(GpuParams) == 208);

constexpr std::int64_t kMaxIndex = INT32_MAX;  // the shader's uint arithmetic, with room

}  // namespace

void launch_family(VulkanDevice& dev, const abi::RotaryParams& p, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  const LaunchChecks chk(ctx, family_spec(KernelFamily::kRotary).op_name(p.op));
  const std::int64_t pairs = p.rotary_dim / 2, work = p.tokens * (p.q_heads + p.k_heads) * pairs;
  if (work == 0) return;
  if (work > kMaxIndex || p.max_position > kMaxIndex)
    chk.refuse("max_elements", std::to_string(std::max(work, p.max_position)) +
                                   " work items or cache rows exceed the 2^31 - 1 the 32-bit "
                                   "index path supports");
  const DType t = DType(p.dtype), ct = DType(p.cache_dtype), pt = DType(p.pos_dtype);
  if (t == DType::kFloat64 && !ctx.features.fp64)
    chk.refuse("fp64", "float64 needs shaderFloat64, which this device lacks");
  // The furthest element of a head view: the token dims, the heads, the rotated dims.
  auto head_view = [&](const char* label, std::int64_t offset, const std::int64_t* strides,
                       std::int64_t heads, std::int64_t head_stride, std::int64_t dim_stride,
                       const DeviceMemory& m) {
    std::int64_t last = chk.last_element(offset, p.token_ndim, p.token_sizes, strides, label);
    chk.reach(last, heads, head_stride, label);
    chk.reach(last, p.rotary_dim, dim_stride, label);
    chk.inside(label, offset, last, t, m, kMaxIndex);
  };
  head_view("q", p.q_offset, p.q_token_strides, p.q_heads, p.q_head_stride, p.q_dim_stride,
            launch.buffers[0].memory);
  if (p.has_k)
    head_view("k", p.k_offset, p.k_token_strides, p.k_heads, p.k_head_stride, p.k_dim_stride,
              launch.buffers[1].memory);
  // int64 positions are read as word pairs: word 2 · last + 1 stays on the index path.
  const std::int64_t pos_last =
      chk.last_element(p.pos_offset, p.token_ndim, p.token_sizes, p.pos_strides, "the positions");
  chk.inside("the positions", p.pos_offset, pos_last, pt, launch.buffers[2].memory,
             pt == DType::kInt64 ? kMaxIndex / 2 - 1 : kMaxIndex);
  // An empty cache is never read (every position faults): it may have no buffer.
  if (p.max_position > 0) {
    std::int64_t last = p.cache_offset;
    chk.reach(last, p.max_position, p.cache_row_stride, "the cache");
    chk.reach(last, p.rotary_dim, p.cache_col_stride, "the cache");
    chk.inside("the cache", p.cache_offset, last, ct, launch.buffers[3].memory, kMaxIndex);
  }

  GpuParams g{};
  const std::uint32_t wg = dev.workgroup_size();
  const std::uint64_t groups = chk.grid_groups(std::uint64_t(work), wg);
  g.head[0] = std::uint32_t(work);
  g.head[1] = std::uint32_t(p.token_ndim);
  g.head[2] = std::uint32_t(groups * wg);
  g.head[3] = std::uint32_t(pairs);
  g.heads[0] = std::uint32_t(p.q_heads);
  g.heads[1] = std::uint32_t(p.k_heads);
  g.heads[2] = std::uint32_t(p.max_position);
  g.heads[3] = std::uint32_t(abi::fault_op(abi::kFamily_rotary, p.op));
  g.q[0] = std::uint32_t(p.q_offset);
  g.q[1] = std::uint32_t(p.q_head_stride);
  g.q[2] = std::uint32_t(p.q_dim_stride);
  g.k[0] = std::uint32_t(p.k_offset);
  g.k[1] = std::uint32_t(p.k_head_stride);
  g.k[2] = std::uint32_t(p.k_dim_stride);
  g.cache[0] = std::uint32_t(p.cache_offset);
  g.cache[1] = std::uint32_t(p.cache_row_stride);
  g.cache[2] = std::uint32_t(p.cache_col_stride);
  g.cache[3] = std::uint32_t(p.pos_offset);
  for (int d = 0; d < p.token_ndim; ++d) {
    g.sizes[d] = std::uint32_t(p.token_sizes[d]);
    g.q_strides[d] = std::uint32_t(p.q_token_strides[d]);
    g.k_strides[d] = std::uint32_t(p.k_token_strides[d]);
    g.pos_strides[d] = std::uint32_t(p.pos_strides[d]);
  }
  const std::uint32_t spec[] = {wg, std::uint32_t(p.dtype), std::uint32_t(p.cache_dtype),
                                pt == DType::kInt64 ? 1u : 0u, std::uint32_t(p.style)};
  const DispatchBuffer bufs[4] = {
      {launch.buffers[0].memory, true},
      {p.has_k ? launch.buffers[1].memory : DeviceMemory{}, p.has_k != 0},
      {launch.buffers[2].memory, false},
      {p.max_position > 0 ? launch.buffers[3].memory : DeviceMemory{}, false}};
  dev.record({.module = t == DType::kFloat64 ? "rotary_f64" : "rotary",
              .spec = spec,
              .params = &g,
              .param_bytes = sizeof g,
              .buffers = bufs,
              .groups = {std::uint32_t(groups), 1, 1}});
}

}  // namespace nbx::vulkan
