// Matching: every shipped file claims the devices it names and no other; devices no file
// names fall to their vendor's generic file, and the rest to the Vulkan catch-all.
#include <doctest/doctest.h>

#include <string>

#include "core/capability_resolver.hpp"
#include "core/errors.hpp"
#include "nbx_config.h"

namespace {

const nbx::DeviceFileSet& shipped() {
  static const nbx::DeviceFileSet set =
      nbx::load_device_file_dir(NBX_SOURCE_DEVICE_FILES_DIR, "device_files");
  return set;
}

nbx::DeviceProperties vulkan_device(std::uint32_t vendor, std::uint32_t driver, std::string name) {
  nbx::DeviceProperties p;
  p.pci_vendor_id = vendor;
  p.vulkan_driver_id = driver;
  p.name = std::move(name);
  return p;
}

nbx::DeviceProperties cuda_device(int major, int minor, std::string name) {
  nbx::DeviceProperties p;
  p.compute_capability_major = major;
  p.compute_capability_minor = minor;
  p.name = std::move(name);
  return p;
}

std::string chosen(std::string_view backend, const nbx::DeviceProperties& p) {
  return nbx::choose_device_file(shipped(), backend, p).file->name();
}

}  // namespace

TEST_CASE("each known device of each shipped file selects that file and no other") {
  int checked = 0;
  for (const auto& file : shipped().files) {
    for (const auto& known : file.known_devices) {
      nbx::DeviceProperties p = nbx::known_device_properties(known);
      INFO(file.path << ":" << known.line << " " << known.backend << " '" << known.name << "'");
      nbx::DeviceFileChoice choice = nbx::choose_device_file(shipped(), known.backend, p);
      CHECK(choice.file == &file);
      CHECK(choice.generic == file.generic);
      int specific_matches = 0;
      for (const auto& other : shipped().files)
        if (!other.generic && nbx::match_reason(other, known.backend, p)) ++specific_matches;
      CHECK(specific_matches == (file.generic ? 0 : 1));
      ++checked;
    }
  }
  CHECK(checked >= 40);
}

TEST_CASE("near misses do not match the wrong architecture") {
  // "NVIDIA A10" must not catch the A100 (sm_80), nor "NVIDIA RTX A*" the RTX 6000 Ada.
  CHECK(chosen("vulkan", vulkan_device(0x10de, 4, "NVIDIA A100-SXM4-80GB")) == "nvidia/sm_80");
  CHECK(chosen("vulkan", vulkan_device(0x10de, 4, "NVIDIA RTX 6000 Ada Generation")) ==
        "nvidia/sm_89");
  // A name pattern of one vendor never claims another vendor's device.
  CHECK(chosen("vulkan", vulkan_device(0x8086, 6, "AMD Radeon RX 7900 XTX")) == "intel/generic");
  // llvmpipe is matched by vendor, driver and name together.
  CHECK(chosen("vulkan", vulkan_device(0x10005, 13, "llvmpipe (LLVM 17.0.6, 512 bits)")) ==
        "mesa/llvmpipe");
  CHECK(chosen("vulkan", vulkan_device(0x10005, 22, "Virtio-GPU Venus (llvmpipe)")) ==
        "vulkan/generic");
  // Compute capabilities between the shipped ones fall to the generic file.
  CHECK(chosen("cuda", cuda_device(8, 7, "Orin")) == "nvidia/generic");
  CHECK(chosen("cuda", cuda_device(9, 0, "NVIDIA H200")) == "nvidia/sm_90");
  nbx::DeviceProperties hip;
  hip.arch = "gfx90a:sramecc+:xnack-";
  CHECK(chosen("hip", hip) == "amd/gfx90a");
  hip.arch = "gfx1101";
  CHECK(chosen("hip", hip) == "amd/generic");
  CHECK(chosen("host", nbx::DeviceProperties{}) == "host/host");
}

TEST_CASE("the choice says why, and a generic choice says so") {
  auto specific = nbx::choose_device_file(shipped(), "cuda", cuda_device(9, 0, "NVIDIA H200"));
  CHECK(specific.how.find("compute capability 9.0 matches '9.0'") != std::string::npos);
  auto generic =
      nbx::choose_device_file(shipped(), "vulkan", vulkan_device(0x106b, 14, "Apple M2"));
  CHECK(generic.generic);
  CHECK(generic.how.find("using the generic file device_files/vulkan/generic.yml") !=
        std::string::npos);
  CHECK(generic.how.find("filled in from the runtime") != std::string::npos);
}

TEST_CASE("a backend no file knows is refused by name") {
  try {
    nbx::choose_device_file(shipped(), "metal", nbx::DeviceProperties{});
    FAIL("no error for an unknown backend");
  } catch (const nbx::InvalidArgument& e) {
    CHECK(std::string(e.what()).find("metal") != std::string::npos);
  }
}
