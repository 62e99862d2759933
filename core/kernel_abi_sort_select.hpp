// The sort family's select variant: which of its two methods a launch takes (a rule of the
// ABI, so the plan's explain and every backend agree). The filter method reads the row once
// in chunks of at most sort_select_filter_chunk elements and needs room for k candidates and a
// chunk; the narrow method takes any k the plan allows (kernels/gpu/sort_select_kernels.cu
// describes both).
#pragma once

#include <cstdint>

#include "core/kernel_abi.hpp"

namespace nbx::abi {

// Half the candidates: a CUDA/HIP block's 256 threads × tile / 512 elements each (8 at most),
// a Vulkan workgroup's invocations × as many as fit (8 at most).
constexpr std::int64_t sort_select_filter_chunk(std::int64_t tile) {
  return tile / 2;
}
// Smaller chunks (tiles cut by a small shared memory) take the narrow method.
inline constexpr std::int64_t kSortSelectFilterMinChunk = 512;

// Whether a select launch of k over `tile` candidates takes the filter method.
constexpr bool sort_select_filters(std::int64_t k, std::int64_t tile) {
  return sort_select_filter_chunk(tile) >= kSortSelectFilterMinChunk &&
         k + sort_select_filter_chunk(tile) <= tile;
}

// Vulkan's refinement of the filter (kernels/vulkan/sort_select.comp, FILTER = 2): each of a
// workgroup's subgroups reads its own chunks of `items` elements a lane into its own share of
// the tile — room for k and a chunk — with no workgroup barrier until the row is read, and at
// the end moves its k to the front (`items` a lane at most). The most elements a lane of the
// 8, 4 or 2 that fit; 0 when none does (the workgroup's filter or the narrow method then).
// `subgroup` is the smallest size the device may run: the most subgroups, the smallest shares.
constexpr std::int64_t sort_select_subgroup_items(std::int64_t k, std::int64_t tile,
                                                  std::int64_t workgroup, std::int64_t subgroup) {
  if (subgroup <= 0 || workgroup % subgroup != 0 || tile < workgroup / subgroup) return 0;
  const std::int64_t share = tile / (workgroup / subgroup);
  for (const std::int64_t items : {8, 4, 2})
    if (k + items * subgroup <= share && k <= items * subgroup) return items;
  return 0;
}

}  // namespace nbx::abi
