// Every elementwise op and dtype, in every layout, on the GPU against the host reference,
// on each kernel path (default choice, generic only, 64-wide tiles).
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>

#include "core/errors.hpp"
#include "tests/gpu/gpu_elementwise_cases.hpp"

namespace nbx::gputest {
namespace {

// Runs the cases; reports each mismatch (with its seed) and returns how many there were.
int check_cases(const std::vector<Case>& cases) {
  Devices& d = devices();
  int failures = 0, reported = 0;
  for (const Case& c : cases) {
    const std::vector<std::byte> expected = run_case(*d.host, c);
    for (Devices::Variant& v : d.gpu) {
      std::string problem;
      try {
        problem = compare_outputs(c, expected, run_case(*v.device, c));
      } catch (const Error& e) {
        problem = std::string("threw: ") + e.what();
      }
      if (problem.empty()) continue;
      ++failures;
      if (reported++ < 40)
        std::cout << "FAIL " << c.label << " [" << v.name << "]: " << problem << "\n";
    }
  }
  return failures;
}

TEST_CASE("every elementwise op and dtype matches the host reference in every layout") {
  const std::vector<Case> cases = elementwise_cases(1000);
  MESSAGE(cases.size() << " cases × " << devices().gpu.size() << " kernel choices");
  CHECK(check_cases(cases) == 0);
}

// The same cases on a batching device, queued back to back: every small one runs inside a
// batch kernel, next to ops of other dtypes and compute categories.
TEST_CASE("queued into batches, every op, dtype and layout matches the host reference") {
  Devices& d = devices();
  std::vector<Case> cases = elementwise_cases(1000);
  const std::vector<Case> casts = cast_cases(900000);
  cases.insert(cases.end(), casts.begin(), casts.end());
  int failures = 0;
  const std::size_t group = 300;  // cases in flight at once: bounded device memory
  for (std::size_t first = 0; first < cases.size(); first += group) {
    const std::vector<Case> part(
        cases.begin() + std::ptrdiff_t(first),
        cases.begin() + std::ptrdiff_t(std::min(first + group, cases.size())));
    const std::vector<std::vector<std::byte>> got = run_cases_queued(*d.batched, part);
    for (std::size_t i = 0; i < part.size(); ++i) {
      const std::string problem = compare_outputs(part[i], run_case(*d.host, part[i]), got[i]);
      if (problem.empty()) continue;
      if (failures++ < 40)
        std::cout << "FAIL " << part[i].label << " [batched]: " << problem << "\n";
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("casts between every pair of dtypes match the host reference") {
  const std::vector<Case> cases = cast_cases(900000);
  CHECK(check_cases(cases) == 0);
}

}  // namespace
}  // namespace nbx::gputest
