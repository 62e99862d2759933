// sort, argsort, msort, topk and kthvalue: the "sort" launch (the row layout, the plan, the
// radix workspace) and the views of its result the selections take.
#include "core/ops/sort.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <optional>
#include <string>

#include "core/families/kernel_family.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/plan.hpp"
#include "core/ops/sort_detail.hpp"
#include "core/ops/tiling.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops {
namespace detail {

namespace {

// The row layout of a "sort" launch over x along sort_dim, written into values and indices
// (views of x's shape, or of k along sort_dim for topk); op and k are the caller's.
abi::SortParams row_params(const Tensor& x, const Tensor& values, const Tensor& indices,
                           int sort_dim, bool descending) {
  abi::SortParams p{};
  p.op = abi::kSort_sort;
  p.dtype = static_cast<std::int32_t>(x.dtype());
  p.descending = descending ? 1 : 0;
  p.in_offset = x.offset();
  p.values_offset = values.offset();
  p.indices_offset = indices.offset();
  p.row_len = x.dim() == 0 ? 1 : x.shape()[sort_dim];
  if (x.dim() == 0) p.in_row_stride = p.values_row_stride = p.indices_row_stride = 1;
  for (int d = 0; d < x.dim(); ++d) {
    if (d == sort_dim) {
      p.in_row_stride = x.strides()[d];
      p.values_row_stride = values.strides()[d];
      p.indices_row_stride = indices.strides()[d];
      continue;
    }
    p.outer_sizes[p.outer_ndim] = x.shape()[d];
    p.in_outer_strides[p.outer_ndim] = x.strides()[d];
    p.values_outer_strides[p.outer_ndim] = values.strides()[d];
    p.indices_outer_strides[p.outer_ndim] = indices.strides()[d];
    ++p.outer_ndim;
  }
  p.rows = p.row_len == 0 ? 0 : x.numel() / p.row_len;
  p.k = p.row_len;
  return p;
}

// The launch of planned params `p` (variant set) with the workspace its variant takes.
void launch_planned(const abi::SortParams& p, const Tensor& x, const Tensor& values,
                    const Tensor& indices) {
  const Device& device = x.device();
  Tensor workspace;
  if (const std::int64_t words =
          abi::sort_variant_workspace_words(p.variant, p.rows, p.row_len, p.key_bits))
    workspace = Tensor::empty({words}, DType::kInt32, device);
  KernelBuffer buffers[4] = {
      {values.storage()->memory(), true},
      {indices.storage()->memory(), true},
      {x.storage()->memory(), false},
      {workspace.defined() ? workspace.storage()->memory() : DeviceMemory{}, true}};
  KernelLaunch kl;
  kl.family = KernelFamily::kSort;
  kl.buffers = buffers;
  kl.params = std::as_bytes(std::span<const abi::SortParams>(&p, 1));
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kl);
}

// One "sort" launch over the rows of x along sort_dim, written into values and indices (views
// of x's shape).
void launch_sort(const Tensor& x, const Tensor& values, const Tensor& indices, int sort_dim,
                 bool descending, const PlanTarget& target) {
  abi::SortParams p = row_params(x, values, indices, sort_dim, descending);
  if (p.rows == 0) return;
  std::vector<PlanChoice> choices;
  const int variant = plan_sort_variant(p, target, choices);
  // A row the rows variant's full tile holds but this device's shared memory does not: the
  // tile is clamped and the row takes a workspace variant — said once per device and dtype.
  const std::int64_t cap = sort_rows_tile_cap(x.dtype(), target);
  if (cap < abi::kSortRowsTileMax && p.row_len > cap && p.row_len <= abi::kSortRowsTileMax) {
    const std::string dtype(dtype_name(x.dtype()));
    announce_once("sort tile " + target.device_id + " " + dtype,
                  "sort on " + target.device_name + ": the rows variant's tile is clamped to " +
                      std::to_string(cap) + " " + dtype + " keys (below its " +
                      std::to_string(abi::kSortRowsTileMax) + ": shared_memory.per_block " +
                      std::to_string(target.caps.shared_memory_per_block.value) + ", " +
                      target.caps.shared_memory_per_block.source + "); rows of " +
                      std::to_string(cap + 1) + " to " + std::to_string(abi::kSortRowsTileMax) +
                      " take the " + variant_name(KernelFamily::kSort, variant) + " variant.");
  }
  launch_planned(p, x, values, indices);
}

// Launches over groups of at most `max_rows` rows (the radix workspace's budget,
// sort_rows_per_launch): x, values and indices narrowed alike along their first dim that is
// not sorted and holds more than one row, recursing where one slice of it is still too many.
void launch_in_chunks(const Tensor& x, const Tensor& values, const Tensor& indices, int sort_dim,
                      bool descending, const PlanTarget& target, std::int64_t max_rows) {
  const std::int64_t row_len = x.dim() == 0 ? 1 : x.shape()[sort_dim];
  const std::int64_t rows = row_len == 0 ? 0 : x.numel() / row_len;
  int k = 0;
  while (k < x.dim() && (k == sort_dim || x.shape()[k] == 1)) ++k;
  if (rows <= max_rows || k == x.dim())
    return launch_sort(x, values, indices, sort_dim, descending, target);
  const std::int64_t size = x.shape()[k], per_slice = rows / size;
  const std::int64_t step = std::max<std::int64_t>(1, max_rows / per_slice);
  for (std::int64_t at = 0; at < size; at += step) {
    const std::int64_t n = std::min(step, size - at);
    launch_in_chunks(x.narrow(k, at, n), values.narrow(k, at, n), indices.narrow(k, at, n),
                     sort_dim, descending, target, max_rows);
  }
}

}  // namespace

std::optional<ValuesAndIndices> topk_by_select(const Tensor& x, std::int64_t k, int dim,
                                               bool largest) {
  const Device& device = x.device();
  const PlanTarget target{device.capabilities(), device.str(), device.display_name(),
                          &device.context().backend_device()};
  require_dtype_support("topk", x.dtype(), target.caps, target.device_id, target.device_name);
  require_dtype_support("topk", DType::kInt64, target.caps, target.device_id, target.device_name);
  // Planned on x's own layout first, so nothing is allocated where the plan declines.
  abi::SortParams plan = row_params(x, x, x, dim, largest);
  plan.op = abi::kSort_topk;
  plan.k = k;
  std::vector<PlanChoice> choices;
  if (plan.rows == 0 || k == 0 || !plan_topk_select(plan, target, choices)) return std::nullopt;
  Shape shape = x.shape();
  shape[dim] = k;
  ValuesAndIndices r{Tensor::empty(shape, x.dtype(), device),
                     Tensor::empty(shape, DType::kInt64, device)};
  abi::SortParams p = row_params(x, r.values, r.indices, dim, largest);
  p.op = plan.op, p.k = k, p.variant = plan.variant, p.key_bits = plan.key_bits;
  p.tile = plan.tile;  // the candidates
  launch_planned(p, x, r.values, r.indices);
  return r;
}

ValuesAndIndices sort_rows(const char* name, const Tensor& x, std::int64_t dim, bool descending) {
  if (!x.defined()) throw InvalidArgument(name, std::string(name) + ": the tensor is undefined.");
  const int sort_dim = wrap_dim(dim, x.dim(), name);
  const Device& device = x.device();
  const PlanTarget target{device.capabilities(), device.str(), device.display_name(),
                          &device.context().backend_device()};
  require_dtype_support(name, x.dtype(), target.caps, target.device_id, target.device_name);
  require_dtype_support(name, DType::kInt64, target.caps, target.device_id, target.device_name);
  ValuesAndIndices r{Tensor::empty(x.shape(), x.dtype(), device),
                     Tensor::empty(x.shape(), DType::kInt64, device)};
  // The variant of the whole problem decides whether it is launched in groups of rows (only
  // the radix and onesweep variants have a workspace); each launch plans its own rows again.
  abi::SortParams whole{};
  whole.dtype = static_cast<std::int32_t>(x.dtype());
  whole.row_len = x.dim() == 0 ? 1 : x.shape()[sort_dim];
  whole.rows = whole.row_len == 0 ? 0 : x.numel() / whole.row_len;
  if (whole.rows == 0) return r;
  std::vector<PlanChoice> unused;
  const int variant = plan_sort_variant(whole, target, unused);
  launch_in_chunks(x, r.values, r.indices, sort_dim, descending, target,
                   variant != abi::kSortRows
                       ? sort_rows_per_launch(variant, whole.row_len, whole.key_bits)
                       : std::numeric_limits<std::int64_t>::max());
  return r;
}

void require_not_bool(const char* name, const Tensor& x) {
  if (x.defined() && x.dtype() == DType::kBool)
    throw InvalidArgument(name, std::string(name) +
                                    " is not defined for bool tensors (PyTorch has no bool "
                                    "kernel; sort them, or cast to uint8).");
}

std::int64_t sorted_size(const char* name, const Tensor& x, std::int64_t dim) {
  const int d = wrap_dim(dim, x.dim(), name);
  return x.dim() == 0 ? 1 : x.shape()[d];
}

ValuesAndIndices select_position(const ValuesAndIndices& s, int dim, std::int64_t position,
                                 bool keepdim) {
  Tensor v = s.values.narrow(dim, position, 1).contiguous();
  Tensor i = s.indices.narrow(dim, position, 1).contiguous();
  if (keepdim) return {v, i};
  return {v.squeeze(dim), i.squeeze(dim)};
}

}  // namespace detail

ValuesAndIndices sort(const Tensor& x, std::int64_t dim, bool descending, bool /*stable*/) {
  return detail::sort_rows("sort", x, dim, descending);
}

Tensor argsort(const Tensor& x, std::int64_t dim, bool descending, bool /*stable*/) {
  return detail::sort_rows("argsort", x, dim, descending).indices;
}

Tensor msort(const Tensor& x) {
  return detail::sort_rows("msort", x, 0, false).values;
}

ValuesAndIndices topk(const Tensor& x, std::int64_t k, std::int64_t dim, bool largest,
                      bool /*sorted: always in order*/) {
  if (!x.defined()) throw InvalidArgument("topk", "topk: the tensor is undefined.");
  if (x.dim() > 0) detail::require_not_bool("topk", x);  // PyTorch copies a 0-d one first
  const std::int64_t n = detail::sorted_size("topk", x, dim);
  if (k < 0 || k > n)
    throw InvalidArgument("topk", "topk: selected index k (" + std::to_string(k) +
                                      ") is out of range for a dim of size " + std::to_string(n) +
                                      ".");
  const int d = x.dim() == 0 ? 0 : wrap_dim(dim, x.dim(), "topk");
  if (x.dim() > 0) {
    if (auto chosen = detail::topk_by_select(x, k, d, largest)) return *chosen;
    if (auto chosen = detail::topk_by_chunks(x, k, d, largest)) return *chosen;
  }
  ValuesAndIndices s = detail::sort_rows("topk", x, dim, largest);
  if (x.dim() == 0 || k == n) return s;
  return {s.values.narrow(d, 0, k).contiguous(), s.indices.narrow(d, 0, k).contiguous()};
}

ValuesAndIndices kthvalue(const Tensor& x, std::int64_t k, std::int64_t dim, bool keepdim) {
  if (!x.defined()) throw InvalidArgument("kthvalue", "kthvalue: the tensor is undefined.");
  if (x.dim() > 0) detail::require_not_bool("kthvalue", x);  // as topk: 0-d is copied first
  const std::int64_t n = detail::sorted_size("kthvalue", x, dim);
  if (k < 1 || k > n)
    throw InvalidArgument("kthvalue", "kthvalue: selected number k (" + std::to_string(k) +
                                          ") is out of range for a dim of size " +
                                          std::to_string(n) + ".");
  if (x.dim() == 0) return detail::sort_rows("kthvalue", x, dim, false);
  const int d = wrap_dim(dim, x.dim(), "kthvalue");
  // A small k: topk's first k ascending (its last is element k - 1, ties by index as the full
  // sort's), by select or the tournament.
  if (auto chosen = detail::topk_by_select(x, k, d, false))
    return detail::select_position(*chosen, d, k - 1, keepdim);
  if (auto chosen = detail::topk_by_chunks(x, k, d, false))
    return detail::select_position(*chosen, d, k - 1, keepdim);
  ValuesAndIndices s = detail::sort_rows("kthvalue", x, dim, false);
  return detail::select_position(s, d, k - 1, keepdim);
}

}  // namespace nbx::ops
