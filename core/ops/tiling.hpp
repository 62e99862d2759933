// Tile choices every family shares, clamped to the device's capabilities. Internal.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/capabilities.hpp"
#include "core/ops/plan.hpp"

namespace nbx::ops::detail {

// Lanes cooperating on one row of `row_len` elements: the next power of two, at least one
// subgroup, never above reduce.tile_max.
int row_tile(const Capabilities& caps, std::int64_t row_len);
// The same, as a plan decision that names the capability keys behind it.
PlanChoice row_tile_choice(const Capabilities& caps, std::int64_t row_len, int tile);

// The common start of a row plan over floating inputs (softmax, norms): refuses other
// dtypes (InvalidArgument) and dtypes the device lacks (Unsupported); float32 accumulation
// for half types; the row tile. `accumulate_reason` explains the accumulate dtype.
RowPlan plan_float_rows(std::string_view op, DType in, std::int64_t row_len,
                        const PlanTarget& target, const char* accumulate_reason);

// A device-file row or request that asks for more than the device can take is clamped and
// announced once per process (per `key`) on stderr — not per call. Returns true the first
// time. Set NBX_QUIET=1 to silence announcements.
bool announce_once(std::string_view key, const std::string& message);

}  // namespace nbx::ops::detail
