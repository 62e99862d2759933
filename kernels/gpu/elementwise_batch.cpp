// ElementwiseBatch: the host-side queue of small elementwise ops (see the header).
#include "kernels/gpu/elementwise_batch.hpp"

namespace nbx::gpu {

ElementwiseBatch::ElementwiseBatch(int capacity, abi::FaultRecord* fault, void* stream)
    : capacity_(capacity > 0 ? capacity : 1), fault_(fault), stream_(stream) {
  ops_.reserve(static_cast<std::size_t>(capacity_));
}

ElementwiseLaunchResult ElementwiseBatch::append(const abi::ElementwiseParams& params,
                                                 const BoundBuffer* buffers) {
  BatchedOp& op = ops_.emplace_back();
  op.params = params;
  op.out = buffers[0].address;
  for (int k = 0; k < abi::kMaxElementwiseInputs; ++k)
    op.in[k] = k < params.num_inputs ? buffers[1 + k].address : nullptr;
  ElementwiseLaunchResult r;
  if (size() >= capacity_) r = flush();
  r.path = ElementwisePath::kBatched;
  return r;
}

ElementwiseLaunchResult ElementwiseBatch::flush() {
  if (ops_.empty()) return {};
  ++launches_;
  ElementwiseLaunchResult r;
  // Cleared whatever the launch says: a failed launch is reported once, by this call, and
  // the next batch starts empty.
  r = launch_elementwise_batch(ops_.data(), size(), fault_, stream_);
  ops_.clear();
  return r;
}

}  // namespace nbx::gpu
