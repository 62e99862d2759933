// The one launch path of the index writes (index_write.hpp), internal to core/ops: the
// scatter family's variant choice (atomic or the deterministic sorted pass), its plan for
// `nbx explain`, and the launches (keys, sort, fold) behind each op.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/kernel_abi.hpp"
#include "core/ops/plan.hpp"
#include "core/tensor.hpp"

namespace nbx::ops::detail {

// Where iteration element c (row-major over `sizes`) writes and reads, in elements:
// destination out.offset + Σ c_k·out_strides[k] + i·index_scale for the index i read at
// index.offset + Σ c_k·index_strides[k] (in [0, bound), negatives wrapped when wrap_negative),
// source src.offset + Σ c_k·src_strides[k]; a fault names position Σ c_k·index_positions[k].
struct ScatterForm {
  Shape sizes;
  std::vector<std::int64_t> out_strides, src_strides, index_strides, index_positions;
  std::int64_t bound = 0;
  std::int64_t index_scale = 0;
  bool wrap_negative = false;
};

// What decides the variant: whether the op's result can depend on the order writes land in;
// for the partitioned one (NBX_SCATTER=partitioned) its writes and destinations.
struct ScatterPlanInput {
  std::string op;
  DType dtype = DType::kFloat32;
  abi::ScatterReduce reduce = abi::kScatterAssign;
  bool distinct_destinations = false;  // compactions: no two writes share a destination
  std::int64_t numel = 0;              // iteration elements
  std::int64_t span = 0;               // destination elements an in-range index reaches
};

// The variant (abi::ScatterVariant) and the choices `explain` shows; for kScatterPartitioned
// also its bucket_shift, buckets and parts.
struct ScatterPlan {
  int variant = abi::kScatterAtomic;
  int bucket_shift = 0;
  std::int64_t buckets = 0;
  std::int64_t parts = 0;
};
ScatterPlan plan_scatter(const ScatterPlanInput& in, const PlanTarget& target,
                         std::vector<PlanChoice>& choices);

// Writes `src` into `out` (a view, written through its strides) as `form` says, in the
// variant plan_scatter picks. `out`, `src` and `index` live on one device; src has out's
// dtype; index is int32 or int64. Launches nothing when the iteration is empty.
void run_scatter(abi::ScatterOp op, abi::ScatterReduce reduce, const Tensor& out, const Tensor& src,
                 const Tensor& index, const ScatterForm& form, bool distinct_destinations = false);

// The keys pass alone: `keys` (int64, contiguous, form.sizes' numel) receives — or, with
// accumulate, adds — Σ c_k·out_strides[k] + i·index_scale per iteration element (-1 for a
// bad index, which faults).
void run_scatter_keys(abi::ScatterOp op, const Tensor& keys, const Tensor& index,
                      const ScatterForm& form, bool accumulate);

// The PyTorch name of a reduction and its ScatterReduce; "mean" maps to add (the wrapper
// divides).
std::string reduce_name(abi::ScatterReduce r);

// A tensor's strides as a vector, and row-major positions of a shape.
std::vector<std::int64_t> strides_of(const Tensor& t);
std::vector<std::int64_t> row_major_positions(const Shape& shape);

// The number of true elements of a bool tensor, read to the host (the one sync of the
// compacting ops).
std::int64_t count_true(const Tensor& mask);

// Elements of `values` (any shape) where `mask` (bool, same shape) is true, in row-major
// order: a 1-d tensor of `count` elements (count_true(mask), already read).
Tensor compact(const char* op, abi::ScatterOp code, const Tensor& values, const Tensor& mask,
               std::int64_t count);

}  // namespace nbx::ops::detail
