// Launcher of the generic elementwise kernel (elementwise_generic.cu), for the dispatcher.
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/gpu_portability.cuh"

namespace nbx::gpu {

struct GenericPointers;

// Enqueues the generic kernel (any op, dtypes and strides, run-time dispatch) on `stream`.
// `ptr` holds the buffers' base addresses: the kernel applies the views' offsets itself.
Error launch_generic(const abi::ElementwiseParams& p, const GenericPointers& ptr,
                     int multiprocessors, Stream stream);

}  // namespace nbx::gpu
