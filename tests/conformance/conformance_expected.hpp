// Known failures per backend, each with its reason (IREE-style). A listed cell that fails
// is "xfail" (counted as skipped); a listed cell that passes is "XPASS" and counts as a
// failure, so the list cannot go stale silently.
#pragma once

#include <optional>
#include <string_view>

#include "core/dtype.hpp"

namespace nbx::conformance {

// The reason `backend` is known to fail this cell, or nullopt when it is not listed.
// `to` is cast's target dtype (nullopt for other ops).
std::optional<std::string_view> expected_failure(std::string_view backend, std::string_view op,
                                                 DType dtype, std::optional<DType> to);

}  // namespace nbx::conformance
