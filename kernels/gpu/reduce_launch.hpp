// Host interface of the CUDA/HIP "reduce" family (reduce_kernels.cu), plain C++ like
// elementwise_launch.hpp.
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// Validates `params` (throws nbx::InvalidArgument naming the problem) and enqueues the
// reduction on `stream`. `buffers`: [0] out, [1] input, [2] indices (max/min_with_index).
// params.row_tile threads cooperate on a row (rounded down to a power of two, at most 256).
ElementwiseLaunchResult launch_reduce(const abi::ReduceParams& params, const BoundBuffer* buffers,
                                      int num_buffers, const ElementwiseOptions& options,
                                      void* stream);

}  // namespace nbx::gpu
