// Every device of every compiled-in backend that opens here: the host, and vulkan:0,
// cuda:0, hip:0 where a driver and a device exist. Tests that must hold on every backend
// (the same malformed launches refused alike, explain naming what runs) loop over these.
#pragma once

#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"

namespace nbx::testing {

inline std::vector<Device> present_devices() {
  std::vector<Device> out{nbx::open("host")};
  for (const char* name : {"vulkan:0", "cuda:0", "hip:0"}) {
    try {
      out.push_back(nbx::open(name));
    } catch (const Error&) {  // not compiled in, no driver or no device
    }
  }
  return out;
}

}  // namespace nbx::testing
