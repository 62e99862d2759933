// From a device to its Capabilities: choose the device file, apply the backend's
// overrides, cross-check with the runtime's own answers, lay an overlay on top.
//
// Provenance of every value: "device_files/nvidia/sm_90.yml:27 (fp64)",
// "device_files/nvidia/sm_90.yml:71 (backends.vulkan.shared_memory.per_block)",
// "runtime (VkPhysicalDeviceFeatures.shaderFloat64)", "overlay no_fp64.yml:4 (fp64)", or
// "default" (an optional key the file does not declare, e.g. peak figures).
//
// Runtime vs file: where the runtime reports a value and it differs from the matched
// file, the runtime's value is used and a CapabilityConflict is recorded (a wrong device
// file is a bug to fix). With a vendor's generic file, runtime values fill in silently:
// the generic file is conservative by design, and Capabilities::generic says so.
//
// Overlays may only restrict: turn a capability off, lower a ceiling (or bf16 / the
// matrix unit), raise a floor (attention.min_tile, memory.attention_min_chunk_rows),
// keep a subset of a list. An overlay that claims more than the device has is refused
// with nbx::Unsupported (op "overlay", capability = the key): the device cannot do what
// the overlay asks, permanently. A malformed overlay is InvalidArgument, as for device files.
//
// All functions are thread-safe; they read the process-wide device files (loaded once).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/backend.hpp"
#include "core/capabilities.hpp"
#include "core/device_file_loader.hpp"

namespace nbx {

// The environment variable naming an overlay file applied to every device.
inline constexpr const char* kOverlayEnv = "NBX_DEVICE_OVERLAY";

// What the runtime calls when it opens a device. `backend` is "host", "cuda", "hip" or
// "vulkan"; `display_name` is how messages name the device ("vulkan:0 (llvmpipe …)").
// `overlay_path` "" means $NBX_DEVICE_OVERLAY when set, else no overlay.
// Throws InvalidArgument (malformed device files or overlay, or no file at all for the
// backend) and Unsupported (an overlay that claims more than the device has).
Capabilities resolve_capabilities(std::string_view backend, const DeviceProperties& runtime,
                                  const std::string& display_name,
                                  const std::string& overlay_path = "");
// The same over an explicit set of files; `overlay_path` "" means no overlay (the
// environment is not read), so tests see exactly what they pass.
Capabilities resolve_capabilities(const DeviceFileSet& files, std::string_view backend,
                                  const DeviceProperties& runtime, const std::string& display_name,
                                  const std::string& overlay_path);

// The declared capabilities of an architecture that need not be present: "nvidia/sm_70",
// "gfx90a" (a bare arch when unique), or a path to a .yml file. `backend_hint` picks the
// backend overrides ("" = the vendor's own API: nvidia → cuda, amd → hip, host → host,
// otherwise vulkan). No runtime cross-check happens. `overlay_path` as above.
// Throws InvalidArgument for an unknown architecture (listing the known ones).
Capabilities capabilities_for_arch(std::string_view arch_or_path,
                                   std::string_view backend_hint = "",
                                   const std::string& overlay_path = "");
Capabilities capabilities_for_arch(const DeviceFileSet& files, std::string_view arch_or_path,
                                   std::string_view backend_hint, const std::string& overlay_path);

// The file a device gets, and why, as a sentence. Throws InvalidArgument when not even a
// generic file matches (an unknown backend).
struct DeviceFileChoice {
  const DeviceFile* file = nullptr;
  bool generic = false;
  std::string how;
};
DeviceFileChoice choose_device_file(const DeviceFileSet& files, std::string_view backend,
                                    const DeviceProperties& runtime);
// Why `file` claims the device ("cuda compute capability 9.0 matches '9.0'"), or nullopt.
std::optional<std::string> match_reason(const DeviceFile& file, std::string_view backend,
                                        const DeviceProperties& runtime);

// The file's capabilities with `backend`'s overrides applied; provenance file:line (key).
Capabilities capabilities_from_file(const DeviceFile& file, std::string_view backend);
// Lays `overlay` over `caps` (rules above). Throws Unsupported or InvalidArgument.
void apply_overlay(Capabilities& caps, const OverlayFile& overlay);

// The DeviceProperties a runtime would report for a KnownDevice of a device file (the
// matching tests, and `nbx caps` examples).
DeviceProperties known_device_properties(const KnownDevice& device);

// JSON: {"device", "backend", "device_file", "match", "generic", "overlay",
//        "capabilities": {"<key>": {"value": …, "source": "…"}, …},
//        "conflicts": [{"key", "file_value", "runtime_value", "file_source", "runtime_source"}]}
std::string capabilities_to_json(const Capabilities& caps, int indent = 2);

}  // namespace nbx
