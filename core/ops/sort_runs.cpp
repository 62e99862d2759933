// mode and unique: the runs of equal values in sorted rows, found on the device — a value
// starts a run where it differs from the one before it (NaN never equals anything, so every
// NaN is a run of its own, as PyTorch's comparisons make it).
//  - mode: each position's run length from the running maximum (cummax) of the run starts;
//    the first position with the longest run is the end of the mode's run (the smallest value
//    among equally frequent ones), and its sorted index the value's last occurrence (the sort
//    is stable) — PyTorch's answer.
//  - unique: the run starts compacted by a stable sort of their flags (starts first, in order),
//    values gathered there, counts from the starts' differences, the inverse from each sorted
//    position's run number taken back through the inverse permutation (an argsort of the sort's
//    indices). The number of unique values is read to the host once, as PyTorch does.
#include <string>

#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/index.hpp"
#include "core/ops/scan.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/sort.hpp"
#include "core/ops/sort_detail.hpp"

namespace nbx::ops {
namespace {

// True where a sorted element starts a run (position 0 along dim, or unequal to its
// predecessor); bool, s's shape.
Tensor run_starts(const Tensor& s, int dim) {
  const std::int64_t n = s.shape()[dim];
  Shape first = s.shape();
  first[dim] = 1;
  const Tensor head = full(first, true, DType::kBool, s.device());
  if (n == 1) return head;
  return cat({head, ne(s.narrow(dim, 1, n - 1), s.narrow(dim, 0, n - 1))}, dim);
}

// 0, 1, …, n − 1 along `dim` of a rank-`rank` tensor (size 1 elsewhere), int64.
Tensor positions_along(std::int64_t n, int dim, int rank, const Device& device) {
  Shape shape(std::vector<std::int64_t>(std::size_t(rank), 1));
  shape[dim] = n;
  return arange(0, n, 1, DType::kInt64, device).view(shape);
}

}  // namespace

ValuesAndIndices mode(const Tensor& x, std::int64_t dim, bool keepdim) {
  if (!x.defined()) throw InvalidArgument("mode", "mode: the tensor is undefined.");
  const std::int64_t n = detail::sorted_size("mode", x, dim);
  const Tensor rows = x.dim() == 0 ? x.reshape({1}) : x;
  const int d = wrap_dim(dim, rows.dim(), "mode");
  if (n == 0)
    throw InvalidArgument(
        "mode", "mode: expected reduction dim " + std::to_string(dim) + " to have non-zero size.");
  const ValuesAndIndices s = detail::sort_rows("mode", rows, d, false);
  // A run's start position at each of its elements: the running maximum of the starts.
  const Tensor at = positions_along(n, d, rows.dim(), x.device());
  const Tensor start = cummax(where(run_starts(s.values, d), at, 0), d).values;
  const Tensor length = add(sub(at, start), 1);
  const Tensor end = argmax(length, d, /*keepdim=*/true);  // the first longest run's end
  Tensor v = gather(s.values, d, end), i = gather(s.indices, d, end);
  if (x.dim() == 0) return {v.reshape({}), i.reshape({})};
  if (!keepdim) v = v.squeeze(d), i = i.squeeze(d);
  return {v, i};
}

UniqueResult unique(const Tensor& x, bool /*sorted: always*/, bool return_inverse,
                    bool return_counts) {
  if (!x.defined()) throw InvalidArgument("unique", "unique: the tensor is undefined.");
  const Device& device = x.device();
  const Tensor flat = x.reshape({-1});
  const std::int64_t n = flat.numel();
  UniqueResult r;
  if (n == 0) {
    r.values = Tensor::empty({0}, x.dtype(), device);
    if (return_inverse) r.inverse = Tensor::empty(x.shape(), DType::kInt64, device);
    if (return_counts) r.counts = Tensor::empty({0}, DType::kInt64, device);
    return r;
  }
  const ValuesAndIndices s = detail::sort_rows("unique", flat, 0, false);
  const Tensor starts_mask = run_starts(s.values, 0);
  const std::int64_t k = sum(starts_mask).item().to_int();  // the one read: the output's size
  // The starts' positions, in order: a stable sort puts flag 0 (a start) before flag 1.
  const Tensor order = argsort(where(starts_mask, 0, 1).to(DType::kUInt8), 0);
  const Tensor starts = order.narrow(0, 0, k);
  r.values = index_select(s.values, 0, starts);
  if (return_counts) {
    const Tensor ends = cat({starts.narrow(0, 1, k - 1), full({1}, n, DType::kInt64, device)}, 0);
    r.counts = sub(ends, starts);
  }
  if (return_inverse) {
    const Tensor run = sub(cumsum(starts_mask, 0), 1);  // int64: each sorted element's run
    r.inverse = index_select(run, 0, argsort(s.indices, 0)).reshape(x.shape());
  }
  return r;
}

}  // namespace nbx::ops
