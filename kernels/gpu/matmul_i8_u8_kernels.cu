// The matmul family's tiled kernel for int8 and uint8 operands (matmul_kernels.cuh), in a
// translation unit of its own so that the build compiles the operand types in parallel.
#include "kernels/gpu/matmul_kernels.cuh"

namespace nbx::gpu {

NBX_MATMUL_TILED_DEFINE(std::int8_t)
NBX_MATMUL_TILED_DEFINE(std::uint8_t)

}  // namespace nbx::gpu
