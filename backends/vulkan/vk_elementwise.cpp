// Kernel "elementwise" on Vulkan: checks an abi::ElementwiseParams launch against the
// device, translates it into the shader's uniform block (32-bit sizes, strides, offsets;
// scalars pre-encoded for the compute class), picks the SPIR-V build and path, records one
// dispatch. Shader: kernels/vulkan/elementwise.comp.
#include <algorithm>
#include <cstring>
#include <string>

#include "backends/vulkan/vk_device.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::vulkan {
namespace {

struct OpInfo {
  const char* name;
  std::int32_t code, arity;
};
constexpr OpInfo kOps[] = {
#define NBX_ELEMENTWISE_OP(name, code, arity) {#name, code, arity},
#include "core/elementwise_op_list.inc"
#undef NBX_ELEMENTWISE_OP
};

const OpInfo* find_op(std::int32_t code) {
  for (const OpInfo& o : kOps) {
    if (o.code == code) return &o;
  }
  return nullptr;
}

bool named(const OpInfo& op, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), op.name) != names.end();
}
bool transcendental(const OpInfo& op) {
  return named(op, {"exp",      "exp2",    "log",  "log2", "sin",      "cos",       "tan",
                    "tanh",     "sigmoid", "erf",  "silu", "gelu_erf", "gelu_tanh", "mish",
                    "softplus", "elu",     "selu", "celu", "pow",      "atan2"});
}
bool float_only(const OpInfo& op) {
  return (transcendental(op) && !named(op, {"pow"})) ||
         named(op, {"sqrt", "rsqrt", "reciprocal", "div", "lerp", "addcdiv", "leaky_relu",
                    "hardsigmoid", "hardswish"}) ||
         named(op, {"log1p",    "expm1",      "log10",     "asin",       "acos",    "atan",
                    "sinh",     "cosh",       "asinh",     "acosh",      "atanh",   "erfc",
                    "erfinv",   "lgamma",     "digamma",   "deg2rad",    "rad2deg", "logit",
                    "sinc",     "hypot",      "logaddexp", "logaddexp2", "xlogy",   "nextafter",
                    "copysign", "float_power"}) ||
         named(op, {"log_sigmoid", "sigmoid_mul", "silu_mul", "gelu_erf_mul", "gelu_tanh_mul"});
}
bool integer_only(const OpInfo& op) {
  return named(op, {"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                    "bitwise_right_shift"});
}

// The uniform block of elementwise.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];  // numel, ndim, work items, work-item stride
  std::uint32_t sizes[8];
  std::uint32_t strides[4][8];
  std::uint32_t offsets[4];
  std::uint32_t scalars[3][4];
  std::uint32_t attrs[3][4];
};
static_assert(sizeof(GpuParams) == 288);

enum class Cls { F, I, D, L };
Cls class_of(DType t) {
  if (t == DType::kFloat64) return Cls::D;
  if (t == DType::kInt64) return Cls::L;
  return is_floating(t) ? Cls::F : Cls::I;
}

void encode_scalar(Cls cls, const abi::ScalarValue& v, std::uint32_t (&out)[4]) {
  if (cls == Cls::F) {
    const float f = static_cast<float>(v.f);
    std::memcpy(&out[2], &f, 4);
    std::memcpy(out, &v.f, 8);  // the float64 value too, for the float64-widened ops
  } else if (cls == Cls::I) {
    out[2] = static_cast<std::uint32_t>(v.i);
  } else if (cls == Cls::D) {
    std::memcpy(out, &v.f, 8);
  } else {
    std::memcpy(out, &v.i, 8);
  }
}

}  // namespace

void VulkanDevice::launch_elementwise(const KernelLaunch& launch) {
  // BackendDevice::launch validated the block (core/families/elementwise_family.cpp); what
  // is checked here is this backend's own: shader features and the 32-bit index path.
  abi::ElementwiseParams p;
  std::memcpy(&p, launch.params.data(), sizeof p);
  const OpInfo* op = find_op(p.op);
  const std::string where = std::string(op->name) + " on " + ctx_.name;
  auto bad = [&](const std::string& why) {
    throw InvalidArgument(op->name, where + ": " + why + ".");
  };
  const std::int64_t numel = p.numel;
  if (numel == 0) return;

  const DType odt = DType(p.out.dtype), cdt = DType(p.compute_dtype);
  DType idt[3] = {cdt, cdt, cdt};
  std::uint32_t scalar_mask = 0;
  for (int k = 0; k < p.num_inputs; ++k) {
    if (p.in[k].is_scalar)
      scalar_mask |= 1u << k;
    else
      idt[k] = DType(p.in[k].dtype);
  }
  const DType cls_dt = p.op == abi::kOp_copy ? idt[0] : cdt;
  const Cls cls = class_of(cls_dt);
  bool f64 = false, i64 = false, f16 = false;
  for (DType t : {cls_dt, odt, idt[0], idt[1], idt[2]}) {
    f64 |= t == DType::kFloat64;
    i64 |= t == DType::kInt64;
    f16 |= t == DType::kFloat16;
  }
  auto refuse = [&](const char* cap, const std::string& why) {
    throw Unsupported(op->name, ctx_.name, cap, where + ": " + why + "; refused.");
  };
  const auto& f = ctx_.features;
  if (f64 && !f.fp64) refuse("fp64", "float64 needs shaderFloat64, which this device lacks");
  if (i64 && !f.int64) refuse("int64", "int64 needs shaderInt64, which this device lacks");
  if (f16 && !f.fp16) refuse("fp16", "float16 needs shaderFloat16, which this device lacks");
  if ((cls == Cls::I || cls == Cls::L) && float_only(*op))
    bad("needs a floating compute dtype, got " + std::string(dtype_name(cls_dt)));
  if ((cls == Cls::F || cls == Cls::D) && integer_only(*op))
    bad("needs an integer or bool compute dtype, got " + std::string(dtype_name(cls_dt)));
  // float32 pow takes the float64 build where there is one (see vk_math64.glsl).
  // So do the ops whose float32 intermediates overflow where the host's do not (see
  // opF_wide in kernels/vulkan/vk_elementwise_ops.glsl).
  // add/sub only with alpha != 1: a + b alone rounds like the host, and the plain build keeps
  // the bandwidth-bound common case free of float64 registers.
  const bool widened_alpha = named(*op, {"add", "sub"}) && p.attrs[0].f != 1.0;
  if (cls == Cls::F && f.fp64 &&
      (widened_alpha || named(*op, {"pow", "lerp", "addcmul", "addcdiv"})))
    f64 = true;
  if (numel > INT32_MAX)
    refuse("max_elements", std::to_string(numel) +
                               " elements exceed the 2^31 - 1 the 32-bit "
                               "index path supports");

  // Every tensor operand lies inside its buffer (validated); the buffer must also fit one
  // binding.
  const abi::ElementwiseOperand* ops[4] = {&p.out, &p.in[0], &p.in[1], &p.in[2]};
  GpuParams g{};
  bool flat = p.contiguous != 0, aligned8 = true;
  for (int k = 0; k < 1 + p.num_inputs; ++k) {
    if (k > 0 && p.in[k - 1].is_scalar) continue;
    const abi::ElementwiseOperand& o = *ops[k];
    const DeviceMemory& m = launch.buffers[std::size_t(k)].memory;
    for (int d = 0; d < p.ndim; ++d)
      if (p.sizes[d] > 1 && o.strides[d] != p.out.strides[d]) flat = false;
    if (m.bytes > f.max_storage_buffer_range)
      refuse("maxStorageBufferRange", "a " + std::to_string(m.bytes) +
                                          "-byte operand exceeds "
                                          "maxStorageBufferRange (" +
                                          std::to_string(f.max_storage_buffer_range) + " bytes)");
    aligned8 &= o.offset % 8 == 0;  // whole 16-byte chunks (elementwise.comp)
    g.offsets[k] = std::uint32_t(o.offset);
    for (int d = 0; d < p.ndim; ++d) g.strides[k][d] = std::uint32_t(o.strides[d]);
  }
  // The flat walk needs a dense output: strides, sorted, are the running size products.
  if (flat) {
    std::int64_t expect = 1;
    std::vector<std::pair<std::int64_t, std::int64_t>> dims;
    for (int d = 0; d < p.ndim; ++d)
      if (p.sizes[d] > 1) dims.emplace_back(p.out.strides[d], p.sizes[d]);
    std::sort(dims.begin(), dims.end());
    for (auto [stride, size] : dims) {
      flat &= stride == expect;
      expect *= size;
    }
  }
  const std::uint32_t path = flat ? (aligned8 ? 2 : 1) : 0;
  const std::uint64_t items = path == 2 ? (std::uint64_t(numel) + 7) / 8 : std::uint64_t(numel);
  // One work item per invocation where the device allows that many groups (NVIDIA: 2^31 - 1);
  // llvmpipe's 65535 makes the shader loop instead.
  const std::uint64_t max_groups = std::min<std::uint64_t>(f.max_workgroup_count_x, 1u << 22);
  const std::uint64_t groups =
      std::min<std::uint64_t>((items + workgroup_size_ - 1) / workgroup_size_, max_groups);
  g.head[0] = std::uint32_t(numel);
  g.head[1] = std::uint32_t(p.ndim);
  g.head[2] = std::uint32_t(items);
  g.head[3] = std::uint32_t(groups * workgroup_size_);
  for (int d = 0; d < p.ndim; ++d) g.sizes[d] = std::uint32_t(p.sizes[d]);
  for (int k = 0; k < p.num_inputs; ++k) {
    abi::ScalarValue v = p.in[k].scalar;
    if (cls_dt == DType::kBool) v.i = v.i != 0;  // a bool scalar is its truth value
    if (p.in[k].is_scalar) encode_scalar(cls, v, g.scalars[k]);
  }
  for (int k = 0; k < 3; ++k) encode_scalar(cls, p.attrs[k], g.attrs[k]);

  const std::uint32_t spec[] = {workgroup_size_,
                                std::uint32_t(p.op),
                                std::uint32_t(cdt),
                                std::uint32_t(odt),
                                std::uint32_t(idt[0]),
                                std::uint32_t(idt[1]),
                                std::uint32_t(idt[2]),
                                scalar_mask,
                                std::uint32_t(p.num_inputs),
                                path};
  static constexpr const char* kClassNames[] = {"f", "i", "d", "l"};
  const std::string module = std::string("elementwise_") + kClassNames[int(cls)] +
                             (f64 ? "_f64" : "") + (i64 ? "_i64" : "");
  DispatchBuffer bufs[4];
  for (int k = 0; k < 4; ++k) {
    const bool tensor = k == 0 || (k <= p.num_inputs && !p.in[k - 1].is_scalar);
    if (tensor) bufs[k] = {launch.buffers[std::size_t(k)].memory, k == 0};
  }
  Dispatch d;
  d.module = module;
  d.spec = spec;
  d.params = &g;
  d.param_bytes = sizeof g;
  d.buffers = bufs;
  d.groups[0] = std::uint32_t(groups);
  record(d);
}

}  // namespace nbx::vulkan
