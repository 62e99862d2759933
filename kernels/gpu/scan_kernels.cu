// The "scan" kernel family's launch for CUDA and HIP (kernel ABI: abi::ScanParams, semantics
// backends/host/host_scan.cpp): the plan's grid and the dispatch on the op, whose kernels
// (scan_kernels.cuh) each op instantiates in a translation unit of its own; cumsum's are here.
#include "kernels/gpu/scan_kernels.cuh"

namespace nbx::gpu {

Error enqueue_cumsum(const abi::ScanParams& p, const ScanPlan& plan, const BoundBuffer* buffers,
                     Stream s) {
  return enqueue_op<abi::kScan_cumsum>(p, plan, buffers, s);
}

namespace {

ScanPlan grid_for(const abi::ScanParams& p, int multiprocessors) {
  const i64 sms = multiprocessors > 0 ? multiprocessors : 1;
  ScanPlan plan;
  plan.long_rows = p.variant != abi::kScanLanes;
  plan.group = p.variant == abi::kScanLanes ? p.lanes : 1;
  if (p.variant == abi::kScanChunked) {
    plan.chunk_len = p.chunk_len;
    plan.chunks = (p.row_len + p.chunk_len - 1) / p.chunk_len;
  }
  const i64 per_block = plan.long_rows ? 1 : kGroupBlock / plan.group;
  const i64 wanted = (p.rows + per_block - 1) / per_block;
  const i64 cap = sms * (plan.long_rows ? 8 : 32);
  plan.blocks = unsigned(wanted < cap ? wanted : cap);
  return plan;
}

}  // namespace

static ElementwiseLaunchResult launch_scan(const abi::ScanParams& p, const BoundBuffer* buffers,
                                           int num_buffers, const ElementwiseOptions& options,
                                           void* stream) {
  // BackendDevice::launch validated the block (core/families/scan_family.cpp).
  (void)num_buffers;
  ElementwiseLaunchResult result;
  result.call = "scan launch";
  result.path = ElementwisePath::kGeneric;
  if (p.rows == 0 || p.row_len == 0) return result;
  const ScanPlan plan = grid_for(p, options.multiprocessors);
  const Stream s = static_cast<Stream>(stream);
  Error e;
  switch (p.op) {
    case abi::kScan_cumsum:
      e = enqueue_cumsum(p, plan, buffers, s);
      break;
    case abi::kScan_cumprod:
      e = enqueue_cumprod(p, plan, buffers, s);
      break;
    case abi::kScan_cummax:
      e = enqueue_cummax(p, plan, buffers, s);
      break;
    case abi::kScan_logcumsumexp:
      e = enqueue_logcumsumexp(p, plan, buffers, s);
      break;
    default:
      e = enqueue_cummin(p, plan, buffers, s);
      break;
  }
  result.error = int(e);
  return result;
}

ElementwiseLaunchResult launch_family(const abi::ScanParams& p, const GpuLaunch& l) {
  return launch_scan(p, l.buffers, l.num_buffers, *l.options, l.stream);
}

}  // namespace nbx::gpu
