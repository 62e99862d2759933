// Host interface of the "norm" family's contiguous-row kernel (norm_rows_fast.cu), plain C++
// like family_launch.hpp. launch_norm calls it first when the device was opened with
// NBX_GPU_ROWS=fast (ElementwiseOptions::rows_fast).
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// Whether the contiguous-row kernel serves `params` with these buffers: layer_norm or
// rms_norm, in, out and param dtypes equal and one of float16, bfloat16 (accumulated in
// float32; a float16/bfloat16 accumulate dtype means float32 too, as in norm_kernels.cu),
// float32 (float32 accumulation) or float64 (float64 accumulation), rows >= 1 and
// row_len >= 1, and every bound buffer's address 16-byte aligned (allocations are). Any row
// length and any row alignment is served. The params must already be validated
// (launch_norm does it).
bool norm_rows_fast_eligible(const abi::NormParams& params, const BoundBuffer* buffers,
                             int num_buffers);

// Enqueues the normalization on `stream` and fills `result` when eligible; returns false
// (and enqueues nothing) otherwise.
bool launch_norm_rows_fast(const abi::NormParams& params, const BoundBuffer* buffers,
                           int num_buffers, const ElementwiseOptions& options, void* stream,
                           ElementwiseLaunchResult& result);

}  // namespace nbx::gpu
