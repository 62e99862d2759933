// The YAML of device files and overlays, read within bounds before yaml-cpp builds a tree:
// a device file is a few kilobytes of plain mappings and lists, so anything far from that is
// refused with file:line instead of being parsed at any cost.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace nbx {

inline constexpr std::size_t kDeviceFileMaxBytes = 1 << 20;  // shipped files: 2–7 KB
inline constexpr int kDeviceFileMaxDepth = 16;               // shipped files nest 5 deep

// Parses `text` as one YAML document whose top level is a mapping. Throws InvalidArgument
// (op "device file", message "<display_path>:<line>: …") for invalid YAML, text past
// kDeviceFileMaxBytes, nesting past kDeviceFileMaxDepth, an anchor or alias (yaml-cpp shares
// aliased nodes, so a handful of aliases can stand for billions of values to walk), or a
// second document.
YAML::Node load_device_file_yaml(std::string_view text, const std::string& display_path);

}  // namespace nbx
