// The checks behind every fuzz target (see fuzz_inputs.hpp).
#include "tests/fuzz/fuzz_inputs.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>

#include "cli/explain_args.hpp"
#include "core/capability_resolver.hpp"
#include "core/device_file_loader.hpp"
#include "core/errors.hpp"

namespace nbx::fuzz {
namespace {

const std::string kDevicePath = "fuzz/vendor/arch.yml";
const std::string kOverlayPath = "fuzz/overlay.yml";

// The message names `path` and a line that exists in `text` ("<path>:<line>: …" or, for an
// overlay's claim, "… overlay <path>:<line> claims …").
void require_located(std::string_view message, std::string_view path, std::string_view text) {
  const std::size_t at = message.find(std::string(path) + ":");
  if (at == std::string_view::npos)
    throw BrokenContract("a rejection without the file's name: " + std::string(message));
  const std::string_view rest = message.substr(at + path.size() + 1);
  int line = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), line);
  const auto lines = std::count(text.begin(), text.end(), '\n') + 1;
  if (ec != std::errc() || end == rest.data() || line < 1 || line > lines)
    throw BrokenContract("a rejection without a line of the file (" + std::to_string(lines) +
                         " lines): " + std::string(message));
}

// What `parse` makes of `text`, or nullopt when it refused it with a located InvalidArgument.
template <class Parse>
auto parse_or_refuse(Parse parse, const std::string& path, std::string_view text)
    -> std::optional<decltype(parse(text, path))> {
  try {
    return parse(text, path);
  } catch (const InvalidArgument& e) {
    require_located(e.what(), path, text);
    return std::nullopt;
  }
}

constexpr std::string_view kBackends[] = {"host", "cuda", "hip", "vulkan"};

// Every value as written is the value in force: a 32-bit field once read 4294967552 as 256.
void require_in_force(const Capabilities& caps, const DeviceFileEntries& written,
                      const std::string& what) {
  std::map<std::string, CapabilityValue> in_force;
  for (CapabilityRow& row : capability_rows(caps)) in_force.emplace(row.key, std::move(row.value));
  for (const auto& [key, entry] : written) {
    const auto row = in_force.find(key);
    if (row == in_force.end() || row->second != CapabilityValue(entry.value))
      throw BrokenContract(
          what + ": " + key + " = " + format_capability_value(entry.value) + " was written, " +
          (row == in_force.end() ? "nothing" : format_capability_value(row->second)) +
          " is in force");
  }
}

}  // namespace

Outcome check_device_file(std::string_view text) {
  const std::optional<DeviceFile> parsed = parse_or_refuse(parse_device_file, kDevicePath, text);
  if (!parsed) return Outcome::kRefused;
  const DeviceFile& file = *parsed;
  // Accepted: everything a process does with a file it has loaded must work.
  for (std::string_view backend : kBackends) {
    Capabilities caps = capabilities_from_file(file, backend);
    const auto overrides = file.backends.find(std::string(backend));
    DeviceFileEntries written = file.capabilities;
    if (overrides != file.backends.end())
      for (const auto& [key, entry] : overrides->second) written[key] = entry;
    require_in_force(caps, written, "an accepted file under " + std::string(backend));
    // JSON once: every backend's text comes from the same rows.
    if (backend == "vulkan" && capabilities_to_json(caps).empty())
      throw BrokenContract("empty capabilities JSON");
  }
  DeviceFileSet set;
  set.origin = "fuzz";
  set.files.push_back(file);
  for (const KnownDevice& known : file.known_devices) {
    const DeviceProperties p = known_device_properties(known);
    // Whether a file matches its own known devices is the unit tests' check of shipped files.
    if (match_reason(file, known.backend, p)) (void)choose_device_file(set, known.backend, p);
  }
  return Outcome::kAccepted;
}

Outcome check_overlay(std::string_view text) {
  const std::optional<OverlayFile> parsed = parse_or_refuse(parse_overlay, kOverlayPath, text);
  if (!parsed) return Outcome::kRefused;
  const OverlayFile& overlay = *parsed;
  Outcome outcome = Outcome::kRefused;
  static const std::pair<std::string_view, std::string_view> kDevices[] = {
      {"host/host", "host"},
      {"mesa/llvmpipe", "vulkan"},
      {"nvidia/sm_90", "cuda"},
      {"nvidia/sm_90", "vulkan"},
      {"amd/gfx90a", "hip"}};
  for (const auto& [arch, backend] : kDevices) {
    Capabilities caps = capabilities_from_file(*embedded_device_files().find(arch), backend);
    caps.device = std::string(arch) + " (" + std::string(backend) + ")";
    try {
      apply_overlay(caps, overlay);
    } catch (const Unsupported& e) {
      require_located(e.what(), kOverlayPath, text);
      continue;
    } catch (const InvalidArgument& e) {
      require_located(e.what(), kOverlayPath, text);
      continue;
    }
    require_in_force(caps, overlay.capabilities, "an accepted overlay on " + caps.device);
    // Accepted: what the wrappers read still holds the schema's ranges and relations.
    const auto& sizes = caps.subgroup_sizes.value;
    bool broken = std::find(sizes.begin(), sizes.end(), caps.subgroup_size.value) == sizes.end() ||
                  caps.shared_memory_per_block.value > caps.shared_memory_per_block_optin.value;
    for (const CapabilityRow& row : capability_rows(caps)) {
      const bool may_be_zero = row.source == "default";  // an optional key left out
      if (const auto* i = std::get_if<std::int64_t>(&row.value))
        broken = broken || (*i <= 0 && !may_be_zero);
      if (const auto* l = std::get_if<std::vector<std::int64_t>>(&row.value))
        broken = broken || std::any_of(l->begin(), l->end(), [](auto v) { return v <= 0; });
    }
    if (broken)
      throw BrokenContract("an accepted overlay left " + caps.device +
                           " with broken capabilities: " + capabilities_to_json(caps));
    if (capabilities_to_json(caps).empty()) throw BrokenContract("empty capabilities JSON");
    outcome = Outcome::kAccepted;
  }
  return outcome;
}

Outcome check_explain_args(std::string_view text) {
  const std::size_t newline = text.find('\n');
  const std::string dtypes(text.substr(0, newline));
  const std::string shapes(newline == std::string_view::npos ? "" : text.substr(newline + 1));
  Outcome outcome = Outcome::kAccepted;
  try {
    (void)cli::parse_explain_dtypes(dtypes);
  } catch (const InvalidArgument& e) {
    if (std::string_view(e.what()).find("--dtype '") == std::string_view::npos)
      throw BrokenContract("a --dtype refusal that does not name the option: " +
                           std::string(e.what()));
    outcome = Outcome::kRefused;
  }
  std::vector<Shape> parsed;
  try {
    parsed = cli::parse_explain_shapes(shapes);
  } catch (const InvalidArgument& e) {
    if (std::string_view(e.what()).find("--shape '") == std::string_view::npos)
      throw BrokenContract("a --shape refusal that does not name the option: " +
                           std::string(e.what()));
    return Outcome::kRefused;
  }
  // Accepted: sizes are what was written, so printing them and reading back gives them again.
  for (const Shape& s : parsed)
    if (std::any_of(s.begin(), s.end(), [](std::int64_t d) { return d < 0; }))
      throw BrokenContract("--shape '" + shapes + "' gave a negative size");
  if (!parsed.empty() && cli::parse_explain_shapes(cli::format_explain_shapes(parsed)) != parsed)
    throw BrokenContract("--shape '" + shapes + "' does not read back as written");
  return outcome;
}

}  // namespace nbx::fuzz
