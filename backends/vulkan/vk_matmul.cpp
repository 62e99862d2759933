// Kernel "matmul" on Vulkan: checks an abi::MatmulParams launch, translates it into the
// shaders' uniform block, and records the variant the wrapper chose: the shared-memory
// tiled kernel (kernels/vulkan/matmul.comp, here) or the cooperative-matrix one
// (vk_matmul_coopmat.cpp). A variant the device lacks is refused by name, never swapped.
#include "backends/vulkan/vk_matmul.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/errors.hpp"

namespace nbx::vulkan {
namespace {

constexpr std::int64_t kMaxIndex = 0x7fffffff;  // the shaders index in 32 bits
constexpr std::uint32_t kThreads = 256;         // matmul.comp's 16 x 16 grid

enum class Cls { F, I, D, L };
Cls class_of(DType t) {
  if (t == DType::kFloat64) return Cls::D;
  if (t == DType::kInt64) return Cls::L;
  return is_floating(t) ? Cls::F : Cls::I;
}

std::string name_of(DType t) {
  return std::string(dtype_name(t));
}

std::uint32_t grid(std::int64_t tiles) {
  // Every device allows 65535 groups per dim; the shader strides over the rest.
  return std::uint32_t(std::min<std::int64_t>(tiles, 65535));
}

// Whether the operand's walked dim has unit stride and every vector of four along it is
// aligned: the other stride, the offset and the batch strides are multiples of 4, and so
// is the walked extent (a vector is then wholly inside the matrix or wholly outside).
bool vector_ok(const abi::MatmulParams& p, std::int64_t walked_stride, std::int64_t other_stride,
               std::int64_t walked_size, std::int64_t offset, const std::int64_t* batch_strides) {
  if (walked_stride != 1 || other_stride % 4 || walked_size % 4 || offset % 4) return false;
  for (int d = 0; d < p.batch_ndim; ++d)
    if (p.batch_sizes[d] > 1 && batch_strides[d] % 4) return false;
  return true;
}

void launch_tiled(VulkanDevice& device, const KernelLaunch& launch, MatmulLaunch& l) {
  const abi::MatmulParams& p = l.p;
  const DeviceFeatures& f = device.context().features;
  const std::string& dev = device.context().name;
  const auto bad = [&](const std::string& why) {
    throw InvalidArgument("matmul", l.where + ": " + why + ".");
  };
  const auto tile_ok = [](std::int32_t t, std::int32_t hi) {
    return t >= 16 && t <= hi && t % 16 == 0;
  };
  if (!tile_ok(p.tile_m, 128) || !tile_ok(p.tile_n, 128) || !tile_ok(p.tile_k, 64))
    bad("tile " + std::to_string(p.tile_m) + "x" + std::to_string(p.tile_n) + "x" +
        std::to_string(p.tile_k) +
        " is not one the tiled kernel builds (m, n: multiples of 16 up to 128; k: up to 64)");
  const Cls cls = class_of(l.in);
  const std::uint64_t acc_bytes = (cls == Cls::D || cls == Cls::L) ? 8 : 4;
  // Both tiles live in shared memory decoded to the accumulate type, one stage (the next
  // stage waits in registers).
  const std::uint64_t footprint = std::uint64_t(p.tile_m + p.tile_n) * p.tile_k * acc_bytes;
  if (footprint > f.max_shared_memory)
    throw Unsupported(
        "matmul", dev, "shared_memory.per_block",
        l.where + ": the " + std::to_string(p.tile_m) + "x" + std::to_string(p.tile_n) + "x" +
            std::to_string(p.tile_k) + " " + name_of(l.in) + " tile needs " +
            std::to_string(footprint) + " bytes of shared memory (tiles decoded to " +
            std::to_string(acc_bytes * 8) + "-bit values), more than the " +
            std::to_string(f.max_shared_memory) + " bytes of maxComputeSharedMemorySize; refused.");
  if (f.max_workgroup_invocations < kThreads || f.max_workgroup_size_x < kThreads)
    throw Unsupported("matmul", dev, "max_threads_per_block",
                      l.where +
                          ": the tiled kernel runs 256 invocations per workgroup; the "
                          "device allows " +
                          std::to_string(f.max_workgroup_invocations) + "; refused.");

  const std::int64_t tiles_m = (p.m + p.tile_m - 1) / p.tile_m;
  const std::int64_t tiles_n = (p.n + p.tile_n - 1) / p.tile_n;
  l.u.misc[1] = std::uint32_t(tiles_m);
  l.u.misc[2] = std::uint32_t(tiles_n);

  // Walk the unit-stride dim of each tile when loading (coalesced), in vectors of four
  // where aligned; 8-byte dtypes load one element at a time.
  const bool a_walk_k =
      p.a_col_stride == 1 || (p.a_row_stride != 1 && p.a_col_stride <= p.a_row_stride);
  const bool b_walk_k =
      p.b_col_stride != 1 && (p.b_row_stride == 1 || p.b_row_stride < p.b_col_stride);
  const bool narrow = dtype_size(l.in) <= 4;
  const bool a_vec =
      narrow && (p.tile_m * p.tile_k) % (4 * kThreads) == 0 &&
      (a_walk_k ? vector_ok(p, p.a_col_stride, p.a_row_stride, p.k, p.a_offset, p.a_batch_strides)
                : vector_ok(p, p.a_row_stride, p.a_col_stride, p.m, p.a_offset, p.a_batch_strides));
  const bool b_vec =
      narrow && (p.tile_n * p.tile_k) % (4 * kThreads) == 0 &&
      (b_walk_k ? vector_ok(p, p.b_row_stride, p.b_col_stride, p.k, p.b_offset, p.b_batch_strides)
                : vector_ok(p, p.b_col_stride, p.b_row_stride, p.n, p.b_offset, p.b_batch_strides));
  static constexpr DType kClsDType[] = {DType::kFloat32, DType::kInt32, DType::kFloat64,
                                        DType::kInt64};
  const std::uint32_t spec[] = {kThreads,
                                std::uint32_t(p.tile_m),
                                std::uint32_t(p.tile_n),
                                std::uint32_t(p.tile_k),
                                std::uint32_t(l.in),
                                std::uint32_t(l.out),
                                std::uint32_t(l.use_addend ? l.addend : l.in),
                                l.use_addend ? 1u : 0u,
                                a_walk_k ? 1u : 0u,
                                b_walk_k ? 1u : 0u,
                                a_vec ? 1u : 0u,
                                b_vec ? 1u : 0u,
                                std::uint32_t(kClsDType[int(cls)])};
  static constexpr const char* kModules[] = {"matmul_f", "matmul_i", "matmul_d", "matmul_l"};
  DispatchBuffer bufs[4] = {{launch.buffers[0].memory, true},
                            {launch.buffers[1].memory, false},
                            {launch.buffers[2].memory, false},
                            {}};
  if (l.use_addend) bufs[3] = {launch.buffers[3].memory, false};
  Dispatch d;
  d.module = kModules[int(cls)];
  d.spec = spec;
  d.params = &l.u;
  d.param_bytes = sizeof l.u;
  d.buffers = bufs;
  d.groups[0] = grid(tiles_n);
  d.groups[1] = grid(tiles_m);
  d.groups[2] = grid(p.batch);
  device.record(d);
}

void launch_matmul(VulkanDevice& device, const KernelLaunch& launch) {
  MatmulLaunch l = check_matmul(device, launch);
  switch (l.p.variant) {
    case abi::kMatmulTiled:
      if (!l.empty) launch_tiled(device, launch, l);
      return;
    case abi::kMatmulCoopMatrix:
      launch_matmul_coopmat(device, launch, l);
      return;
    case abi::kMatmulVendorBlas:
      throw Unsupported("matmul", device.context().name, "matmul.blas",
                        l.where + ": the vendor-BLAS variant is not a Vulkan kernel (no " +
                            "\"matmul.blas\"); refused.");
    default:
      throw InvalidArgument("matmul",
                            l.where + ": unknown variant " + std::to_string(l.p.variant) + ".");
  }
}

}  // namespace

MatmulLaunch check_matmul(const VulkanDevice& device, const KernelLaunch& launch) {
  MatmulLaunch l;
  const DeviceContext& ctx = device.context();
  l.where = "matmul on " + ctx.name;
  const LaunchChecks chk(ctx, "matmul");
  const auto bad = [&](const std::string& why) {
    throw InvalidArgument("matmul", l.where + ": " + why + ".");
  };
  // BackendDevice::launch validated the block (core/families/matmul_family.cpp); what is
  // checked here is this backend's own: the products its shaders compute, shader features
  // and the 32-bit index path.
  std::memcpy(&l.p, launch.params.data(), sizeof l.p);
  const abi::MatmulParams& p = l.p;
  l.in = DType(p.a_dtype);
  l.out = DType(p.out_dtype);
  l.addend = p.has_addend ? DType(p.addend_dtype) : l.in;
  // The output and addend stay in the operands' class (float16/bfloat16/float32, the
  // narrow integers, float64, int64): what the wrapper sends.
  const Cls cls = class_of(l.in);
  for (DType t : {l.out, l.addend})
    if (class_of(t) != cls || t == DType::kBool)
      bad(name_of(l.in) + " operands with a " + name_of(t) +
          " output or addend are not a product the kernel computes");

  const DeviceFeatures& f = ctx.features;
  const auto refuse = [&](const char* cap, const std::string& why) {
    throw Unsupported("matmul", ctx.name, cap, l.where + ": " + why + "; refused.");
  };
  for (DType t : {l.in, l.out, l.addend}) {
    if (t == DType::kFloat64 && !f.fp64)
      refuse("fp64", "float64 needs shaderFloat64, which this device lacks");
    if (t == DType::kInt64 && !f.int64)
      refuse("int64", "int64 needs shaderInt64, which this device lacks");
  }
  l.use_addend = p.has_addend && p.beta != 0;
  l.empty = p.m == 0 || p.n == 0 || p.batch == 0;
  if (l.empty) return l;

  // Each operand's largest element index, which must lie inside its buffer and below 2^31.
  struct Operand {
    const char* name;
    int buffer;
    DType dtype;
    std::int64_t offset;
    const std::int64_t* batch_strides;
    std::int64_t rows, cols, row_stride, col_stride;
  };
  const Operand ops[4] = {
      {"A", 1, l.in, p.a_offset, p.a_batch_strides, p.m, p.k, p.a_row_stride, p.a_col_stride},
      {"B", 2, l.in, p.b_offset, p.b_batch_strides, p.k, p.n, p.b_row_stride, p.b_col_stride},
      {"the output", 0, l.out, p.out_offset, p.out_batch_strides, p.m, p.n, p.out_row_stride,
       p.out_col_stride},
      {"the addend", 3, l.addend, p.addend_offset, p.addend_batch_strides, p.m, p.n,
       p.addend_row_stride, p.addend_col_stride}};
  for (int q = 0; q < 4; ++q) {
    const Operand& o = ops[q];
    if (q == 3 && !l.use_addend) continue;
    if ((o.rows == 0 || o.cols == 0) && q < 2) continue;  // k == 0: A and B are not read
    std::int64_t last = o.offset;
    for (int d = 0; d < p.batch_ndim; ++d)
      chk.reach(last, p.batch_sizes[d], o.batch_strides[d], o.name);
    chk.reach(last, o.rows, o.row_stride, o.name);
    chk.reach(last, o.cols, o.col_stride, o.name);
    chk.inside(o.name, o.offset, last, o.dtype, launch.buffers[std::size_t(o.buffer)].memory,
               kMaxIndex);
    l.u.offsets[q] = std::uint32_t(o.offset);
    for (int d = 0; d < p.batch_ndim; ++d)
      l.u.batch_strides[q][d] = std::uint32_t(o.batch_strides[d]);
    l.u.strides[2 * q] = std::uint32_t(o.row_stride);
    l.u.strides[2 * q + 1] = std::uint32_t(o.col_stride);
  }
  if (p.m > kMaxIndex || p.n > kMaxIndex || p.k > kMaxIndex || p.batch > kMaxIndex)
    refuse("max_elements", "m, n, k and batch must stay below 2^31");
  l.u.dims[0] = std::uint32_t(p.m);
  l.u.dims[1] = std::uint32_t(p.n);
  l.u.dims[2] = std::uint32_t(p.k);
  l.u.dims[3] = std::uint32_t(p.batch);
  l.u.misc[0] = std::uint32_t(p.batch_ndim);
  for (int d = 0; d < p.batch_ndim; ++d) l.u.batch_sizes[d] = std::uint32_t(p.batch_sizes[d]);
  // alpha and beta in the accumulate class: integers as the host reads them (wrapping).
  if (cls == Cls::F) {
    const float a = float(p.alpha), b = float(p.beta);
    std::memcpy(&l.u.scal32[0], &a, 4);
    std::memcpy(&l.u.scal32[1], &b, 4);
  } else if (cls == Cls::D) {
    std::memcpy(&l.u.scal[0], &p.alpha, 8);
    std::memcpy(&l.u.scal[2], &p.beta, 8);
  } else {
    const auto a = std::int64_t(p.alpha), b = std::int64_t(p.beta);
    std::memcpy(&l.u.scal[0], &a, 8);
    std::memcpy(&l.u.scal[2], &b, 8);
    l.u.scal32[0] = std::uint32_t(a);
    l.u.scal32[1] = std::uint32_t(b);
  }
  return l;
}

void launch_family(VulkanDevice& device, const abi::MatmulParams&, const KernelLaunch& launch) {
  launch_matmul(device, launch);
}

}  // namespace nbx::vulkan
