// The sort family's launchers on CUDA/HIP, one per variant beside the rows variant (each in
// its own source): launch_family (sort_kernels.cu) picks the one the plan chose.
#pragma once

#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {

// A sort launch's buffers as its element type: [0] values, [1] int64 indices, [2] the input.
template <typename Elem>
struct SortBuffers {
  Elem* values;
  long long* indices;
  const Elem* in;
};
template <typename Elem>
SortBuffers<Elem> sort_buffers(const GpuLaunch& l) {
  return {static_cast<Elem*>(l.buffers[0].address), static_cast<long long*>(l.buffers[1].address),
          static_cast<const Elem*>(l.buffers[2].address)};
}

// Blocks of `threads` for a grid-stride loop over n items: one per `threads` items, at most
// 32 a multiprocessor.
inline unsigned grid_stride_blocks(std::int64_t n, int threads, const GpuLaunch& l) {
  const std::int64_t wanted = (n + threads - 1) / threads;
  const std::int64_t cap =
      std::int64_t(l.options->multiprocessors > 0 ? l.options->multiprocessors : 1) * 32;
  return unsigned(wanted < cap ? wanted : cap);
}

// kSortRadix: 4-bit least-significant-digit passes (sort_radix_kernels.cu).
void launch_sort_radix(const abi::SortParams& p, const GpuLaunch& l);
// kSortOnesweep: one histogram, then an 8-bit pass per digit with decoupled look-back
// (sort_onesweep_kernels.cu).
void launch_sort_onesweep(const abi::SortParams& p, const GpuLaunch& l);
// kSortSelect (op kSort_topk): a block a row selects the first k (sort_select_kernels.cu).
void launch_sort_select(const abi::SortParams& p, const GpuLaunch& l);

}  // namespace nbx::gpu
