// How cat writes its inputs into the output (shape_join.cpp), as data, so `nbx explain` shows
// what the op does: the inputs of the output's dtype go to "join" launches (core/families/
// join_family.cpp), up to abi::kJoinMaxInputs a launch, each folded to the fewest dims and
// given the flat variant where every operand is rows of contiguous elements; an input of
// another dtype is cast by an elementwise copy into its slice. Internal to core/ops.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/kernel_abi.hpp"
#include "core/ops/plan.hpp"

namespace nbx::ops::detail {

// One operand's view: element offset, sizes and strides in elements.
struct JoinOperand {
  Shape shape;
  Strides strides;
  std::int64_t offset = 0;
  DType dtype = DType::kFloat32;
};

struct JoinPlan {
  std::vector<abi::JoinParams> launches;  // variants chosen
  std::vector<std::vector<int>> inputs;   // the input numbers of each launch, in block order
  std::vector<int> casts;                 // inputs copied through a cast
  std::vector<PlanChoice> choices;
};

// The plan for writing `inputs` (non-skipped, of the output's rank) into `out` along `dim`,
// input k at position at[k] along it. Inputs with no elements are left out. Where the target
// does not offer the join family, every input is copied by an elementwise copy (casts).
JoinPlan plan_join(const JoinOperand& out, std::span<const JoinOperand> inputs,
                   std::span<const std::int64_t> at, int dim, const PlanTarget& target);

}  // namespace nbx::ops::detail
