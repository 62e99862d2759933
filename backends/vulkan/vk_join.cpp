// Kernel family "join" on Vulkan: this backend's own limits on an abi::JoinParams launch (the
// 32-bit index path of kernels/vulkan/join.comp, maxStorageBufferRange), the shader's uniform
// block, and the dispatches: the descriptor layout binds six data buffers (vk_dispatch.hpp),
// so a launch of up to abi::kJoinMaxInputs inputs is recorded as dispatches of up to five
// inputs each beside the output. BackendDevice::launch validated the block
// (core/families/join_family.cpp).
#include <algorithm>
#include <cstdint>
#include <string>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::vulkan {
namespace {

constexpr std::uint32_t kInputsPerDispatch = kDataBindings - 1;
constexpr std::uint32_t kUnroll = 8;           // join.comp's UNROLL: words an invocation
constexpr std::int64_t kMaxIndex = INT32_MAX;  // the shader's uint arithmetic, with room

// The uniform block of join.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];  // inputs, blocks in all, workgroups in the grid, ndim
  std::uint32_t misc[4];  // dim, the output's row stride (flat, words), rows (flat)
  std::uint32_t sizes[8], out_strides[8];
  std::uint32_t info[kInputsPerDispatch][4];   // first block, words, row words / extent, row
  std::uint32_t place[kInputsPerDispatch][4];  // first word, output word, end to end
  std::uint32_t strides[kInputsPerDispatch][8];
};
static_assert(sizeof(GpuParams) == 416);

// The widest word of 16/8/4/2/1 bytes dividing every value (bytes).
std::int64_t widest_unit(std::initializer_list<std::int64_t> bytes) {
  std::int64_t unit = 16;
  for (std::int64_t b : bytes)
    while (b % unit != 0) unit /= 2;
  return unit;
}

}  // namespace

void launch_family(VulkanDevice& dev, const abi::JoinParams& p, const KernelLaunch& launch) {
  const LaunchChecks chk(dev.context(), family_spec(KernelFamily::kJoin).op_name(p.op));
  const DType t = DType(p.dtype);
  const std::int64_t item = std::int64_t(dtype_size(t));
  std::int64_t out_numel = 1;
  for (int d = 0; d < p.ndim; ++d) out_numel *= p.sizes[d];
  if (out_numel == 0) return;
  const std::int64_t out_last =
      chk.last_element(p.out_offset, p.ndim, p.sizes, p.out_strides, "the output");
  chk.inside("the output", p.out_offset, out_last, t, launch.buffers[0].memory, kMaxIndex);

  // The inputs with elements, each checked on the 32-bit path.
  int live[abi::kJoinMaxInputs];
  std::int64_t numel[abi::kJoinMaxInputs];
  int n_live = 0;
  for (int k = 0; k < p.count; ++k) {
    const abi::JoinInput& in = p.inputs[k];
    std::int64_t sizes[abi::kMaxDims];
    std::int64_t n = 1;
    for (int d = 0; d < p.ndim; ++d) n *= sizes[d] = d == p.dim ? in.extent : p.sizes[d];
    if (n == 0) continue;
    if (n > kMaxIndex)
      chk.refuse("max_elements", "an input of " + std::to_string(n) +
                                     " elements exceeds the 2^31 - 1 the 32-bit index path "
                                     "supports");
    const std::int64_t last = chk.last_element(in.offset, p.ndim, sizes, in.strides, "an input");
    chk.inside("an input", in.offset, last, t, launch.buffers[1 + k].memory, kMaxIndex);
    numel[n_live] = n;
    live[n_live++] = k;
  }

  const bool flat = p.variant == abi::kJoinFlat;
  const std::uint32_t wg = dev.workgroup_size();
  const std::int64_t rows = flat ? p.sizes[0] : 0;
  for (int first = 0; first < n_live; first += int(kInputsPerDispatch)) {
    const int count = std::min(n_live - first, int(kInputsPerDispatch));
    // The word: an element (strided), or the widest unit every row start and row allows.
    std::int64_t unit = item;
    if (flat) {
      unit = 16;
      for (int j = 0; j < count; ++j) {
        const abi::JoinInput& in = p.inputs[live[first + j]];
        const std::int64_t dst = p.out_offset + in.at * p.out_strides[1];
        unit = std::min(unit, widest_unit({in.offset * item, dst * item, in.extent * item}));
        if (rows > 1)
          unit = std::min(unit, widest_unit({in.strides[0] * item, p.out_strides[0] * item}));
      }
    }
    const auto words = [&](std::int64_t elements) {
      return std::uint32_t(flat ? elements * item / unit : elements);
    };
    GpuParams g{};
    std::uint64_t blocks = 0;
    const std::uint64_t per_block = std::uint64_t(wg) * kUnroll;
    DispatchBuffer bufs[kDataBindings] = {{launch.buffers[0].memory, true}};
    // The output elements this dispatch writes lie in [lo, hi): its slices' spans (strides
    // are never negative), so the next dispatch of a launch cut in several waits for this one
    // only where their spans meet (cat along dim 0: never).
    std::int64_t lo = INT64_MAX, hi = 0;
    for (int j = 0; j < count; ++j) {
      const int k = live[first + j];
      const abi::JoinInput& in = p.inputs[k];
      const std::int64_t dst = p.out_offset + in.at * p.out_strides[p.dim];
      std::int64_t last = dst;
      for (int d = 0; d < p.ndim; ++d)
        last += ((d == p.dim ? in.extent : p.sizes[d]) - 1) * p.out_strides[d];
      lo = std::min(lo, dst);
      hi = std::max(hi, last + 1);
      g.info[j][0] = std::uint32_t(blocks);
      g.info[j][1] = words(numel[first + j]);
      g.place[j][0] = words(in.offset);
      g.place[j][1] = words(dst);
      if (flat) {
        g.info[j][2] = words(in.extent);
        g.info[j][3] = words(in.strides[0]);
        g.place[j][2] =
            rows == 1 || (in.strides[0] == in.extent && p.out_strides[0] == in.extent) ? 1u : 0u;
      } else {
        g.info[j][2] = std::uint32_t(in.extent);
        for (int d = 0; d < p.ndim; ++d) g.strides[j][d] = std::uint32_t(in.strides[d]);
      }
      blocks += (g.info[j][1] + per_block - 1) / per_block;
      bufs[1 + j] = {launch.buffers[1 + k].memory, false};
    }
    bufs[0].written_from = std::uint64_t(lo) * std::uint64_t(item);
    bufs[0].written_bytes = std::uint64_t(hi - lo) * std::uint64_t(item);
    const std::uint64_t groups = chk.grid_groups(blocks * wg, wg);
    g.head[0] = std::uint32_t(count);
    g.head[1] = std::uint32_t(blocks);
    g.head[2] = std::uint32_t(groups);
    g.head[3] = std::uint32_t(p.ndim);
    g.misc[0] = std::uint32_t(p.dim);
    g.misc[1] = flat ? words(p.out_strides[0]) : 0u;
    g.misc[2] = std::uint32_t(rows);
    for (int d = 0; d < p.ndim; ++d) {
      g.sizes[d] = std::uint32_t(p.sizes[d]);
      g.out_strides[d] = std::uint32_t(p.out_strides[d]);
    }
    const std::uint32_t spec[] = {wg, std::uint32_t(unit), flat ? 1u : 0u};
    dev.record({.module = "join",
                .spec = spec,
                .params = &g,
                .param_bytes = sizeof g,
                .buffers = std::span<const DispatchBuffer>(bufs, std::size_t(1 + count)),
                .groups = {std::uint32_t(groups), 1, 1}});
  }
}

}  // namespace nbx::vulkan
