// Every input a fuzzer or a mutation run ever broke nbx with (regressions/<target>/), and the
// seed corpora, through the fuzz targets' own checks: built by any compiler, run by
// `meson test`, so a fix that regresses fails CI without clang or libFuzzer.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "tests/fuzz/fuzz_inputs.hpp"

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using nbx::fuzz::Outcome;
using Check = Outcome (*)(std::string_view);

// Runs `check` on every file below `dir` (recursively) whose name ends in `suffix` ("" = any):
// none may break a contract, and each must end as `expected` (kept inputs are all malformed:
// one accepted again is a regression too). Returns how many ran.
int check_all(const fs::path& dir, Check check, std::string_view suffix,
              std::optional<Outcome> expected) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || !e.path().string().ends_with(suffix)) continue;
    CAPTURE(e.path().string());
    Outcome outcome = Outcome::kAccepted;
    CHECK_NOTHROW(outcome = check(read(e.path())));
    if (expected) CHECK(outcome == *expected);
    ++n;
  }
  return n;
}
constexpr auto kRefused = Outcome::kRefused;
constexpr auto kAccepted = Outcome::kAccepted;

const fs::path kSource = NBX_SOURCE_ROOT;

}  // namespace

TEST_CASE("fuzz regressions: device files that once broke the loader") {
  const fs::path kept = kSource / "tests/fuzz/regressions/device_file";
  CHECK(check_all(kept, nbx::fuzz::check_device_file, "", kRefused) > 0);
  // The seed corpus: every shipped file loads, every malformed fixture is refused.
  CHECK(check_all(kSource / "device_files", nbx::fuzz::check_device_file, ".yml", kAccepted) >= 20);
  CHECK(check_all(kSource / "tests/data/device_files", nbx::fuzz::check_device_file,
                  "malformed_double_sign.yml", kRefused) == 1);
  CHECK(check_all(kSource / "tests/data/device_files", nbx::fuzz::check_device_file, ".yml",
                  std::nullopt) > 10);
}

TEST_CASE("fuzz regressions: overlays") {
  CHECK(check_all(kSource / "tests/fuzz/regressions/overlay", nbx::fuzz::check_overlay, "",
                  kRefused) > 0);
  CHECK(check_all(kSource / "tests/data/overlays", nbx::fuzz::check_overlay, ".yml", kAccepted) >
        0);
  CHECK(check_all(kSource / "tests/fuzz/seeds/overlay", nbx::fuzz::check_overlay, ".yml",
                  kAccepted) > 0);
}

TEST_CASE("fuzz regressions: explain's --dtype and --shape") {
  CHECK(check_all(kSource / "tests/fuzz/regressions/explain_args", nbx::fuzz::check_explain_args,
                  "", kRefused) > 0);
  CHECK(check_all(kSource / "tests/fuzz/seeds/explain_args", nbx::fuzz::check_explain_args, "",
                  kAccepted) > 0);
}
