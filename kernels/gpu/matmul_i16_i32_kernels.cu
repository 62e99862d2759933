// The matmul family's tiled kernel for int16 and int32 operands (matmul_kernels.cuh), in a
// translation unit of its own so that the build compiles the operand types in parallel.
#include "kernels/gpu/matmul_kernels.cuh"

namespace nbx::gpu {

template <>
ElementwiseLaunchResult launch_tiled<std::int16_t>(const abi::MatmulParams& p,
                                                   const BoundBuffer* buffers,
                                                   const MatmulDevice& device, Stream s) {
  return run_tiled_shape<std::int16_t>(p, buffers, device, s);
}

template <>
ElementwiseLaunchResult launch_tiled<std::int32_t>(const abi::MatmulParams& p,
                                                   const BoundBuffer* buffers,
                                                   const MatmulDevice& device, Stream s) {
  return run_tiled_shape<std::int32_t>(p, buffers, device, s);
}

}  // namespace nbx::gpu
