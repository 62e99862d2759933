// Capabilities: provenance, runtime conflicts, generic fill-in, overlays (restriction and
// refusal), architectures by name, and the JSON written by `nbx caps --json`.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

// The 1-based line of the first line of `path` that starts with `prefix`.
int line_of(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.rfind(prefix, 0) == 0) return n;
  return -1;
}

nbx::DeviceProperties llvmpipe() {
  nbx::DeviceProperties p;
  p.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  p.pci_vendor_id = 0x10005;
  p.vulkan_driver_id = 13;
  return p;
}

nbx::DeviceProperties h200_cuda() {
  nbx::DeviceProperties p;
  p.name = "NVIDIA H200";
  p.compute_capability_major = 9;
  return p;
}

// Writes an overlay into a fresh temporary file and returns its path.
std::string overlay(const std::string& name, const std::string& capabilities_yaml) {
  auto path = std::filesystem::temp_directory_path() /
              ("nbx_" + std::to_string(::getpid()) + "_" + name + ".yml");
  std::ofstream(path) << "overlay: 1\ndescription: test overlay\ncapabilities:\n"
                      << capabilities_yaml;
  return path.string();
}

nbx::Capabilities resolve(std::string_view backend, const nbx::DeviceProperties& p,
                          const std::string& overlay_path = "") {
  return nbx::resolve_capabilities(shipped(), backend, p, std::string(backend) + ":0",
                                   overlay_path);
}

}  // namespace

TEST_CASE("every value names the file and line it came from") {
  nbx::Capabilities c = resolve("vulkan", llvmpipe());
  std::string file = std::string(NBX_SOURCE_DEVICE_FILES_DIR) + "/mesa/llvmpipe.yml";
  CHECK(c.device_file == "device_files/mesa/llvmpipe.yml");
  CHECK(c.fp64.value == true);
  CHECK(c.fp64.source ==
        "device_files/mesa/llvmpipe.yml:" + std::to_string(line_of(file, "  fp64:")) + " (fp64)");
  CHECK(c.subgroup_size.value == 8);
  CHECK(c.bf16.value == nbx::Bf16Support::kEmulated);
  CHECK(c.peak.bandwidth_gbps.source == "default");  // llvmpipe declares no peak figures
  CHECK(c.conflicts.empty());
  CHECK_FALSE(c.generic);
}

TEST_CASE("backend overrides: the H200 gives CUDA 227 KB of shared memory, Vulkan 48 KB") {
  nbx::Capabilities cuda = nbx::capabilities_for_arch(shipped(), "nvidia/sm_90", "cuda", "");
  nbx::Capabilities vk = nbx::capabilities_for_arch(shipped(), "nvidia/sm_90", "vulkan", "");
  CHECK(cuda.shared_memory_per_block_optin.value == 232448);
  CHECK(vk.shared_memory_per_block_optin.value == 49152);
  CHECK(vk.shared_memory_per_block_optin.source.find(
            "(backends.vulkan.shared_memory.per_block_optin)") != std::string::npos);
  CHECK(cuda.matrix_unit.value == nbx::MatrixUnit::kWgmma);
  CHECK(vk.matrix_unit.value == nbx::MatrixUnit::kCoopmat);
  CHECK(vk.fp64.source == cuda.fp64.source);  // not overridden: the same file line
}

TEST_CASE("the runtime wins a disagreement, and the conflict is recorded") {
  nbx::DeviceProperties p = h200_cuda();
  p.subgroup_size = 32;                          // agrees
  p.shared_memory_per_block_optin = 200 * 1024;  // disagrees with 232448
  p.bf16 = false;                                // disagrees with native
  nbx::Capabilities c = resolve("cuda", p);
  CHECK(c.subgroup_size.source.find("sm_90.yml") != std::string::npos);
  CHECK(c.shared_memory_per_block_optin.value == 204800);
  CHECK(c.shared_memory_per_block_optin.source ==
        "runtime (cudaDeviceProp.sharedMemPerBlockOptin)");
  CHECK(c.bf16.value == nbx::Bf16Support::kEmulated);
  REQUIRE(c.conflicts.size() == 2);
  const nbx::CapabilityConflict& k =
      c.conflicts[1].key == "shared_memory.per_block_optin" ? c.conflicts[1] : c.conflicts[0];
  CHECK(k.key == "shared_memory.per_block_optin");
  CHECK(k.file_value == "232448");
  CHECK(k.runtime_value == "204800");
  CHECK(k.file_source.find("device_files/nvidia/sm_90.yml:") == 0);
}

// DeviceProperties as backends/cuda, backends/hip and backends/vulkan fill them (their
// *_properties.cpp), with the values those runtimes give on the named devices.
static nbx::DeviceProperties as_reported(std::string_view backend, std::string name, int subgroup,
                                         std::int64_t smem, std::int64_t optin) {
  nbx::DeviceProperties p;
  p.name = std::move(name);
  p.fp64 = p.fp16 = p.int64 = p.int8 = true;
  p.subgroup_size = subgroup;
  p.subgroup_sizes = {subgroup};
  p.max_threads_per_block = 1024;
  p.shared_memory_per_block = smem;
  p.shared_memory_per_block_optin = optin;
  if (backend == "vulkan") {
    p.bf16 = true;  // usable; the three-way answer is in extra
    p.extra["bf16"] = "emulated (16-bit words, float32 arithmetic; glslc has no bf16 type)";
  }
  return p;
}

TEST_CASE("what our backends report agrees with the files (no conflicts)") {
  nbx::DeviceProperties h200 = as_reported("cuda", "NVIDIA H200", 32, 49152, 232448);
  h200.compute_capability_major = 9;
  h200.bf16 = true;
  h200.matrix_unit = "wgmma";
  nbx::DeviceProperties h200_vk = as_reported("vulkan", "NVIDIA H200", 32, 49152, 49152);
  h200_vk.pci_vendor_id = 0x10de;
  h200_vk.vulkan_driver_id = 4;
  h200_vk.matrix_unit = "coopmat";
  nbx::DeviceProperties lp =
      as_reported("vulkan", "llvmpipe (LLVM 15.0.6, 256 bits)", 8, 32768, 32768);
  lp.pci_vendor_id = 0x10005;
  lp.vulkan_driver_id = 13;
  nbx::DeviceProperties mi210 = as_reported("hip", "AMD Instinct MI210", 64, 65536, 65536);
  mi210.arch = "gfx90a:sramecc+:xnack-";
  mi210.matrix_unit = "mfma";
  nbx::DeviceProperties navi31 = as_reported("hip", "AMD Radeon RX 7900 XTX", 32, 65536, 65536);
  navi31.arch = "gfx1100";
  navi31.matrix_unit = "wmma";
  struct Case {
    const char* backend;
    nbx::DeviceProperties props;
    const char* file;
  } cases[] = {{"cuda", h200, "nvidia/sm_90"},
               {"vulkan", h200_vk, "nvidia/sm_90"},
               {"vulkan", lp, "mesa/llvmpipe"},
               {"hip", mi210, "amd/gfx90a"},
               {"hip", navi31, "amd/gfx1100"}};
  for (const auto& k : cases) {
    INFO(k.backend << " " << k.props.name);
    nbx::Capabilities c = resolve(k.backend, k.props);
    CHECK(c.device_file == "device_files/" + std::string(k.file) + ".yml");
    for (const auto& x : c.conflicts)
      FAIL_CHECK(x.key << ": file " << x.file_value << ", runtime " << x.runtime_value);
  }
  nbx::Capabilities vk = resolve("vulkan", lp);
  CHECK(vk.bf16.value == nbx::Bf16Support::kEmulated);
}

TEST_CASE("a three-way bf16 answer from the runtime is compared as such") {
  nbx::DeviceProperties p = h200_cuda();
  p.bf16 = true;
  p.extra["bf16"] = "emulated (as if no bf16 instructions)";
  nbx::Capabilities c = resolve("cuda", p);
  CHECK(c.bf16.value == nbx::Bf16Support::kEmulated);
  CHECK(c.bf16.source == "runtime (cuda: emulated (as if no bf16 instructions))");
  REQUIRE(c.conflicts.size() == 1);
  CHECK(c.conflicts[0].file_value == "native");
}

TEST_CASE("a runtime may name its own query in the provenance") {
  nbx::DeviceProperties p = llvmpipe();
  p.subgroup_size = 16;
  p.extra["source.subgroup.size"] =
      "VkPhysicalDeviceSubgroupProperties.subgroupSize (512-bit host)";
  nbx::Capabilities c = resolve("vulkan", p);
  CHECK(c.subgroup_size.value == 16);
  CHECK(c.subgroup_sizes.value == std::vector<int>{16});  // kept consistent with the size
  CHECK(c.subgroup_size.source ==
        "runtime (VkPhysicalDeviceSubgroupProperties.subgroupSize (512-bit host))");
  CHECK(c.conflicts.size() == 1);
}

TEST_CASE("a generic file is filled in from the runtime without conflicts, and says so") {
  nbx::DeviceProperties p;
  p.name = "Apple M2 Max";
  p.pci_vendor_id = 0x106b;
  p.fp16 = true;
  p.subgroup_size = 32;
  p.shared_memory_per_block = 32768;
  nbx::Capabilities c = resolve("vulkan", p);
  CHECK(c.generic);
  CHECK(c.device_file == "device_files/vulkan/generic.yml");
  CHECK(c.match.find("generic") != std::string::npos);
  CHECK(c.fp16.value);
  CHECK(c.fp16.source == "runtime (VkPhysicalDeviceShaderFloat16Int8Features.shaderFloat16)");
  CHECK_FALSE(c.fp64.value);  // the runtime did not say; the generic file never claims fp64
  CHECK(c.shared_memory_per_block.value == 32768);
  CHECK(c.shared_memory_per_block_optin.value == 32768);
  CHECK(c.conflicts.empty());
}

TEST_CASE("an overlay restricts, and each value it changes names the overlay") {
  std::string path =
      overlay("restrict",
              "  fp64: false\n  bf16: none\n  attention: {min_tile: 16, block_ceiling: 16}\n"
              "  shared_memory: {per_block: 16384, per_block_optin: 16384}\n");
  nbx::Capabilities c = resolve("vulkan", llvmpipe(), path);
  CHECK(c.overlay == path);
  CHECK_FALSE(c.fp64.value);
  CHECK(c.fp64.source == "overlay " + path + ":4 (fp64)");
  CHECK(c.bf16.value == nbx::Bf16Support::kNone);
  CHECK(c.attention.min_tile.value == 16);       // a floor, raised
  CHECK(c.attention.block_ceiling.value == 16);  // a ceiling, lowered
  CHECK(c.shared_memory_per_block.value == 16384);
  CHECK(c.int64.source.find("llvmpipe.yml") != std::string::npos);  // untouched
  std::filesystem::remove(path);
}

TEST_CASE("an overlay that claims more than the device has is refused by name") {
  struct Case {
    const char* name;
    const char* yaml;
    const char* key;
  } cases[] = {
      {"more_fp64", "  fp64: true\n", "fp64"},  // llvmpipe under a no-fp64 runtime answer
      {"more_bf16", "  bf16: native\n", "bf16"},
      {"more_smem", "  shared_memory: {per_block: 65536, per_block_optin: 65536}\n",
       "shared_memory.per_block"},
      {"lower_floor", "  attention: {min_tile: 4}\n", "attention.min_tile"},
      {"other_unit", "  matrix: {unit: wgmma}\n", "matrix.unit"},
      {"more_dtypes", "  matrix: {dtypes: [float64]}\n", "matrix.dtypes"},
      {"other_size", "  subgroup: {size: 32}\n", "subgroup.size"},
      {"new_peak", "  peak: {tflops: {float64: 1}}\n", "peak.tflops.float64"},
  };
  nbx::DeviceProperties p = llvmpipe();
  p.fp64 = false;
  for (const auto& k : cases) {
    INFO(k.name);
    std::string path = overlay(k.name, k.yaml);
    try {
      resolve("vulkan", p, path);
      FAIL_CHECK("the overlay was accepted");
    } catch (const nbx::Unsupported& e) {
      CHECK(e.op() == "overlay");
      CHECK(e.capability() == k.key);
      CHECK(e.device() == "vulkan:0");
      std::string msg = e.what();
      CHECK(msg.find(path + ":4") != std::string::npos);
      CHECK(msg.find("refused") != std::string::npos);
    }
    std::filesystem::remove(path);
  }
}

TEST_CASE("an overlay that breaks a relation between keys is refused as invalid") {
  std::string path =
      overlay("relation", "  subgroup: {sizes: [8]}\n  shared_memory: {per_block_optin: 1024}\n");
  CHECK_THROWS_AS(resolve("vulkan", llvmpipe(), path), nbx::InvalidArgument);
  std::filesystem::remove(path);
  // Each relation names the line of the overlay's key (issue 15: it named none).
  const auto message = [](const std::string& p) {
    try {
      resolve("vulkan", llvmpipe(), p);
    } catch (const nbx::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  path = overlay("relation_optin", "  fp64: false\n  shared_memory: {per_block_optin: 1024}\n");
  CHECK(message(path).find(path + ":5: ") == 0);
  std::filesystem::remove(path);
  // A ceiling under the floor is not one of them: attention's plan clamps the tile up to
  // the floor and says so once (test_attention.cpp).
  path = overlay("relation_tile", "  attention: {block_ceiling: 4}\n");
  CHECK(resolve("vulkan", llvmpipe(), path).attention.block_ceiling.value == 4);
  std::filesystem::remove(path);
}

TEST_CASE("NBX_DEVICE_OVERLAY applies to every device resolved without an explicit overlay") {
  std::string path = overlay("env", "  fp64: false\n");
  ::setenv(nbx::kOverlayEnv, path.c_str(), 1);
  nbx::Capabilities c = nbx::resolve_capabilities("vulkan", llvmpipe(), "vulkan:0 (llvmpipe)");
  nbx::Capabilities arch = nbx::capabilities_for_arch("amd/gfx90a");
  ::unsetenv(nbx::kOverlayEnv);
  CHECK_FALSE(c.fp64.value);
  CHECK(c.overlay == path);
  CHECK_FALSE(arch.fp64.value);
  CHECK(nbx::resolve_capabilities("vulkan", llvmpipe(), "vulkan:0").fp64.value);
  std::filesystem::remove(path);
}

TEST_CASE("architectures by name, by bare arch and by path") {
  nbx::Capabilities v100 = nbx::capabilities_for_arch(shipped(), "nvidia/sm_70", "", "");
  CHECK(v100.backend == "cuda");
  CHECK(v100.bf16.value == nbx::Bf16Support::kEmulated);
  CHECK(v100.device == "arch nvidia/sm_70 (cuda)");
  nbx::Capabilities mi250 = nbx::capabilities_for_arch(shipped(), "gfx90a", "", "");
  CHECK(mi250.backend == "hip");
  CHECK(mi250.subgroup_size.value == 64);
  CHECK(mi250.peak.tflops.at(nbx::DType::kFloat64).value > 0);
  std::string fixture = (std::filesystem::path(NBX_SOURCE_DEVICE_FILES_DIR).parent_path() /
                         "tests/data/device_files/valid.yml")
                            .string();
  nbx::Capabilities f = nbx::capabilities_for_arch(shipped(), fixture, "vulkan", "");
  CHECK(f.shared_memory_per_block.value == 16384);
  CHECK(f.shared_memory_per_block.source.find("valid.yml:37") != std::string::npos);
  try {
    nbx::capabilities_for_arch(shipped(), "sm_99", "", "");
    FAIL("an unknown architecture was accepted");
  } catch (const nbx::InvalidArgument& e) {
    CHECK(std::string(e.what()).find("nvidia/sm_90") != std::string::npos);  // lists known ones
  }
  CHECK_THROWS_AS(nbx::capabilities_for_arch(shipped(), "nvidia/sm_90", "metal", ""),
                  nbx::InvalidArgument);
}

TEST_CASE("text that is not UTF-8 reaches the JSON output as U+FFFD, not an abort") {
  // Found from outside (issue 15): an arch value or a path with invalid bytes made `nbx caps
  // --json` abort on nlohmann's type_error 316.
  nbx::Capabilities c = resolve("cuda", h200_cuda());
  c.device = "arch test/v\xff\xfe";
  c.device_file = "/tmp/\xff.yml";
  std::string out;
  CHECK_NOTHROW(out = nbx::capabilities_to_json(c));
  const nlohmann::json j = nlohmann::json::parse(out);
  CHECK(j["device"] == "arch test/v\xef\xbf\xbd\xef\xbf\xbd");
  CHECK(j["device_file"] == "/tmp/\xef\xbf\xbd.yml");
}

TEST_CASE("the JSON output parses back to the same values, sources and conflicts") {
  nbx::DeviceProperties p = h200_cuda();
  p.shared_memory_per_block_optin = 100000;
  nbx::Capabilities c = resolve("cuda", p);
  nlohmann::json j = nlohmann::json::parse(nbx::capabilities_to_json(c));
  CHECK(j["device"] == "cuda:0");
  CHECK(j["device_file"] == "device_files/nvidia/sm_90.yml");
  CHECK(j["generic"] == false);
  auto rows = nbx::capability_rows(c);
  CHECK(j["capabilities"].size() == rows.size());
  for (const auto& row : rows) {
    INFO(row.key);
    const auto& cap = j["capabilities"].at(row.key);
    CHECK(cap.at("source") == row.source);
    nbx::CapabilityValue back;
    const auto& v = cap.at("value");
    if (v.is_boolean())
      back = v.get<bool>();
    else if (v.is_number_integer())
      back = v.get<std::int64_t>();
    else if (v.is_number())
      back = v.get<double>();
    else if (v.is_string())
      back = v.get<std::string>();
    else if (!v.empty() && v[0].is_number())
      back = v.get<std::vector<std::int64_t>>();
    else if (!v.empty())
      back = v.get<std::vector<std::string>>();
    else
      back = std::holds_alternative<std::vector<std::int64_t>>(row.value)
                 ? nbx::CapabilityValue(std::vector<std::int64_t>{})
                 : nbx::CapabilityValue(std::vector<std::string>{});
    CHECK(back == row.value);
  }
  REQUIRE(j["conflicts"].size() == 1);
  CHECK(j["conflicts"][0]["key"] == "shared_memory.per_block_optin");
  CHECK(j["conflicts"][0]["runtime_value"] == "100000");
}
