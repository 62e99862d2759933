// Host interface of the "softmax" family's contiguous-row kernels (softmax_rows_fast.cu),
// plain C++ like family_launch.hpp. launch_softmax calls it first, after validation, when
// the device was opened with NBX_GPU_ROWS=fast or fast-only (ElementwiseOptions::rows_fast).
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// Whether the contiguous-row kernels serve `params` with these buffers: rows of stride 1 in
// the input, the output and the mask (when there is one), rows >= 1 and row_len >= 1, the
// same input and output dtype, and float16/bfloat16/float32 accumulated in float (any
// accumulate dtype but float64) or float64 accumulated in float64. The params must already
// be validated (launch_softmax does it).
bool softmax_rows_fast_eligible(const abi::SoftmaxParams& params, const BoundBuffer* buffers);

// Enqueues the softmax on `stream` and fills `result` when eligible; returns false (and
// enqueues nothing) otherwise.
bool launch_softmax_rows_fast(const abi::SoftmaxParams& params, const BoundBuffer* buffers,
                              int num_buffers, const ElementwiseOptions& options, void* stream,
                              ElementwiseLaunchResult& result);

}  // namespace nbx::gpu
