// Kernel "scan" on Vulkan (cumsum, cumprod, cummax, cummin): checks an abi::ScanParams
// launch against the device, translates it into scan.comp's uniform block (32-bit sizes,
// strides, offsets), picks the accumulate class's build, takes the plan's layout (a row per
// invocation or a row per workgroup: the block's variant), and records one dispatch. Shader:
// kernels/vulkan/scan.comp.
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

// The uniform block of scan.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];  // rows, row_len, outer_ndim
  std::uint32_t row_stride[4];
  std::uint32_t offsets[4];
  std::uint32_t sizes[8];
  std::uint32_t in_strides[8];
  std::uint32_t out_strides[8];
  std::uint32_t index_strides[8];
};
static_assert(sizeof(GpuParams) == 176);

void launch_scan(VulkanDevice& dev, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  const auto& f = ctx.features;
  // BackendDevice::launch validated the block (core/families/scan_family.cpp); what is
  // checked here is this backend's own: shader features and the 32-bit index path.
  abi::ScanParams p;
  std::memcpy(&p, launch.params.data(), sizeof p);
  const std::string op = family_spec(KernelFamily::kScan).op_name(p.op);
  const LaunchChecks chk(ctx, op);
  const bool extreme = p.op == abi::kScan_cummax || p.op == abi::kScan_cummin;
  const DType in = DType(p.in_dtype), out = DType(p.out_dtype), acc = DType(p.accumulate_dtype);
  const bool fl = is_floating(acc);
  if (p.rows == 0 || p.row_len == 0) return;
  bool f64 = false, i64 = !fl, f16 = false;
  for (DType t : {in, out, acc}) {
    f64 |= t == DType::kFloat64;
    i64 |= t == DType::kInt64;
    f16 |= t == DType::kFloat16;
  }
  if (f64 && !f.fp64) chk.refuse("fp64", "float64 needs shaderFloat64, which this device lacks");
  if (i64 && !f.int64)
    chk.refuse("int64", "integer scans accumulate in int64, which needs shaderInt64 (absent)");
  if (f16 && !f.fp16) chk.refuse("fp16", "float16 needs shaderFloat16, which this device lacks");

  chk.rows_view(p, p.out_offset, p.out_outer_strides, p.out_row_stride, out,
                launch.buffers[0].memory, "the output");
  chk.rows_view(p, p.in_offset, p.in_outer_strides, p.in_row_stride, in, launch.buffers[1].memory,
                "the input");
  if (extreme)
    chk.rows_view(p, p.index_offset, p.index_outer_strides, p.index_row_stride, DType::kInt64,
                  launch.buffers[2].memory, "the indices");

  GpuParams g{};
  g.head[0] = std::uint32_t(p.rows);
  g.head[1] = std::uint32_t(p.row_len);
  g.head[2] = std::uint32_t(p.outer_ndim);
  g.row_stride[0] = std::uint32_t(p.in_row_stride);
  g.row_stride[1] = std::uint32_t(p.out_row_stride);
  g.row_stride[2] = extreme ? std::uint32_t(p.index_row_stride) : 0;
  g.offsets[0] = std::uint32_t(p.in_offset);
  g.offsets[1] = std::uint32_t(p.out_offset);
  g.offsets[2] = extreme ? std::uint32_t(p.index_offset) : 0;
  for (int d = 0; d < p.outer_ndim; ++d) {
    g.sizes[d] = std::uint32_t(p.outer_sizes[d]);
    g.in_strides[d] = std::uint32_t(p.in_outer_strides[d]);
    g.out_strides[d] = std::uint32_t(p.out_outer_strides[d]);
    g.index_strides[d] = extreme ? std::uint32_t(p.index_outer_strides[d]) : 0;
  }

  // The plan's layout (core/ops/variant_plan.cpp): scan.lanes walks a row per invocation
  // (sequential, no barriers), scan.block gives a row a workgroup, whose chunked scan keeps
  // all its invocations busy.
  if (p.variant == abi::kScanLanes && p.lanes != 1)
    chk.refuse("scan.lanes", "the Vulkan scan walks a row per invocation (lanes 1), not " +
                                 std::to_string(p.lanes) + " lanes per row");
  const std::uint32_t wg = dev.workgroup_size();
  const bool chunked = p.variant == abi::kScanBlock;
  const std::uint64_t items =
      chunked ? std::uint64_t(p.rows) : (std::uint64_t(p.rows) + wg - 1) / wg;
  const std::uint64_t max_groups = std::min<std::uint64_t>(f.max_workgroup_count_x, 1u << 22);
  const std::uint32_t spec[] = {wg,
                                std::uint32_t(p.accumulate_dtype),
                                std::uint32_t(p.in_dtype),
                                std::uint32_t(p.out_dtype),
                                std::uint32_t(p.op),
                                chunked ? 1u : 0u};
  const char* module = !fl                      ? "scan_l_i64"
                       : acc == DType::kFloat64 ? "scan_d_f64"
                       : f64                    ? "scan_f_f64"
                                                : "scan_f";
  DispatchBuffer bufs[3] = {{launch.buffers[0].memory, true}, {launch.buffers[1].memory}, {}};
  if (extreme) bufs[2] = {launch.buffers[2].memory, true};
  Dispatch d;
  d.module = module;
  d.spec = spec;
  d.params = &g;
  d.param_bytes = sizeof g;
  d.buffers = bufs;
  d.groups[0] = std::uint32_t(std::min(items, max_groups));
  dev.record(d);
}

}  // namespace

void launch_family(VulkanDevice& device, const abi::ScanParams&, const KernelLaunch& launch) {
  launch_scan(device, launch);
}

}  // namespace nbx::vulkan
