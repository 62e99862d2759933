// Kernel family "gather" on Vulkan: this backend's own limits on an abi::GatherParams launch
// (the 32-bit index path of kernels/vulkan/gather.comp, gather_vec.comp and gather_rows.comp,
// maxStorageBufferRange), the shaders' uniform block, one dispatch of the variant's shader:
// the strided variant by gather_vec.comp where output and index run in aligned quads along
// the last dim (launch_vec), else gather.comp. BackendDevice::launch validated the block
// (core/families/gather_family.cpp), and core/ops/index.cpp merged its dims.
#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_int_divider.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::vulkan {
namespace {

// The uniform block of gather.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];     // numel, ndim, grid invocations, bound
  std::uint32_t offsets[4];  // out, input, index, the input's stride along the indexed dim
  std::uint32_t misc[4];     // the fault record's op
  std::uint32_t sizes[8], out_strides[8], src_strides[8], index_strides[8], positions[8];
};
static_assert(sizeof(GpuParams) == 208);

constexpr std::int64_t kMaxIndex = INT32_MAX;  // the shader's uint arithmetic, with room

// One dispatch of a gather shader: buffers [0] out (written), [1] input, [2] index.
void record(VulkanDevice& dev, std::string_view module, std::span<const std::uint32_t> spec,
            const GpuParams& g, std::uint64_t groups, const KernelLaunch& launch) {
  const DispatchBuffer bufs[3] = {{launch.buffers[0].memory, true},
                                  {launch.buffers[1].memory, false},
                                  {launch.buffers[2].memory, false}};
  dev.record({.module = module,
              .spec = spec,
              .params = &g,
              .param_bytes = sizeof g,
              .buffers = bufs,
              .groups = {std::uint32_t(groups), 1, 1}});
}

// The rows variant (gather_rows.comp): offsets and strides in words of the widest unit of
// 16/8/4/2/1 bytes that divides the row's bytes and every row start, LANES invocations a row.
// The caller checked the reach of every operand in elements (the same path).
void launch_rows(VulkanDevice& dev, const abi::GatherParams& p, const KernelLaunch& launch,
                 const LaunchChecks& chk) {
  const std::int64_t item = std::int64_t(dtype_size(DType(p.dtype)));
  const int outer = p.ndim - 1;
  const std::int64_t len = p.sizes[outer], rows = p.numel / len;
  std::int64_t unit = 16;
  const auto divides = [&](std::int64_t elements) { return (elements * item) % unit == 0; };
  const auto fits = [&] {
    bool ok = divides(len) && divides(p.out_offset) && divides(p.src_offset) &&
              divides(p.src_index_stride);
    for (int d = 0; d < outer; ++d)
      ok = ok && divides(p.out_strides[d]) && divides(p.src_strides[d]);
    return ok;
  };
  while (unit > 1 && !fits()) unit /= 2;
  const auto words = [&](std::int64_t elements) { return std::uint32_t(elements * item / unit); };
  GpuParams g{};
  const std::uint32_t wg = dev.workgroup_size();
  std::uint32_t lanes = 1;
  while (lanes < wg && lanes < words(len)) lanes *= 2;
  const std::uint64_t per_group = wg / lanes;
  const std::uint64_t groups = chk.grid_groups(std::uint64_t(rows), std::uint32_t(per_group));
  g.head[0] = std::uint32_t(rows);
  g.head[1] = std::uint32_t(outer);
  g.head[2] = words(len);
  g.head[3] = std::uint32_t(p.bound);
  g.offsets[0] = words(p.out_offset);
  g.offsets[1] = words(p.src_offset);
  g.offsets[2] = std::uint32_t(p.index_offset);
  g.offsets[3] = words(p.src_index_stride);
  g.misc[0] = std::uint32_t(abi::fault_op(abi::kFamily_gather, p.op));
  g.misc[1] = std::uint32_t(groups);
  for (int d = 0; d < outer; ++d) {
    g.sizes[d] = std::uint32_t(p.sizes[d]);
    g.out_strides[d] = words(p.out_strides[d]);
    g.src_strides[d] = words(p.src_strides[d]);
    g.index_strides[d] = std::uint32_t(p.index_strides[d]);
    g.positions[d] = std::uint32_t(p.index_positions[d]);
  }
  const std::uint32_t spec[] = {wg, std::uint32_t(unit),
                                DType(p.index_dtype) == DType::kInt64 ? 1u : 0u, lanes,
                                std::uint32_t(p.wrap_negative)};
  record(dev, "gather_rows", spec, g, groups, launch);
}

// The uniform block of gather_vec.comp (std140, all uvec4).
struct GpuVecParams {
  std::uint32_t head[4];  // quads, quads a row, grid invocations, bound
  std::uint32_t misc[4];  // divider magic, shift (q / quads a row), the input's stride along
                          // the indexed dim, the fault record's op
  std::uint32_t out[4], index[4], src[4], pos[4];  // offset, row stride, column stride
};
static_assert(sizeof(GpuVecParams) == 96);

// The strided variant by gather_vec.comp: at most two dims (index.cpp merged every pair it
// could), output and index with stride 1 along the last, that dim and every row start of
// both a multiple of 4 elements (so a quad is one aligned 16-byte index load and one output
// store); false (nothing recorded) otherwise. The caller checked every reach.
bool launch_vec(VulkanDevice& dev, const abi::GatherParams& p, const KernelLaunch& launch,
                const LaunchChecks& chk) {
  if (p.ndim < 1 || p.ndim > 2) return false;
  const int c = p.ndim - 1;
  const bool two_d = p.ndim == 2;
  const auto quad = [](std::int64_t v) { return v % 4 == 0; };
  if (!quad(p.sizes[c]) || p.out_strides[c] != 1 || p.index_strides[c] != 1 ||
      !quad(p.out_offset) || !quad(p.index_offset) ||
      (two_d && (!quad(p.out_strides[0]) || !quad(p.index_strides[0]))))
    return false;
  GpuVecParams g{};
  const std::uint32_t row_quads = std::uint32_t(p.sizes[c] / 4);
  const IntDivider div = int_divider(row_quads);
  const std::uint32_t wg = dev.workgroup_size();
  const std::uint64_t quads = std::uint64_t(p.numel) / 4;
  const std::uint64_t groups = chk.grid_groups(quads, wg);
  g.head[0] = std::uint32_t(quads);
  g.head[1] = row_quads;
  g.head[2] = std::uint32_t(groups * wg);
  g.head[3] = std::uint32_t(p.bound);
  g.misc[0] = div.magic;
  g.misc[1] = div.shift;
  g.misc[2] = std::uint32_t(p.src_index_stride);
  g.misc[3] = std::uint32_t(abi::fault_op(abi::kFamily_gather, p.op));
  const auto view = [&](std::uint32_t(&v)[4], std::int64_t offset, const std::int64_t* s) {
    v[0] = std::uint32_t(offset);
    v[1] = two_d ? std::uint32_t(s[0]) : 0u;
    v[2] = std::uint32_t(s[c]);
  };
  view(g.out, p.out_offset, p.out_strides);
  view(g.index, p.index_offset, p.index_strides);
  view(g.src, p.src_offset, p.src_strides);
  view(g.pos, 0, p.index_positions);
  const std::uint32_t spec[] = {wg, std::uint32_t(dtype_size(DType(p.dtype))),
                                DType(p.index_dtype) == DType::kInt64 ? 1u : 0u,
                                std::uint32_t(p.wrap_negative), two_d ? 1u : 0u};
  const DispatchBuffer bufs[3] = {{launch.buffers[0].memory, true},
                                  {launch.buffers[1].memory, false},
                                  {launch.buffers[2].memory, false}};
  dev.record({.module = "gather_vec",
              .spec = spec,
              .params = &g,
              .param_bytes = sizeof g,
              .buffers = bufs,
              .groups = {std::uint32_t(groups), 1, 1}});
  return true;
}

}  // namespace

void launch_family(VulkanDevice& dev, const abi::GatherParams& p, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  const LaunchChecks chk(ctx, family_spec(KernelFamily::kGather).op_name(p.op));
  if (p.numel == 0) return;
  if (p.numel > kMaxIndex || p.bound > kMaxIndex)
    chk.refuse("max_elements", std::to_string(std::max(p.numel, p.bound)) +
                                   " elements exceed the 2^31 - 1 the 32-bit index path supports");
  const DType t = DType(p.dtype), it = DType(p.index_dtype);
  auto reach = [&](std::int64_t offset, const std::int64_t* strides, const char* label) {
    return chk.last_element(offset, p.ndim, p.sizes, strides, label);
  };
  const std::int64_t out_last = reach(p.out_offset, p.out_strides, "the output");
  chk.inside("the output", p.out_offset, out_last, t, launch.buffers[0].memory, kMaxIndex);
  // With an empty indexed dim every index faults and no input element is read: the input
  // may have no buffer at all (take of an empty tensor), as the family's validate allows.
  if (p.bound > 0) {
    std::int64_t src_last = reach(p.src_offset, p.src_strides, "the input");
    chk.reach(src_last, p.bound, p.src_index_stride, "the input");
    chk.inside("the input", p.src_offset, src_last, t, launch.buffers[1].memory, kMaxIndex);
  }
  // int64 indices are read as word pairs: word 2 * last + 1 must stay on the index path.
  const std::int64_t index_last = reach(p.index_offset, p.index_strides, "the index");
  chk.inside("the index", p.index_offset, index_last, it, launch.buffers[2].memory,
             it == DType::kInt64 ? kMaxIndex / 2 - 1 : kMaxIndex);
  std::int64_t position_last = 0;
  for (int d = 0; d < p.ndim; ++d)
    chk.reach(position_last, p.sizes[d], p.index_positions[d], "the index positions");
  if (position_last > kMaxIndex) chk.bad("index positions beyond 2^31 - 1");

  if (p.variant == abi::kGatherRows) return launch_rows(dev, p, launch, chk);
  if (launch_vec(dev, p, launch, chk)) return;

  GpuParams g{};
  const std::uint32_t wg = dev.workgroup_size();
  // gather.comp's invocations take 4 consecutive elements each.
  const std::uint64_t groups = chk.grid_groups((std::uint64_t(p.numel) + 3) / 4, wg);
  g.head[0] = std::uint32_t(p.numel);
  g.head[1] = std::uint32_t(p.ndim);
  g.head[2] = std::uint32_t(groups * wg);
  g.head[3] = std::uint32_t(p.bound);
  g.offsets[0] = std::uint32_t(p.out_offset);
  g.offsets[1] = std::uint32_t(p.src_offset);
  g.offsets[2] = std::uint32_t(p.index_offset);
  g.offsets[3] = std::uint32_t(p.src_index_stride);
  g.misc[0] = std::uint32_t(abi::fault_op(abi::kFamily_gather, p.op));
  for (int d = 0; d < p.ndim; ++d) {
    g.sizes[d] = std::uint32_t(p.sizes[d]);
    g.out_strides[d] = std::uint32_t(p.out_strides[d]);
    g.src_strides[d] = std::uint32_t(p.src_strides[d]);
    g.index_strides[d] = std::uint32_t(p.index_strides[d]);
    g.positions[d] = std::uint32_t(p.index_positions[d]);
  }
  const std::uint32_t spec[] = {wg, std::uint32_t(dtype_size(t)), it == DType::kInt64 ? 1u : 0u,
                                std::uint32_t(p.wrap_negative)};
  record(dev, "gather", spec, g, groups, launch);
}

}  // namespace nbx::vulkan
