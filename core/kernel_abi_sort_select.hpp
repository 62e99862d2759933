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

}  // namespace nbx::abi
