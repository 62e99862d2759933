// The matmul family's tiled kernel for int8 and uint8 operands (matmul_kernels.cuh), in a
// translation unit of its own so that the build compiles the operand types in parallel.
#include "kernels/gpu/matmul_kernels.cuh"

namespace nbx::gpu {

template <>
ElementwiseLaunchResult launch_tiled<std::int8_t>(const abi::MatmulParams& p,
                                                  const BoundBuffer* buffers,
                                                  const MatmulDevice& device, Stream s) {
  return run_tiled_shape<std::int8_t>(p, buffers, device, s);
}

template <>
ElementwiseLaunchResult launch_tiled<std::uint8_t>(const abi::MatmulParams& p,
                                                   const BoundBuffer* buffers,
                                                   const MatmulDevice& device, Stream s) {
  return run_tiled_shape<std::uint8_t>(p, buffers, device, s);
}

}  // namespace nbx::gpu
