// The matmul family's tiled kernel for float64 and int64 operands (matmul_kernels.cuh), in a
// translation unit of its own so that the build compiles the operand types in parallel.
#include "kernels/gpu/matmul_kernels.cuh"

namespace nbx::gpu {

NBX_MATMUL_TILED_DEFINE(double)
NBX_MATMUL_TILED_DEFINE(i64)

}  // namespace nbx::gpu
