// The sort family's launchers on CUDA/HIP, one per variant beside the rows variant (each in
// its own source): launch_family (sort_kernels.cu) picks the one the plan chose.
#pragma once

#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {

// kSortRadix: 4-bit least-significant-digit passes (sort_radix_kernels.cu).
void launch_sort_radix(const abi::SortParams& p, const GpuLaunch& l);
// kSortOnesweep: one histogram, then an 8-bit pass per digit with decoupled look-back
// (sort_onesweep_kernels.cu).
void launch_sort_onesweep(const abi::SortParams& p, const GpuLaunch& l);
// kSortSelect (op kSort_topk): a block a row selects the first k (sort_select_kernels.cu).
void launch_sort_select(const abi::SortParams& p, const GpuLaunch& l);

}  // namespace nbx::gpu
