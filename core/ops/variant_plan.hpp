// The kernel variant of a launch, chosen here and nowhere below the seam: the first of the
// family's candidates (best first) that the target offers and whose contract serves the
// parameter block (core/families: variant_refusal). Ops call it with the block they launch;
// `nbx explain` with the block the op would build, so both name the same variant.
#pragma once

#include <cstring>
#include <span>
#include <vector>

#include "core/families/kernel_family.hpp"
#include "core/ops/plan.hpp"

namespace nbx::ops {

// Whether the target offers `variant` of `family`: the present device's answer, or for an
// absent architecture what its backend's kernels implement (backend_variants.hpp).
bool target_offers(const PlanTarget& target, KernelFamily family, int variant);

// Writes the chosen variant into `params` (sizeof the family's block) and returns it;
// appends a "variant" PlanChoice naming it, the capability behind it and why better
// candidates were passed over. Where no candidate is both offered and serving, the last one
// that serves is taken, so the launch is refused by name at the seam.
int choose_variant(KernelFamily family, std::byte* params, std::span<const int> candidates,
                   const PlanTarget& target, std::vector<PlanChoice>& choices);

template <class Params>
int choose_variant(Params& params, std::span<const int> candidates, const PlanTarget& target,
                   std::vector<PlanChoice>& choices) {
  std::byte bytes[sizeof(Params)];
  std::memcpy(bytes, &params, sizeof params);
  const int v = choose_variant(FamilyOf<Params>::value, bytes, candidates, target, choices);
  std::memcpy(&params, bytes, sizeof params);
  return v;
}

}  // namespace nbx::ops
