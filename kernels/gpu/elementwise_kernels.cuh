// The elementwise kernel family for CUDA and HIP (kernel ABI: abi::ElementwiseParams).
//
// Four kernels, from general to fast:
//  - generic_kernel<C>: any op, any dtype mix, any strides; the op and every operand's dtype
//    are run-time values. One instantiation per compute category (float, double, int64).
//  - contiguous_kernel<Op, TIn, TOut, C>: flat, 16-byte vector loads and stores.
//  - rows_kernel<…>: a [rows, cols] view whose operands run along cols with stride 1 or 0
//    (a broadcast bias, a row of a batch): 16-byte vectors along each row.
//  - tiled_kernel<…>: a [rows, cols] view where an operand runs along rows (a transpose):
//    that operand is read in coalesced tiles through shared memory. The tile edge is the
//    device's warp size (32, or 64 on wavefront-64 AMD); either can be forced on any device.
// The fast kernels exist for a table of (op, dtype) pairs (elementwise_fast_*.cu); every
// other launch takes the generic kernel.
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_ops.cuh"

namespace nbx::gpu {

inline constexpr int kElementwiseBlock = 256;

struct GenericPointers {
  void* out;
  const void* in[abi::kMaxElementwiseInputs];
  abi::FaultRecord* fault;
};

// The first fault wins: later ones see a non-zero code and leave the record alone.
NBX_GPU_INLINE void record_division_fault(abi::FaultRecord* f, int op, i64 dividend, i64 position) {
  if (atomic_cas(&f->code, abi::kFaultNone, abi::kFaultIntegerDivisionByZero) == abi::kFaultNone) {
    f->op = op;
    f->index = dividend;
    f->bound = 0;
    f->position = position;
    memory_fence();
  }
}

// Splits the innermost coordinate of size `size` off `rest` (rest becomes the outer index).
NBX_GPU_INLINE i64 next_coordinate(i64& rest, i64 size) {
  // 64-bit division is a long software sequence on GPUs; most positions fit in 32 bits.
  if (((rest | size) >> 32) == 0) {
    const unsigned r = unsigned(rest), s = unsigned(size);
    rest = r / s;
    return r % s;
  }
  const i64 coord = rest % size;
  rest /= size;
  return coord;
}

// The compute category a block runs in: 0 float (also float16/bfloat16), 1 double, 2 int64.
// A cast (copy) converts the input's value straight to the output dtype, whatever compute
// dtype the block names (the op layer sends the output's): so it computes in the input's
// category, and float → integer saturates instead of truncating twice.
NBX_GPU_HOST_DEVICE int compute_category(const abi::ElementwiseParams& p) {
  const int dtype = p.op == abi::kOp_copy && !p.in[0].is_scalar ? p.in[0].dtype : p.compute_dtype;
  return dtype == kFloat16 || dtype == kBFloat16 || dtype == kFloat32 ? 0
         : dtype == kFloat64                                          ? 1
                                                                      : 2;
}

// Element i of any op, dtype mix and strides (the op and dtypes are run-time values): the
// body of the generic kernel, and of the batch kernel (elementwise_batch.cu).
template <typename C>
NBX_GPU_INLINE void generic_element(const abi::ElementwiseParams& p, const GenericPointers& ptr,
                                    const OpContext<C>& k, i64 i) {
  constexpr int kIn = abi::kMaxElementwiseInputs;
  // One walk through the sizes gives every operand's offset.
  i64 out_off = p.out.offset, in_off[kIn];
#pragma unroll
  for (int j = 0; j < kIn; ++j) in_off[j] = p.in[j].offset;
  i64 rest = i;
  for (int d = p.ndim - 1; d >= 0; --d) {
    const i64 coord = next_coordinate(rest, p.sizes[d]);
    out_off += coord * p.out.strides[d];
#pragma unroll
    for (int j = 0; j < kIn; ++j) in_off[j] += coord * p.in[j].strides[d];
  }
  C v[kIn] = {C(0), C(0), C(0)};
#pragma unroll
  for (int j = 0; j < kIn; ++j) {
    if (j < p.num_inputs) {
      const abi::ElementwiseOperand& o = p.in[j];
      v[j] = o.is_scalar ? scalar_operand<C>(o.scalar, p.compute_dtype)
                         : load_as<C>(ptr.in[j], o.dtype, in_off[j]);
    }
  }
  bool div_by_zero = false;
  const C r = apply_op<C>(p.op, v[0], v[1], v[2], k, div_by_zero);
  if (div_by_zero) record_division_fault(ptr.fault, p.op, i64(v[0]), i);
  store_as<C>(ptr.out, p.out.dtype, out_off, r);
}

template <typename C>
__global__ void __launch_bounds__(kElementwiseBlock)
    generic_kernel(const abi::ElementwiseParams p, const GenericPointers ptr) {
  const OpContext<C> k = make_op_context<C>(p);
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += step)
    generic_element<C>(p, ptr, k, i);
}

// Arguments of the fast kernels: pointers already include each view's offset.
template <typename C>
struct FastArgs {
  void* out;
  const void* in[abi::kMaxElementwiseInputs];
  C scalar[abi::kMaxElementwiseInputs];
  int is_scalar[abi::kMaxElementwiseInputs];
  OpContext<C> ctx;
  abi::FaultRecord* fault;
  i64 numel;
  // 2-D views ([rows, cols]; the output runs along cols with stride 1).
  i64 rows, cols;
  i64 out_stride0;
  i64 in_stride0[abi::kMaxElementwiseInputs];
  i64 in_stride1[abi::kMaxElementwiseInputs];
};

template <typename T, int N>
struct alignas(sizeof(T) * N) Vector {
  T v[N];
};

template <int Op, typename C, int Arity>
NBX_GPU_INLINE C apply_fast(const C (&x)[3], const FastArgs<C>& a, i64 position) {
  bool div_by_zero = false;
  const C r =
      apply_op<C>(Op, x[0], Arity > 1 ? x[1] : C(0), Arity > 2 ? x[2] : C(0), a.ctx, div_by_zero);
  if constexpr (op_can_fault(Op) && !IsFloatCompute<C>::value) {
    if (div_by_zero) record_division_fault(a.fault, Op, i64(x[0]), position);
  }
  return r;
}

// Vec elements per 16-byte access of the wider of the two storage types.
template <typename TIn, typename TOut>
inline constexpr int kVecOf = 16 / (sizeof(TIn) > sizeof(TOut) ? sizeof(TIn) : sizeof(TOut));
// Vectors per thread on the contiguous path: 8 elements per thread whatever the dtype.
// Measured on H200 (2026-11-30): 16 bfloat16 elements per thread took 48 registers (5
// blocks per SM) and ran add at 3.64 TB/s; 8 elements per thread keep occupancy full.
template <typename TIn, typename TOut>
inline constexpr int kUnrollOf = kVecOf<TIn, TOut> >= 8 ? 1 : 8 / kVecOf<TIn, TOut>;

template <int Op, typename TIn, typename TOut, typename C, int Arity>
__global__ void __launch_bounds__(kElementwiseBlock) contiguous_kernel(const FastArgs<C> a) {
  constexpr int kVec = kVecOf<TIn, TOut>;
  constexpr int kUnroll = kUnrollOf<TIn, TOut>;
  const i64 base = i64(blockIdx.x) * (kElementwiseBlock * kVec * kUnroll);
  TOut* dst = static_cast<TOut*>(a.out);
  if (base + kElementwiseBlock * kVec * kUnroll <= a.numel) {
    // Every block but the last: whole vectors, no bounds checks. All loads first, so each
    // thread has kUnroll × Arity 16-byte loads in flight.
    Vector<TIn, kVec> in[kUnroll][Arity];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int j = 0; j < Arity; ++j)
        if (!a.is_scalar[j])
          in[u][j] = *reinterpret_cast<const Vector<TIn, kVec>*>(
              static_cast<const TIn*>(a.in[j]) + base +
              (i64(u) * kElementwiseBlock + threadIdx.x) * kVec);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 first = base + (i64(u) * kElementwiseBlock + threadIdx.x) * kVec;
      Vector<TOut, kVec> out;
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        C x[3] = {a.scalar[0], a.scalar[1], a.scalar[2]};
#pragma unroll
        for (int j = 0; j < Arity; ++j)
          if (!a.is_scalar[j]) x[j] = to_compute<C>(in[u][j].v[e]);
        out.v[e] = from_compute<TOut>(apply_fast<Op, C, Arity>(x, a, first + e));
      }
      *reinterpret_cast<Vector<TOut, kVec>*>(dst + first) = out;
    }
    return;
  }
  // The last block: element by element, up to numel.
  for (i64 i = base + threadIdx.x; i < a.numel; i += kElementwiseBlock) {
    C x[3] = {a.scalar[0], a.scalar[1], a.scalar[2]};
#pragma unroll
    for (int j = 0; j < Arity; ++j)
      if (!a.is_scalar[j]) x[j] = to_compute<C>(static_cast<const TIn*>(a.in[j])[i]);
    dst[i] = from_compute<TOut>(apply_fast<Op, C, Arity>(x, a, i));
  }
}

// One thread per kVec-wide piece of a row. The host guarantees cols % kVec == 0 and that
// every stride-1 operand's rows start 16-byte aligned.
template <int Op, typename TIn, typename TOut, typename C, int Arity>
__global__ void __launch_bounds__(kElementwiseBlock) rows_kernel(const FastArgs<C> a) {
  constexpr int kVec = kVecOf<TIn, TOut>;
  const i64 piece = i64(blockIdx.x) * kElementwiseBlock + threadIdx.x;
  const i64 pieces_per_row = a.cols / kVec;
  if (piece >= pieces_per_row * a.rows) return;
  i64 rest = piece;
  const i64 col = next_coordinate(rest, pieces_per_row) * kVec;  // 32-bit division if it fits
  const i64 row = rest;
  Vector<TIn, kVec> in[Arity];
#pragma unroll
  for (int j = 0; j < Arity; ++j) {
    if (a.is_scalar[j]) continue;
    const TIn* src = static_cast<const TIn*>(a.in[j]) + row * a.in_stride0[j];
    if (a.in_stride1[j] == 0) {
      const TIn s = src[0];
#pragma unroll
      for (int e = 0; e < kVec; ++e) in[j].v[e] = s;
    } else {
      in[j] = *reinterpret_cast<const Vector<TIn, kVec>*>(src + col);
    }
  }
  Vector<TOut, kVec> out;
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    C x[3] = {a.scalar[0], a.scalar[1], a.scalar[2]};
#pragma unroll
    for (int j = 0; j < Arity; ++j)
      if (!a.is_scalar[j]) x[j] = to_compute<C>(in[j].v[e]);
    out.v[e] = from_compute<TOut>(apply_fast<Op, C, Arity>(x, a, row * a.cols + col + e));
  }
  *reinterpret_cast<Vector<TOut, kVec>*>(static_cast<TOut*>(a.out) + row * a.out_stride0 + col) =
      out;
}

// [rows, cols] in tile × tile squares; block (tile, kElementwiseBlock / tile); dynamic shared
// memory of Arity × tile × (tile + 1) elements. An operand with stride0 == 1 and stride1 != 1
// (a transposed view) is read down its columns into shared memory, coalesced, then read
// across; the others are read directly along the row. The tile is a run-time value so one
// instantiation serves 32 (NVIDIA, RDNA) and 64 (wavefront-64 CDNA) alike.
template <int Op, typename TIn, typename TOut, typename C, int Arity>
__global__ void __launch_bounds__(kElementwiseBlock)
    tiled_kernel(const FastArgs<C> a, const int tile_dim) {
  extern __shared__ __align__(16) unsigned char tiled_smem[];
  TIn* tile = reinterpret_cast<TIn*>(tiled_smem);
  const int pitch = tile_dim + 1;  // +1: column reads hit distinct banks
  const int passes_stride = int(blockDim.y);
  const i64 tiles_per_row = (a.cols + tile_dim - 1) / tile_dim;
  const i64 r0 = i64(blockIdx.x / tiles_per_row) * tile_dim;
  const i64 c0 = i64(blockIdx.x % tiles_per_row) * tile_dim;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int j = 0; j < Arity; ++j) {
    if (a.is_scalar[j] || a.in_stride0[j] != 1 || a.in_stride1[j] == 1) continue;
    const TIn* src = static_cast<const TIn*>(a.in[j]);
    for (int cc = ty; cc < tile_dim; cc += passes_stride) {
      const i64 r = r0 + tx, c = c0 + cc;
      if (r < a.rows && c < a.cols)
        tile[(j * tile_dim + cc) * pitch + tx] = src[r + c * a.in_stride1[j]];
    }
  }
  __syncthreads();
  for (int rr = ty; rr < tile_dim; rr += passes_stride) {
    const i64 r = r0 + rr, c = c0 + tx;
    if (r >= a.rows || c >= a.cols) continue;
    C x[3] = {a.scalar[0], a.scalar[1], a.scalar[2]};
#pragma unroll
    for (int j = 0; j < Arity; ++j) {
      if (a.is_scalar[j]) {
        continue;
      } else if (a.in_stride0[j] == 1 && a.in_stride1[j] != 1) {
        x[j] = to_compute<C>(tile[(j * tile_dim + tx) * pitch + rr]);
      } else {
        x[j] = to_compute<C>(
            static_cast<const TIn*>(a.in[j])[r * a.in_stride0[j] + c * a.in_stride1[j]]);
      }
    }
    static_cast<TOut*>(a.out)[r * a.out_stride0 + c] =
        from_compute<TOut>(apply_fast<Op, C, Arity>(x, a, r * a.cols + c));
  }
}

}  // namespace nbx::gpu
