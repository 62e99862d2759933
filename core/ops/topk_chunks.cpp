// topk of a small k over rows longer than the sort family's rows variant takes: a
// tournament instead of a full radix sort of every row. Each row is cut into chunks of the
// rows variant's tile (the last one shorter), every chunk sorted in shared memory keeps its
// first k, and the candidates — in chunk order, each chunk's in sorted order — are cut again
// until they fit one tile, whose sort gives the result. A global top-k element is in the
// top k of its chunk under the same order (key, then position), and equal keys stay in
// position order from chunk to chunk, so the result is the full stable sort's first k,
// ties by index included. Cost: one rows-variant sort of the input and a few of
// candidates (PyTorch selects by radix instead).
#include <optional>

#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/index.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/sort_detail.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops::detail {
namespace {

// The first `k` of every row along the last dim of `rows` (len <= the tile) in order, with
// their positions in the row offset by `first`.
ValuesAndIndices best_of(const Tensor& rows, std::int64_t k, bool largest, std::int64_t first) {
  const ValuesAndIndices s = sort_rows("topk", rows, -1, largest);
  const std::int64_t keep = std::min(k, rows.shape()[rows.dim() - 1]);
  Tensor at = s.indices.narrow(-1, 0, keep);
  if (first != 0) at = add(at, Scalar(first));
  return {s.values.narrow(-1, 0, keep), at};
}

}  // namespace

std::int64_t topk_tournament_tile(const Tensor& x, std::int64_t k, int dim) {
  const Device& device = x.device();
  const PlanTarget target{device.capabilities(), device.str(), device.display_name(),
                          &device.context().backend_device()};
  const std::int64_t tile = sort_rows_tile_cap(x.dtype(), target);
  const std::int64_t n = x.dim() == 0 ? 1 : x.shape()[dim];
  return n > tile && k > 0 && k <= tile / 4 ? tile : 0;
}

std::optional<ValuesAndIndices> topk_by_chunks(const Tensor& x, std::int64_t k, int dim,
                                               bool largest) {
  const std::int64_t tile = topk_tournament_tile(x, k, dim);
  if (tile == 0) return std::nullopt;
  const int last = x.dim() - 1;
  const Tensor moved = x.transpose(dim, last);
  const std::int64_t n = x.shape()[dim], rows = x.numel() / n;
  const Device& device = x.device();
  Tensor values = moved.reshape({rows, n});
  Tensor origin;  // int64 [rows, m]: each candidate's index in x's row (undefined: itself)
  while (values.shape()[1] > tile) {
    const std::int64_t m = values.shape()[1], full = m / tile, tail = m % tile;
    // The full chunks as a [rows, full, tile] view (no copy), sorted in one launch; chunk c's
    // positions offset by c · tile.
    const ValuesAndIndices chunks =
        best_of(values.narrow(1, 0, full * tile).view({rows, full, tile}), k, largest, 0);
    const Tensor starts = arange(0, full * tile, tile, DType::kInt64, device).reshape({1, full, 1});
    Tensor v = chunks.values.reshape({rows, full * k});
    Tensor at = add(chunks.indices.reshape({rows, full, k}), starts).reshape({rows, full * k});
    if (tail > 0) {
      const ValuesAndIndices end =
          best_of(values.narrow(1, full * tile, tail), k, largest, full * tile);
      v = cat({v, end.values}, 1);
      at = cat({at, end.indices}, 1);
    }
    origin = origin.defined() ? gather(origin, 1, at) : at;
    values = v;
  }
  const ValuesAndIndices s = sort_rows("topk", values, 1, largest);
  const Tensor at = s.indices.narrow(1, 0, k);
  const Tensor index = origin.defined() ? gather(origin, 1, at) : at.contiguous();
  Shape shape = moved.shape();
  shape[last] = k;
  return ValuesAndIndices{s.values.narrow(1, 0, k).reshape(shape).transpose(dim, last).contiguous(),
                          index.reshape(shape).transpose(dim, last).contiguous()};
}

}  // namespace nbx::ops::detail
