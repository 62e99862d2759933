// `nbx conformance` in-process on the host: the console closing line, the exit status,
// and the JSON report read back and checked against what was printed.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/cli_conformance.hpp"
#include "cli/cli_main_commands.hpp"
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "tests/conformance/conformance.hpp"

using namespace nbx;
using namespace nbx::conformance;

namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
};

CliRun run_cli(std::vector<std::string> args) {
  CLI::App app{"test"};
  nbx::cli::register_conformance_command(app);
  nbx::cli::set_exit_code(0);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last-first
  std::stringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  try {
    app.parse(args);
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return {nbx::cli::exit_code(), captured.str()};
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("host run: closing line, exit status and JSON agree") {
  const std::string path = "test_conformance_json.report.json";
  const CliRun run =
      run_cli({"conformance", "--backend", "host", "--ops", "add,floor_divide,exp,bitwise_and,cast",
               "--dtypes", "int32,float16,bool", "--seed", "7", "--json", path});
  INFO(run.out);
  CHECK(run.exit_code == 0);
  const std::string text = read_file(path);
  std::remove(path.c_str());
  REQUIRE_FALSE(text.empty());
  const Report r = report_from_json(text);
  CHECK(r.seed == 7);
  REQUIRE(r.devices.size() == 1);
  const DeviceReport& d = r.devices[0];
  CHECK(d.device == "host");
  // 4 ops x 3 dtypes, and cast from 3 dtypes to all 10.
  CHECK(d.cells.size() == 4 * 3 + 3 * 10);
  CHECK(r.counts.passed + r.counts.failed + r.counts.skipped + r.counts.not_applicable ==
        int(d.cells.size()));
  CHECK(r.counts.failed == 0);
  CHECK(r.counts.passed > 0);
  // bool is not a domain of floor_divide, float16 not of bitwise_and: n/a, not counted.
  int not_applicable = 0;
  for (const CellResult& c : d.cells) {
    if (c.status == CellStatus::kNotApplicable) {
      ++not_applicable;
      CHECK((c.op == "floor_divide" || c.op == "bitwise_and"));
    }
    if (c.op == "cast") CHECK(c.to.has_value());
    if (c.status == CellStatus::kPass) CHECK(c.cases_run > 0);
  }
  CHECK(not_applicable == 2);
  // The last console line is exactly the summary of what the JSON holds.
  std::string last, line;
  std::istringstream lines(run.out);
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  CHECK(last == summary_line(r.counts));
  // Written, read and written again: nothing lost.
  CHECK(report_to_json(r) == text.substr(0, text.size() - 1));
}

TEST_CASE("an absent backend exits 77 so meson reports SKIP") {
  for (const BackendStatus& s : backend_statuses())
    if (s.name == "hip" && s.backend && !s.backend->list_devices().devices.empty())
      return;  // a machine with an AMD GPU has nothing absent to test here
  const CliRun run = run_cli({"conformance", "--backend", "hip", "--ops", "add"});
  CHECK(run.exit_code == 77);
  CHECK(run.out.find("conformance: 0 passed, 0 failed, 0 skipped") != std::string::npos);
}

TEST_CASE("an unknown op is an error naming it") {
  CHECK_THROWS_WITH_AS(run_cli({"conformance", "--backend", "host", "--ops", "frobnicate"}),
                       doctest::Contains("frobnicate"), nbx::InvalidArgument);
}

TEST_CASE("counting: refusals and expected failures skip, unexpected passes fail") {
  Counts c;
  for (CellStatus s :
       {CellStatus::kPass, CellStatus::kFail, CellStatus::kRefused, CellStatus::kNotApplicable,
        CellStatus::kExpectedFail, CellStatus::kUnexpectedPass})
    c.add(s);
  CHECK(c.passed == 1);
  CHECK(c.failed == 2);
  CHECK(c.skipped == 2);
  CHECK(c.not_applicable == 1);
  CHECK(summary_line(c) == "conformance: 1 passed, 2 failed, 2 skipped");
}

TEST_CASE("the live status line is written only for a terminal, and cleared at the end") {
  Options o;
  o.backend = "host";
  o.ops = {"neg", "abs"};
  o.dtypes = {DType::kFloat32};
  o.quick = true;
  for (const bool live : {false, true}) {
    std::stringstream progress;
    o.progress = &progress;
    o.progress_live = live;
    const Report r = run_conformance(o);
    REQUIRE(r.counts.failed == 0);
    const std::string text = progress.str();
    CHECK(text.find("conformance: host") != std::string::npos);
    if (!live) {
      CHECK(text.find('\r') == std::string::npos);
      continue;
    }
    // One status line an op, naming it and how many are done, then a cleared line.
    CHECK(text.find("host: op 1/2 ") != std::string::npos);
    CHECK(text.find("host: op 2/2 ") != std::string::npos);
    CHECK(text.size() >= 4);
    CHECK(text.substr(text.size() - 4) == "\r\033[K");
  }
}

TEST_CASE("the report names its schema, and a report of another schema is refused") {
  Report r;
  const std::string text = report_to_json(r);
  CHECK(text.find("\"schema\": \"nbx.conformance/1\"") != std::string::npos);
  std::string other = text;
  other.replace(other.find("nbx.conformance/1"), 17, "nbx.conformance/9");
  CHECK_THROWS_AS(report_from_json(other), InvalidArgument);
}
