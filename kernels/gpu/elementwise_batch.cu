// The batch kernel: one block walks a queue of small elementwise ops in issue order. Each op
// runs the generic kernel's element function (elementwise_kernels.cuh: no op semantics of
// its own), with a block-wide barrier between ops, so an op sees every earlier op's writes
// (an output read back, a block the caching allocator handed out again).
#include "kernels/gpu/elementwise_batch.hpp"
#include "kernels/gpu/elementwise_kernels.cuh"

namespace nbx::gpu {
namespace {

// The whole queue travels as the kernel's argument: no upload, no staging buffer to
// recycle, one runtime call per batch.
constexpr int kHeaderBytes = 16;
constexpr int kCapacity =
    (kMaxKernelParamBytes - kHeaderBytes) / static_cast<int>(sizeof(BatchedOp));
static_assert(kCapacity >= 1, "one op must fit in the kernel arguments");

struct BatchArgs {
  abi::FaultRecord* fault;
  int count;
  BatchedOp ops[kCapacity];
};
static_assert(sizeof(BatchArgs) <= kMaxKernelParamBytes, "the batch must fit the arguments");
static_assert(sizeof(BatchedOp) * kCapacity <= 48 * 1024,
              "the batch must fit static shared memory");

template <typename C>
NBX_GPU_INLINE void run_op(const abi::ElementwiseParams& p, const GenericPointers& ptr) {
  const OpContext<C> k = make_op_context<C>(p);
  for (i64 i = threadIdx.x; i < p.numel; i += kBatchBlock) generic_element<C>(p, ptr, k, i);
}

__global__ void __launch_bounds__(kBatchBlock)
    batch_kernel(const NBX_GPU_GRID_CONSTANT BatchArgs a) {
  // Every queued block is copied to shared memory first, all at once: the loads overlap
  // (one wait per batch, not one per op), and the element loop, which indexes sizes and
  // strides at run time, reads them from shared memory at full speed on both vendors.
  __shared__ BatchedOp ops[kCapacity];
  constexpr int kWords = int(sizeof(BatchedOp) / sizeof(std::uint64_t));
  static_assert(sizeof(BatchedOp) % sizeof(std::uint64_t) == 0, "copied in 8-byte words");
  const auto* src = reinterpret_cast<const std::uint64_t*>(a.ops);
  auto* dst = reinterpret_cast<std::uint64_t*>(ops);
  const int words = a.count * kWords;
#pragma unroll 4
  for (int w = int(threadIdx.x); w < words; w += kBatchBlock) dst[w] = src[w];
  __syncthreads();
  for (int n = 0; n < a.count; ++n) {
    const BatchedOp& op = ops[n];
    const GenericPointers ptr{op.out, {op.in[0], op.in[1], op.in[2]}, a.fault};
    switch (compute_category(op.params)) {
      case 0:
        run_op<float>(op.params, ptr);
        break;
      case 1:
        run_op<double>(op.params, ptr);
        break;
      default:
        run_op<i64>(op.params, ptr);
        break;
    }
    // The next op may read this one's output, or overwrite its inputs: all of this op's
    // global stores are made visible to the whole block first.
    __syncthreads();
  }
}

}  // namespace

int elementwise_batch_capacity() {
  return kCapacity;
}

ElementwiseLaunchResult launch_elementwise_batch(const BatchedOp* ops, int count,
                                                 abi::FaultRecord* fault, void* stream) {
  ElementwiseLaunchResult r;
  r.path = ElementwisePath::kBatched;
  r.call = "elementwise batch launch";
  // Only the ops in use are copied; the runtime still sends the whole argument block.
  static thread_local BatchArgs args;
  args.fault = fault;
  // A queue longer than one launch carries goes in order, in several launches.
  for (int first = 0; first < count && r.error == 0; first += kCapacity) {
    args.count = count - first < kCapacity ? count - first : kCapacity;
    for (int n = 0; n < args.count; ++n) args.ops[n] = ops[first + n];
    batch_kernel<<<1, kBatchBlock, 0, static_cast<Stream>(stream)>>>(args);
    r.error = int(last_launch_error());
  }
  return r;
}

}  // namespace nbx::gpu
