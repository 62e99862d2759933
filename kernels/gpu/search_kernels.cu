// The "search" kernel family for CUDA and HIP (kernel ABI: abi::SearchParams; the host
// backend holds the reference): searchsorted and bucketize. A thread per value runs
// PyTorch's binary search over its sorted row and writes the insertion point as int32 or
// int64. Comparisons are the dtype's own: float16/bfloat16 widened to float32 (exact),
// float32/float64 as IEEE (NaN compares false, -0 = +0), integers exact. Nothing is indexed
// by data, so there are no faults.
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {
namespace {

// Storage: the type an element is read as; value(): what it compares as.
template <int D>
struct Element;
template <>
struct Element<kBool> {
  using Storage = unsigned char;  // 0 or 1
  NBX_GPU_INLINE static unsigned value(Storage v) { return v; }
};
template <>
struct Element<kInt8> {
  using Storage = signed char;
  NBX_GPU_INLINE static int value(Storage v) { return v; }
};
template <>
struct Element<kUInt8> {
  using Storage = unsigned char;
  NBX_GPU_INLINE static unsigned value(Storage v) { return v; }
};
template <>
struct Element<kInt16> {
  using Storage = short;
  NBX_GPU_INLINE static int value(Storage v) { return v; }
};
template <>
struct Element<kInt32> {
  using Storage = int;
  NBX_GPU_INLINE static int value(Storage v) { return v; }
};
template <>
struct Element<kInt64> {
  using Storage = long long;
  NBX_GPU_INLINE static long long value(Storage v) { return v; }
};
template <>
struct Element<kFloat16> {
  using Storage = unsigned short;  // the bits
  NBX_GPU_INLINE static float value(Storage v) { return to_float(__ushort_as_half(v)); }
};
template <>
struct Element<kBFloat16> {
  using Storage = unsigned short;  // the bits: float32's upper half
  NBX_GPU_INLINE static float value(Storage v) { return __uint_as_float(unsigned(v) << 16); }
};
template <>
struct Element<kFloat32> {
  using Storage = float;
  NBX_GPU_INLINE static float value(Storage v) { return v; }
};
template <>
struct Element<kFloat64> {
  using Storage = double;
  NBX_GPU_INLINE static double value(Storage v) { return v; }
};

template <int D, typename Out>
__global__ void __launch_bounds__(kElementwiseBlock)
    search_kernel(const NBX_GPU_GRID_CONSTANT abi::SearchParams p, Out* out,
                  const typename Element<D>::Storage* seq,
                  const typename Element<D>::Storage* values) {
  using E = Element<D>;
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < p.numel; e += step) {
    i64 rest = e, o = p.out_offset, x = p.values_offset, r = p.seq_offset;
    for (int d = p.ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.sizes[d]);
      o += c * p.out_strides[d];
      x += c * p.values_strides[d];
      r += c * p.seq_strides[d];
    }
    const auto v = E::value(values[x]);
    i64 start = 0, end = p.seq_len;
    if (p.right) {
      while (start < end) {
        const i64 mid = start + ((end - start) >> 1);
        if (!(E::value(seq[r + mid * p.seq_stride]) > v))
          start = mid + 1;
        else
          end = mid;
      }
    } else {
      while (start < end) {
        const i64 mid = start + ((end - start) >> 1);
        if (!(E::value(seq[r + mid * p.seq_stride]) >= v))
          start = mid + 1;
        else
          end = mid;
      }
    }
    out[o] = Out(start);
  }
}

template <int D>
void launch_dtype(const abi::SearchParams& p, const GpuLaunch& l, unsigned blocks) {
  using S = typename Element<D>::Storage;
  const Stream s = static_cast<Stream>(l.stream);
  const auto* seq = static_cast<const S*>(l.buffers[1].address);
  const auto* values = static_cast<const S*>(l.buffers[2].address);
  if (p.out_dtype == kInt64)
    search_kernel<D, long long><<<blocks, kElementwiseBlock, 0, s>>>(
        p, static_cast<long long*>(l.buffers[0].address), seq, values);
  else
    search_kernel<D, int><<<blocks, kElementwiseBlock, 0, s>>>(
        p, static_cast<int*>(l.buffers[0].address), seq, values);
}

}  // namespace

ElementwiseLaunchResult launch_family(const abi::SearchParams& params, const GpuLaunch& l) {
  ElementwiseLaunchResult result;
  result.call = "search launch";
  result.path = ElementwisePath::kGeneric;
  if (params.numel == 0) return result;
  abi::SearchParams p = params;
  std::int64_t* strides[3] = {p.out_strides, p.values_strides, p.seq_strides};
  p.ndim = collapse_strided_dims(p.ndim, p.sizes, strides, 3);
  const i64 wanted = (p.numel + kElementwiseBlock - 1) / kElementwiseBlock;
  const i64 cap = i64(l.options->multiprocessors > 0 ? l.options->multiprocessors : 1) * 32;
  const unsigned blocks = unsigned(wanted < cap ? wanted : cap);
  switch (p.dtype) {
    case kBool:
      launch_dtype<kBool>(p, l, blocks);
      break;
    case kInt8:
      launch_dtype<kInt8>(p, l, blocks);
      break;
    case kUInt8:
      launch_dtype<kUInt8>(p, l, blocks);
      break;
    case kInt16:
      launch_dtype<kInt16>(p, l, blocks);
      break;
    case kInt32:
      launch_dtype<kInt32>(p, l, blocks);
      break;
    case kInt64:
      launch_dtype<kInt64>(p, l, blocks);
      break;
    case kFloat16:
      launch_dtype<kFloat16>(p, l, blocks);
      break;
    case kBFloat16:
      launch_dtype<kBFloat16>(p, l, blocks);
      break;
    case kFloat32:
      launch_dtype<kFloat32>(p, l, blocks);
      break;
    default:
      launch_dtype<kFloat64>(p, l, blocks);
      break;
  }
  result.error = int(last_launch_error());
  return result;
}

}  // namespace nbx::gpu
