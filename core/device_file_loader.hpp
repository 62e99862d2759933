// Device files (device_files/<vendor>/<arch>.yml): parsing and schema validation.
//
// A device file declares what one GPU architecture can do (device_files/schema.md is the
// reference for every key). This header turns files into checked, typed records; choosing
// the file for a device and building Capabilities from it is capability_resolver.hpp's job.
//
// Every malformed input (YAML syntax, unknown key, wrong type, missing required key,
// out-of-range value) throws nbx::InvalidArgument whose op() is "device file" and whose
// message starts with "<file>:<line>:" and names the key in quotes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nbx {

// The type of one capability key, and which way an overlay may move it.
enum class CapabilityKind { kBool, kInt, kFloat, kBf16, kMatrixUnit, kIntList, kDTypeList };
enum class OverlayRule {
  kTurnOff,     // bool: true → false only
  kLower,       // ceilings and enumerations ordered by strength: lower or equal only
  kRaise,       // floors (attention.min_tile): higher or equal only
  kSubset,      // lists: a subset of what the device has
  kOneOfSizes,  // subgroup.size: one of the sizes the device allows
};
struct CapabilityKeySpec {
  std::string_view key;  // dotted: "shared_memory.per_block"; "peak.tflops.*" for the map
  CapabilityKind kind;
  bool required;
  OverlayRule overlay;
  std::string_view unit;  // "bytes", "threads", "GB/s", … or "" when none
  // Numbers (kInt, kIntList, kFloat) lie in (0, max]: far above any device, low enough that
  // the wrappers' products of two stay exact in 64 bits and ints fit 31 bits. 0: no number.
  double max = 0;
};
// The schema's capability keys in documentation order (schema.md lists the same).
std::span<const CapabilityKeySpec> capability_key_specs();
// The spec of a dotted key; "peak.tflops.<dtype>" matches the "peak.tflops.*" row when
// <dtype> is a dtype name. nullptr for an unknown key.
const CapabilityKeySpec* find_capability_key(std::string_view key);

// One capability value as written, already checked against its kind. Ints and floats are
// int64/double; bf16 and matrix.unit are their schema spellings ("native", "wgmma").
using DeviceFileValue = std::variant<bool, std::int64_t, double, std::string,
                                     std::vector<std::int64_t>, std::vector<std::string>>;
struct DeviceFileEntry {
  DeviceFileValue value;
  int line = 0;  // 1-based line of the key in its file
};
using DeviceFileEntries = std::map<std::string, DeviceFileEntry>;  // dotted key → entry

// How a file claims devices. A file matches a device when the device's backend has a rule
// here and any one of that backend's patterns matches.
struct VulkanMatchRule {
  std::optional<std::uint32_t> vendor_id;  // VkPhysicalDeviceProperties::vendorID; none = any
  std::vector<std::uint32_t> driver_ids;   // VkDriverId values; empty = any
  std::vector<std::string> device_names;   // glob patterns (* and ?, case-insensitive)
  int line = 0;
};
struct DeviceFileMatch {
  std::vector<std::string> cuda;  // compute capability "major.minor" globs: "9.0", "8.*"
  std::vector<std::string> hip;   // gcnArchName globs, target features after ':' ignored
  std::vector<VulkanMatchRule> vulkan;
  bool host = false;
};

// A device a file is written for, as its runtime would describe it. The matching tests
// check that each one selects its own file and no other.
struct KnownDevice {
  std::string backend;             // "cuda", "hip", "vulkan", "host"
  std::string name;                // runtime device name
  std::string compute_capability;  // cuda: "9.0"
  std::string gcn_arch;            // hip: "gfx90a:sramecc+:xnack-"
  std::uint32_t vendor_id = 0;     // vulkan
  std::uint32_t driver_id = 0;     // vulkan
  int line = 0;
};

struct DeviceFile {
  std::string path;  // as provenance shows it: "device_files/nvidia/sm_90.yml"
  std::string vendor;
  std::string arch;
  std::string description;
  bool generic = false;  // the vendor's conservative fallback, used when nothing else matches
  DeviceFileMatch match;
  std::vector<KnownDevice> known_devices;
  DeviceFileEntries capabilities;                     // every required key is present
  std::map<std::string, DeviceFileEntries> backends;  // backend name → overriding entries
  std::string name() const { return vendor + "/" + arch; }
};

struct DeviceFileSet {
  std::string origin;             // "embedded" or the directory the files were read from
  std::vector<DeviceFile> files;  // sorted by path
  // The file named "<vendor>/<arch>", or nullptr.
  const DeviceFile* find(std::string_view vendor_arch) const;
};

// An application's overlay: capability keys only, each of which may only restrict.
struct OverlayFile {
  std::string path;
  std::string description;
  DeviceFileEntries capabilities;
};

// Parses one device file. `display_path` names it in messages and provenance; the vendor
// and arch it declares must match its last two path components (<vendor>/<arch>.yml).
DeviceFile parse_device_file(std::string_view text, const std::string& display_path);
// Reads and parses a file on disk (display path = `path`). Throws InvalidArgument when it
// cannot be read.
DeviceFile load_device_file(const std::string& path);
// Every <vendor>/<arch>.yml below `dir`; provenance paths are "<display_prefix>/<vendor>/…".
// Throws on the first malformed file, on two generic files for one vendor, or on none.
DeviceFileSet load_device_file_dir(const std::string& dir, const std::string& display_prefix);
OverlayFile parse_overlay(std::string_view text, const std::string& display_path);
OverlayFile load_overlay(const std::string& path);

// The device files this process uses, loaded once (thread-safe): the directory named by
// $NBX_DEVICE_FILES when set, otherwise the copy embedded in libnbx at build time (so a
// binary carried to another machine needs no source tree). Throws InvalidArgument when
// they are malformed.
const DeviceFileSet& device_files();
// The shipped files as embedded at build time (ignores $NBX_DEVICE_FILES).
const DeviceFileSet& embedded_device_files();

// `nbx device-files check`: validates every .yml below `dir`, collecting every error
// instead of stopping at the first.
struct DeviceFileCheckReport {
  std::vector<std::string> checked;  // display paths of files that passed
  std::vector<std::string> errors;   // one message per failure ("file:line: … key '…'")
  bool ok() const { return errors.empty() && !checked.empty(); }
};
DeviceFileCheckReport check_device_file_dir(const std::string& dir);

namespace detail {
// Written by device_files/embed_device_files.py into the build tree.
struct EmbeddedDeviceFile {
  const char* path;  // "nvidia/sm_90.yml"
  const char* text;
};
extern const EmbeddedDeviceFile kEmbeddedDeviceFiles[];
extern const std::size_t kEmbeddedDeviceFileCount;
// Glob match used by the matching rules: '*' any run, '?' one character, ASCII
// case-insensitive.
bool glob_match(std::string_view pattern, std::string_view text);
// VkDriverId for a schema name ("NVIDIA_PROPRIETARY", "MESA_LLVMPIPE"), 0 when unknown.
std::uint32_t vulkan_driver_id_from_name(std::string_view name);
std::string_view vulkan_driver_id_name(std::uint32_t id);
}  // namespace detail

}  // namespace nbx
