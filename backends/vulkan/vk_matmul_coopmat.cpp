// The cooperative-matrix variant of kernel "matmul" (abi::kMatmulCoopMatrix): float16 A
// and B, float32 accumulation, a float16 or float32 output and addend, through
// kernels/vulkan/matmul_coopmat.comp on the fragment shape the device lists
// (vk_coopmat_query.cpp). Any other request is refused by name ("matmul.coopmat"), never
// run on the tiled kernel instead.
#include <algorithm>
#include <string>

#include "backends/vulkan/vk_coopmat_query.hpp"
#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_matmul.hpp"
#include "core/errors.hpp"

namespace nbx::vulkan {
namespace {

constexpr std::int64_t kTileM = 128, kTileN = 128;  // matmul_coopmat.comp's workgroup tile

// Unit stride along the walked dim and every 8-half vector 16-byte aligned (see matmul.comp).
bool vector8_ok(const abi::MatmulParams& p, std::int64_t walked_stride, std::int64_t other_stride,
                std::int64_t walked_size, std::int64_t offset, const std::int64_t* batch_strides) {
  if (walked_stride != 1 || other_stride % 8 || walked_size % 8 || offset % 8) return false;
  for (int d = 0; d < p.batch_ndim; ++d)
    if (p.batch_sizes[d] > 1 && batch_strides[d] % 8) return false;
  return true;
}

}  // namespace

bool matmul_coopmat_available(const VulkanDevice& device) {
  return choose_coopmat(device.context().features).module != nullptr;
}

void launch_matmul_coopmat(VulkanDevice& device, const KernelLaunch& launch, MatmulLaunch& l) {
  const DeviceFeatures& f = device.context().features;
  const CoopmatChoice choice = choose_coopmat(f);
  const auto refuse = [&](const std::string& why) {
    throw Unsupported("matmul", device.context().name, "matmul.coopmat",
                      l.where + ": " + why + "; refused.");
  };
  if (!choice.module) refuse("the device has no cooperative-matrix kernel (" + choice.status + ")");
  // float16 operands only: the family's contract (core/families/matmul_family.cpp).
  if (l.empty) return;
  const abi::MatmulParams& p = l.p;
  const std::int64_t tiles_m = (p.m + kTileM - 1) / kTileM;
  const std::int64_t tiles_n = (p.n + kTileN - 1) / kTileN;
  l.u.misc[1] = std::uint32_t(tiles_m);
  l.u.misc[2] = std::uint32_t(tiles_n);
  const bool a_walk_k =
      p.a_col_stride == 1 || (p.a_row_stride != 1 && p.a_col_stride <= p.a_row_stride);
  const bool b_walk_k =
      p.b_col_stride != 1 && (p.b_row_stride == 1 || p.b_row_stride < p.b_col_stride);
  const bool a_vec =
      a_walk_k ? vector8_ok(p, p.a_col_stride, p.a_row_stride, p.k, p.a_offset, p.a_batch_strides)
               : vector8_ok(p, p.a_row_stride, p.a_col_stride, p.m, p.a_offset, p.a_batch_strides);
  const bool b_vec =
      b_walk_k ? vector8_ok(p, p.b_row_stride, p.b_col_stride, p.k, p.b_offset, p.b_batch_strides)
               : vector8_ok(p, p.b_col_stride, p.b_row_stride, p.n, p.b_offset, p.b_batch_strides);
  const std::uint32_t threads = 8 * f.subgroup_size;
  const std::uint32_t spec[] = {threads,
                                choice.shape.m,
                                choice.shape.n,
                                choice.shape.k,
                                std::uint32_t(l.out),
                                std::uint32_t(l.use_addend ? l.addend : l.in),
                                l.use_addend ? 1u : 0u,
                                a_walk_k ? 1u : 0u,
                                b_walk_k ? 1u : 0u,
                                a_vec ? 1u : 0u,
                                b_vec ? 1u : 0u,
                                threads,
                                std::uint32_t(DType::kFloat32)};
  DispatchBuffer bufs[4] = {{launch.buffers[0].memory, true},
                            {launch.buffers[1].memory, false},
                            {launch.buffers[2].memory, false},
                            {}};
  if (l.use_addend) bufs[3] = {launch.buffers[3].memory, false};
  Dispatch d;
  d.module = choice.module;
  d.spec = spec;
  d.params = &l.u;
  d.param_bytes = sizeof l.u;
  d.buffers = bufs;
  d.groups[0] = std::uint32_t(std::min<std::int64_t>(tiles_n, 65535));
  d.groups[1] = std::uint32_t(std::min<std::int64_t>(tiles_m, 65535));
  d.groups[2] = std::uint32_t(std::min<std::int64_t>(p.batch, 65535));
  device.record(d);
}

}  // namespace nbx::vulkan
