// The "fill" kernel family for CUDA and HIP (kernel ABI: abi::FillParams): arange and
// linspace compute each element from its index (in float64, or int64 for integer ranges so
// values above 2^53 stay exact); triu/tril copy the input where the element lies on the
// kept side of the diagonal of the last two dims, and write zero elsewhere; eye writes 1 on
// a matrix's diagonal and 0 elsewhere.
#include <string>

#include "core/errors.hpp"
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {
namespace {

template <typename C>
__global__ void __launch_bounds__(kElementwiseBlock)
    range_kernel(const abi::FillParams p, void* out) {
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += step) {
    C v;
    if constexpr (IsFloatCompute<C>::value) {
      // linspace's symmetric formula: the first half counts up from start, the second down
      // from end, so both ends are exact.
      // Rounded product, then rounded sum (no fused multiply-add, which nvcc would contract
      // to): the host's arithmetic, so the values are bit-exact with the reference — an FMA
      // put arange(-1, 2, 0.1)[10] at 5.6e-17 instead of 0 and moved integer linspace
      // values across their truncation boundary (H200, 2026-12-01).
      if (p.op == abi::kFill_linspace && i >= p.numel / 2) {
        v = __dsub_rn(p.end.f, __dmul_rn(double(p.numel - 1 - i), p.step.f));
      } else {
        v = __dadd_rn(p.start.f, __dmul_rn(double(i), p.step.f));
      }
    } else {
      v = i64((unsigned long long)p.start.i + (unsigned long long)i * (unsigned long long)p.step.i);
    }
    store_as<C>(out, p.out_dtype, p.out_offset + i * p.out_strides[0], v);
  }
}

// Copies whole elements as raw bits (in and out share the dtype), or writes zero bits.
__global__ void __launch_bounds__(kElementwiseBlock)
    triangle_kernel(const abi::FillParams p, void* out, const void* in, int element_bytes) {
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < p.numel; e += step) {
    i64 rest = e, o = p.out_offset, s = p.in_offset, row = 0, col = 0;
    for (int d = p.ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.sizes[d]);
      if (d == p.ndim - 1) col = c;
      if (d == p.ndim - 2) row = c;
      o += c * p.out_strides[d];
      s += c * p.in_strides[d];
    }
    const i64 diff = col - row;
    const bool keep = p.op == abi::kFill_triu ? diff >= p.diagonal : diff <= p.diagonal;
    switch (element_bytes) {
      case 1:
        static_cast<unsigned char*>(out)[o] = keep ? static_cast<const unsigned char*>(in)[s] : 0;
        break;
      case 2:
        static_cast<unsigned short*>(out)[o] = keep ? static_cast<const unsigned short*>(in)[s] : 0;
        break;
      case 4:
        static_cast<unsigned*>(out)[o] = keep ? static_cast<const unsigned*>(in)[s] : 0u;
        break;
      default:
        static_cast<unsigned long long*>(out)[o] =
            keep ? static_cast<const unsigned long long*>(in)[s] : 0ull;
        break;
    }
  }
}

// 1 or 0 of the output's dtype (store_as converts: true/false, 1/0, 1.0/0.0 in any format).
__global__ void __launch_bounds__(kElementwiseBlock)
    eye_kernel(const abi::FillParams p, void* out) {
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < p.numel; e += step) {
    const i64 row = e / p.sizes[1], col = e % p.sizes[1];
    store_as<i64>(out, p.out_dtype, p.out_offset + row * p.out_strides[0] + col * p.out_strides[1],
                  row == col ? 1 : 0);
  }
}

}  // namespace

static ElementwiseLaunchResult launch_fill(const abi::FillParams& p, const BoundBuffer* buffers,
                                           int num_buffers, const ElementwiseOptions& options,
                                           void* stream) {
  // BackendDevice::launch validated the block (core/families/fill_family.cpp).
  (void)num_buffers;
  const bool triangle = p.op == abi::kFill_triu || p.op == abi::kFill_tril;
  ElementwiseLaunchResult result;
  if (p.numel == 0) return result;
  const Stream s = static_cast<Stream>(stream);
  const i64 wanted = (p.numel + kElementwiseBlock - 1) / kElementwiseBlock;
  const i64 cap = i64(options.multiprocessors > 0 ? options.multiprocessors : 1) * 32;
  const unsigned blocks = unsigned(wanted < cap ? wanted : cap);
  if (p.op == abi::kFill_eye) {
    eye_kernel<<<blocks, kElementwiseBlock, 0, s>>>(p, buffers[0].address);
  } else if (triangle) {
    triangle_kernel<<<blocks, kElementwiseBlock, 0, s>>>(p, buffers[0].address, buffers[1].address,
                                                         dtype_bytes(p.out_dtype));
  } else if (p.op == abi::kFill_arange && p.in_dtype >= kInt8 && p.in_dtype <= kInt64) {
    range_kernel<i64><<<blocks, kElementwiseBlock, 0, s>>>(p, buffers[0].address);
  } else {
    range_kernel<double><<<blocks, kElementwiseBlock, 0, s>>>(p, buffers[0].address);
  }
  result.error = int(last_launch_error());
  result.call = "fill launch";
  result.path = ElementwisePath::kGeneric;
  return result;
}

ElementwiseLaunchResult launch_family(const abi::FillParams& p, const GpuLaunch& l) {
  return launch_fill(p, l.buffers, l.num_buffers, *l.options, l.stream);
}

}  // namespace nbx::gpu
