// Host interface of the CUDA/HIP "softmax" family (softmax_kernels.cu), plain C++ like
// reduce_launch.hpp.
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// Validates `params` (throws nbx::InvalidArgument naming the problem) and enqueues the
// softmax on `stream`. `buffers`: [0] out, [1] in, [2] mask (bool) when params.has_mask.
// params.row_tile threads cooperate on a row (rounded down to a power of two, at most 256).
// kSoftmaxOnePass keeps each row in shared memory; a row that does not fit the kernel's
// shared-memory budget takes the looped kernel instead, so every variant works for any row.
ElementwiseLaunchResult launch_softmax(const abi::SoftmaxParams& params, const BoundBuffer* buffers,
                                       int num_buffers, const ElementwiseOptions& options,
                                       void* stream);

}  // namespace nbx::gpu
