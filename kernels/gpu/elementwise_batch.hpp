// Launch batching for small elementwise ops: instead of one kernel launch per op (3 µs of
// host time each on the H200's VM, far more than a 16-element op takes on the GPU), the
// device queues the op's parameter block and buffer addresses here, and runs the whole
// queue later as ONE kernel launch that executes the ops in issue order.
//
// Plain C++ (no vendor header): the queue lives in the backend's ordinary C++ code and in
// the GPU-free tests; only launch_elementwise_batch (elementwise_batch.cu) is device code.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// One queued op, in the layout the batch kernel reads: the block as the op layer built it
// and the buffers' base addresses (the kernel applies the views' offsets, as the generic
// kernel does). Scalar inputs have a null address.
struct BatchedOp {
  abi::ElementwiseParams params;
  void* out;
  const void* in[abi::kMaxElementwiseInputs];
};

// Threads of the batch kernel's one block.
inline constexpr int kBatchBlock = 512;

// How many ops one batch launch carries: as many as fit in the kernel arguments the
// runtime accepts (56 on CUDA 12.1+, 7 on HIP). Defined in elementwise_batch.cu.
int elementwise_batch_capacity();

// Enqueues `count` ops as one launch on `stream`; they run one after the other, each seeing
// every earlier op's writes. Integer division by zero goes to `fault`.
ElementwiseLaunchResult launch_elementwise_batch(const BatchedOp* ops, int count,
                                                 abi::FaultRecord* fault, void* stream);

// The queue of one device. Not thread-safe: a BackendDevice is used by one thread at a time.
// Whoever owns it calls flush() before anything that must observe the stream's order: a
// launch that is not queued, a copy, a synchronize, a free.
class ElementwiseBatch {
 public:
  // `capacity` ops per launch (elementwise_batch_capacity() on a device); `fault` and
  // `stream` (cudaStream_t / hipStream_t) are the device's.
  ElementwiseBatch(int capacity, abi::FaultRecord* fault, void* stream);

  bool empty() const { return ops_.empty(); }
  int size() const { return static_cast<int>(ops_.size()); }
  int capacity() const { return capacity_; }
  // Launches issued so far (tests and benchmarks read it: fewer launches than ops).
  std::uint64_t launches() const { return launches_; }

  // Queues an op that launch_elementwise has validated; flushes when the queue is full.
  ElementwiseLaunchResult append(const abi::ElementwiseParams& params, const BoundBuffer* buffers);
  // Launches what is queued (nothing when empty) and empties the queue, also on failure.
  ElementwiseLaunchResult flush();

 private:
  int capacity_;
  abi::FaultRecord* fault_;
  void* stream_;
  std::vector<BatchedOp> ops_;
  std::uint64_t launches_ = 0;
};

}  // namespace nbx::gpu
