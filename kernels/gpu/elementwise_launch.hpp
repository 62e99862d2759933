// Host interface of the CUDA/HIP elementwise family: plain C++, no vendor header, so a
// backend's ordinary C++ files can call it. Implemented once in elementwise_dispatch.cu,
// which nvcc compiles into the CUDA backend and hipcc into the HIP backend.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/kernel_abi.hpp"

namespace nbx::gpu {

// Which kernel a launch took (tests and benchmarks read it back).
// kBatched: queued in the device's ElementwiseBatch (elementwise_batch.hpp), run later in
// one launch together with its neighbours.
enum class ElementwisePath : int { kNone = 0, kGeneric, kContiguous, kRows, kTiled, kBatched };
const char* path_name(ElementwisePath path);

// Per-device choices. Defaults follow the device; the overrides exist so that a path taken
// only on another vendor's hardware (the 64-wide tile of wavefront-64 AMD GPUs) also runs,
// and is checked, on the device at hand. Backends read them once per device from
// NBX_GPU_TILE (32 | 64), NBX_GPU_ELEMENTWISE (auto | generic) and NBX_GPU_BATCH (1 | 0).
struct ElementwiseOptions {
  int warp_size = 32;         // the device's (nbx::DeviceProperties::subgroup_size)
  int multiprocessors = 1;    // SMs or CUs: sizes the generic kernel's grid
  int tile = 0;               // tiled kernel's edge: 0 → warp_size
  bool generic_only = false;  // take the generic kernel for every launch
  // Launches of at most this many elements join the device's batch: the wrapper reads it as
  // the device's property "elementwise.batch_max_numel" and asks for the batched variant
  // (core/ops/variant_plan.hpp). 0 turns batching off (NBX_GPU_BATCH=0; NBX_GPU_BATCH=N
  // batches up to N). Default and its measurement: abi::kElementwiseBatchMaxNumel.
  std::int64_t batch_max_numel = abi::kElementwiseBatchMaxNumel;
  // The contiguous-row kernels of reduce, softmax and norm (reduce_rows_fast.cu,
  // softmax_rows_fast.cu, norm_rows_fast.cu): 1 (the default; NBX_GPU_ROWS=fast) takes them
  // for every launch they serve and the general kernels for the rest; 0
  // (NBX_GPU_ROWS=general) the general kernels always; 2 (NBX_GPU_ROWS=fast-only, for tests)
  // refuses the launches they do not serve, so a passing case proves they ran. Measured on
  // the H200 before becoming the default: docs/performance.md, "Op wave 1".
  int rows_fast = 1;
};

// Reads the environment overrides into `options` (the fields above keep their values where
// a variable is unset). Throws nbx::InvalidArgument on a malformed value.
void apply_environment(ElementwiseOptions& options);

// One bound buffer: device address and its size in bytes (null/0 for a scalar input).
struct BoundBuffer {
  void* address = nullptr;
  std::size_t bytes = 0;
};

class ElementwiseBatch;  // elementwise_batch.hpp

struct ElementwiseLaunchResult {
  int error = 0;          // the runtime's error code (cudaError_t / hipError_t); 0 = ok
  const char* call = "";  // the runtime call that failed
  ElementwisePath path = ElementwisePath::kNone;
};

// Validates `params` against the kernel ABI and the buffers (throws nbx::InvalidArgument
// naming the problem, nbx::Unsupported for an op with no form in the compute dtype), picks
// the fastest kernel that applies and enqueues it on `stream` (a cudaStream_t/hipStream_t).
// `buffers` holds 1 + num_inputs entries. `fault` is the device's fault record.
// A launch of variant kElementwiseBatched is queued in `batch` (path kBatched; the batch is
// flushed when full); any other launch flushes the batch first, so the stream sees every op
// in the order it was issued.
ElementwiseLaunchResult launch_elementwise(const abi::ElementwiseParams& params,
                                           const BoundBuffer* buffers, int num_buffers,
                                           abi::FaultRecord* fault,
                                           const ElementwiseOptions& options, void* stream,
                                           ElementwiseBatch* batch = nullptr);

// The op's name from the op table ("floor_divide"); "op <code>" for an unknown code.
const char* elementwise_op_name(int op);

}  // namespace nbx::gpu
