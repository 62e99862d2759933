// The matmul family's tiled kernel for float64 and int64 operands (matmul_kernels.cuh), in a
// translation unit of its own so that the build compiles the operand types in parallel.
#include "kernels/gpu/matmul_kernels.cuh"

namespace nbx::gpu {

template <>
ElementwiseLaunchResult launch_tiled<double>(const abi::MatmulParams& p, const BoundBuffer* buffers,
                                             const MatmulDevice& device, Stream s) {
  return run_tiled_shape<double>(p, buffers, device, s);
}

template <>
ElementwiseLaunchResult launch_tiled<i64>(const abi::MatmulParams& p, const BoundBuffer* buffers,
                                          const MatmulDevice& device, Stream s) {
  return run_tiled_shape<i64>(p, buffers, device, s);
}

}  // namespace nbx::gpu
