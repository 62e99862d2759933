// The generic elementwise kernel's three instantiations (float, double, int64 compute), in a
// translation unit of their own: each holds the whole op table and every dtype conversion,
// so they are the slowest part of the family to compile.
#include "kernels/gpu/elementwise_generic.hpp"

#include "kernels/gpu/elementwise_kernels.cuh"

namespace nbx::gpu {
namespace {

template <typename C>
Error launch_generic_as(const abi::ElementwiseParams& p, const GenericPointers& ptr,
                        int multiprocessors, Stream stream) {
  // A grid-stride loop over at most a few waves: enough blocks to fill every multiprocessor
  // several times over, no more (the kernel is latency-bound on its index arithmetic).
  const i64 wanted = (p.numel + kElementwiseBlock - 1) / kElementwiseBlock;
  const i64 cap = i64(multiprocessors > 0 ? multiprocessors : 1) * 32;
  const unsigned blocks = unsigned(wanted < cap ? wanted : cap);
  generic_kernel<C><<<blocks, kElementwiseBlock, 0, stream>>>(p, ptr);
  return last_launch_error();
}

}  // namespace

Error launch_generic(const abi::ElementwiseParams& p, const GenericPointers& ptr,
                     int multiprocessors, Stream stream) {
  switch (compute_category(p)) {
    case 0:
      return launch_generic_as<float>(p, ptr, multiprocessors, stream);
    case 1:
      return launch_generic_as<double>(p, ptr, multiprocessors, stream);
    default:
      return launch_generic_as<i64>(p, ptr, multiprocessors, stream);
  }
}

}  // namespace nbx::gpu
