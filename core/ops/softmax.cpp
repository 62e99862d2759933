#include "core/ops/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <string>

#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/plan.hpp"
#include "core/ops/tiling.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops {
namespace {

Tensor run(const char* name, const Tensor& x_in, std::int64_t dim, double scale,
           const std::optional<Tensor>& mask, bool log, std::optional<DType> dtype) {
  if (!x_in.defined())
    throw InvalidArgument(name, std::string(name) + ": the tensor is undefined.");
  // A requested dtype the device lacks is refused under this op's name, not the cast's
  // (harden: softmax(int32, dtype=float64) without fp64 said "cast on host").
  if (dtype) detail::require_dtype_support(name, *dtype, x_in.device());
  const Tensor x = dtype ? x_in.to(*dtype) : x_in;
  if (!is_floating(x.dtype()))
    throw InvalidArgument(name, std::string(name) + " is not defined for " +
                                    std::string(dtype_name(x.dtype())) +
                                    " tensors (it takes floating dtypes).");
  const int d = wrap_dim(dim, x.dim(), name);
  const Device& device = x.device();
  const PlanTarget target{device.capabilities(), device.str(), device.display_name(),
                          &device.context().backend_device()};
  const RowPlan plan = plan_softmax(name, x.dtype(), x.dim() ? x.shape()[d] : 1, target);
  const DType acc = plan.accumulate_dtype;

  abi::SoftmaxParams p{};
  p.op = log ? abi::kSoftmax_log_softmax : abi::kSoftmax_softmax;
  p.in_dtype = p.out_dtype = static_cast<std::int32_t>(x.dtype());
  p.accumulate_dtype = static_cast<std::int32_t>(acc);
  p.scale = scale;
  Tensor out = Tensor::empty(x.shape(), x.dtype(), device);
  Tensor m;
  Strides mask_strides;
  if (mask) {
    if (!mask->defined() || mask->dtype() != DType::kBool)  // names what came (harden)
      throw InvalidArgument(name, std::string(name) + ": the mask must be a bool tensor (got " +
                                      (mask->defined() ? std::string(dtype_name(mask->dtype()))
                                                       : std::string("an undefined tensor")) +
                                      ").");
    if (!(mask->device() == device))
      throw InvalidArgument(name, std::string(name) + ": the mask lives on " +
                                      mask->device().str() + ", the input on " + device.str() +
                                      ".");
    m = *mask;
    mask_strides = broadcast_strides(m.shape(), m.strides(), x.shape(), name);
    p.has_mask = 1;
    p.mask_offset = m.offset();
  }
  // A 0-d tensor is one row of one element.
  p.row_len = x.dim() ? x.shape()[d] : 1;
  p.in_offset = x.offset();
  p.out_offset = 0;
  if (x.dim()) {
    p.in_row_stride = x.strides()[d];
    p.out_row_stride = out.strides()[d];
    if (mask) p.mask_row_stride = mask_strides[d];
  }
  p.rows = 1;
  for (int k = 0; k < x.dim(); ++k) {
    if (k == d) continue;
    p.outer_sizes[p.outer_ndim] = x.shape()[k];
    p.in_outer_strides[p.outer_ndim] = x.strides()[k];
    p.out_outer_strides[p.outer_ndim] = out.strides()[k];
    if (mask) p.mask_outer_strides[p.outer_ndim] = mask_strides[k];
    p.rows *= x.shape()[k];
    ++p.outer_ndim;
  }
  p.row_tile = plan.row_tile;
  std::vector<PlanChoice> choices;
  const int candidates[] = {abi::kSoftmaxRows, plan.variant};
  choose_variant(p, candidates, target, choices);
  if (out.numel() == 0) return out;
  KernelBuffer buffers[3] = {{out.storage()->memory(), true}, {x.storage()->memory(), false}, {}};
  if (mask) buffers[2] = {m.storage()->memory(), false};
  KernelLaunch kl;
  kl.family = KernelFamily::kSoftmax;
  kl.buffers = std::span<const KernelBuffer>(buffers, mask ? 3 : 2);
  kl.params = std::as_bytes(std::span<const abi::SoftmaxParams>(&p, 1));
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kl);
  return out;
}

}  // namespace

RowPlan plan_softmax(std::string_view op, DType in, std::int64_t row_len,
                     const PlanTarget& target) {
  RowPlan plan = detail::plan_float_rows(op, in, row_len, target,
                                         "max and sum run in float32 for half types (PyTorch).");
  // The one-pass variant keeps the row in shared memory in the accumulate dtype, beside the
  // scratch every backend's kernels may take (kernel_abi_families.hpp), within what CUDA and
  // HIP grant without opt-in: a row that fits here fits every backend's kernel.
  const std::int64_t smem = target.caps.shared_memory_per_block.value;
  const std::int64_t budget = std::min(smem, abi::kSoftmaxSharedCap) -
                              std::int64_t(abi::kSoftmaxMaxThreads) * abi::kSoftmaxScratchPerThread;
  const std::int64_t need = row_len * static_cast<std::int64_t>(dtype_size(plan.accumulate_dtype));
  plan.variant = (budget > 0 && need <= budget) ? abi::kSoftmaxOnePass : abi::kSoftmaxLooped;
  plan.choices.push_back(
      {"strided_variant",
       plan.variant == abi::kSoftmaxOnePass ? "softmax.one_pass" : "softmax.looped",
       "shared_memory.per_block", target.caps.shared_memory_per_block.source,
       "where the row kernel does not serve: a row of " + std::to_string(row_len) + " " +
           std::string(dtype_name(plan.accumulate_dtype)) + " values needs " +
           std::to_string(need) + " bytes; the row cache may take " + std::to_string(budget) +
           " (min(" + std::to_string(smem) + ", 48 KiB) less 256 threads' scratch)."});
  plan.choices.push_back(detail::row_tile_choice(target.caps, row_len, plan.row_tile));
  return plan;
}

Tensor softmax(const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  return run("softmax", x, dim, 1.0, {}, false, dtype);
}
Tensor log_softmax(const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  return run("log_softmax", x, dim, 1.0, {}, true, dtype);
}
Tensor scaled_masked_softmax(const Tensor& x, std::int64_t dim, double scale,
                             const std::optional<Tensor>& mask, bool log) {
  return run("scaled_masked_softmax", x, dim, scale, mask, log, {});
}

Tensor softmax_with_temperature(const Tensor& x, std::int64_t dim, double temperature) {
  if (!(std::isfinite(temperature) && temperature > 0)) {
    char t[32];
    std::snprintf(t, sizeof t, "%g", temperature);
    throw InvalidArgument("softmax_with_temperature",
                          std::string("softmax_with_temperature: the temperature must be finite "
                                      "and greater than 0, not ") +
                              t + ".");
  }
  // The kernels compute scale * x in their accumulate dtype: x * (1 / T) for PyTorch's x / T,
  // within one rounding of it. A scale past that dtype's range would turn every row into
  // infinities and NaN on the GPUs (float32 accumulation) while the host's float64 is fine.
  const double scale = 1.0 / temperature;
  const bool wide = x.defined() && x.dtype() == DType::kFloat64;
  const double largest = wide ? std::numeric_limits<double>::max()
                              : static_cast<double>(std::numeric_limits<float>::max());
  if (!(scale <= largest)) {
    char t[32];
    std::snprintf(t, sizeof t, "%g", temperature);
    throw InvalidArgument("softmax_with_temperature",
                          std::string("softmax_with_temperature: the temperature ") + t +
                              " is too small: its reciprocal overflows " +
                              (wide ? "float64" : "float32") + ", the rows' arithmetic.");
  }
  return run("softmax_with_temperature", x, dim, scale, {}, false, {});
}

}  // namespace nbx::ops
