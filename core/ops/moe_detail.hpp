// Internal to core/ops: the grouped_matmul plan (grouped_matmul.cpp) that the op, fused_moe
// and `nbx explain` share, so explain names the variant that runs.
#pragma once

#include <vector>

#include "core/dtype.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/plan.hpp"
#include "core/shape.hpp"

namespace nbx::ops::detail {

struct GroupedOperands {
  DType a, b, offsets;
  Shape a_shape, b_shape, offsets_shape;
  bool b_is_nk = true;  // b [E, N, K] (Linear weights) or [E, K, N]
};

// Every check on dtypes and shapes (throws what grouped_matmul throws, naming `op`), then the
// block's sizes, dtypes and contiguous strides of `o`, the variant (mma where the device's
// matrix unit takes the dtype, cp.async stages fit its shared memory and the block serves;
// tiled otherwise) and its stages, with the choices explain prints. The caller sets the
// strides and offsets of its real operands before launching (the variant is re-checked there
// by the seam; a strided operand the mma kernel cannot read takes tiled: replan_variant).
abi::GroupedMatmulParams plan_grouped_matmul(const std::string& op, const GroupedOperands& o,
                                             const PlanTarget& target,
                                             std::vector<PlanChoice>& choices);
// The variant again for a block whose strides changed (fills `choices` afresh).
void replan_variant(abi::GroupedMatmulParams& p, const PlanTarget& target,
                    std::vector<PlanChoice>& choices);

}  // namespace nbx::ops::detail
