// Kernel family "search" on Vulkan: this backend's own limits on an abi::SearchParams launch
// (the 32-bit index path of kernels/vulkan/search.comp, maxStorageBufferRange), the shader's
// uniform block, one dispatch. The shader compares stored bits exactly (vk_compare.glsl), so
// every dtype runs without 64-bit shader types. BackendDevice::launch validated the block
// (core/families/search_family.cpp).
#include <algorithm>
#include <string>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::vulkan {
namespace {

// The uniform block of search.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];     // numel, ndim, grid invocations, seq_len
  std::uint32_t offsets[4];  // out, values, sorted sequence, seq_stride
  std::uint32_t sizes[8], out_strides[8], values_strides[8], seq_strides[8];
};
static_assert(sizeof(GpuParams) == 160);

constexpr std::int64_t kMaxIndex = INT32_MAX;  // the shader's uint arithmetic, with room

}  // namespace

void launch_family(VulkanDevice& dev, const abi::SearchParams& p, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  const LaunchChecks chk(ctx, family_spec(KernelFamily::kSearch).op_name(p.op));
  if (p.numel == 0) return;
  if (p.numel > kMaxIndex || p.seq_len > kMaxIndex)
    chk.refuse("max_elements", std::to_string(std::max(p.numel, p.seq_len)) +
                                   " elements exceed the 2^31 - 1 the 32-bit index path supports");
  const DType t = DType(p.dtype), ot = DType(p.out_dtype);
  auto reach = [&](std::int64_t offset, const std::int64_t* strides, const char* label) {
    return chk.last_element(offset, p.ndim, p.sizes, strides, label);
  };
  // int64 results are written as word pairs: word 2 · last + 1 stays on the index path.
  const std::int64_t out_last = reach(p.out_offset, p.out_strides, "the output");
  chk.inside("the output", p.out_offset, out_last, ot, launch.buffers[0].memory,
             ot == DType::kInt64 ? kMaxIndex / 2 - 1 : kMaxIndex);
  const std::int64_t values_last = reach(p.values_offset, p.values_strides, "the values");
  chk.inside("the values", p.values_offset, values_last, t, launch.buffers[2].memory, kMaxIndex);
  // An empty sequence is never read (every result is 0): it may have no buffer.
  if (p.seq_len > 0) {
    std::int64_t seq_last = reach(p.seq_offset, p.seq_strides, "the sorted sequence");
    chk.reach(seq_last, p.seq_len, p.seq_stride, "the sorted sequence");
    chk.inside("the sorted sequence", p.seq_offset, seq_last, t, launch.buffers[1].memory,
               kMaxIndex);
  }

  GpuParams g{};
  const std::uint32_t wg = dev.workgroup_size();
  const std::uint64_t groups = chk.grid_groups(std::uint64_t(p.numel), wg);
  g.head[0] = std::uint32_t(p.numel);
  g.head[1] = std::uint32_t(p.ndim);
  g.head[2] = std::uint32_t(groups * wg);
  g.head[3] = std::uint32_t(p.seq_len);
  g.offsets[0] = std::uint32_t(p.out_offset);
  g.offsets[1] = std::uint32_t(p.values_offset);
  g.offsets[2] = std::uint32_t(p.seq_offset);
  g.offsets[3] = std::uint32_t(p.seq_stride);
  for (int d = 0; d < p.ndim; ++d) {
    g.sizes[d] = std::uint32_t(p.sizes[d]);
    g.out_strides[d] = std::uint32_t(p.out_strides[d]);
    g.values_strides[d] = std::uint32_t(p.values_strides[d]);
    g.seq_strides[d] = std::uint32_t(p.seq_strides[d]);
  }
  const std::uint32_t spec[] = {wg, std::uint32_t(dtype_size(t)), std::uint32_t(p.dtype),
                                std::uint32_t(p.right), ot == DType::kInt64 ? 1u : 0u};
  const DispatchBuffer bufs[3] = {
      {launch.buffers[0].memory, true},
      {p.seq_len > 0 ? launch.buffers[1].memory : DeviceMemory{}, false},
      {launch.buffers[2].memory, false}};
  Dispatch d;
  d.module = "search";
  d.spec = spec;
  d.params = &g;
  d.param_bytes = sizeof g;
  d.buffers = bufs;
  d.groups[0] = std::uint32_t(groups);
  dev.record(d);
}

}  // namespace nbx::vulkan
