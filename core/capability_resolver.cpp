// Device → device file → Capabilities, cross-checked with the runtime, under an overlay.
#include "core/capability_resolver.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/errors.hpp"

namespace nbx {
namespace {

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

std::string located(const std::string& path, int line, std::string_view key) {
  return path + ":" + std::to_string(line) + " (" + std::string(key) + ")";
}

// What identifies the device to the matching rules, for messages.
std::string device_facts(std::string_view backend, const DeviceProperties& p) {
  if (backend == "cuda")
    return "compute capability " + std::to_string(p.compute_capability_major) + "." +
           std::to_string(p.compute_capability_minor);
  if (backend == "hip") return "gcnArchName " + p.arch;
  if (backend == "vulkan") {
    std::string s = "vendor " + hex(p.pci_vendor_id) + ", driver ";
    auto name = detail::vulkan_driver_id_name(p.vulkan_driver_id);
    return s + (name.empty() ? std::to_string(p.vulkan_driver_id) : std::string(name));
  }
  return std::string(backend);
}

std::optional<std::string> first_glob(const std::vector<std::string>& patterns,
                                      std::string_view text) {
  for (const auto& p : patterns)
    if (detail::glob_match(p, text)) return p;
  return std::nullopt;
}

// A backend that knows the three-way bf16 answer puts it first in extra["bf16"]
// ("emulated (16-bit words, float32 arithmetic; …)"); DeviceProperties::bf16 then only
// says the dtype is usable at all.
std::optional<Bf16Support> runtime_bf16(const DeviceProperties& p) {
  auto it = p.extra.find("bf16");
  if (it == p.extra.end()) return std::nullopt;
  return parse_bf16_support(it->second.substr(0, it->second.find(' ')));
}

// The runtime query behind each DeviceProperties field, per backend. A backend may name
// its own in DeviceProperties::extra["source.<key>"].
std::string runtime_source(std::string_view backend, const DeviceProperties& p,
                           std::string_view key) {
  if (auto it = p.extra.find("source." + std::string(key)); it != p.extra.end())
    return "runtime (" + it->second + ")";
  if (key == "bf16" && runtime_bf16(p))
    return "runtime (" + std::string(backend) + ": " + p.extra.at("bf16") + ")";
  struct Row {
    std::string_view backend, key, query;
  };
  static constexpr Row kQueries[] = {
      {"cuda", "subgroup.size", "cudaDeviceProp.warpSize"},
      {"cuda", "max_threads_per_block", "cudaDeviceProp.maxThreadsPerBlock"},
      {"cuda", "shared_memory.per_block", "cudaDeviceProp.sharedMemPerBlock"},
      {"cuda", "shared_memory.per_block_optin", "cudaDeviceProp.sharedMemPerBlockOptin"},
      {"hip", "subgroup.size", "hipDeviceProp_t.warpSize"},
      {"hip", "max_threads_per_block", "hipDeviceProp_t.maxThreadsPerBlock"},
      {"hip", "shared_memory.per_block", "hipDeviceProp_t.sharedMemPerBlock"},
      {"vulkan", "fp64", "VkPhysicalDeviceFeatures.shaderFloat64"},
      {"vulkan", "fp16", "VkPhysicalDeviceShaderFloat16Int8Features.shaderFloat16"},
      {"vulkan", "int8", "VkPhysicalDeviceShaderFloat16Int8Features.shaderInt8"},
      {"vulkan", "int64", "VkPhysicalDeviceFeatures.shaderInt64"},
      {"vulkan", "bf16", "VK_KHR_shader_bfloat16"},
      {"vulkan", "subgroup.size", "VkPhysicalDeviceSubgroupProperties.subgroupSize"},
      {"vulkan", "subgroup.sizes", "VkPhysicalDeviceSubgroupSizeControlProperties"},
      {"vulkan", "max_threads_per_block", "VkPhysicalDeviceLimits.maxComputeWorkGroupInvocations"},
      {"vulkan", "shared_memory.per_block", "VkPhysicalDeviceLimits.maxComputeSharedMemorySize"},
      {"vulkan", "shared_memory.per_block_optin",
       "VkPhysicalDeviceLimits.maxComputeSharedMemorySize"},
  };
  for (const auto& r : kQueries)
    if (r.backend == backend && r.key == key) return "runtime (" + std::string(r.query) + ")";
  return "runtime (" + std::string(backend) + " device properties: " + std::string(key) + ")";
}

// The runtime's answer for each key it can report, as a capability value.
std::vector<std::pair<std::string, CapabilityValue>> runtime_values(const Capabilities& caps,
                                                                    const DeviceProperties& p) {
  std::vector<std::pair<std::string, CapabilityValue>> out;
  auto add_bool = [&](const char* key, const std::optional<bool>& v) {
    if (v) out.emplace_back(key, *v);
  };
  add_bool("fp64", p.fp64);
  add_bool("fp16", p.fp16);
  add_bool("int64", p.int64);
  add_bool("int8", p.int8);
  if (auto three_way = runtime_bf16(p)) {
    out.emplace_back("bf16", std::string(to_string(*three_way)));
  } else if (p.bf16) {
    // The bool alone means native or not; "not native" agrees with emulated and none.
    Bf16Support file = caps.bf16.value;
    if (*p.bf16)
      out.emplace_back("bf16", std::string("native"));
    else if (file == Bf16Support::kNative)
      out.emplace_back("bf16", std::string("emulated"));
  }
  if (p.subgroup_size) out.emplace_back("subgroup.size", std::int64_t{*p.subgroup_size});
  if (!p.subgroup_sizes.empty()) {
    std::vector<std::int64_t> sizes(p.subgroup_sizes.begin(), p.subgroup_sizes.end());
    std::sort(sizes.begin(), sizes.end());  // files list them in increasing order
    out.emplace_back("subgroup.sizes", sizes);
  }
  if (p.max_threads_per_block)
    out.emplace_back("max_threads_per_block", std::int64_t{*p.max_threads_per_block});
  if (p.shared_memory_per_block)
    out.emplace_back("shared_memory.per_block", *p.shared_memory_per_block);
  if (p.shared_memory_per_block_optin)
    out.emplace_back("shared_memory.per_block_optin", *p.shared_memory_per_block_optin);
  if (p.matrix_unit && parse_matrix_unit(*p.matrix_unit))
    out.emplace_back("matrix.unit", *p.matrix_unit);
  return out;
}

void cross_check(Capabilities& caps, std::string_view backend, const DeviceProperties& p) {
  for (const auto& [key, value] : runtime_values(caps, p)) {
    CapabilityRow current = *get_capability(caps, key);
    if (current.value == value) continue;
    std::string source = runtime_source(backend, p, key);
    if (!caps.generic)
      caps.conflicts.push_back({key, format_capability_value(current.value),
                                format_capability_value(value), current.source, source});
    set_capability(caps, key, value, source);
  }
  // Keep the relations the loader guarantees for files, now that runtime values are in.
  if (std::find(caps.subgroup_sizes.value.begin(), caps.subgroup_sizes.value.end(),
                caps.subgroup_size.value) == caps.subgroup_sizes.value.end()) {
    caps.subgroup_sizes.value = {caps.subgroup_size.value};
    caps.subgroup_sizes.source = caps.subgroup_size.source;
  }
  if (caps.shared_memory_per_block_optin.value < caps.shared_memory_per_block.value) {
    caps.shared_memory_per_block_optin.value = caps.shared_memory_per_block.value;
    caps.shared_memory_per_block_optin.source = caps.shared_memory_per_block.source;
  }
}

// Ordering for the kLower rule on enumerations.
int strength(const CapabilityValue& v, std::string_view key) {
  const auto& s = std::get<std::string>(v);
  if (key == "bf16") return static_cast<int>(*parse_bf16_support(s));
  return s == "none" ? 0 : 1;  // matrix units are not ordered among themselves
}

template <class T>
bool subset(const CapabilityValue& a, const CapabilityValue& b) {
  const auto& x = std::get<T>(a);
  const auto& y = std::get<T>(b);
  return std::all_of(x.begin(), x.end(),
                     [&](const auto& e) { return std::find(y.begin(), y.end(), e) != y.end(); });
}

double number(const CapabilityValue& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

// True when `wanted` asks no more than `has` under the key's overlay rule.
bool restricts(const CapabilityKeySpec& spec, const CapabilityValue& wanted,
               const CapabilityValue& has, const Capabilities& caps) {
  switch (spec.overlay) {
    case OverlayRule::kTurnOff:
      return !std::get<bool>(wanted) || std::get<bool>(has);
    case OverlayRule::kRaise:
      return number(wanted) >= number(has);
    case OverlayRule::kLower:
      if (spec.kind == CapabilityKind::kBf16)
        return strength(wanted, "bf16") <= strength(has, "bf16");
      if (spec.kind == CapabilityKind::kMatrixUnit)
        return wanted == has || std::get<std::string>(wanted) == "none";
      return number(wanted) <= number(has);
    case OverlayRule::kSubset:
      return spec.kind == CapabilityKind::kIntList ? subset<std::vector<std::int64_t>>(wanted, has)
                                                   : subset<std::vector<std::string>>(wanted, has);
    case OverlayRule::kOneOfSizes: {
      const auto& sizes = caps.subgroup_sizes.value;
      return std::find(sizes.begin(), sizes.end(), std::get<std::int64_t>(wanted)) != sizes.end();
    }
  }
  return false;
}

void check_overlay_relations(const Capabilities& c, const OverlayFile& o) {
  // Named at the line of the overlay's own key of the pair (the one that broke the relation).
  auto bad = [&](const std::string& what, std::initializer_list<const char*> keys) {
    int line = 0;
    for (const char* k : keys)
      if (auto it = o.capabilities.find(k); it != o.capabilities.end() && line == 0)
        line = it->second.line;
    throw InvalidArgument("overlay", o.path + ":" + std::to_string(line) + ": on " + c.device +
                                         ", " + what +
                                         "; lower or raise the related key in the overlay too.");
  };
  const auto& sizes = c.subgroup_sizes.value;
  if (std::find(sizes.begin(), sizes.end(), c.subgroup_size.value) == sizes.end())
    bad("subgroup.sizes no longer holds subgroup.size (" + std::to_string(c.subgroup_size.value) +
            ")",
        {"subgroup.sizes", "subgroup.size"});
  if (c.shared_memory_per_block.value > c.shared_memory_per_block_optin.value)
    bad("shared_memory.per_block_optin is below shared_memory.per_block",
        {"shared_memory.per_block_optin", "shared_memory.per_block"});
  // attention.min_tile above attention.block_ceiling is no error: the plan clamps the tile up
  // to the floor and announces it once (plan_attention).
}

std::string overlay_or_env(const std::string& overlay_path) {
  if (!overlay_path.empty()) return overlay_path;
  const char* env = std::getenv(kOverlayEnv);
  return env ? env : "";
}

std::string default_backend(const std::string& vendor) {
  if (vendor == "nvidia") return "cuda";
  if (vendor == "amd") return "hip";
  if (vendor == "host") return "host";
  return "vulkan";
}

}  // namespace

std::optional<std::string> match_reason(const DeviceFile& f, std::string_view backend,
                                        const DeviceProperties& p) {
  if (backend == "host" && f.match.host) return std::string("host backend");
  if (backend == "cuda") {
    std::string cc = std::to_string(p.compute_capability_major) + "." +
                     std::to_string(p.compute_capability_minor);
    if (auto pat = first_glob(f.match.cuda, cc))
      return "cuda compute capability " + cc + " matches '" + *pat + "'";
  }
  if (backend == "hip") {
    std::string arch = p.arch.substr(0, p.arch.find(':'));
    if (auto pat = first_glob(f.match.hip, arch))
      return "hip gcnArchName " + arch + " matches '" + *pat + "'";
  }
  if (backend == "vulkan") {
    for (const auto& r : f.match.vulkan) {
      if (r.vendor_id && *r.vendor_id != p.pci_vendor_id) continue;
      if (!r.driver_ids.empty() && std::find(r.driver_ids.begin(), r.driver_ids.end(),
                                             p.vulkan_driver_id) == r.driver_ids.end())
        continue;
      std::optional<std::string> pat;
      if (!r.device_names.empty() && !(pat = first_glob(r.device_names, p.name))) continue;
      std::string why = "vulkan " + device_facts(backend, p);
      if (pat) why += ", name '" + p.name + "' matches '" + *pat + "'";
      return why + " (rule at line " + std::to_string(r.line) + ")";
    }
  }
  return std::nullopt;
}

DeviceFileChoice choose_device_file(const DeviceFileSet& files, std::string_view backend,
                                    const DeviceProperties& p) {
  DeviceFileChoice choice;
  std::vector<std::string> also;
  for (const auto& f : files.files) {
    if (f.generic) continue;
    if (auto why = match_reason(f, backend, p)) {
      if (choice.file)
        also.push_back(f.path);
      else
        choice.file = &f, choice.how = "matched " + f.path + ": " + *why;
    }
  }
  if (choice.file) {
    // Two files claiming one device is a bug in the files; the first (by path) wins and
    // the overlap is shown rather than hidden.
    for (const auto& a : also) choice.how += "; also matched by " + a;
    return choice;
  }
  // A vendor's generic file before the catch-all Vulkan one.
  const DeviceFile* fallback = nullptr;
  for (const auto& f : files.files) {
    if (!f.generic || !match_reason(f, backend, p)) continue;
    if (f.vendor != "vulkan") {
      fallback = &f;
      break;
    }
    if (!fallback) fallback = &f;
  }
  if (!fallback)
    throw InvalidArgument("capabilities", "no device file, not even a generic one, matches " +
                                              std::string(backend) + " device '" + p.name + "' (" +
                                              device_facts(backend, p) + ") in " + files.origin +
                                              ".");
  choice.file = fallback;
  choice.generic = true;
  choice.how = "no device file names " + std::string(backend) + " device '" + p.name + "' (" +
               device_facts(backend, p) + "); using the generic file " + fallback->path +
               ", filled in from the runtime's answers";
  return choice;
}

Capabilities capabilities_from_file(const DeviceFile& f, std::string_view backend) {
  Capabilities c;
  c.device_file = f.path;
  c.backend = std::string(backend);
  c.generic = f.generic;
  for (const auto& [key, e] : f.capabilities)
    set_capability(c, key, e.value, located(f.path, e.line, key));
  if (auto it = f.backends.find(std::string(backend)); it != f.backends.end())
    for (const auto& [key, e] : it->second)
      set_capability(c, key, e.value, located(f.path, e.line, "backends." + it->first + "." + key));
  return c;
}

void apply_overlay(Capabilities& c, const OverlayFile& o) {
  Capabilities device = c;  // what the device has, before this overlay
  for (const auto& [key, e] : o.capabilities) {
    const CapabilityKeySpec& spec = *find_capability_key(key);
    std::string where = o.path + ":" + std::to_string(e.line);
    auto has = get_capability(device, key);
    if (!has || !restricts(spec, e.value, has->value, device)) {
      std::string have = has ? format_capability_value(has->value) + " (" + has->source + ")"
                             : "no declared value";
      throw Unsupported("overlay", c.device, key,
                        "overlay " + where + " claims " + key + " = " +
                            format_capability_value(e.value) + ", but " + c.device + " has " + key +
                            " = " + have +
                            "; an overlay may only restrict (turn a capability off, lower a "
                            "ceiling, raise a floor), so it is refused.");
    }
    if (has->value != e.value)
      set_capability(c, key, e.value, "overlay " + located(o.path, e.line, key));
  }
  check_overlay_relations(c, o);
  c.overlay = o.path;
}

Capabilities resolve_capabilities(const DeviceFileSet& files, std::string_view backend,
                                  const DeviceProperties& runtime, const std::string& display_name,
                                  const std::string& overlay_path) {
  DeviceFileChoice choice = choose_device_file(files, backend, runtime);
  Capabilities c = capabilities_from_file(*choice.file, backend);
  c.device = display_name;
  c.match = choice.how;
  c.generic = choice.generic;
  cross_check(c, backend, runtime);
  if (!overlay_path.empty()) apply_overlay(c, load_overlay(overlay_path));
  return c;
}

Capabilities resolve_capabilities(std::string_view backend, const DeviceProperties& runtime,
                                  const std::string& display_name,
                                  const std::string& overlay_path) {
  return resolve_capabilities(device_files(), backend, runtime, display_name,
                              overlay_or_env(overlay_path));
}

Capabilities capabilities_for_arch(const DeviceFileSet& files, std::string_view arch_or_path,
                                   std::string_view backend_hint, const std::string& overlay_path) {
  std::string name(arch_or_path);
  std::optional<DeviceFile> loaded;
  const DeviceFile* file = files.find(name);
  std::error_code ec;
  if (!file && (name.ends_with(".yml") || std::filesystem::is_regular_file(name, ec))) {
    loaded = load_device_file(name);
    file = &*loaded;
  }
  if (!file) {
    std::vector<const DeviceFile*> by_arch;
    for (const auto& f : files.files)
      if (f.arch == name) by_arch.push_back(&f);
    if (by_arch.size() == 1) file = by_arch[0];
  }
  if (!file) {
    std::string known;
    for (const auto& f : files.files) known += (known.empty() ? "" : ", ") + f.name();
    throw InvalidArgument("capabilities", "'" + name +
                                              "' names no device file (nor a .yml path); known "
                                              "architectures: " +
                                              known + ".");
  }
  std::string backend =
      backend_hint.empty() ? default_backend(file->vendor) : std::string(backend_hint);
  if (backend != "host" && backend != "cuda" && backend != "hip" && backend != "vulkan")
    throw InvalidArgument("capabilities",
                          "'" + backend + "' is not a backend (host, cuda, hip, vulkan).");
  Capabilities c = capabilities_from_file(*file, backend);
  c.device = "arch " + file->name() + " (" + backend + ")";
  c.match = "asked for by name: " + file->path + ", with its " + backend + " overrides";
  if (!overlay_path.empty()) apply_overlay(c, load_overlay(overlay_path));
  return c;
}

Capabilities capabilities_for_arch(std::string_view arch_or_path, std::string_view backend_hint,
                                   const std::string& overlay_path) {
  return capabilities_for_arch(device_files(), arch_or_path, backend_hint,
                               overlay_or_env(overlay_path));
}

DeviceProperties known_device_properties(const KnownDevice& d) {
  DeviceProperties p;
  p.name = d.name;
  if (d.backend == "cuda") {
    auto dot = d.compute_capability.find('.');
    p.compute_capability_major = std::stoi(d.compute_capability.substr(0, dot));
    p.compute_capability_minor =
        dot == std::string::npos ? 0 : std::stoi(d.compute_capability.substr(dot + 1));
    p.arch = "sm_" + std::to_string(p.compute_capability_major) +
             std::to_string(p.compute_capability_minor);
  } else if (d.backend == "hip") {
    p.arch = d.gcn_arch;
  } else if (d.backend == "vulkan") {
    p.pci_vendor_id = d.vendor_id;
    p.vulkan_driver_id = d.driver_id;
  } else {
    p.arch = "host";
  }
  return p;
}

std::string capabilities_to_json(const Capabilities& c, int indent) {
  using json = nlohmann::ordered_json;  // schema order, as `nbx caps` prints
  json caps = json::object();
  for (const auto& row : capability_rows(c)) {
    json value;
    std::visit([&](const auto& v) { value = v; }, row.value);
    caps[row.key] = {{"value", value}, {"source", row.source}};
  }
  json conflicts = json::array();
  for (const auto& k : c.conflicts)
    conflicts.push_back({{"key", k.key},
                         {"file_value", k.file_value},
                         {"runtime_value", k.runtime_value},
                         {"file_source", k.file_source},
                         {"runtime_source", k.runtime_source}});
  json out = {{"device", c.device},   {"backend", c.backend},  {"device_file", c.device_file},
              {"match", c.match},     {"generic", c.generic},  {"overlay", c.overlay},
              {"capabilities", caps}, {"conflicts", conflicts}};
  // Text that is not UTF-8 (an arch or a path with invalid bytes) is written with U+FFFD, not
  // thrown as nlohmann's type_error 316.
  return out.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace nbx
