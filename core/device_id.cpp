#include "core/device_id.hpp"

#include <charconv>
#include <string>

#include "core/errors.hpp"

namespace nbx {

DeviceId DeviceId::parse(std::string_view text) {
  const auto bad = [&](const char* why) {
    return InvalidArgument("device", "'" + std::string(text) + "' is not a device name (" + why +
                                         "; expected host, cuda:N, hip:N or vulkan:N).");
  };
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  DeviceId id;
  if (name == "host" || name == "cpu") {
    id.backend = "host";
  } else if (name == "cuda" || name == "hip" || name == "vulkan") {
    id.backend = std::string(name);
  } else {
    throw bad("unknown backend");
  }
  if (colon != std::string_view::npos) {
    const std::string_view digits = text.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id.index);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty() || id.index < 0)
      throw bad("the index is not a non-negative number");
    if (id.is_host() && id.index != 0) throw bad("there is one host device, host:0");
  }
  return id;
}

std::string DeviceId::str() const {
  return is_host() ? std::string("host") : backend + ":" + std::to_string(index);
}

}  // namespace nbx
