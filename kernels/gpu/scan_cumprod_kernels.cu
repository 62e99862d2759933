// The scan family's cumprod kernels (scan_kernels.cuh), in a translation unit of their own so
// that the build compiles each op's kernels in parallel.
#include "kernels/gpu/scan_kernels.cuh"

namespace nbx::gpu {

Error enqueue_cumprod(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers,
                      Stream s) {
  return enqueue_op<abi::kScan_cumprod>(p, plan, buffers, s);
}

}  // namespace nbx::gpu
