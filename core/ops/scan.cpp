// The scan wrappers: dim, dtypes, the strided row layout, the "scan" launch.
#include "core/ops/scan.hpp"

#include <algorithm>
#include <mutex>
#include <string>

#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"

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
  // A requested dtype casts the input first, as PyTorch does; integers sum into int64.
  // Refused under this op's name, not the cast's (harden: it said "cast on host").
  if (dtype) detail::require_dtype_support(name, *dtype, x.device());
  const Tensor src = dtype && *dtype != x.dtype() ? x.to(*dtype) : x;
  const DType in = src.dtype();
  const DType out_dtype = extreme || is_floating(in) ? in : DType::kInt64;
  DType accumulate = out_dtype;
  if (is_half_type(in)) accumulate = DType::kFloat32;

  // A 0-d tensor scans as a single element along its one implicit dim.
  // (wrap_dim takes 0 and -1 for a 0-d tensor itself; the rank it names stays 0.)
  const int scan_dim = wrap_dim(dim, src.dim(), name);
  abi::ScanParams p{};
  p.op = op;
  p.in_dtype = static_cast<std::int32_t>(in);
  p.out_dtype = static_cast<std::int32_t>(out_dtype);
  p.accumulate_dtype = static_cast<std::int32_t>(accumulate);
  p.in_offset = src.offset();
  p.row_len = src.dim() == 0 ? 1 : src.shape()[scan_dim];

  const Device& device = src.device();
  for (DType t : {in, out_dtype, accumulate}) detail::require_dtype_support(name, t, device);
  if (extreme) detail::require_dtype_support(name, DType::kInt64, device);

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

  KernelBuffer buffers[3] = {{r.values.storage()->memory(), true},
                             {src.storage()->memory(), false},
                             {extreme ? r.indices.storage()->memory() : DeviceMemory{}, true}};
  KernelLaunch kl;
  kl.kernel = "scan";
  kl.buffers = std::span<const KernelBuffer>(buffers, extreme ? 3 : 2);
  kl.params = std::as_bytes(std::span<const abi::ScanParams>(&p, 1));
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kl);
  return r;
}

}  // namespace

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

}  // namespace nbx::ops
