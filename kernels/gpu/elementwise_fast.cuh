// The table of template-specialised elementwise fast paths, and the host code that launches
// one. A table entry is one (op, input dtype, output dtype) triple; its launcher holds the
// contiguous, rows and tiled kernels of that triple. Entries are instantiated in
// elementwise_fast_*.cu (split so that the two CI cores compile them in parallel); the
// dispatcher (elementwise_dispatch.cu) looks an entry up and picks the path.
#pragma once

#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_launch.hpp"
#include "kernels/gpu/elementwise_plan.hpp"

namespace nbx::gpu {

// Everything a fast launcher needs, prepared by the dispatcher.
struct FastLaunch {
  const abi::ElementwiseParams* params;
  GenericPointers ptr;  // offsets already applied
  PathChoice view;      // the path and, for rows/tiled, the collapsed [rows, cols] view
  Stream stream;
};

using FastLauncher = Error (*)(const FastLaunch&);

struct FastEntry {
  int op;
  int in_dtype;
  int out_dtype;
  int compute_dtype;
  int vec;       // elements per vector access (16 bytes of the wider type)
  int in_bytes;  // size of an input element (shared memory of the tiled path)
  FastLauncher launch;
};

template <int Op, typename TIn, typename TOut, typename C, int Arity>
Error launch_fast(const FastLaunch& L) {
  const abi::ElementwiseParams& p = *L.params;
  FastArgs<C> a{};
  a.out = L.ptr.out;
  for (int j = 0; j < abi::kMaxElementwiseInputs; ++j) {
    const bool used = j < Arity;
    a.in[j] = used ? L.ptr.in[j] : nullptr;
    a.is_scalar[j] = used ? p.in[j].is_scalar : 1;
    a.scalar[j] =
        used && p.in[j].is_scalar ? scalar_operand<C>(p.in[j].scalar, p.compute_dtype) : C(0);
    a.in_stride0[j] = L.view.in_stride0[j];
    a.in_stride1[j] = L.view.in_stride1[j];
  }
  a.ctx = make_op_context<C>(p);
  a.fault = L.ptr.fault;
  a.numel = p.numel;
  const PathChoice& v = L.view;
  a.rows = v.rows;
  a.cols = v.cols;
  a.out_stride0 = v.out_stride0;
  constexpr int kVec = kVecOf<TIn, TOut>;
  switch (v.path) {
    case ElementwisePath::kContiguous: {
      const i64 per_block = i64(kElementwiseBlock) * kVec * kUnrollOf<TIn, TOut>;
      const unsigned blocks = unsigned((p.numel + per_block - 1) / per_block);
      contiguous_kernel<Op, TIn, TOut, C, Arity><<<blocks, kElementwiseBlock, 0, L.stream>>>(a);
      break;
    }
    case ElementwisePath::kRows: {
      const i64 pieces = v.rows * (v.cols / kVec);
      const unsigned blocks = unsigned((pieces + kElementwiseBlock - 1) / kElementwiseBlock);
      rows_kernel<Op, TIn, TOut, C, Arity><<<blocks, kElementwiseBlock, 0, L.stream>>>(a);
      break;
    }
    case ElementwisePath::kTiled: {
      const i64 tiles = ((v.rows + v.tile - 1) / v.tile) * ((v.cols + v.tile - 1) / v.tile);
      const dim3 block(unsigned(v.tile), unsigned(kElementwiseBlock / v.tile));
      const std::size_t smem = std::size_t(Arity) * v.tile * (v.tile + 1) * sizeof(TIn);
      tiled_kernel<Op, TIn, TOut, C, Arity><<<unsigned(tiles), block, smem, L.stream>>>(a, v.tile);
      break;
    }
    default:
      return kSuccess;
  }
  return last_launch_error();
}

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<bool> {
  static constexpr int value = kBool;
};
template <>
struct DTypeOf<std::int8_t> {
  static constexpr int value = kInt8;
};
template <>
struct DTypeOf<std::uint8_t> {
  static constexpr int value = kUInt8;
};
template <>
struct DTypeOf<std::int16_t> {
  static constexpr int value = kInt16;
};
template <>
struct DTypeOf<std::int32_t> {
  static constexpr int value = kInt32;
};
template <>
struct DTypeOf<i64> {
  static constexpr int value = kInt64;
};
template <>
struct DTypeOf<half_t> {
  static constexpr int value = kFloat16;
};
template <>
struct DTypeOf<bfloat16_t> {
  static constexpr int value = kBFloat16;
};
template <>
struct DTypeOf<float> {
  static constexpr int value = kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr int value = kFloat64;
};

// The compute dtype the wrapper sends for an input storage type: float32 for 16-bit floats.
template <typename TIn, typename C>
inline constexpr int kComputeCodeOf = (DTypeOf<TIn>::value == kFloat16 ||
                                       DTypeOf<TIn>::value == kBFloat16)
                                          ? kFloat32
                                          : DTypeOf<TIn>::value;

template <int Op, typename TIn, typename TOut, typename C, int Arity>
constexpr FastEntry fast_entry() {
  return FastEntry{Op,
                   DTypeOf<TIn>::value,
                   DTypeOf<TOut>::value,
                   kComputeCodeOf<TIn, C>,
                   kVecOf<TIn, TOut>,
                   int(sizeof(TIn)),
                   &launch_fast<Op, TIn, TOut, C, Arity>};
}

// The entry lists, one per translation unit.
struct FastTable {
  const FastEntry* entries;
  int count;
};
FastTable fast_table_16bit_and_float();
FastTable fast_table_wide();

}  // namespace nbx::gpu
