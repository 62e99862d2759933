// `nbx caps`: capabilities with provenance, for present devices or named architectures.
//
//   nbx caps                      every present device of every backend (and why a backend has
//   none) nbx caps vulkan:0             one device nbx caps --arch nvidia/sm_70  an architecture
//   that need not be present (or a path to a .yml) nbx caps --diff A B           two devices or
//   architectures side by side, differences marked
//   --json                        machine-readable (schema "nbx.caps/1", README's "JSON output"):
//                                 each capability as {"value": …, "source": …}, and a present
//                                 device's "topology" (peer access, NVLink, nvidia-smi topo's
//                                 connection kinds; printed after the table without --json)
//   --overlay FILE                lay an overlay on top (default: $NBX_DEVICE_OVERLAY)
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "cli/cli_commands.hpp"
#include "cli/cli_main_commands.hpp"
#include "core/capability_resolver.hpp"
#include "core/device_id.hpp"
#include "core/errors.hpp"
#include "core/registry.hpp"

namespace nbx::cli {
namespace {

using Json = nlohmann::ordered_json;

struct CapsOptions {
  std::string device;
  std::string arch;
  std::string backend;
  std::string overlay;
  std::vector<std::string> diff;
  bool json = false;
};

std::string display_name(const DeviceId& id, const DeviceProperties& p) {
  return id.is_host() ? id.str() : id.str() + " (" + p.name + ")";
}

// What `caps` describes: the capabilities and, for a present device, its properties (the
// topology facts), from one listing of its backend.
struct Described {
  Capabilities caps;
  std::optional<DeviceProperties> properties;  // none for an architecture
};

Described describe_device(const DeviceId& id, const std::string& overlay) {
  DeviceListing listing = backend_by_name(id.backend).list_devices();
  if (id.index < 0 || id.index >= static_cast<int>(listing.devices.size())) {
    std::string why = listing.devices.empty()
                          ? "it has no device (" + listing.unavailable_reason + ")"
                          : "it has " + std::to_string(listing.devices.size()) + " device(s)";
    throw Unavailable(id.backend, listing.unavailable_reason,
                      "device " + id.str() + " is not present: " + why + ".");
  }
  DeviceProperties& p = listing.devices[static_cast<std::size_t>(id.index)];
  Capabilities caps = resolve_capabilities(id.backend, p, display_name(id, p), overlay);
  return {std::move(caps), std::move(p)};
}

bool looks_like_device(const std::string& text) {
  auto colon = text.find(':');
  std::string backend = text.substr(0, colon);
  return backend == "host" || backend == "cpu" || backend == "cuda" || backend == "hip" ||
         backend == "vulkan";
}

// A present device ("vulkan:0", "host") or an architecture ("nvidia/sm_90", a .yml path).
Described describe(const std::string& target, const CapsOptions& o) {
  if (looks_like_device(target) && target.find('/') == std::string::npos)
    return describe_device(DeviceId::parse(target), o.overlay);
  return {capabilities_for_arch(target, o.backend, o.overlay), std::nullopt};
}

// The device's topology facts (extra["topology.*"]: peer access per pair, NVLink links, the
// connection kind as nvidia-smi topo names it), with the "topology." prefix dropped.
std::vector<std::pair<std::string, std::string>> topology_of(const DeviceProperties& p) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string prefix = "topology.";
  for (const auto& [k, v] : p.extra)
    if (k.rfind(prefix, 0) == 0) out.emplace_back(k.substr(prefix.size()), v);
  return out;
}

void print_topology(const DeviceProperties& p) {
  const auto facts = topology_of(p);
  if (facts.empty()) return;
  std::printf("  topology\n");
  for (const auto& [k, v] : facts) std::printf("    %-30s %s\n", k.c_str(), v.c_str());
}

Json topology_json(const DeviceProperties& p) {
  Json out = Json::object();
  for (const auto& [k, v] : topology_of(p)) out[k] = v;
  return out;
}

void print_caps(const Capabilities& c) {
  std::printf("%s\n", c.device.c_str());
  std::printf("  device file  %s%s\n", c.device_file.c_str(), c.generic ? " (generic)" : "");
  std::printf("  match        %s\n", c.match.c_str());
  std::printf("  overlay      %s\n", c.overlay.empty() ? "none" : c.overlay.c_str());
  std::printf("  %-32s %-28s %s\n", "capability", "value", "source");
  for (const auto& row : capability_rows(c))
    std::printf("  %-32s %-28s %s\n", row.key.c_str(), format_capability_value(row.value).c_str(),
                row.source.c_str());
  if (c.conflicts.empty()) {
    std::printf("  conflicts    none (the runtime agrees with the device file)\n");
    return;
  }
  std::printf("  conflicts    %zu (device file vs runtime; the runtime's value is in force):\n",
              c.conflicts.size());
  for (const auto& k : c.conflicts)
    std::printf("    %s: file %s (%s), runtime %s (%s)\n", k.key.c_str(), k.file_value.c_str(),
                k.file_source.c_str(), k.runtime_value.c_str(), k.runtime_source.c_str());
}

// Every `caps --json` in one shape (README, "JSON output"): the schema, the devices described,
// the backends or devices that are absent and why, and for --diff the keys that differ.
// A present device's entry also carries "topology" (its facts; {} for an architecture).
void print_caps_json(const std::vector<Capabilities>& devices, const Json& unavailable,
                     const std::vector<std::string>* differences = nullptr,
                     const std::vector<Json>* topologies = nullptr) {
  Json out = {{"schema", "nbx.caps/1"}, {"devices", Json::array()}, {"unavailable", unavailable}};
  for (std::size_t i = 0; i < devices.size(); ++i) {
    Json d = Json::parse(capabilities_to_json(devices[i]));
    d["topology"] = topologies && i < topologies->size() ? (*topologies)[i] : Json::object();
    out["devices"].push_back(std::move(d));
  }
  if (differences) out["differences"] = *differences;
  std::cout << out.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

void run_diff(const CapsOptions& o) {
  Capabilities a = describe(o.diff[0], o).caps, b = describe(o.diff[1], o).caps;
  std::vector<std::string> differing;
  auto rows_a = capability_rows(a), rows_b = capability_rows(b);
  std::vector<std::string> keys;
  for (const auto& r : rows_a) keys.push_back(r.key);
  for (const auto& r : rows_b)
    if (std::find(keys.begin(), keys.end(), r.key) == keys.end()) keys.push_back(r.key);
  auto text = [](const Capabilities& c, const std::string& key) {
    auto row = get_capability(c, key);
    return row ? format_capability_value(row->value) : std::string("-");
  };
  for (const auto& k : keys)
    if (text(a, k) != text(b, k)) differing.push_back(k);
  if (o.json) return print_caps_json({a, b}, Json::array(), &differing);
  std::printf("  A = %s  [%s]\n  B = %s  [%s]\n", a.device.c_str(), a.device_file.c_str(),
              b.device.c_str(), b.device_file.c_str());
  std::printf("  %-34s %-26s %s\n", "capability", "A", "B");
  for (const auto& k : keys) {
    bool differs = std::find(differing.begin(), differing.end(), k) != differing.end();
    std::printf("%c %-34s %-26s %s\n", differs ? '*' : ' ', k.c_str(), text(a, k).c_str(),
                text(b, k).c_str());
  }
  std::printf("  %zu of %zu capabilities differ (marked *)\n", differing.size(), keys.size());
}

void run_all_present(const CapsOptions& o) {
  std::vector<Capabilities> devices;
  std::vector<Json> topologies;
  Json unavailable = Json::array();
  bool first = true;
  for_each_device(
      [&](const DeviceId& id, const DeviceProperties& p) {
        Capabilities c = resolve_capabilities(id.backend, p, display_name(id, p), o.overlay);
        if (o.json) {
          devices.push_back(std::move(c));
          topologies.push_back(topology_json(p));
          return;
        }
        if (!first) std::printf("\n");
        print_caps(c);
        print_topology(p);
        first = false;
      },
      [&](const std::string& backend, const char* what, const std::string& reason) {
        unavailable.push_back({{"backend", backend}, {"reason", reason}});
        if (!o.json) std::printf("%s: %s (%s)\n\n", backend.c_str(), what, reason.c_str());
      });
  if (o.json) print_caps_json(devices, unavailable, nullptr, &topologies);
}

void run_caps(const CapsOptions& o) {
  if (!o.diff.empty()) return run_diff(o);
  if (!o.arch.empty() || !o.device.empty()) {
    const Described d = o.arch.empty()
                            ? describe(o.device, o)
                            : Described{capabilities_for_arch(o.arch, o.backend, o.overlay), {}};
    const std::vector<Json> topology{d.properties ? topology_json(*d.properties) : Json::object()};
    if (o.json)
      print_caps_json({d.caps}, Json::array(), nullptr, &topology);
    else
      print_caps(d.caps);
    if (!o.json && d.properties) print_topology(*d.properties);
    return;
  }
  run_all_present(o);
}

}  // namespace

void register_caps_command(CLI::App& app) {
  auto o = std::make_shared<CapsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "caps", "Capabilities of devices or architectures, with where each value came from");
  cmd->add_option("device", o->device, "A present device: host, cuda:0, vulkan:1 … (default: all)");
  auto* arch = cmd->add_option(
      "--arch", o->arch,
      "An architecture that need not be present: nvidia/sm_70, gfx90a, or a .yml path");
  cmd->add_option("--backend", o->backend,
                  "With --arch: whose overrides apply (cuda, hip, vulkan, host)")
      ->needs(arch);
  cmd->add_option("--overlay", o->overlay,
                  "Overlay file that restricts the capabilities (default: $NBX_DEVICE_OVERLAY)");
  cmd->add_option("--diff", o->diff, "Two devices or architectures side by side")->expected(2);
  cmd->add_flag("--json", o->json, "Machine-readable output: each capability as {value, source}");
  cmd->callback([o] {
    if (!o->arch.empty() && !o->device.empty())
      throw CLI::ValidationError("nbx caps", "give a DEVICE or --arch, not both");
    run_caps(*o);  // an error ends it through run_app: one line, its exit status
  });
}

}  // namespace nbx::cli
