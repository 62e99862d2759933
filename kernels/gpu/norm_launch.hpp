// Host interface of the CUDA/HIP "norm" family (norm_kernels.cu), plain C++ like
// reduce_launch.hpp.
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// Validates `params` (throws nbx::InvalidArgument naming the problem) and enqueues the
// normalization on `stream`. `buffers`: [0] out, [1] in, [2] weight, [3] bias,
// [4] running_mean, [5] running_var (batch_norm only; absent ones are null buffers).
// params.row_tile threads cooperate on a row (rounded down to a power of two, at most 256).
ElementwiseLaunchResult launch_norm(const abi::NormParams& params, const BoundBuffer* buffers,
                                    int num_buffers, const ElementwiseOptions& options,
                                    void* stream);

}  // namespace nbx::gpu
