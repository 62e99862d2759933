// The table of kernel families: one FamilySpec per line of family_list.inc, each defined in
// its <family>_family.cpp; and the decoding of fault records by the family that wrote them.
#include <array>
#include <string>

#include "core/errors.hpp"
#include "core/families/family_spec_builder.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx {
namespace families {
#define NBX_KERNEL_FAMILY(kId, id, Params) extern const FamilySpec id##_family;
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY

std::string name_from_list(std::string_view family, std::span<const std::string_view> names,
                           std::int32_t code) {
  if (code >= 0 && std::size_t(code) < names.size() && !names[std::size_t(code)].empty())
    return std::string(names[std::size_t(code)]);
  return std::string(family) + " op " + std::to_string(code);
}

std::string describe_common_fault(const abi::FaultRecord& r) {
  if (r.code == abi::kFaultIntegerDivisionByZero)
    return "integer division by zero at position " + std::to_string(r.position) + " (dividend " +
           std::to_string(r.index) + ")";
  if (r.code == abi::kFaultIndexOutOfRange)
    return "index " + std::to_string(r.index) + " is out of range [0, " + std::to_string(r.bound) +
           ") at position " + std::to_string(r.position);
  return "fault code " + std::to_string(r.code) + " (index " + std::to_string(r.index) +
         ", bound " + std::to_string(r.bound) + ") at position " + std::to_string(r.position);
}
}  // namespace families

namespace {
const std::array<const FamilySpec*, kKernelFamilyCount> kTable = {
#define NBX_KERNEL_FAMILY(kId, id, Params) &families::id##_family,
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY
};
const std::array<FamilySpec, kKernelFamilyCount>& table_values() {
  static const std::array<FamilySpec, kKernelFamilyCount> values = [] {
    std::array<FamilySpec, kKernelFamilyCount> v{};
    for (std::size_t i = 0; i < kKernelFamilyCount; ++i) v[i] = *kTable[i];
    return v;
  }();
  return values;
}
}  // namespace

const FamilySpec& family_spec(KernelFamily family) {
  return table_values()[static_cast<std::size_t>(family)];
}

std::span<const FamilySpec> all_families() {
  return table_values();
}

std::optional<KernelFamily> family_named(std::string_view name) {
  for (const FamilySpec& f : all_families())
    if (f.name == name) return f.family;
  return std::nullopt;
}

std::string variant_name(KernelFamily family, int variant) {
  const FamilySpec& f = family_spec(family);
  if (variant >= 0 && std::size_t(variant) < f.variants.size())
    return std::string(f.name) + "." + std::string(f.variants[std::size_t(variant)]);
  return std::string(f.name) + ".variant " + std::to_string(variant);
}

DeviceFault fault_error(const abi::FaultRecord& r, const std::string& device_id,
                        const std::string& device) {
  const std::int32_t family_code = r.op >> 16;
  std::string op, what;
  if (family_code >= 0 && std::size_t(family_code) < kKernelFamilyCount) {
    const FamilySpec& f = family_spec(KernelFamily(family_code));
    op = f.op_name(r.op & 0xffff);
    what = f.describe_fault(r);
  } else {
    op = "family " + std::to_string(family_code) + " op " + std::to_string(r.op & 0xffff);
    what = families::describe_common_fault(r);
  }
  return DeviceFault(op, device_id, r.index, r.bound, r.position,
                     op + " on " + device + ": " + what +
                         "; the results of that launch are not defined, the device stays usable.");
}

}  // namespace nbx
