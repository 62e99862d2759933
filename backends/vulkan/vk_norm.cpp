// Kernel "norm" on Vulkan (layer_norm, rms_norm, group_norm, batch_norm inference): checks
// an abi::NormParams launch against the device, translates it into norm.comp's uniform
// block, sizes the lane groups from the plan's row_tile, and records one dispatch over six
// bindings (out, in, weight, bias, running mean, running variance). Shader:
// kernels/vulkan/norm.comp.
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

// The uniform block of norm.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];  // rows, row_len, op, flags (1 weight, 2 bias)
  std::uint32_t tile[4];  // lanes per row, row slots per workgroup
  std::uint32_t chan[4];  // channels, inner, groups
  std::uint32_t eps[4];   // float64 bits, float32 bits
};
static_assert(sizeof(GpuParams) == 64);

void launch_norm(VulkanDevice& dev, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  const auto& f = ctx.features;
  // BackendDevice::launch validated the block (core/families/norm_family.cpp); what is
  // checked here is this backend's own: shader features and the 32-bit index path.
  abi::NormParams p;
  std::memcpy(&p, launch.params.data(), sizeof p);
  const std::string op = family_spec(KernelFamily::kNorm).op_name(p.op);
  const LaunchChecks chk(ctx, op);
  const bool batch = p.op == abi::kNorm_batch_norm;
  const bool by_channel = batch || p.op == abi::kNorm_group_norm;
  bool f64 = false, f16 = false;
  for (std::int32_t t : {p.in_dtype, p.out_dtype, p.accumulate_dtype, p.param_dtype}) {
    f64 |= DType(t) == DType::kFloat64;
    f16 |= DType(t) == DType::kFloat16;
  }
  if (p.rows == 0 || p.row_len == 0) return;
  if (f64 && !f.fp64) chk.refuse("fp64", "float64 needs shaderFloat64, which this device lacks");
  if (f16 && !f.fp16) chk.refuse("fp16", "float16 needs shaderFloat16, which this device lacks");

  const std::int64_t numel = p.rows * p.row_len, params = by_channel ? p.channels : p.row_len;
  if (numel / p.rows != p.row_len || numel > INT32_MAX)
    chk.refuse("max_elements", std::to_string(p.rows) + " rows of " + std::to_string(p.row_len) +
                                   " elements exceed the 2^31 - 1 the 32-bit index path supports");
  // Sizes against the buffers were validated; each buffer must also fit one binding.
  auto check = [&](std::size_t k, std::int64_t, std::int32_t, const char*) {
    chk.storage_range(launch.buffers[k].memory);
  };
  check(0, numel, p.out_dtype, "the output");
  check(1, numel, p.in_dtype, "the input");
  DispatchBuffer bufs[6] = {{launch.buffers[0].memory, true}, {launch.buffers[1].memory}};
  auto optional = [&](std::size_t k, bool wanted, const char* label) {
    if (!wanted) return;
    check(k, params, p.param_dtype, label);
    bufs[k] = {launch.buffers[k].memory};
  };
  optional(2, p.has_weight != 0, "the weight");
  optional(3, p.has_bias != 0, "the bias");
  optional(4, batch, "the running mean");
  optional(5, batch, "the running variance");

  const std::uint32_t wg = dev.workgroup_size();
  std::uint32_t group = 1;
  while (group * 2 <= std::uint32_t(std::clamp<std::int64_t>(p.row_tile, 1, wg))) group *= 2;
  const std::uint32_t slots = wg / group;
  const std::uint64_t max_groups = std::min<std::uint64_t>(f.max_workgroup_count_x, 1u << 22);
  const std::uint64_t groups =
      std::min<std::uint64_t>((std::uint64_t(p.rows) + slots - 1) / slots, max_groups);

  GpuParams g{};
  g.head[0] = std::uint32_t(p.rows);
  g.head[1] = std::uint32_t(p.row_len);
  g.head[2] = std::uint32_t(p.op);
  g.head[3] = (p.has_weight ? 1u : 0u) | (p.has_bias ? 2u : 0u);
  g.tile[0] = group;
  g.tile[1] = slots;
  if (by_channel) {
    g.chan[0] = std::uint32_t(p.channels);
    g.chan[1] = std::uint32_t(p.inner);
    g.chan[2] = std::uint32_t(p.groups);
  }
  std::memcpy(&g.eps[0], &p.eps, 8);
  const float eps32 = float(p.eps);
  std::memcpy(&g.eps[2], &eps32, 4);

  const std::uint32_t spec[] = {wg, std::uint32_t(p.accumulate_dtype), std::uint32_t(p.in_dtype),
                                std::uint32_t(p.out_dtype), std::uint32_t(p.param_dtype)};
  const bool acc64 = DType(p.accumulate_dtype) == DType::kFloat64;
  Dispatch d;
  d.module = acc64 ? "norm_d_f64" : f64 ? "norm_f_f64" : "norm_f";
  d.spec = spec;
  d.params = &g;
  d.param_bytes = sizeof g;
  d.buffers = bufs;
  d.groups[0] = std::uint32_t(groups);
  dev.record(d);
}

}  // namespace

void launch_family(VulkanDevice& device, const abi::NormParams&, const KernelLaunch& launch) {
  launch_norm(device, launch);
}

}  // namespace nbx::vulkan
