// The scan wrappers: dim, dtypes, the strided row layout, the "scan" launch.
#include "core/ops/scan.hpp"

#include <algorithm>
#include <mutex>
#include <string>

#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/plan.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops {
namespace {

struct ScanResult {
  Tensor values;
  Tensor indices;
};

ScanResult run_scan(const char* name, abi::ScanOp op, const Tensor& x, std::int64_t dim,
                    std::optional<DType> dtype) {
  if (!x.defined()) throw InvalidArgument(name, std::string(name) + ": the tensor is undefined.");
  const bool extreme = op == abi::kScan_cummax || op == abi::kScan_cummin;
  // A 0-d tensor scans as a single element along its one implicit dim.
  // (wrap_dim takes 0 and -1 for a 0-d tensor itself; the rank it names stays 0.)
  const int scan_dim = wrap_dim(dim, x.dim(), name);
  const Device& device = x.device();
  const RowPlan plan = plan_scan(name, x.dtype(), dtype, x.dim() == 0 ? 1 : x.shape()[scan_dim],
                                 {device.capabilities(), device.str(), device.display_name()});
  const Tensor src = x.to(plan.input_dtype);  // a requested dtype casts first, as PyTorch does
  const DType in = src.dtype();
  const DType out_dtype = plan.out_dtype;
  const DType accumulate = plan.accumulate_dtype;

  abi::ScanParams p{};
  p.op = op;
  p.in_dtype = static_cast<std::int32_t>(in);
  p.out_dtype = static_cast<std::int32_t>(out_dtype);
  p.accumulate_dtype = static_cast<std::int32_t>(accumulate);
  p.in_offset = src.offset();
  p.row_len = src.dim() == 0 ? 1 : src.shape()[scan_dim];

  ScanResult r;
  r.values = Tensor::empty(src.shape(), out_dtype, device);
  if (extreme) r.indices = Tensor::empty(src.shape(), DType::kInt64, device);
  const Strides vs = r.values.strides();
  const Strides is = extreme ? r.indices.strides() : Strides{};
  for (int d = 0; d < src.dim(); ++d) {
    if (d == scan_dim) {
      p.in_row_stride = src.strides()[d];
      p.out_row_stride = vs[d];
      if (extreme) p.index_row_stride = is[d];
      continue;
    }
    p.outer_sizes[p.outer_ndim] = src.shape()[d];
    p.in_outer_strides[p.outer_ndim] = src.strides()[d];
    p.out_outer_strides[p.outer_ndim] = vs[d];
    if (extreme) p.index_outer_strides[p.outer_ndim] = is[d];
    ++p.outer_ndim;
  }
  p.rows = p.row_len == 0 ? 0 : src.numel() / p.row_len;
  if (src.dim() == 0) p.rows = 1;
  if (p.rows == 0 || p.row_len == 0) return r;
  std::vector<PlanChoice> choices;  // the layout, as `nbx explain` shows it
  plan_scan_variant(p,
                    {device.capabilities(), device.str(), device.display_name(),
                     &device.context().backend_device()},
                    choices);

  KernelBuffer buffers[3] = {{r.values.storage()->memory(), true},
                             {src.storage()->memory(), false},
                             {extreme ? r.indices.storage()->memory() : DeviceMemory{}, true}};
  KernelLaunch kl;
  kl.family = KernelFamily::kScan;
  kl.buffers = std::span<const KernelBuffer>(buffers, extreme ? 3 : 2);
  kl.params = std::as_bytes(std::span<const abi::ScanParams>(&p, 1));
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kl);
  return r;
}

}  // namespace

// The dtypes; the layout (the kernel variant) is plan_scan_variant's, from the parameter block.
RowPlan plan_scan(std::string_view op, DType in, std::optional<DType> requested,
                  [[maybe_unused]] std::int64_t row_len, const PlanTarget& target) {
  const std::string name(op);
  const bool extreme = op == "cummax" || op == "cummin";
  const bool log_sum = op == "logcumsumexp";
  if (!extreme && !log_sum && op != "cumsum" && op != "cumprod")
    throw InvalidArgument(name, "'" + name + "' is not a scan.");
  const auto require = [&](DType t) {
    detail::require_dtype_support(name, t, target.caps, target.device_id, target.device_name);
  };
  // Refused under this op's name, not the cast's (harden: it said "cast on host").
  if (requested) require(*requested);
  require(in);
  // PyTorch has no bool cumsum/cumprod kernel ("not implemented for 'Bool'"); a bool input
  // without a requested dtype sums into int64.
  if (requested == DType::kBool)
    throw InvalidArgument(name, name +
                                    " cannot produce bool (the requested dtype); request an "
                                    "integer or floating dtype.");
  // PyTorch's logcumsumexp kernels are floating only ("not implemented for 'Long'").
  if (log_sum && !is_floating(in))
    throw InvalidArgument(name, name + " is not defined for " + std::string(dtype_name(in)) +
                                    " tensors (it takes floating dtypes).");
  RowPlan plan;
  plan.input_dtype = requested.value_or(in);
  const DType t = plan.input_dtype;
  // A requested dtype is the output's, as sum's: cumsum(x, d, int32) gives int32.
  plan.out_dtype = extreme || requested || is_floating(t) ? t : DType::kInt64;
  // Integer sums and products accumulate in int64 and narrow to a requested int32 … uint8
  // by wrapping, which keeps the same low bits as PyTorch's accumulation.
  const bool integer_sum = !extreme && !is_floating(t);
  plan.accumulate_dtype = is_half_type(t) ? DType::kFloat32
                          : integer_sum   ? DType::kInt64
                                          : plan.out_dtype;
  for (DType d : {t, plan.out_dtype, plan.accumulate_dtype}) require(d);
  if (extreme) require(DType::kInt64);
  const bool to_int64 = plan.out_dtype == DType::kInt64 && t != DType::kInt64;
  plan.choices.push_back({"out_dtype", std::string(dtype_name(plan.out_dtype)),
                          to_int64 ? "int64" : "", to_int64 ? target.caps.int64.source : "",
                          extreme     ? "running extrema keep the input dtype (PyTorch)."
                          : log_sum   ? "logcumsumexp keeps the floating input dtype (PyTorch)."
                          : requested ? "the requested dtype (PyTorch)."
                          : to_int64
                              ? "integer and bool scans sum into int64, as sum does (PyTorch)."
                              : "floating scans keep their dtype (PyTorch)."});
  plan.choices.push_back(
      {"accumulate_dtype", std::string(dtype_name(plan.accumulate_dtype)),
       integer_sum ? "int64" : "", integer_sum ? target.caps.int64.source : "",
       log_sum && is_half_type(t)
           ? "float16/bfloat16 accumulate in float32: a running maximum and a compensated sum "
             "of exp(x - maximum), rescaled when the maximum grows."
       : log_sum ? "a running maximum and a compensated sum of exp(x - maximum) in the output "
                   "dtype, rescaled when the maximum grows."
       : is_half_type(t) ? "float16/bfloat16 accumulate in float32."
       : integer_sum && plan.out_dtype != DType::kInt64
           ? "integers accumulate in int64, then narrow to the output (wrapping)."
           : "accumulates in the output dtype."});
  if (extreme)
    plan.choices.push_back({"indices_dtype", "int64", "int64", target.caps.int64.source,
                            "the position of each running extremum (ties take the later one)."});
  return plan;
}

Tensor cumsum(const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  return run_scan("cumsum", abi::kScan_cumsum, x, dim, dtype).values;
}
Tensor cumprod(const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  return run_scan("cumprod", abi::kScan_cumprod, x, dim, dtype).values;
}
ValuesAndIndices cummax(const Tensor& x, std::int64_t dim) {
  ScanResult r = run_scan("cummax", abi::kScan_cummax, x, dim, {});
  return {r.values, r.indices};
}
ValuesAndIndices cummin(const Tensor& x, std::int64_t dim) {
  ScanResult r = run_scan("cummin", abi::kScan_cummin, x, dim, {});
  return {r.values, r.indices};
}
Tensor logcumsumexp(const Tensor& x, std::int64_t dim) {
  return run_scan("logcumsumexp", abi::kScan_logcumsumexp, x, dim, {}).values;
}

}  // namespace nbx::ops
