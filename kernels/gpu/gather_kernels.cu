// The "gather" kernel family for CUDA and HIP (kernel ABI: abi::GatherParams): each output
// element reads its index, checks it against the bound and copies the picked input element
// bit for bit. A bad index goes to the device's fault record (the first one wins) and its
// element is left alone: nothing out of range is read or written.
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {
namespace {

NBX_GPU_INLINE void record_index_fault(abi::FaultRecord* f, int op, i64 index, i64 bound,
                                       i64 position) {
  if (atomic_cas(&f->code, abi::kFaultNone, abi::kFaultIndexOutOfRange) == abi::kFaultNone) {
    f->op = abi::fault_op(abi::kFamily_gather, op);
    f->index = index;
    f->bound = bound;
    f->position = position;
    memory_fence();
  }
}

// Element is the unsigned type of the element's size, Index int or long long.
template <typename Element, typename Index>
__global__ void __launch_bounds__(kElementwiseBlock)
    gather_strided_kernel(const NBX_GPU_GRID_CONSTANT abi::GatherParams p, Element* out,
                          const Element* src, const Index* index, abi::FaultRecord* fault) {
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < p.numel; e += step) {
    i64 rest = e, o = p.out_offset, s = p.src_offset, x = p.index_offset, pos = 0;
    for (int d = p.ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.sizes[d]);
      o += c * p.out_strides[d];
      s += c * p.src_strides[d];
      x += c * p.index_strides[d];
      pos += c * p.index_positions[d];
    }
    i64 k = i64(index[x]);
    if (p.wrap_negative && k < 0 && k >= -p.bound) k += p.bound;
    if (k < 0 || k >= p.bound) {
      record_index_fault(fault, p.op, i64(index[x]), p.bound, pos);
      continue;
    }
    out[o] = src[s + k * p.src_index_stride];
  }
}

template <typename Element>
void launch_for_index(const abi::GatherParams& p, const GpuLaunch& l, unsigned blocks) {
  const Stream s = static_cast<Stream>(l.stream);
  auto* out = static_cast<Element*>(l.buffers[0].address);
  const auto* src = static_cast<const Element*>(l.buffers[1].address);
  if (p.index_dtype == kInt64)
    gather_strided_kernel<Element, long long><<<blocks, kElementwiseBlock, 0, s>>>(
        p, out, src, static_cast<const long long*>(l.buffers[2].address), l.fault);
  else
    gather_strided_kernel<Element, int><<<blocks, kElementwiseBlock, 0, s>>>(
        p, out, src, static_cast<const int*>(l.buffers[2].address), l.fault);
}

}  // namespace

ElementwiseLaunchResult launch_family(const abi::GatherParams& p, const GpuLaunch& l) {
  ElementwiseLaunchResult result;
  if (p.numel == 0) return result;
  const i64 wanted = (p.numel + kElementwiseBlock - 1) / kElementwiseBlock;
  const i64 cap = i64(l.options->multiprocessors > 0 ? l.options->multiprocessors : 1) * 32;
  const unsigned blocks = unsigned(wanted < cap ? wanted : cap);
  switch (dtype_bytes(p.dtype)) {
    case 1:
      launch_for_index<unsigned char>(p, l, blocks);
      break;
    case 2:
      launch_for_index<unsigned short>(p, l, blocks);
      break;
    case 4:
      launch_for_index<unsigned>(p, l, blocks);
      break;
    default:
      launch_for_index<unsigned long long>(p, l, blocks);
      break;
  }
  result.error = int(last_launch_error());
  result.call = "gather launch";
  result.path = ElementwisePath::kGeneric;
  return result;
}

}  // namespace nbx::gpu
