// Host interface of the "reduce" family's contiguous-row kernel (reduce_rows_fast.cu), plain
// C++ like family_launch.hpp. launch_reduce calls it first when the device was opened with
// NBX_GPU_ROWS=fast (ElementwiseOptions::rows_fast).
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// Whether the contiguous-row kernel serves `params`: one reduced dim of stride 1 (rows
// contiguous in memory), row_len >= 1, one of sum, mean, prod, amax, amin, argmax, argmin,
// max/min_with_index, any, all, count_nonzero, and an input dtype with its usual
// accumulation (16-bit floats and float32 in float32, float64 in float64, integers and bool
// in int64). The params must already be validated (launch_reduce does it).
bool reduce_rows_fast_eligible(const abi::ReduceParams& params);

// Enqueues the reduction on `stream` and fills `result` when eligible; returns false (and
// enqueues nothing) otherwise.
bool launch_reduce_rows_fast(const abi::ReduceParams& params, const BoundBuffer* buffers,
                             int num_buffers, const ElementwiseOptions& options, void* stream,
                             ElementwiseLaunchResult& result);

}  // namespace nbx::gpu
