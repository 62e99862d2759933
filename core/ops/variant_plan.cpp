#include "core/ops/variant_plan.hpp"

#include <string>

#include "core/backend.hpp"
#include "core/families/backend_variants.hpp"

namespace nbx::ops {

bool target_offers(const PlanTarget& target, KernelFamily family, int variant) {
  if (target.device) return target.device->offers(family, variant);
  return (implemented_variants(backend_kind(target.caps.backend), family) & variant_bit(variant)) !=
         0;
}

int choose_variant(KernelFamily family, std::byte* params, std::span<const int> candidates,
                   const PlanTarget& target, std::vector<PlanChoice>& choices) {
  const FamilySpec& spec = family_spec(family);
  const int subgroup = target.caps.subgroup_size.value > 0 ? target.caps.subgroup_size.value : 32;
  std::string passed;  // why better candidates were not taken
  int fallback = -1;
  for (const int v : candidates) {
    spec.set_variant(params, v);
    const std::string refusal = spec.variant_refusal(v, params, subgroup);
    const std::string name = variant_name(family, v);
    if (!refusal.empty()) {
      passed += name + " does not serve it (" + refusal + "); ";
      continue;
    }
    if (!target_offers(target, family, v)) {
      passed += target.device_name + " does not offer " + name + "; ";
      fallback = v;
      continue;
    }
    choices.push_back({"variant", name, target.device ? "" : "backend." + target.caps.backend,
                       target.device ? "runtime: offers(" + name + ")"
                                     : "derived: the " + target.caps.backend +
                                           " backend's kernels (backend_variants.hpp)",
                       passed + name + " serves it and " + target.device_name + " offers it."});
    return v;
  }
  const int v = fallback >= 0 ? fallback : candidates.back();
  spec.set_variant(params, v);
  choices.push_back({"variant", variant_name(family, v), "", "",
                     passed + "none of the candidates is both offered and serving: refused."});
  return v;
}

}  // namespace nbx::ops
