// The expected-failure list. An entry names a backend, an op, an input dtype (or every
// dtype) and, for cast, a target; the reason says why the backend cannot match the host
// reference there, and what would fix it. Keep it short: every entry is a known bug or a
// documented hardware limit, never a way to turn a red cell green.
#include "tests/conformance/conformance_expected.hpp"

#include <span>

namespace nbx::conformance {
namespace {

struct ExpectedFailure {
  std::string_view backend;  // "vulkan", "cuda", "hip", "host"
  std::string_view op;
  std::optional<DType> dtype;  // nullopt: every input dtype
  std::optional<DType> to;     // cast only; nullopt: every target
  std::string_view reason;
};

// Empty until a backend has a failure that is understood and cannot be fixed at once.
constexpr std::span<const ExpectedFailure> kExpectedFailures{};

}  // namespace

std::optional<std::string_view> expected_failure(std::string_view backend, std::string_view op,
                                                 DType dtype, std::optional<DType> to) {
  for (const ExpectedFailure& e : kExpectedFailures) {
    if (e.backend != backend || e.op != op) continue;
    if (e.dtype && *e.dtype != dtype) continue;
    if (e.to && to && *e.to != *to) continue;
    return e.reason;
  }
  return std::nullopt;
}

}  // namespace nbx::conformance
