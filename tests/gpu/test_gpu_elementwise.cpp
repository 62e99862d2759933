// Every elementwise op and dtype, in every layout, on the GPU against the host reference,
// on each kernel path (default choice, generic only, 64-wide tiles).
#include <doctest/doctest.h>

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

TEST_CASE("casts between every pair of dtypes match the host reference") {
  const std::vector<Case> cases = cast_cases(900000);
  CHECK(check_cases(cases) == 0);
}

}  // namespace
}  // namespace nbx::gputest
