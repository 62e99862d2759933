// Device identifiers: "host", "cuda:0", "hip:1", "vulkan:0".
#pragma once

#include <string>
#include <string_view>

namespace nbx {

struct DeviceId {
  std::string backend = "host";  // "host", "cuda", "hip", "vulkan"
  int index = 0;

  static DeviceId host() { return {}; }
  // Accepts "host", "cpu" (alias of host), "cuda" (= "cuda:0"), "vulkan:1" …
  // Throws InvalidArgument quoting the text.
  static DeviceId parse(std::string_view text);
  // "host" for the host, otherwise "backend:index".
  std::string str() const;
  bool is_host() const { return backend == "host"; }

  friend bool operator==(const DeviceId&, const DeviceId&) = default;
  friend auto operator<=>(const DeviceId&, const DeviceId&) = default;
};

}  // namespace nbx
