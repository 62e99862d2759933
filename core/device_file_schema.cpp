// The device-file schema as data: every capability key with its kind, unit and overlay rule
// (device_files/schema.md documents the same keys), the Vulkan driver ids files may name,
// and the glob used by name patterns.
#include <algorithm>
#include <cctype>
#include <iterator>

#include "core/device_file_loader.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"

namespace nbx {
namespace {

using K = CapabilityKind;
using R = OverlayRule;

constexpr double kCount = 1 << 30;  // rows, elements, bytes: 2^30 (shipped: 2^18 at most)
constexpr double kLanes = 1024;     // subgroup sizes (shipped: 64 at most)
constexpr double kPeak = 1e9;       // GB/s, TFLOP/s (shipped: 8000 at most)

// Keep in the order of device_files/schema.md (which states each maximum).
constexpr CapabilityKeySpec kSpecs[] = {
    {"fp64", K::kBool, true, R::kTurnOff, ""},
    {"fp16", K::kBool, true, R::kTurnOff, ""},
    {"bf16", K::kBf16, true, R::kLower, ""},
    {"int64", K::kBool, true, R::kTurnOff, ""},
    {"int8", K::kBool, true, R::kTurnOff, ""},
    {"subgroup.size", K::kInt, true, R::kOneOfSizes, "lanes", kLanes},
    {"subgroup.sizes", K::kIntList, true, R::kSubset, "lanes", kLanes},
    {"max_threads_per_block", K::kInt, true, R::kLower, "threads", 65536},
    {"shared_memory.per_block", K::kInt, true, R::kLower, "bytes", kCount},
    {"shared_memory.per_block_optin", K::kInt, true, R::kLower, "bytes", kCount},
    {"register_file_bytes", K::kInt, true, R::kLower, "bytes", kCount},
    {"matrix.unit", K::kMatrixUnit, true, R::kLower, ""},
    {"matrix.dtypes", K::kDTypeList, true, R::kSubset, ""},
    {"attention.min_tile", K::kInt, true, R::kRaise, "rows", 65536},
    {"attention.block_ceiling", K::kInt, true, R::kLower, "rows", 65536},
    {"reduce.tile_max", K::kInt, true, R::kLower, "elements", kCount},
    {"sort.select_candidates_max", K::kInt, false, R::kLower, "candidates", kCount},
    {"pipelining.max_num_stages", K::kInt, true, R::kLower, "stages", 64},
    {"memory.pool_cap_fraction", K::kFloat, true, R::kLower, "fraction", 1},
    {"memory.attention_min_chunk_rows", K::kInt, true, R::kRaise, "rows", kCount},
    {"peak.bandwidth_gbps", K::kFloat, false, R::kLower, "GB/s", kPeak},
    {"peak.tflops.*", K::kFloat, false, R::kLower, "TFLOP/s", kPeak},
};

struct DriverName {
  std::uint32_t id;
  std::string_view name;
};
// VkDriverId (Vulkan specification, "Identification of Drivers").
constexpr DriverName kDrivers[] = {
    {1, "AMD_PROPRIETARY"},
    {2, "AMD_OPEN_SOURCE"},
    {3, "MESA_RADV"},
    {4, "NVIDIA_PROPRIETARY"},
    {5, "INTEL_PROPRIETARY_WINDOWS"},
    {6, "INTEL_OPEN_SOURCE_MESA"},
    {7, "IMAGINATION_PROPRIETARY"},
    {8, "QUALCOMM_PROPRIETARY"},
    {9, "ARM_PROPRIETARY"},
    {10, "GOOGLE_SWIFTSHADER"},
    {11, "GGP_PROPRIETARY"},
    {12, "BROADCOM_PROPRIETARY"},
    {13, "MESA_LLVMPIPE"},
    {14, "MOLTENVK"},
    {15, "COREAVI_PROPRIETARY"},
    {16, "JUICE_PROPRIETARY"},
    {17, "VERISILICON_PROPRIETARY"},
    {18, "MESA_TURNIP"},
    {19, "MESA_V3DV"},
    {20, "MESA_PANVK"},
    {21, "SAMSUNG_PROPRIETARY"},
    {22, "MESA_VENUS"},
    {23, "MESA_DOZEN"},
    {24, "MESA_NVK"},
};

}  // namespace

std::span<const CapabilityKeySpec> capability_key_specs() {
  return kSpecs;
}

const CapabilityKeySpec* find_capability_key(std::string_view key) {
  for (const auto& s : kSpecs)
    if (s.key == key) return &s;
  constexpr std::string_view kTflops = "peak.tflops.";
  if (key.substr(0, kTflops.size()) == kTflops) {
    try {
      std::string_view d = key.substr(kTflops.size());
      if (dtype_name(parse_dtype(d)) == d) return &kSpecs[std::size(kSpecs) - 1];
    } catch (const InvalidArgument&) {
    }
  }
  return nullptr;
}

namespace detail {

bool glob_match(std::string_view pattern, std::string_view text) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || lower(pattern[p]) == lower(text[t]))) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++, mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1, t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::uint32_t vulkan_driver_id_from_name(std::string_view name) {
  for (const auto& d : kDrivers)
    if (d.name == name) return d.id;
  return 0;
}

std::string_view vulkan_driver_id_name(std::uint32_t id) {
  for (const auto& d : kDrivers)
    if (d.id == id) return d.name;
  return "";
}

}  // namespace detail
}  // namespace nbx
