// Host interface of the CUDA/HIP "scan" family (scan_kernels.cu), plain C++ like
// reduce_launch.hpp.
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// Validates `params` (throws nbx::InvalidArgument naming the problem) and enqueues the
// inclusive scan on `stream`. `buffers`: [0] out, [1] in, [2] int64 indices (cummax and
// cummin only). The kernel is the launcher's choice from the row count and length: groups
// of 1 to 32 lanes per row for short or many rows, one block per row for few long rows.
ElementwiseLaunchResult launch_scan(const abi::ScanParams& params, const BoundBuffer* buffers,
                                    int num_buffers, const ElementwiseOptions& options,
                                    void* stream);

}  // namespace nbx::gpu
