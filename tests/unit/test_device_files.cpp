// Device-file loader: the shipped files are valid and embedded as they are on disk; each
// kind of malformed file fails with file:line and the key.
#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/device_file_loader.hpp"
#include "core/errors.hpp"
#include "nbx_config.h"

namespace {

const std::string kShipped = NBX_SOURCE_DEVICE_FILES_DIR;
const std::string kFixtures =
    (std::filesystem::path(NBX_SOURCE_DEVICE_FILES_DIR).parent_path() / "tests/data/device_files")
        .string();

std::string fixture(const std::string& name) {
  return kFixtures + "/" + name;
}

// The message of the InvalidArgument that loading the device file (or overlay) at `path`
// throws ("" if none).
std::string refusal(const std::string& path, bool overlay = false) {
  try {
    overlay ? (void)nbx::load_overlay(path) : (void)nbx::load_device_file(path);
  } catch (const nbx::InvalidArgument& e) {
    CHECK(e.op() == "device file");
    return e.what();
  }
  return "";
}
std::string load_error(const std::string& name) {
  return refusal(fixture(name));
}

// Inputs the fuzzers and the mutation runs kept (tests/fuzz/regressions/<target>/): `name`
// is refused at `line` with a message holding `part`.
void check_kept(const std::string& target, const std::string& name, int line,
                const std::string& part) {
  const auto path = std::filesystem::path(kFixtures).parent_path().parent_path() /
                    "fuzz/regressions" / target / name;
  const std::string msg = refusal(path.string(), target == "overlay");
  INFO("message: " << msg);
  CHECK(msg.find(name + ":" + std::to_string(line) + ": ") != std::string::npos);
  CHECK(msg.find(part) != std::string::npos);
}

void check_error(const std::string& name, int line, const std::string& key) {
  std::string msg = load_error(name);
  INFO("message: " << msg);
  CHECK(msg.find(name + ":" + std::to_string(line) + ":") != std::string::npos);
  CHECK(msg.find("key '" + key + "'") != std::string::npos);
}

}  // namespace

TEST_CASE("the shipped device files pass the check and load as a set") {
  nbx::DeviceFileCheckReport report = nbx::check_device_file_dir(kShipped);
  for (const auto& e : report.errors) FAIL_CHECK(e);
  CHECK(report.ok());
  nbx::DeviceFileSet set = nbx::load_device_file_dir(kShipped, "device_files");
  CHECK(set.files.size() == report.checked.size());
  for (const char* name :
       {"nvidia/sm_70",   "nvidia/sm_75",  "nvidia/sm_80",  "nvidia/sm_86",   "nvidia/sm_89",
        "nvidia/sm_90",   "nvidia/sm_100", "nvidia/sm_120", "nvidia/generic", "amd/gfx906",
        "amd/gfx908",     "amd/gfx90a",    "amd/gfx942",    "amd/gfx950",     "amd/gfx1030",
        "amd/gfx1100",    "amd/gfx1201",   "amd/generic",   "intel/generic",  "mesa/llvmpipe",
        "vulkan/generic", "host/host"}) {
    INFO(name);
    CHECK(set.find(name) != nullptr);
  }
}

TEST_CASE("the embedded copy is the files on disk, not a stale one") {
  const nbx::DeviceFileSet& embedded = nbx::embedded_device_files();
  nbx::DeviceFileSet disk = nbx::load_device_file_dir(kShipped, "device_files");
  REQUIRE(embedded.files.size() == disk.files.size());
  for (std::size_t i = 0; i < disk.files.size(); ++i) {
    const auto& a = embedded.files[i];
    const auto& b = disk.files[i];
    INFO(b.path);
    CHECK(a.path == b.path);
    REQUIRE(a.capabilities.size() == b.capabilities.size());
    for (const auto& [key, entry] : b.capabilities) {
      CHECK(a.capabilities.at(key).value == entry.value);
      CHECK(a.capabilities.at(key).line == entry.line);
    }
    CHECK(a.backends.size() == b.backends.size());
  }
}

TEST_CASE("facts the project saw on its own machines are what the files declare") {
  nbx::DeviceFileSet set = nbx::load_device_file_dir(kShipped, "device_files");
  const auto& h = *set.find("nvidia/sm_90");
  CHECK(std::get<std::int64_t>(h.capabilities.at("shared_memory.per_block_optin").value) == 232448);
  CHECK(std::get<std::int64_t>(h.backends.at("vulkan").at("shared_memory.per_block_optin").value) ==
        49152);
  const auto& lp = *set.find("mesa/llvmpipe");
  CHECK(std::get<std::int64_t>(lp.capabilities.at("subgroup.size").value) == 8);
  CHECK(std::get<std::int64_t>(lp.capabilities.at("shared_memory.per_block").value) == 32768);
  // The catch-all Vulkan file must never claim optional features (fp64 above all).
  const auto& vg = *set.find("vulkan/generic");
  for (const char* key : {"fp64", "fp16", "int64", "int8"}) {
    INFO(key);
    CHECK(std::get<bool>(vg.capabilities.at(key).value) == false);
  }
  for (const char* arch : {"nvidia/sm_70", "nvidia/sm_75"}) {
    INFO(arch);  // V100 and T4 have no native bf16
    CHECK(std::get<std::string>(set.find(arch)->capabilities.at("bf16").value) != "native");
  }
}

TEST_CASE("a valid fixture loads with the lines of its keys") {
  nbx::DeviceFile f = nbx::load_device_file(fixture("valid.yml"));
  CHECK(f.name() == "test/valid");
  CHECK(f.capabilities.at("fp64").line == 12);
  CHECK(f.capabilities.at("subgroup.sizes").line == 19);
  CHECK(std::get<double>(f.capabilities.at("peak.tflops.float32").value) == 2.5);
  REQUIRE(f.match.vulkan.size() == 1);
  CHECK(*f.match.vulkan[0].vendor_id == 0xabcd);
  CHECK(f.backends.at("vulkan").at("shared_memory.per_block").line == 37);
}

TEST_CASE("each kind of malformed device file names file, line and key") {
  check_error("malformed_unknown_key.yml", 14, "capabilities.fp65");
  check_error("malformed_wrong_type.yml", 12, "capabilities.fp64");
  check_error("malformed_missing_key.yml", 11, "capabilities.int8");
  check_error("malformed_bad_enum.yml", 14, "capabilities.bf16");
  check_error("malformed_duplicate_key.yml", 16, "capabilities.int64");
  check_error("malformed_bad_dtype.yml", 27, "capabilities.matrix.dtypes");
  check_error("malformed_bad_relation.yml", 18, "capabilities.subgroup.size");
  check_error("malformed_negative.yml", 22, "capabilities.shared_memory.per_block");
  check_error("malformed_bad_backend.yml", 36, "backends.metal");
  check_error("malformed_override_unknown_key.yml", 37,
              "backends.vulkan.shared_memory.per_blok_optin");
  check_error("malformed_override_relation.yml", 37,
              "backends.vulkan.shared_memory.per_block_optin");
  check_error("malformed_bad_match.yml", 7, "match.opencl");
  check_error("malformed_wrong_list_type.yml", 19, "capabilities.subgroup.sizes");
  check_error("malformed_not_a_section.yml", 29, "capabilities.reduce");
  // Integers read strictly (issue 15): one sign, a digit after it and after 0x, 32-bit ids.
  check_error("malformed_double_sign.yml", 22, "capabilities.shared_memory.per_block");
  check_error("malformed_hex_sign.yml", 22, "capabilities.shared_memory.per_block");
  check_error("malformed_vendor_range.yml", 8, "match.vulkan.vendor_id");
}

TEST_CASE("numbers past a key's range, loose floats and unbounded YAML are refused at their line") {
  const auto refused = [](const std::string& name, int line, const std::string& part) {
    check_kept("device_file", name, line, part);
  };
  // Stored in 32-bit fields, these were truncated: 4294967552 threads read as 256.
  refused("threads_past_32_bits.yml", 19,
          "'capabilities.max_threads_per_block' must be an integer in (0, 65536], got 4294967552");
  refused("subgroup_size_2_32.yml", 18, "(0, 1024], got 4294967296");
  refused("bytes_2_63.yml", 23, "'capabilities.register_file_bytes' is '9223372036854775808'");
  refused("duplicate_subgroup_size.yml", 18, "increasing order");
  refused("bandwidth_inf.yml", 32, "expected a number, got 'inf'");
  refused("tflops_hex_float.yml", 33, "expected a number, got '0x1p4'");
  // std::stoi threw std::invalid_argument on these when a test matched the device.
  refused("compute_capability_text.yml", 11, "expected major.minor");
  refused("compute_capability_stoi_abort.yml", 17, "expected major.minor");
  refused("key_is_a_mapping.yml", 11, "has a mapping as a key");
  // The YAML's own bounds.
  refused("alias_bomb.yml", 7, "anchor (&name) or alias (*name)");
  refused("anchor_on_value.yml", 12, "anchor (&name) or alias (*name)");
  refused("deep_nesting.yml", 37, "more than 16 levels deep");
  refused("second_document.yml", 37, "second YAML document");
  refused("one_line_truncated.yml", 28, "not valid YAML");
}

TEST_CASE("an overlay's numbers are held to the same ranges") {
  // Each was accepted: -5 threads and a tile of 0 as lower ceilings, 2^32 + 16 read as 16.
  check_kept("overlay", "negative_ceiling.yml", 4,
             "'capabilities.max_threads_per_block' must be an integer in (0, 65536], got -5");
  check_kept("overlay", "zero_tile.yml", 4, "'capabilities.reduce.tile_max' must be an integer");
  check_kept("overlay", "min_tile_past_32_bits.yml", 4,
             "'capabilities.attention.min_tile' must be an integer in (0, 65536]");
}

TEST_CASE("a YAML syntax error names the file and the line the parser stopped at") {
  std::string msg = load_error("malformed_syntax.yml");
  INFO(msg);
  // The broken line is 16; yaml-cpp notices the unclosed sequence on the next one.
  bool at_line = msg.find("malformed_syntax.yml:16:") != std::string::npos ||
                 msg.find("malformed_syntax.yml:17:") != std::string::npos;
  CHECK(at_line);
  CHECK(msg.find("not valid YAML") != std::string::npos);
}

TEST_CASE("an unreadable file and an unknown overlay key are refused the same way") {
  CHECK(load_error("no_such_file.yml").find("no_such_file.yml:0:") != std::string::npos);
  try {
    nbx::load_overlay(fixture("overlay_malformed.yml"));
    FAIL("a malformed overlay was accepted");
  } catch (const nbx::InvalidArgument& e) {
    std::string msg = e.what();
    CHECK(msg.find("overlay_malformed.yml:6:") != std::string::npos);
    CHECK(msg.find("key 'capabilities.fp128'") != std::string::npos);
  }
}

TEST_CASE("a directory check reports every bad file, and the layout rules") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("nbx_df_check_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "test");
  fs::copy_file(fixture("valid.yml"), dir / "test" / "valid.yml");
  fs::copy_file(fixture("malformed_wrong_type.yml"), dir / "test" / "malformed_wrong_type.yml");
  fs::copy_file(fixture("valid.yml"), dir / "test" / "misplaced.yml");  // arch says "valid"
  nbx::DeviceFileCheckReport report = nbx::check_device_file_dir(dir.string());
  CHECK_FALSE(report.ok());
  CHECK(report.checked.size() == 1);
  REQUIRE(report.errors.size() == 2);
  CHECK(report.errors[0].find("malformed_wrong_type.yml:12:") != std::string::npos);
  CHECK(report.errors[1].find("misplaced.yml:1:") != std::string::npos);
  CHECK_THROWS_AS(nbx::load_device_file_dir(dir.string(), "x"), nbx::InvalidArgument);
  fs::remove_all(dir);
  CHECK_FALSE(nbx::check_device_file_dir(dir.string()).ok());  // no directory at all
}

TEST_CASE("glob patterns and driver names") {
  using nbx::detail::glob_match;
  CHECK(glob_match("NVIDIA H200*", "NVIDIA H200 NVL"));
  CHECK(glob_match("nvidia h200*", "NVIDIA H200"));
  CHECK(glob_match("*NAVI31*", "AMD Radeon RX 7900 XTX (RADV NAVI31)"));
  CHECK(glob_match("AMD Radeon RX 69?0*", "AMD Radeon RX 6950 XT"));
  CHECK_FALSE(glob_match("NVIDIA A10", "NVIDIA A100-SXM4-80GB"));
  CHECK_FALSE(glob_match("llvmpipe*", "softpipe"));
  CHECK(nbx::detail::vulkan_driver_id_from_name("MESA_LLVMPIPE") == 13);
  CHECK(nbx::detail::vulkan_driver_id_from_name("NVIDIA_PROPRIETARY") == 4);
  CHECK(nbx::detail::vulkan_driver_id_name(3) == "MESA_RADV");
}
