// The creation wrappers: lengths and value formulas, the "fill" launch.
#include "core/ops/creation.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/plan.hpp"

namespace nbx::ops {
namespace {

void launch_fill(const abi::FillParams& p, const Tensor& out, const Tensor* in) {
  KernelBuffer buffers[2] = {{out.storage()->memory(), true}, {}};
  if (in) buffers[1] = {in->storage()->memory(), false};
  KernelLaunch kl;
  kl.family = KernelFamily::kFill;
  kl.buffers = std::span<const KernelBuffer>(buffers, in ? 2 : 1);
  kl.params = std::as_bytes(std::span<const abi::FillParams>(&p, 1));
  DeviceContext& ctx = out.device().context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kl);
}

// A new tensor's byte count must fit 64 bits (harden). Tensor::empty multiplies numel by
// the item size unchecked: arange(0, 2^61) in int64 allocated 0 bytes and the fill kernel
// then wrote 2^61 elements (a segfault on the host). PyTorch: "invalid size, possible
// overflow?".
void check_bytes(const char* op, const Shape& shape, DType dtype, const std::string& args) {
  for (std::int64_t v : shape)
    if (v < 0)  // named by the op (harden: full said "empty: sizes must be non-negative")
      throw InvalidArgument(
          op, std::string(op) + ": sizes must be non-negative, got " + to_string(shape) + args);
  for (std::int64_t v : shape)
    if (v == 0) return;  // empty
  std::int64_t n = 1;
  for (std::int64_t v : shape)
    if (n >= 0 && __builtin_mul_overflow(n, v, &n)) n = -1;
  const auto limit = std::numeric_limits<std::int64_t>::max() / std::int64_t(dtype_size(dtype));
  if (n < 0 || n > limit)
    throw InvalidArgument(op, std::string(op) + ": " + to_string(shape) + " elements of " +
                                  std::string(dtype_name(dtype)) +
                                  " would take more than 2^63 bytes (invalid size, possible "
                                  "overflow)" +
                                  args);
}

// The parameter block of a 1-d range of `n` elements written into a fresh `out`.
abi::FillParams range_params(abi::FillOp op, const Tensor& out) {
  abi::FillParams p{};
  p.op = op;
  p.out_dtype = static_cast<std::int32_t>(out.dtype());
  p.ndim = 1;
  p.numel = out.numel();
  p.sizes[0] = out.numel();
  p.out_strides[0] = 1;
  return p;
}

// The dtype a range's values are computed in, as a plan decision. Integer ranges: int64
// (exact past 2^53), or int32 on a device without int64 when the ends fit. Floating ranges:
// float64 where the output is float64, or an integer (linspace steps in double, as
// PyTorch's) on a device with fp64; else float32.
void choose_range_compute_dtype(ElementPlan& plan, bool integral, const Capabilities& caps,
                                std::initializer_list<Scalar> ends) {
  const DType out = plan.out_dtype;
  if (integral) {
    bool fits32 = true;
    for (const Scalar& v : ends) fits32 = fits32 && std::fabs(v.to_double()) < 2147483648.0;
    plan.compute_dtype = caps.int64.value || !fits32 ? DType::kInt64 : DType::kInt32;
    plan.choices.push_back(
        {"compute_dtype", std::string(dtype_name(plan.compute_dtype)), "int64", caps.int64.source,
         caps.int64.value ? "integer bounds and step: the values are computed in int64, exact."
         : fits32         ? "no int64: integer values are computed in int32; the ends fit."
                          : "the ends need int64, which the device lacks."});
    return;
  }
  const bool wide = out == DType::kFloat64 || (!is_floating(out) && caps.fp64.value);
  plan.compute_dtype = wide ? DType::kFloat64 : DType::kFloat32;
  plan.choices.push_back(
      {"compute_dtype", std::string(dtype_name(plan.compute_dtype)),
       out == DType::kFloat64 ? "" : "fp64", out == DType::kFloat64 ? "" : caps.fp64.source,
       out == DType::kFloat64 ? "float64 values are computed in float64."
       : is_floating(out)     ? "floating values are computed in float32, then stored."
       : wide                 ? "integer outputs step in double, as PyTorch's."
                              : "integer outputs step in float32: the device has no fp64."});
}

// A scalar that fits `dtype` (require_fits) as that dtype holds it, for linspace's ends: an
// integer dtype truncates a float toward zero and wraps uint8's negative integers (-16 →
// 240), as PyTorch's Scalar::to<uint8_t>.
double value_in_dtype(const Scalar& v, DType dtype) {
  if (is_floating(dtype)) return v.to_double();
  if (dtype == DType::kBool) return v.to_bool() ? 1.0 : 0.0;
  if (v.is_floating()) return std::trunc(v.to_double());
  const std::int64_t i = v.to_int();
  return static_cast<double>(dtype == DType::kUInt8 && i < 0 ? i + 256 : i);
}

PlanTarget target_of(const Device& device) {
  return {device.capabilities(), device.str(), device.display_name()};
}

void require(std::string_view op, DType t, const PlanTarget& target) {
  detail::require_dtype_support(op, t, target.caps, target.device_id, target.device_name);
}

PlanChoice out_dtype_choice(DType t) {
  return {"out_dtype", std::string(dtype_name(t)), "", "", "the requested dtype."};
}

Tensor triangle(const char* name, abi::FillOp op, const Tensor& x, std::int64_t diagonal) {
  if (!x.defined()) throw InvalidArgument(name, std::string(name) + ": the tensor is undefined.");
  plan_triangle(name, x.shape(), x.dtype(), target_of(x.device()));
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  abi::FillParams p{};
  p.op = op;
  p.out_dtype = p.in_dtype = static_cast<std::int32_t>(x.dtype());
  p.ndim = x.dim();
  p.numel = x.numel();
  const Strides os = out.strides();
  for (int d = 0; d < x.dim(); ++d) {
    p.sizes[d] = x.shape()[d];
    p.out_strides[d] = os[d];
    p.in_strides[d] = x.strides()[d];
  }
  p.in_offset = x.offset();
  p.diagonal = diagonal;
  launch_fill(p, out, &x);
  return out;
}

}  // namespace

ElementPlan plan_full(std::string_view op, const Shape& shape, DType dtype,
                      const PlanTarget& target) {
  const std::string name(op);
  check_bytes(name.c_str(), shape, dtype, ".");
  require(op, dtype, target);  // named by the op, not "empty" (harden)
  ElementPlan plan;
  plan.out_shape = shape;
  plan.input_dtype = plan.out_dtype = plan.compute_dtype = dtype;
  plan.choices.push_back(out_dtype_choice(dtype));
  plan.choices.push_back({"value", "one host scalar", "", "",
                          "the elementwise copy reads the value from its parameter block: no "
                          "host buffer of numel elements, no host round trip."});
  return plan;
}

ElementPlan plan_arange(Scalar start, Scalar end, Scalar step, DType dtype,
                        const PlanTarget& target) {
  const std::string args =
      " (start " + start.str() + ", end " + end.str() + ", step " + step.str() + ").";
  if (dtype == DType::kBool)
    throw InvalidArgument("arange", "arange is not defined for bool tensors" + args);
  const double s = start.to_double(), e = end.to_double(), d = step.to_double();
  for (double v : {s, e, d})
    if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
      throw InvalidArgument("arange",
                            "arange: the bounds and the step must be finite int64-range"
                            " numbers" +
                                args);
  // An integer dtype takes integer bounds and step, truncated toward zero, as PyTorch's
  // int64 arange does; so does a range whose bounds and step are all integers.
  const bool integral =
      !is_floating(dtype) || (!start.is_floating() && !end.is_floating() && !step.is_floating());
  const std::int64_t si = start.to_int(), ei = end.to_int(), di = step.to_int();
  if (integral ? di == 0 : d == 0)
    throw InvalidArgument("arange", "arange: the step must be non-zero" +
                                        std::string(integral && d != 0 ? " once truncated to an "
                                                                         "integer"
                                                                       : "") +
                                        args);
  if (integral ? (di > 0 && ei < si) || (di < 0 && ei > si) : (d > 0 && e < s) || (d < 0 && e > s))
    throw InvalidArgument("arange", "arange: the step walks away from the end" + args);
  // In 128 bits (harden): ei - si overflowed int64 for bounds near ±9.2e18.
  const __int128 span = static_cast<__int128>(ei) - si + di - (di > 0 ? 1 : -1);
  // The count, as PyTorch's: from the truncated bounds for int64 (and integer bounds), from
  // the given ones for the other dtypes (arange(6.82, 35.72, 1.7, int16) has
  // ceil(28.9 / 1.7) = 17 elements of 6 + 1 i); -0 when the bounds truncate past each other.
  const bool count_truncated =
      dtype == DType::kInt64 || (!start.is_floating() && !end.is_floating() && !step.is_floating());
  const double nd =
      count_truncated ? static_cast<double>(span / di) : std::max(0.0, std::ceil((e - s) / d));
  if (!(nd < 9.2e18))
    throw InvalidArgument("arange",
                          "arange: the range has more than 2^63 elements (invalid size, "
                          "possible overflow)" +
                              args);
  const std::int64_t n =
      count_truncated ? static_cast<std::int64_t>(span / di) : static_cast<std::int64_t>(nd);
  check_bytes("arange", {n}, dtype, args);
  ElementPlan plan;
  plan.out_shape = {n};
  plan.out_dtype = dtype;
  plan.choices.push_back(out_dtype_choice(dtype));
  choose_range_compute_dtype(plan, integral, target.caps, {start, end});
  plan.input_dtype = plan.compute_dtype;
  for (DType t : {dtype, plan.compute_dtype}) require("arange", t, target);
  return plan;
}

ElementPlan plan_linspace(Scalar start, Scalar end, std::int64_t steps, DType dtype,
                          const PlanTarget& target) {
  if (steps < 0)
    throw InvalidArgument("linspace", "linspace: the number of steps must be non-negative (got " +
                                          std::to_string(steps) + ").");
  if (dtype == DType::kBool)
    throw InvalidArgument("linspace", "linspace is not defined for bool tensors.");
  require("linspace", dtype, target);
  check_bytes("linspace", {steps}, dtype, " (steps " + std::to_string(steps) + ").");
  // PyTorch converts the ends to the dtype first, refusing what overflows it, then steps in
  // double between the converted ends. No steps convert nothing; a single step is start
  // alone.
  if (steps > 0) require_fits("linspace", start, dtype);
  if (steps > 1) require_fits("linspace", end, dtype);
  ElementPlan plan;
  plan.out_shape = {steps};
  plan.out_dtype = dtype;
  plan.choices.push_back(out_dtype_choice(dtype));
  choose_range_compute_dtype(plan, false, target.caps, {start, end});
  plan.input_dtype = plan.compute_dtype;
  return plan;
}

ElementPlan plan_triangle(std::string_view op, const Shape& x, DType dtype,
                          const PlanTarget& target) {
  const std::string name(op);
  if (x.size() < 2)
    throw InvalidArgument(
        name, name + ": the input must have at least 2 dims (got shape " + to_string(x) + ").");
  require(op, dtype, target);
  ElementPlan plan;
  plan.out_shape = x;
  plan.input_dtype = plan.out_dtype = plan.compute_dtype = dtype;
  plan.choices.push_back({"out_dtype", std::string(dtype_name(dtype)), "", "",
                          "the input's dtype; a new contiguous tensor (PyTorch)."});
  return plan;
}

Tensor full(const Shape& shape, Scalar value, DType dtype, const Device& device) {
  plan_full("full", shape, dtype, target_of(device));
  return Tensor::full(shape, value, dtype, device);
}

Tensor fill(const Tensor& like, Scalar value) {
  if (!like.defined()) throw InvalidArgument("fill", "fill: the tensor is undefined.");
  plan_full("fill", like.shape(), like.dtype(), target_of(like.device()));
  require_fits("fill", value, like.dtype());  // named by this op, not by full's check
  return Tensor::full(like.shape(), value, like.dtype(), like.device());
}

Tensor arange(Scalar start, Scalar end, Scalar step, DType dtype, const Device& device) {
  const ElementPlan plan = plan_arange(start, end, step, dtype, target_of(device));
  Tensor out = Tensor::empty(plan.out_shape, dtype, device);
  if (out.numel() == 0) return out;
  abi::FillParams p = range_params(abi::kFill_arange, out);
  p.in_dtype = static_cast<std::int32_t>(plan.compute_dtype);
  p.start = {start.to_double(), start.to_int()};
  p.step = {step.to_double(), step.to_int()};
  p.end = {end.to_double(), end.to_int()};
  launch_fill(p, out, nullptr);
  return out;
}

Tensor linspace(Scalar start, Scalar end, std::int64_t steps, DType dtype, const Device& device) {
  const ElementPlan plan = plan_linspace(start, end, steps, dtype, target_of(device));
  Tensor out = Tensor::empty(plan.out_shape, dtype, device);
  if (steps == 0) return out;
  // The ends as the dtype holds them (plan_linspace refused what overflows it); every value
  // then lies between two values of the dtype, so no store saturates.
  const double s = value_in_dtype(start, dtype);
  const double e = steps == 1 ? s : value_in_dtype(end, dtype);
  abi::FillParams p = range_params(abi::kFill_linspace, out);
  p.in_dtype = static_cast<std::int32_t>(plan.compute_dtype);
  const double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0.0;
  p.start = {s, static_cast<std::int64_t>(s)};
  p.end = {e, static_cast<std::int64_t>(e)};
  p.step = {step, 0};
  launch_fill(p, out, nullptr);
  return out;
}

Tensor triu(const Tensor& x, std::int64_t diagonal) {
  return triangle("triu", abi::kFill_triu, x, diagonal);
}
Tensor tril(const Tensor& x, std::int64_t diagonal) {
  return triangle("tril", abi::kFill_tril, x, diagonal);
}

// ---- issue 11's creation ops ----

namespace {

// Whether x's elements tile exactly numel() elements of storage, each once (PyTorch's
// is_non_overlapping_and_dense): walking the dims from the smallest stride up, each stride
// is the product of the sizes before it. Size-1 dims take no part.
bool dense_and_non_overlapping(const Tensor& x) {
  std::vector<int> order(static_cast<std::size_t>(x.dim()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return x.strides()[a] < x.strides()[b]; });
  std::int64_t expected = 1;
  for (int d : order) {
    if (x.shape()[d] == 1) continue;
    if (x.strides()[d] != expected) return false;
    expected *= x.shape()[d];
  }
  return true;
}

// A tensor of like's shape over `storage` of numel() elements: like's strides where they
// tile it (preserve_format), else contiguous ones.
Tensor shaped_like(const Tensor& like, std::shared_ptr<Storage> storage, DType dtype) {
  const Strides strides =
      dense_and_non_overlapping(like) ? like.strides() : contiguous_strides(like.shape());
  return Tensor(std::move(storage), 0, like.shape(), strides, dtype);
}

struct LikeTarget {
  DType dtype;
  Device device;
};

LikeTarget like_target(const char* op, const Tensor& like, std::optional<DType> dtype,
                       const std::optional<Device>& device) {
  if (!like.defined()) throw InvalidArgument(op, std::string(op) + ": the tensor is undefined.");
  LikeTarget t{dtype.value_or(like.dtype()), device.value_or(like.device())};
  plan_full(op, like.shape(), t.dtype, target_of(t.device));  // sizes and dtype, named by op
  return t;
}

// The *_like ops that write a value: one contiguous fill of the storage (every element
// takes the same value, so the layout does not matter), viewed with like's strides.
Tensor filled_like(const char* op, const Tensor& like, Scalar value, std::optional<DType> dtype,
                   const std::optional<Device>& device) {
  const LikeTarget t = like_target(op, like, dtype, device);
  require_fits(op, value, t.dtype);  // named by this op, not by full's check
  const Tensor flat = Tensor::full({like.numel()}, value, t.dtype, t.device);
  return shaped_like(like, flat.storage(), t.dtype);
}

}  // namespace

Tensor empty_like(const Tensor& like, std::optional<DType> dtype, std::optional<Device> device) {
  const LikeTarget t = like_target("empty_like", like, dtype, device);
  const std::size_t bytes = static_cast<std::size_t>(like.numel()) * dtype_size(t.dtype);
  return shaped_like(like, std::make_shared<Storage>(t.device, bytes), t.dtype);
}
Tensor zeros_like(const Tensor& like, std::optional<DType> dtype, std::optional<Device> device) {
  return filled_like("zeros_like", like, Scalar(0), dtype, device);
}
Tensor ones_like(const Tensor& like, std::optional<DType> dtype, std::optional<Device> device) {
  return filled_like("ones_like", like, Scalar(1), dtype, device);
}
Tensor full_like(const Tensor& like, Scalar value, std::optional<DType> dtype,
                 std::optional<Device> device) {
  return filled_like("full_like", like, value, dtype, device);
}

ElementPlan plan_eye(std::int64_t n, std::int64_t m, DType dtype, const PlanTarget& target) {
  for (const auto& [what, v] : {std::pair{"n", n}, std::pair{"m", m}})
    if (v < 0)
      throw InvalidArgument("eye", std::string("eye: ") + what +
                                       " must be greater or equal to 0, got " + std::to_string(v) +
                                       ".");
  ElementPlan plan = plan_full("eye", {n, m}, dtype, target);
  plan.choices.pop_back();  // full's "value" choice: eye's values come from the fill kernel
  plan.choices.push_back({"values", "1 on the diagonal, 0 elsewhere", "", "",
                          "the fill kernel writes each element from its row and column: no "
                          "host buffer, one launch."});
  return plan;
}

Tensor eye(std::int64_t n, DType dtype, const Device& device) {
  return eye(n, n, dtype, device);
}
Tensor eye(std::int64_t n, std::int64_t m, DType dtype, const Device& device) {
  plan_eye(n, m, dtype, target_of(device));
  Tensor out = Tensor::empty({n, m}, dtype, device);
  if (out.numel() == 0) return out;
  abi::FillParams p{};
  p.op = abi::kFill_eye;
  p.out_dtype = p.in_dtype = static_cast<std::int32_t>(dtype);
  p.ndim = 2;
  p.numel = out.numel();
  p.sizes[0] = n;
  p.sizes[1] = m;
  p.out_strides[0] = out.strides()[0];
  p.out_strides[1] = out.strides()[1];
  launch_fill(p, out, nullptr);
  return out;
}

Tensor empty_strided(const Shape& sizes, const Strides& strides, DType dtype,
                     const Device& device) {
  const std::string args = " (sizes " + to_string(sizes) + ", strides " + to_string(strides) + ").";
  if (sizes.size() != strides.size())
    throw InvalidArgument("empty_strided", "empty_strided: " + std::to_string(sizes.size()) +
                                               " sizes and " + std::to_string(strides.size()) +
                                               " strides; they must have the same rank" + args);
  for (std::int64_t s : strides)
    if (s < 0)
      throw InvalidArgument("empty_strided", "empty_strided: strides must be non-negative" + args);
  check_bytes("empty_strided", sizes, dtype, args);
  require("empty_strided", dtype, target_of(device));
  // The storage reaches the largest offset, 1 + Σ (size - 1) · stride elements, in 128 bits.
  bool empty = false;
  __int128 last = 0;
  for (int d = 0; d < sizes.size(); ++d) {
    empty = empty || sizes[d] == 0;
    if (sizes[d] > 0) last += static_cast<__int128>(sizes[d] - 1) * strides[d];
  }
  const __int128 elements = empty ? 0 : last + 1;
  if (elements > std::numeric_limits<std::int64_t>::max() / std::int64_t(dtype_size(dtype)))
    throw InvalidArgument("empty_strided",
                          "empty_strided: the storage would take more than 2^63 "
                          "bytes (invalid size, possible overflow)" +
                              args);
  const std::size_t bytes = static_cast<std::size_t>(elements) * dtype_size(dtype);
  return Tensor(std::make_shared<Storage>(device, bytes), 0, sizes, strides, dtype);
}

}  // namespace nbx::ops
