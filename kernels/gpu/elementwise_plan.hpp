// Host-side planning for the elementwise family (validation is core/families'): the shape
// analysis that picks a kernel (dimension collapsing, contiguity, alignment).
// Plain C++ (no vendor header); included by elementwise_dispatch.cu.
#pragma once

#include <cstdint>
#include <string>

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// Operand 0 is the output, 1 + k input k. Scalars take part in nothing below.
struct ElementwisePlan {
  int operands = 1;  // 1 + num_inputs
  bool tensor[1 + abi::kMaxElementwiseInputs] = {};
  int ndim = 0;  // after collapsing
  std::int64_t sizes[abi::kMaxDims] = {};
  std::int64_t strides[1 + abi::kMaxElementwiseInputs][abi::kMaxDims] = {};
  std::int64_t numel = 0;
};

// Size in bytes of an nbx::DType code, 0 for an unknown code.
int dtype_bytes(int dtype);
// The op's arity from the op table; 0 for an unknown code.
int elementwise_op_arity(int op);

// Drops size-1 dims of `sizes` and merges neighbours that every one of the `arrays` stride
// arrays walks as one (A[d-1] = A[d]·sizes[d]), in place; returns the new ndim. Element order,
// and so every element's iteration number, is unchanged (the scatter and search launchers).
int collapse_strided_dims(int ndim, std::int64_t* sizes, std::int64_t* const* strides, int arrays);

// Drops size-1 dimensions and merges neighbours that every tensor operand walks as one.
ElementwisePlan collapse_dimensions(const abi::ElementwiseParams& p);

// A fast path and the view it runs over. Rows and tiled paths see the collapsed shape as
// [rows, cols] (a 1-D shape is one row); the output runs along cols with stride 1.
struct PathChoice {
  ElementwisePath path = ElementwisePath::kNone;
  std::int64_t rows = 0, cols = 0, out_stride0 = 0;
  std::int64_t in_stride0[abi::kMaxElementwiseInputs] = {};
  std::int64_t in_stride1[abi::kMaxElementwiseInputs] = {};
  int tile = 0;  // tiled path: the tile edge
};

// The fastest template path for a launch whose fast kernels move `vec` elements per vector
// access, with input elements of `in_bytes`; kNone when only the generic kernel applies
// (more than 2 collapsed dims, misaligned vectors, an operand strided along the row that
// is not a transpose, a tile too large for 48 KiB of shared memory). `addresses` holds
// operand k's first element (k = 0: output), null for scalars.
PathChoice choose_path(const abi::ElementwiseParams& p, const ElementwisePlan& plan, int vec,
                       int in_bytes, const void* const* addresses,
                       const ElementwiseOptions& options);

// Address of operand `k` (0 = out) with the view's element offset applied.
inline char* operand_address(const abi::ElementwiseParams& p, const BoundBuffer* buffers, int k) {
  const abi::ElementwiseOperand& o = k == 0 ? p.out : p.in[k - 1];
  return static_cast<char*>(buffers[k].address) + o.offset * dtype_bytes(o.dtype);
}

}  // namespace nbx::gpu
