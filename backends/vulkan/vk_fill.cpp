// Kernel "fill" on Vulkan: checks an abi::FillParams launch (arange, linspace, triu, tril, eye)
// against the device, translates it into the uniform block of kernels/vulkan/fill.comp,
// picks the build and mode, records one dispatch.
#include <algorithm>
#include <cmath>
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

// The uniform block of fill.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];  // numel, ndim, grid invocations, linspace's n / 2
  std::uint32_t sizes[8], out_strides[8], in_strides[8];
  std::uint32_t offsets[4];  // out, in, diagonal (int32), n - 1
  std::uint32_t start[4], step[4], end[4];
};
static_assert(sizeof(GpuParams) == 176);

enum Mode : std::uint32_t {
  kTriangle = 0,
  kInt32 = 1,
  kInt64 = 2,
  kFloatPair = 3,
  kFloat64 = 4,
  kEye = 5
};

// The bits of 1 in `t` (eye's diagonal), as the shader stores them: low word, high word.
void one_bits(DType t, std::uint32_t (&out)[4]) {
  std::uint64_t b = 1;  // bool and the integers
  if (t == DType::kFloat16) b = 0x3c00;
  if (t == DType::kBFloat16) b = 0x3f80;
  if (t == DType::kFloat32) b = 0x3f800000;
  if (t == DType::kFloat64) b = 0x3ff0000000000000ull;
  out[0] = std::uint32_t(b);
  out[1] = std::uint32_t(b >> 32);
}

// v as a 64-bit payload (xy) and a float32 pair hi + lo (zw): lo is what hi leaves of v.
void encode_float(double v, std::uint32_t (&out)[4]) {
  std::memcpy(out, &v, 8);
  const float hi = float(v);
  const float lo = std::isfinite(hi) ? float(v - double(hi)) : 0.0f;
  std::memcpy(&out[2], &hi, 4);
  std::memcpy(&out[3], &lo, 4);
}
void encode_int(std::int64_t v, std::uint32_t (&out)[4]) {
  std::memcpy(out, &v, 8);
  out[2] = std::uint32_t(v);  // int32 mode: the low word (arithmetic wraps there too)
}

constexpr const char* kOpNames[] = {"arange", "linspace", "triu", "tril", "eye"};

void launch_fill(VulkanDevice& dev, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  // BackendDevice::launch validated the block (core/families/fill_family.cpp); what is
  // checked here is this backend's own: shader features and the 32-bit index path.
  abi::FillParams p;
  std::memcpy(&p, launch.params.data(), sizeof p);
  const bool triangle = p.op == abi::kFill_triu || p.op == abi::kFill_tril;
  const bool range = p.op == abi::kFill_arange || p.op == abi::kFill_linspace;
  const std::string op = kOpNames[p.op];
  const LaunchChecks chk(ctx, op);
  const std::int64_t n = p.numel;
  if (n == 0) return;

  const DType out = DType(p.out_dtype), in = DType(p.in_dtype);
  const auto& f = ctx.features;
  // Float ranges run in float64 wherever the device has it (the host's arithmetic, so
  // results match it exactly), else in float32 pairs; integer ranges in their dtype.
  Mode mode = p.op == abi::kFill_eye ? kEye : kTriangle;
  if (range)
    mode = is_floating(in) || p.op == abi::kFill_linspace ? (f.fp64 ? kFloat64 : kFloatPair)
           : in == DType::kInt64                          ? kInt64
                                                          : kInt32;
  const bool f64 = mode == kFloat64 || (range && out == DType::kFloat64);
  const bool i64 = mode == kInt64 || (range && out == DType::kInt64);
  if (out == DType::kFloat64 && !f.fp64)
    chk.refuse("fp64", "float64 needs shaderFloat64, which this device lacks");
  if ((out == DType::kInt64 || mode == kInt64) && !f.int64)
    chk.refuse("int64", "int64 needs shaderInt64, which this device lacks");
  if (out == DType::kFloat16 && !f.fp16)
    chk.refuse("fp16", "float16 needs shaderFloat16, which this device lacks");
  if (n > INT32_MAX)
    chk.refuse("max_elements",
               std::to_string(n) + " elements exceed the 2^31 - 1 the 32-bit index path supports");

  auto check = [&](std::size_t b, std::int64_t offset, const std::int64_t* strides,
                   const char* label) {
    std::int64_t last = offset;
    for (int d = 0; d < p.ndim; ++d) chk.reach(last, p.sizes[d], strides[d], label);
    chk.inside(label, offset, last, out, launch.buffers[b].memory);
  };
  check(0, p.out_offset, p.out_strides, "the output");
  if (triangle) check(1, p.in_offset, p.in_strides, "the input");

  GpuParams g{};
  const std::uint32_t wg = dev.workgroup_size();
  const std::uint64_t groups = chk.grid_groups(std::uint64_t(n), wg);
  g.head[0] = std::uint32_t(n);
  g.head[1] = std::uint32_t(p.ndim);
  g.head[2] = std::uint32_t(groups * wg);
  g.head[3] = std::uint32_t(n / 2);
  for (int d = 0; d < p.ndim; ++d) {
    g.sizes[d] = std::uint32_t(p.sizes[d]);
    g.out_strides[d] = std::uint32_t(p.out_strides[d]);
    g.in_strides[d] = std::uint32_t(p.in_strides[d]);
  }
  g.offsets[0] = std::uint32_t(p.out_offset);
  g.offsets[1] = std::uint32_t(p.in_offset);
  // Every col - row lies in (-2^31, 2^31): a diagonal beyond keeps or clears everything alike.
  g.offsets[2] = std::uint32_t(std::int32_t(
      std::clamp<std::int64_t>(p.diagonal, -std::int64_t(INT32_MAX), std::int64_t(INT32_MAX))));
  g.offsets[3] = std::uint32_t(n - 1);
  if (mode == kInt32 || mode == kInt64) {
    encode_int(p.start.i, g.start);
    encode_int(p.step.i, g.step);
    encode_int(p.end.i, g.end);
  } else if (mode == kEye) {
    one_bits(out, g.start);
  } else {
    encode_float(p.start.f, g.start);
    encode_float(p.step.f, g.step);
    encode_float(p.end.f, g.end);
  }

  const std::uint32_t spec[] = {wg, std::uint32_t(mode), std::uint32_t(out),
                                p.op == abi::kFill_linspace ? 1u : 0u,
                                p.op == abi::kFill_triu ? 1u : 0u};
  const std::string module = std::string("fill") + (f64 ? "_f64" : "") + (i64 ? "_i64" : "");
  DispatchBuffer bufs[2] = {{launch.buffers[0].memory, true}};
  if (triangle) bufs[1] = {launch.buffers[1].memory, false};
  Dispatch d;
  d.module = module;
  d.spec = spec;
  d.params = &g;
  d.param_bytes = sizeof g;
  d.buffers = std::span<const DispatchBuffer>(bufs, triangle ? 2 : 1);
  d.groups[0] = std::uint32_t(groups);
  dev.record(d);
}

}  // namespace

void launch_family(VulkanDevice& device, const abi::FillParams&, const KernelLaunch& launch) {
  launch_fill(device, launch);
}

}  // namespace nbx::vulkan
