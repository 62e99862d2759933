#include "core/ops/tiling.hpp"

#include "core/errors.hpp"
#include "core/ops/elementwise_launch.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>

namespace nbx::ops::detail {

namespace {

// The most lanes one row may take: a block's threads, and never more than reduce.tile_max
// (a tile in elements, so also a ceiling on lanes that handle at least one element each).
int row_tile_limit(const Capabilities& caps) {
  const int tile_max = caps.reduce.tile_max.value > 0 ? caps.reduce.tile_max.value : 1024;
  const int block = caps.max_threads_per_block.value;
  return block > 0 ? std::min(tile_max, block) : tile_max;
}

}  // namespace

int row_tile(const Capabilities& caps, std::int64_t row_len) {
  const int subgroup = std::max(1, caps.subgroup_size.value);
  const int limit = row_tile_limit(caps);
  int p = 1;
  while (p < row_len && p < limit) p <<= 1;
  return std::clamp(p, std::min(subgroup, limit), limit);
}

PlanChoice row_tile_choice(const Capabilities& caps, std::int64_t row_len, int tile) {
  return {"row_tile", std::to_string(tile), "reduce.tile_max", caps.reduce.tile_max.source,
          "lanes per row: the next power of two above the row length (" + std::to_string(row_len) +
              "), at least one subgroup (" + std::to_string(caps.subgroup_size.value) +
              "), at most reduce.tile_max (" + std::to_string(caps.reduce.tile_max.value) +
              ") and max_threads_per_block (" + std::to_string(caps.max_threads_per_block.value) +
              ")."};
}

RowPlan plan_float_rows(std::string_view op, DType in, std::int64_t row_len,
                        const PlanTarget& target, const char* accumulate_reason) {
  const std::string name(op);
  if (!is_floating(in))
    throw InvalidArgument(name, name + " is not defined for " + std::string(dtype_name(in)) +
                                    " tensors (it takes floating dtypes).");
  RowPlan plan;
  plan.input_dtype = plan.out_dtype = in;
  plan.accumulate_dtype = is_half_type(in) ? DType::kFloat32 : in;
  for (DType t : {in, plan.accumulate_dtype})
    require_dtype_support(name, t, target.caps, target.device_id, target.device_name);
  plan.row_tile = row_tile(target.caps, row_len);
  plan.choices.push_back({"accumulate_dtype", std::string(dtype_name(plan.accumulate_dtype)), "",
                          "", accumulate_reason});
  return plan;
}

bool announce_once(std::string_view key, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> announced;
  std::lock_guard lock(mutex);
  if (announced.count(key)) return false;
  announced.emplace(key);
  const char* quiet = std::getenv("NBX_QUIET");
  if (!quiet || std::string_view(quiet) != "1") std::cerr << "nbx: " << message << "\n";
  return true;
}

}  // namespace nbx::ops::detail
