// The scan family's cummax kernels (scan_kernels.cuh), in a translation unit of their own so
// that the build compiles each op's kernels in parallel.
#include "kernels/gpu/scan_kernels.cuh"

namespace nbx::gpu {

Error enqueue_cummax(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers,
                     Stream s) {
  return enqueue_op<abi::kScan_cummax>(p, plan, buffers, s);
}

}  // namespace nbx::gpu
