#include "core/ops/tiling.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>

namespace nbx::ops::detail {

int row_tile(const Capabilities& caps, std::int64_t row_len) {
  const int subgroup = std::max(1, caps.subgroup_size.value);
  const int tile_max = caps.reduce.tile_max.value > 0 ? caps.reduce.tile_max.value : 1024;
  int p = 1;
  while (p < row_len && p < tile_max) p <<= 1;
  return std::clamp(p, std::min(subgroup, tile_max), tile_max);
}

PlanChoice row_tile_choice(const Capabilities& caps, std::int64_t row_len, int tile) {
  return {"row_tile", std::to_string(tile), "reduce.tile_max", caps.reduce.tile_max.source,
          "lanes per row: the next power of two above the row length (" + std::to_string(row_len) +
              "), at least one subgroup (" + std::to_string(caps.subgroup_size.value) +
              "), at most reduce.tile_max (" + std::to_string(caps.reduce.tile_max.value) + ")."};
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
