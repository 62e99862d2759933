// Family softmax on Vulkan: checks an abi::SoftmaxParams launch against the device's limits,
// translates it into softmax.comp's uniform block (32-bit sizes, strides, offsets), sizes
// the lane groups and the one-pass row cache from the device's shared memory, and records
// one dispatch. Shader: kernels/vulkan/softmax.comp.
#include <algorithm>
#include <cstring>
#include <string>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::vulkan {
namespace {

// The uniform block of softmax.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];  // rows, row_len, outer_ndim, flags (1 log, 2 mask)
  std::uint32_t tile[4];  // lanes per row, row slots per workgroup
  std::uint32_t row_stride[4];
  std::uint32_t offsets[4];
  std::uint32_t sizes[8];
  std::uint32_t in_strides[8];
  std::uint32_t out_strides[8];
  std::uint32_t mask_strides[8];
  std::uint32_t scale[4];  // float64 bits, float32 bits
};
static_assert(sizeof(GpuParams) == 208);

std::uint32_t pow2_at_most(std::int64_t n) {
  std::uint32_t p = 1;
  while (std::int64_t(p) * 2 <= n) p *= 2;
  return p;
}

void launch_softmax(VulkanDevice& dev, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  const auto& f = ctx.features;
  // BackendDevice::launch validated the block (core/families/softmax_family.cpp); what is
  // checked here is this backend's own: shader features and the 32-bit index path.
  abi::SoftmaxParams p;
  std::memcpy(&p, launch.params.data(), sizeof p);
  const char* op = p.op == abi::kSoftmax_log_softmax ? "log_softmax" : "softmax";
  const LaunchChecks chk(ctx, op);
  bool f64 = false, f16 = false;
  for (std::int32_t t : {p.in_dtype, p.out_dtype, p.accumulate_dtype}) {
    f64 |= DType(t) == DType::kFloat64;
    f16 |= DType(t) == DType::kFloat16;
  }
  if (p.rows == 0 || p.row_len == 0) return;
  if (f64 && !f.fp64) chk.refuse("fp64", "float64 needs shaderFloat64, which this device lacks");
  if (f16 && !f.fp16) chk.refuse("fp16", "float16 needs shaderFloat16, which this device lacks");

  // Every view must lie inside its buffer, and its furthest element within the shader's
  // 32-bit offsets (LaunchChecks::rows_view).
  chk.rows_view(p, p.out_offset, p.out_outer_strides, p.out_row_stride, DType(p.out_dtype),
                launch.buffers[0].memory, "the output");
  chk.rows_view(p, p.in_offset, p.in_outer_strides, p.in_row_stride, DType(p.in_dtype),
                launch.buffers[1].memory, "the input");
  if (p.has_mask)
    chk.rows_view(p, p.mask_offset, p.mask_outer_strides, p.mask_row_stride, DType::kBool,
                  launch.buffers[2].memory, "the mask");

  // Lanes per row: the plan's row_tile (capabilities), a power of two within the workgroup,
  // which stays within the family's kSoftmaxMaxThreads (the wrapper's one-pass rule).
  const std::uint32_t wg =
      std::min<std::uint32_t>(dev.workgroup_size(), std::uint32_t(abi::kSoftmaxMaxThreads));
  const std::uint32_t group = pow2_at_most(std::clamp<std::int64_t>(p.row_tile, 1, wg));
  std::uint32_t slots = wg / group;
  // The one-pass variant: the wrapper took it only for rows that fit beside the merge tree's
  // scratch (3 accumulators and a flag per invocation, within kSoftmaxScratchPerThread).
  const bool acc64 = DType(p.accumulate_dtype) == DType::kFloat64;
  const std::uint64_t acc = acc64 ? 8 : 4;
  static_assert(3 * 8 + 4 <= abi::kSoftmaxScratchPerThread);
  const std::uint64_t scratch = std::uint64_t(wg) * (3 * acc + 4);
  const std::uint64_t budget = f.max_shared_memory > scratch ? f.max_shared_memory - scratch : 0;
  const std::uint64_t row_bytes = std::uint64_t(p.row_len) * acc;
  const bool one_pass = p.variant == abi::kSoftmaxOnePass;
  if (one_pass && row_bytes > budget)
    throw Internal(std::string(op) + " on " + ctx.name + ": a one-pass row of " +
                   std::to_string(row_bytes) + " bytes exceeds the shader's budget of " +
                   std::to_string(budget) + " bytes (shared memory " +
                   std::to_string(f.max_shared_memory) + ").");
  std::uint32_t cache_n = 1;
  if (one_pass) {
    slots = std::uint32_t(std::min<std::uint64_t>(slots, budget / row_bytes));
    // Rounded up to a power of two (fewer pipelines), never past the budget.
    const std::uint64_t need = std::uint64_t(slots) * std::uint64_t(p.row_len);
    std::uint64_t n = 1;
    while (n < need) n *= 2;
    cache_n = std::uint32_t(std::min(n, budget / acc));
  }
  const std::uint64_t max_groups = std::min<std::uint64_t>(f.max_workgroup_count_x, 1u << 22);
  const std::uint64_t groups =
      std::min<std::uint64_t>((std::uint64_t(p.rows) + slots - 1) / slots, max_groups);

  GpuParams g{};
  g.head[0] = std::uint32_t(p.rows);
  g.head[1] = std::uint32_t(p.row_len);
  g.head[2] = std::uint32_t(p.outer_ndim);
  g.head[3] = (p.op == abi::kSoftmax_log_softmax ? 1u : 0u) | (p.has_mask ? 2u : 0u);
  g.tile[0] = group;
  g.tile[1] = slots;
  g.row_stride[0] = std::uint32_t(p.in_row_stride);
  g.row_stride[1] = std::uint32_t(p.out_row_stride);
  g.row_stride[2] = p.has_mask ? std::uint32_t(p.mask_row_stride) : 0;
  g.offsets[0] = std::uint32_t(p.in_offset);
  g.offsets[1] = std::uint32_t(p.out_offset);
  g.offsets[2] = p.has_mask ? std::uint32_t(p.mask_offset) : 0;
  for (int d = 0; d < p.outer_ndim; ++d) {
    g.sizes[d] = std::uint32_t(p.outer_sizes[d]);
    g.in_strides[d] = std::uint32_t(p.in_outer_strides[d]);
    g.out_strides[d] = std::uint32_t(p.out_outer_strides[d]);
    g.mask_strides[d] = p.has_mask ? std::uint32_t(p.mask_outer_strides[d]) : 0;
  }
  std::memcpy(&g.scale[0], &p.scale, 8);
  const float scale32 = float(p.scale);
  std::memcpy(&g.scale[2], &scale32, 4);

  const std::uint32_t spec[] = {wg,
                                std::uint32_t(p.accumulate_dtype),
                                std::uint32_t(p.in_dtype),
                                std::uint32_t(p.out_dtype),
                                one_pass ? 1u : 0u,
                                cache_n};
  const char* module = acc64 ? "softmax_d_f64" : f64 ? "softmax_f_f64" : "softmax_f";
  DispatchBuffer bufs[3] = {{launch.buffers[0].memory, true}, {launch.buffers[1].memory}, {}};
  if (p.has_mask) bufs[2] = {launch.buffers[2].memory};
  Dispatch d;
  d.module = module;
  d.spec = spec;
  d.params = &g;
  d.param_bytes = sizeof g;
  d.buffers = bufs;
  d.groups[0] = std::uint32_t(groups);
  dev.record(d);
}

}  // namespace

void launch_family(VulkanDevice& device, const abi::SoftmaxParams&, const KernelLaunch& launch) {
  launch_softmax(device, launch);
}

}  // namespace nbx::vulkan
