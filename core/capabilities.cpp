// The one mapping between schema keys (device_files/schema.md) and Capabilities fields.
// The resolver, overlays, `nbx caps` and the JSON writer all go through it, so a new
// capability is one line in visit_fields plus one row in the loader's schema table.
#include "core/capabilities.hpp"

#include <algorithm>
#include <sstream>

#include "core/errors.hpp"

namespace nbx {
namespace {

constexpr std::string_view kBf16Names[] = {"none", "emulated", "native"};
constexpr std::string_view kUnitNames[] = {"none", "mma",     "wgmma",   "mfma",
                                           "wmma", "coopmat", "coopmat2"};

// Calls f(key, field) for every capability except the peak.tflops map, in schema order.
template <class C, class F>
void visit_fields(C& c, F&& f) {
  f("fp64", c.fp64);
  f("fp16", c.fp16);
  f("bf16", c.bf16);
  f("int64", c.int64);
  f("int8", c.int8);
  f("subgroup.size", c.subgroup_size);
  f("subgroup.sizes", c.subgroup_sizes);
  f("max_threads_per_block", c.max_threads_per_block);
  f("shared_memory.per_block", c.shared_memory_per_block);
  f("shared_memory.per_block_optin", c.shared_memory_per_block_optin);
  f("register_file_bytes", c.register_file_bytes);
  f("matrix.unit", c.matrix_unit);
  f("matrix.dtypes", c.matrix_dtypes);
  f("attention.min_tile", c.attention.min_tile);
  f("attention.block_ceiling", c.attention.block_ceiling);
  f("reduce.tile_max", c.reduce.tile_max);
  f("sort.select_candidates_max", c.sort.select_candidates_max);
  f("pipelining.max_num_stages", c.pipelining.max_num_stages);
  f("memory.pool_cap_fraction", c.memory.pool_cap_fraction);
  f("memory.attention_min_chunk_rows", c.memory.attention_min_chunk_rows);
  f("peak.bandwidth_gbps", c.peak.bandwidth_gbps);
}

CapabilityValue to_value(bool v) {
  return v;
}
CapabilityValue to_value(int v) {
  return static_cast<std::int64_t>(v);
}
CapabilityValue to_value(std::int64_t v) {
  return v;
}
CapabilityValue to_value(double v) {
  return v;
}
CapabilityValue to_value(Bf16Support v) {
  return std::string(to_string(v));
}
CapabilityValue to_value(MatrixUnit v) {
  return std::string(to_string(v));
}
CapabilityValue to_value(const std::vector<int>& v) {
  return std::vector<std::int64_t>(v.begin(), v.end());
}
CapabilityValue to_value(const std::vector<DType>& v) {
  std::vector<std::string> names;
  for (DType d : v) names.emplace_back(dtype_name(d));
  return names;
}

// Each returns false when the value has the wrong alternative for the field.
bool from_value(const CapabilityValue& v, bool& out) {
  if (auto* b = std::get_if<bool>(&v)) return out = *b, true;
  return false;
}
bool from_value(const CapabilityValue& v, int& out) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return out = static_cast<int>(*i), true;
  return false;
}
bool from_value(const CapabilityValue& v, std::int64_t& out) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return out = *i, true;
  return false;
}
bool from_value(const CapabilityValue& v, double& out) {
  if (auto* d = std::get_if<double>(&v)) return out = *d, true;
  if (auto* i = std::get_if<std::int64_t>(&v)) return out = static_cast<double>(*i), true;
  return false;
}
bool from_value(const CapabilityValue& v, Bf16Support& out) {
  auto* s = std::get_if<std::string>(&v);
  auto parsed = s ? parse_bf16_support(*s) : std::nullopt;
  return parsed ? (out = *parsed, true) : false;
}
bool from_value(const CapabilityValue& v, MatrixUnit& out) {
  auto* s = std::get_if<std::string>(&v);
  auto parsed = s ? parse_matrix_unit(*s) : std::nullopt;
  return parsed ? (out = *parsed, true) : false;
}
bool from_value(const CapabilityValue& v, std::vector<int>& out) {
  auto* l = std::get_if<std::vector<std::int64_t>>(&v);
  if (!l) return false;
  out.assign(l->begin(), l->end());
  return true;
}
bool from_value(const CapabilityValue& v, std::vector<DType>& out) {
  auto* l = std::get_if<std::vector<std::string>>(&v);
  if (!l) return false;
  out.clear();
  for (const auto& name : *l) out.push_back(parse_dtype(name));
  return true;
}

constexpr std::string_view kTflopsPrefix = "peak.tflops.";

}  // namespace

std::string_view to_string(Bf16Support s) {
  return kBf16Names[static_cast<int>(s)];
}

std::optional<Bf16Support> parse_bf16_support(std::string_view text) {
  for (int i = 0; i < 3; ++i)
    if (kBf16Names[i] == text) return static_cast<Bf16Support>(i);
  return std::nullopt;
}

std::string_view to_string(MatrixUnit u) {
  return kUnitNames[static_cast<int>(u)];
}

std::optional<MatrixUnit> parse_matrix_unit(std::string_view text) {
  for (int i = 0; i < static_cast<int>(std::size(kUnitNames)); ++i)
    if (kUnitNames[i] == text) return static_cast<MatrixUnit>(i);
  return std::nullopt;
}

std::vector<CapabilityRow> capability_rows(const Capabilities& caps) {
  std::vector<CapabilityRow> rows;
  visit_fields(caps, [&](std::string_view key, const auto& field) {
    rows.push_back({std::string(key), to_value(field.value), field.source});
  });
  for (const auto& [dtype, cap] : caps.peak.tflops)
    rows.push_back(
        {std::string(kTflopsPrefix) + std::string(dtype_name(dtype)), cap.value, cap.source});
  return rows;
}

std::optional<CapabilityRow> get_capability(const Capabilities& caps, std::string_view key) {
  for (auto& row : capability_rows(caps))
    if (row.key == key) return row;
  return std::nullopt;
}

void set_capability(Capabilities& caps, std::string_view key, const CapabilityValue& value,
                    std::string source) {
  bool known = false, ok = false;
  visit_fields(caps, [&](std::string_view k, auto& field) {
    if (k != key) return;
    known = true;
    ok = from_value(value, field.value);
    if (ok) field.source = source;
  });
  if (!known && key.substr(0, kTflopsPrefix.size()) == kTflopsPrefix) {
    DType dtype = parse_dtype(key.substr(kTflopsPrefix.size()));
    known = true;
    auto& cap = caps.peak.tflops[dtype];
    ok = from_value(value, cap.value);
    if (ok) cap.source = source;
  }
  if (!known)
    throw InvalidArgument(
        "capabilities",
        "'" + std::string(key) + "' is not a capability key (device_files/schema.md).");
  if (!ok)
    throw InvalidArgument("capabilities", "capability '" + std::string(key) +
                                              "' cannot take the value " +
                                              format_capability_value(value) + ".");
}

std::string format_capability_value(const CapabilityValue& value) {
  std::ostringstream os;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          os << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> ||
                             std::is_same_v<T, std::vector<std::string>>) {
          os << '[';
          for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
          os << ']';
        } else {
          os << v;
        }
      },
      value);
  return os.str();
}

}  // namespace nbx
