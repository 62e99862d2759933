// backends/vulkan/vk_float_controls.cpp: the DenormPreserve patch of the embedded modules.
// llvmpipe reports shaderDenormPreserveFloat32 = false, so no CI device runs the patched
// modules; this test holds the patch to what the spec requires instead: spirv-val accepts
// every patched module of the build, the capability and one execution mode per entry point and
// width are present once, float64 gets its mode only where the module uses Float64, and
// patching twice changes nothing.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backends/vulkan/vk_float_controls.hpp"
#include "core/errors.hpp"

using nbx::vulkan::DenormPreserve;
using nbx::vulkan::with_denorm_preserve;
namespace fs = std::filesystem;

namespace {

std::vector<std::uint32_t> read_words(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::uint32_t> w(bytes.size() / 4);
  std::memcpy(w.data(), bytes.data(), w.size() * 4);
  return w;
}

// Instructions of the module with opcode `op` whose operand words start with `operands`.
int count(const std::vector<std::uint32_t>& w, std::uint16_t op,
          const std::vector<std::uint32_t>& operands) {
  int n = 0;
  for (std::size_t i = 5; i < w.size();) {
    const std::uint32_t len = w[i] >> 16;
    if (len == 0) break;
    if ((w[i] & 0xffffu) == op && len > operands.size()) {
      bool match = true;
      for (std::size_t k = 0; k < operands.size(); ++k) match &= w[i + 1 + k] == operands[k];
      n += match;
    }
    i += len;
  }
  return n;
}

bool valid(const std::vector<std::uint32_t>& w, const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("nbx_dp_" + name);
  {
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * 4));
  }
  const std::string cmd = std::string(std::getenv("NBX_SPIRV_VAL")) + " --target-env vulkan1.2 " +
                          p.string() + " > /dev/null 2>&1";
  const bool ok = std::system(cmd.c_str()) == 0;
  fs::remove(p);
  return ok;
}

}  // namespace

TEST_CASE("every module of the build stays valid SPIR-V with DenormPreserve added") {
  const char* dir = std::getenv("NBX_SPV_DIR");
  REQUIRE(dir != nullptr);
  REQUIRE(std::getenv("NBX_SPIRV_VAL") != nullptr);
  constexpr std::uint16_t kOpEntryPoint = 15, kOpExecutionMode = 16, kOpCapability = 17;
  int modules = 0, float64_modules = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".spv") continue;
    const std::string name = e.path().filename().string();
    CAPTURE(name);
    const std::vector<std::uint32_t> words = read_words(e.path());
    REQUIRE(valid(words, name));
    const std::vector<std::uint32_t> both = with_denorm_preserve(words, {true, true});
    CHECK(valid(both, name));
    const bool uses_f64 = count(words, kOpCapability, {10}) == 1;
    float64_modules += uses_f64;
    CHECK(count(both, kOpCapability, {4464}) == 1);
    const int entry_points = count(words, kOpEntryPoint, {});
    REQUIRE(entry_points >= 1);
    CHECK(count(both, kOpExecutionMode, {}) ==
          count(words, kOpExecutionMode, {}) + entry_points * (uses_f64 ? 2 : 1));
    CHECK(with_denorm_preserve(both, {true, true}) == both);  // idempotent
    const std::vector<std::uint32_t> f32 = with_denorm_preserve(words, {true, false});
    CHECK(valid(f32, name));
    CHECK(f32.size() == words.size() + 2 + 4 * static_cast<std::size_t>(entry_points));
    CHECK(with_denorm_preserve(words, {false, false}) == words);
    ++modules;
  }
  MESSAGE(modules << " modules patched and validated, " << float64_modules << " with Float64");
  CHECK(modules >= 20);
  CHECK(float64_modules >= 5);
}

TEST_CASE("a module that is not SPIR-V is refused, not patched") {
  const std::vector<std::uint32_t> junk{1, 2, 3, 4, 5, 6};
  CHECK_THROWS_AS(with_denorm_preserve(junk, {true, false}), nbx::Internal);
  std::vector<std::uint32_t> truncated{0x07230203, 0x00010500, 0, 100, 0, (9u << 16) | 17u};
  CHECK_THROWS_AS(with_denorm_preserve(truncated, {true, false}), nbx::Internal);
}
