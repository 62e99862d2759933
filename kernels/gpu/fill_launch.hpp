// Host interface of the CUDA/HIP "fill" family (fill_kernels.cu), plain C++ like
// elementwise_launch.hpp.
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// Validates `params` (throws nbx::InvalidArgument naming the problem) and enqueues the
// fill kernel on `stream`. `buffers`: [0] out, [1] in (triu/tril only).
ElementwiseLaunchResult launch_fill(const abi::FillParams& params, const BoundBuffer* buffers,
                                    int num_buffers, const ElementwiseOptions& options,
                                    void* stream);

}  // namespace nbx::gpu
