// The parameter blocks op wrappers hand to backends with `BackendDevice::launch`. Plain
// PODs with fixed-width fields, no pointers: the same bytes reach a host loop, a CUDA/HIP
// kernel argument and a Vulkan push-constant or uniform block. Included by device code,
// so only <cstdint> here. Changing a layout changes every backend: bump kAbiVersion.
#pragma once

#include <cstdint>

namespace nbx::abi {

inline constexpr int kAbiVersion = 4;
inline constexpr int kMaxDims = 8;  // equals nbx::kMaxDims
inline constexpr int kMaxElementwiseInputs = 3;

// The kernel families' numeric ids (nbx::KernelFamily has the same values): the order of
// core/families/family_list.inc.
enum FamilyCode : std::int32_t {
#define NBX_KERNEL_FAMILY(kId, id, Params) kFamily_##id,
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY
  kFamilyCount
};

enum ElementwiseOp : std::int32_t {
#define NBX_ELEMENTWISE_OP(name, code, arity) kOp_##name = code,
#include "core/elementwise_op_list.inc"
#undef NBX_ELEMENTWISE_OP
};

// One value in both representations, so an int64 scalar above 2^53 stays exact and a
// float scalar keeps its fraction. Which one a kernel reads follows the compute dtype.
struct ScalarValue {
  double f;
  std::int64_t i;
};

// An operand read (or written) through strides: element (i0, …, in) of the output shape
// lives at offset + Σ ik * strides[k] elements of the operand's buffer. Broadcast dims
// have stride 0. With is_scalar set, the operand is `scalar` and has no buffer.
struct ElementwiseOperand {
  std::int64_t offset;
  std::int64_t strides[kMaxDims];
  std::int32_t dtype;  // nbx::DType value
  std::int32_t is_scalar;
  ScalarValue scalar;
};

// Kernel "elementwise". Buffers: [0] out, [1 + k] input k (an empty DeviceMemory where input
// k is a scalar). Contract the wrapper guarantees:
//  - the output has shape `sizes` and any strides (an in-place or out= form writes the
//    caller's view), with no two elements in one place unless every input is a scalar
//    (fill_ of an expanded view stores one value); an input shares its memory only
//    element for element (x.add_(x) reads each element where it is written) or not at all;
//  - all tensor inputs share one dtype, except `where`'s bool condition (in[0]);
//  - `compute_dtype` is the dtype the math runs in on a GPU (float32 for half types,
//    float64 or float32 for integer true division, the input dtype otherwise); the host
//    reference computes in float64 / int64 and rounds once to the output dtype. For `copy`
//    (a cast) it is the output dtype, and kernels convert straight from the input dtype;
//  - a scalar operand is already converted to the compute dtype (integers wrapped, floats
//    rounded to float32 unless the compute dtype is float64);
//  - `contiguous` is 1 when every tensor operand is contiguous with the output's layout
//    (offset aside), so a kernel may take a flat, vectorised path.
// kElementwiseBatched: the launch joins the device's queue of small ops, run together in one
// launch before anything that must see them (CUDA/HIP: kernels/gpu/elementwise_batch.hpp);
// the wrapper takes it for launches of at most the device's batch size (its property
// "elementwise.batch_max_numel") where the device offers it.
enum ElementwiseVariant : std::int32_t {
  kElementwiseStrided = 0,
  kElementwiseBatched = 1,
};
// The default batch size: on the H200 a stream of batched adds costs 1.1, 2.1, 3.8 and
// 7.3 µs per op at 16, 1024, 2048 and 4096 elements, against 5.3–5.7 µs with a launch each
// (docs/performance.md): batching pays up to 2048.
inline constexpr std::int64_t kElementwiseBatchMaxNumel = 2048;
struct ElementwiseParams {
  std::int32_t op;  // ElementwiseOp
  std::int32_t num_inputs;
  std::int32_t ndim;
  std::int32_t compute_dtype;
  std::int64_t numel;
  std::int64_t sizes[kMaxDims];
  std::int32_t contiguous;
  std::int32_t variant;  // ElementwiseVariant, chosen by the wrapper
  ScalarValue attrs[3];
  ElementwiseOperand out;
  ElementwiseOperand in[kMaxElementwiseInputs];
};

enum ReduceOp : std::int32_t {
#define NBX_REDUCE_OP(name, code) kReduce_##name = code,
#include "core/reduce_op_list.inc"
#undef NBX_REDUCE_OP
};

// Kernel "reduce": every output element reduces one "row" of the input. The wrapper splits
// the input's dims into kept dims (the output's shape, `out_sizes`) and reduced dims
// (`red_sizes`); the input is read through strides for both, so no permuted copy is made.
// Buffers: [0] out, [1] input, [2] indices (int64; only for max/min_with_index).
// For argmax/argmin, out itself is int64. `accumulate_dtype` is what the GPU sums in
// (float32 for half types, int64 for integer sums, the input dtype otherwise);
// `row_tile` is the number of threads/lanes cooperating on one row, already clamped to the
// device's reduce.tile_max and max_threads_per_block.
enum ReduceVariant : std::int32_t {
  kReduceGeneral = 0,  // lane groups per row through strides, any view
  kReduceRows = 1,     // contiguous rows folded a vector at a time (CUDA/HIP reduce_rows_fast)
};
struct ReduceParams {
  std::int32_t op;  // ReduceOp
  std::int32_t accumulate_dtype;
  std::int32_t in_dtype;
  std::int32_t out_dtype;
  std::int32_t out_ndim;
  std::int32_t red_ndim;
  std::int32_t row_tile;
  std::int32_t variant;  // ReduceVariant, chosen by the wrapper
  std::int64_t rows;     // numel of the output
  std::int64_t row_len;  // elements reduced into each output
  std::int64_t out_sizes[kMaxDims];
  std::int64_t red_sizes[kMaxDims];
  std::int64_t in_offset;
  std::int64_t in_kept_strides[kMaxDims];  // input strides along the kept dims
  std::int64_t in_red_strides[kMaxDims];   // input strides along the reduced dims
  std::int64_t out_offset;
  std::int64_t out_strides[kMaxDims];
  std::int64_t index_offset;
  std::int64_t index_strides[kMaxDims];
  double attr;  // var/std: correction; norm: p
};

// The device-side fault channel: one record per device. A kernel that finds bad input
// (an out-of-range index, an integer division by zero) writes the first fault here,
// touches no memory out of range, and carries on; synchronize() turns it into DeviceFault,
// decoded by the family that wrote it (core/families: each family's fault decoder).
enum FaultCode : std::int32_t {
  kFaultNone = 0,
  kFaultIndexOutOfRange = 1,
  kFaultIntegerDivisionByZero = 2,
};
struct FaultRecord {
  std::int32_t code;  // FaultCode
  std::int32_t op;    // fault_op(family, op code): which family and which of its ops
  std::int64_t index;
  std::int64_t bound;
  std::int64_t position;
};
// The record's op field: the family in the high 16 bits, the family's op code below. The
// elementwise family is 0, so its kernels may write their plain op code.
constexpr std::int32_t fault_op(std::int32_t family, std::int32_t op) {
  return (family << 16) | (op & 0xffff);
}

}  // namespace nbx::abi

#include "core/kernel_abi_families.hpp"  // softmax, norm, scan, matmul, fill
