// The "fill" kernel family for CUDA and HIP (kernel ABI: abi::FillParams): arange and
// linspace compute each element from its index (in float64, or int64 for integer ranges so
// values above 2^53 stay exact); triu/tril copy the input where the element lies on the
// kept side of the diagonal of the last two dims, and write zero elsewhere.
#include <string>

#include "core/errors.hpp"
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/fill_launch.hpp"

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
      if (p.op == abi::kFill_linspace && i >= p.numel / 2) {
        v = p.end.f - double(p.numel - 1 - i) * p.step.f;
      } else {
        v = p.start.f + double(i) * p.step.f;
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

[[noreturn]] void reject(const std::string& what) {
  throw InvalidArgument("fill", "fill launch: " + what + ".");
}

// The furthest element a view reaches must lie inside its buffer.
void check_view(const abi::FillParams& p, i64 offset, const std::int64_t* strides, int dtype,
                const BoundBuffer& b, const char* label) {
  if (p.numel == 0) return;
  if (offset < 0) reject(std::string(label) + " has a negative offset");
  i64 last = offset;
  for (int d = 0; d < p.ndim; ++d) {
    if (strides[d] < 0) reject(std::string(label) + " has a negative stride");
    last += (p.sizes[d] - 1) * strides[d];
  }
  if (b.address == nullptr || std::uint64_t(last + 1) * dtype_bytes(dtype) > b.bytes)
    reject(std::string(label) + " reaches beyond its buffer of " + std::to_string(b.bytes) +
           " bytes");
}

}  // namespace

ElementwiseLaunchResult launch_fill(const abi::FillParams& p, const BoundBuffer* buffers,
                                    int num_buffers, const ElementwiseOptions& options,
                                    void* stream) {
  const bool triangle = p.op == abi::kFill_triu || p.op == abi::kFill_tril;
  const bool range = p.op == abi::kFill_arange || p.op == abi::kFill_linspace;
  if (!triangle && !range) reject("unknown op code " + std::to_string(p.op));
  if (num_buffers != (triangle ? 2 : 1))
    reject(std::to_string(num_buffers) + " buffers for op " + std::to_string(p.op));
  if (p.ndim < (triangle ? 2 : 1) || p.ndim > (triangle ? abi::kMaxDims : 1))
    reject("ndim " + std::to_string(p.ndim) + " for op " + std::to_string(p.op));
  if (dtype_bytes(p.out_dtype) == 0 || (triangle && p.in_dtype != p.out_dtype) ||
      (range && dtype_bytes(p.in_dtype) == 0))
    reject("dtypes out " + std::to_string(p.out_dtype) + ", in " + std::to_string(p.in_dtype));
  i64 n = 1;
  for (int d = 0; d < p.ndim; ++d) n *= p.sizes[d];
  if (n != p.numel) reject("numel " + std::to_string(p.numel) + " != product of sizes");
  check_view(p, p.out_offset, p.out_strides, p.out_dtype, buffers[0], "the output");
  if (triangle) check_view(p, p.in_offset, p.in_strides, p.in_dtype, buffers[1], "the input");
  ElementwiseLaunchResult result;
  if (p.numel == 0) return result;
  const Stream s = static_cast<Stream>(stream);
  const i64 wanted = (p.numel + kElementwiseBlock - 1) / kElementwiseBlock;
  const i64 cap = i64(options.multiprocessors > 0 ? options.multiprocessors : 1) * 32;
  const unsigned blocks = unsigned(wanted < cap ? wanted : cap);
  if (triangle) {
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

}  // namespace nbx::gpu
