// The "gather" kernel family for CUDA and HIP (kernel ABI: abi::GatherParams): each output
// element reads its index, checks it against the bound and copies the picked input element
// bit for bit. A bad index goes to the device's fault record (the first one wins) and its
// element (the rows variant: its row) is left alone: nothing out of range is read or written.
//
// The block's variant picks the kernel:
//  - gather_strided_kernel (kGatherStrided): any strides. Each thread takes kStridedUnroll
//    elements a step, a block apart, and loads their indices, then their inputs, before it
//    stores any (several loads in flight per thread). Coordinates are decoded in 32 bits with
//    precomputed multiply-high dividers where numel and every operand's reach fit in 31 bits,
//    in 64 bits otherwise. The fault's position is decoded only for a bad index.
//  - gather_rows_kernel (kGatherRows): a group of up to 32 threads per output row (the last
//    dim), 256 / group groups a block; a long row is cut into slices of 8 units per thread,
//    each a group's work item. The group reads its row's index once (one address: a
//    broadcast), checks it once, and copies in the widest unit of 16/8/4/2/1 bytes that
//    divides the row's bytes and every row start of both operands (buffer address +
//    offset · itemsize), kRowsUnroll units per thread loaded before they are stored.
// Both grids cover the work in one pass up to kMaxBlocks blocks and loop beyond it.
#include <cstdint>

#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {
namespace {

inline constexpr int kGatherBlock = 256;
inline constexpr int kStridedUnroll = 4;
inline constexpr int kRowsUnroll = 4;
inline constexpr int kRowsMaxGroupShift = 5;  // 32 threads per row at most
// Copy units per thread in one work item (a slice of a row): 4 KB per 32-thread group of
// 16-byte units.
inline constexpr int kRowsSliceUnits = 2 * kRowsUnroll;
// HIP counts blocks × threads in 32 bits; 2^22 blocks of 256 is 2^30 threads, far more than
// any device keeps in flight.
inline constexpr i64 kMaxBlocks = i64(1) << 22;

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

// n / sizes[d] for n < 2^31 and 1 <= sizes[d] < 2^31 as (umulhi(n, magic) + n) >> shift
// (Granlund and Montgomery's round-up method, as PyTorch's IntDivider).
struct Dividers {
  unsigned magic[abi::kMaxDims];
  unsigned shift[abi::kMaxDims];
};

Dividers make_dividers(const abi::GatherParams& p) {
  Dividers dv{};
  for (int d = 0; d < p.ndim; ++d) {
    const std::uint64_t divisor = std::uint64_t(p.sizes[d]);
    unsigned s = 0;
    while (s < 31 && (std::uint64_t(1) << s) < divisor) ++s;
    dv.shift[d] = s;
    // < 2^32 for 1 <= divisor < 2^31: 2^s < 2 · divisor.
    dv.magic[d] =
        unsigned(((std::uint64_t(1) << 32) * ((std::uint64_t(1) << s) - divisor)) / divisor + 1);
  }
  return dv;
}

// Whether every offset the strided kernel forms fits in 31 bits: numel, and the furthest
// element of the output, the index and the input (with the whole indexed dim). The family's
// validate has checked none of these overflows 63 bits.
bool fits_31_bits(const abi::GatherParams& p) {
  constexpr i64 kMax = 0x7fffffff;
  if (p.numel > kMax) return false;
  auto reach = [&](std::int64_t offset, const std::int64_t* strides) {
    for (int d = 0; d < p.ndim; ++d) offset += (p.sizes[d] - 1) * strides[d];
    return offset;
  };
  if (reach(p.out_offset, p.out_strides) > kMax) return false;
  if (reach(p.index_offset, p.index_strides) > kMax) return false;
  return p.bound == 0 ||
         reach(p.src_offset, p.src_strides) + (p.bound - 1) * p.src_index_stride <= kMax;
}

// Element e's output offset, input offset (less the index's term) and index offset.
NBX_GPU_INLINE void locate(const abi::GatherParams& p, i64 e, i64& o, i64& s, i64& x) {
  o = p.out_offset, s = p.src_offset, x = p.index_offset;
  i64 rest = e;
  for (int d = p.ndim - 1; d > 0; --d) {
    const i64 c = next_coordinate(rest, p.sizes[d]);
    o += c * p.out_strides[d];
    s += c * p.src_strides[d];
    x += c * p.index_strides[d];
  }
  if (p.ndim > 0) {  // what is left is dim 0's coordinate
    o += rest * p.out_strides[0];
    s += rest * p.src_strides[0];
    x += rest * p.index_strides[0];
  }
}
NBX_GPU_INLINE void locate(const abi::GatherParams& p, const Dividers&, i64 e, i64& o, i64& s,
                           i64& x) {
  locate(p, e, o, s, x);
}
NBX_GPU_INLINE void locate(const abi::GatherParams& p, const Dividers& dv, unsigned e, unsigned& o,
                           unsigned& s, unsigned& x) {
  o = unsigned(p.out_offset), s = unsigned(p.src_offset), x = unsigned(p.index_offset);
  unsigned rest = e;
  for (int d = p.ndim - 1; d > 0; --d) {
    const unsigned q = (__umulhi(rest, dv.magic[d]) + rest) >> dv.shift[d];
    const unsigned c = rest - q * unsigned(p.sizes[d]);
    rest = q;
    o += c * unsigned(p.out_strides[d]);
    s += c * unsigned(p.src_strides[d]);
    x += c * unsigned(p.index_strides[d]);
  }
  if (p.ndim > 0) {
    o += rest * unsigned(p.out_strides[0]);
    s += rest * unsigned(p.src_strides[0]);
    x += rest * unsigned(p.index_strides[0]);
  }
}

// The index element's flat position for output element e (a fault's, so off the fast path).
NBX_GPU_INLINE i64 index_position(const abi::GatherParams& p, i64 e) {
  i64 rest = e, pos = 0;
  for (int d = p.ndim - 1; d >= 0; --d)
    pos += next_coordinate(rest, p.sizes[d]) * p.index_positions[d];
  return pos;
}

// Records output element e's bad index (off the fast path: decoded again in 64 bits).
template <typename Index>
NBX_GPU_INLINE void record_bad_index(const abi::GatherParams& p, const Index* index,
                                     abi::FaultRecord* fault, i64 e) {
  i64 o, s, x;
  locate(p, e, o, s, x);
  record_index_fault(fault, p.op, i64(index[x]), p.bound, index_position(p, e));
}

// Element is the unsigned type of the element's size, Index int or long long, Offset
// unsigned (fits_31_bits) or i64.
template <typename Element, typename Index, typename Offset>
__global__ void __launch_bounds__(kGatherBlock)
    gather_strided_kernel(const NBX_GPU_GRID_CONSTANT abi::GatherParams p,
                          const NBX_GPU_GRID_CONSTANT Dividers dv, Element* __restrict__ out,
                          const Element* __restrict__ src, const Index* __restrict__ index,
                          abi::FaultRecord* fault) {
  constexpr int kU = kStridedUnroll;
  constexpr i64 kTile = i64(kGatherBlock) * kU;
  const i64 step = i64(gridDim.x) * kTile;
  for (i64 first = i64(blockIdx.x) * kTile + threadIdx.x; first < p.numel; first += step) {
    Offset o[kU], s[kU];
    i64 k[kU];
    bool live[kU];
#pragma unroll
    for (int j = 0; j < kU; ++j) {
      const i64 e = first + i64(j) * kGatherBlock;
      live[j] = e < p.numel;
      o[j] = s[j] = 0;
      k[j] = 0;
      if (live[j]) {
        Offset x;
        locate(p, dv, Offset(e), o[j], s[j], x);
        k[j] = i64(index[x]);
      }
    }
    Element v[kU];
    bool good[kU];
#pragma unroll
    for (int j = 0; j < kU; ++j) {
      i64 kk = k[j];
      if (p.wrap_negative && kk < 0 && kk >= -p.bound) kk += p.bound;
      good[j] = live[j] && kk >= 0 && kk < p.bound;
      v[j] = good[j] ? src[s[j] + Offset(kk) * Offset(p.src_index_stride)] : Element(0);
    }
#pragma unroll
    for (int j = 0; j < kU; ++j) {
      if (good[j])
        out[o[j]] = v[j];
      else if (live[j])  // read again: the index need not stay in a register until here
        record_bad_index(p, index, fault, first + i64(j) * kGatherBlock);
    }
  }
}

// What the rows kernel needs beyond the block. A row is cut into slices of slice_units copy
// units (the last may be shorter), each a work item of one group: a whole row when it is
// short, several items when it is long, so the grid ends in many small items rather than in a
// last partial wave of long rows.
struct RowsShape {
  i64 items;        // rows × slices
  int slices;       // per row
  int row_units;    // copy units per row
  int slice_units;  // (1 << group_shift) × kRowsSliceUnits
  int group_shift;  // threads per row: 1 << group_shift
  int element_bytes;
};

// Unit is the copy unit (uint4, uint2, unsigned, unsigned short, unsigned char), Index int
// or long long. The row of every operand is contiguous and unit-aligned (launch_rows).
template <typename Unit, typename Index>
__global__ void __launch_bounds__(kGatherBlock)
    gather_rows_kernel(const NBX_GPU_GRID_CONSTANT abi::GatherParams p, const RowsShape r,
                       unsigned char* __restrict__ out, const unsigned char* __restrict__ src,
                       const Index* __restrict__ index, abi::FaultRecord* fault) {
  const int group = 1 << r.group_shift;
  const int lane = int(threadIdx.x) & (group - 1);
  const i64 step = (i64(gridDim.x) * kGatherBlock) >> r.group_shift;
  const i64 bytes = r.element_bytes;
  const int outer = p.ndim - 1;  // the dims that pick the row
  for (i64 item = (i64(blockIdx.x) * kGatherBlock + threadIdx.x) >> r.group_shift; item < r.items;
       item += step) {
    i64 rest = item;
    const int slice = r.slices > 1 ? int(next_coordinate(rest, r.slices)) : 0;
    i64 o = p.out_offset, s = p.src_offset, x = p.index_offset, pos = 0;
    for (int d = outer - 1; d > 0; --d) {
      const i64 c = next_coordinate(rest, p.sizes[d]);
      o += c * p.out_strides[d];
      s += c * p.src_strides[d];
      x += c * p.index_strides[d];
      pos += c * p.index_positions[d];
    }
    if (outer > 0) {  // what is left is dim 0's coordinate
      o += rest * p.out_strides[0];
      s += rest * p.src_strides[0];
      x += rest * p.index_strides[0];
      pos += rest * p.index_positions[0];
    }
    const i64 raw = i64(index[x]);
    i64 k = raw;
    if (p.wrap_negative && k < 0 && k >= -p.bound) k += p.bound;
    if (k < 0 || k >= p.bound) {  // the whole group agrees: the row's first slice records it
      if (lane == 0 && slice == 0) record_index_fault(fault, p.op, raw, p.bound, pos);
      continue;
    }
    Unit* to = reinterpret_cast<Unit*>(out + o * bytes);
    const Unit* from = reinterpret_cast<const Unit*>(src + (s + k * p.src_index_stride) * bytes);
    const int first = slice * r.slice_units;
    const int end = r.row_units - first < r.slice_units ? r.row_units : first + r.slice_units;
    int u = first + lane;
    for (; u + (kRowsUnroll - 1) * group < end; u += kRowsUnroll * group) {
      Unit v[kRowsUnroll];
#pragma unroll
      for (int j = 0; j < kRowsUnroll; ++j) v[j] = from[u + j * group];
#pragma unroll
      for (int j = 0; j < kRowsUnroll; ++j) to[u + j * group] = v[j];
    }
    for (; u < end; u += group) to[u] = from[u];
  }
}

unsigned grid_for(i64 work, i64 per_block) {
  const i64 wanted = (work + per_block - 1) / per_block;
  return unsigned(wanted < kMaxBlocks ? wanted : kMaxBlocks);
}

template <typename Element, typename Index>
void launch_strided(const abi::GatherParams& p, const GpuLaunch& l) {
  const Stream st = static_cast<Stream>(l.stream);
  auto* out = static_cast<Element*>(l.buffers[0].address);
  const auto* src = static_cast<const Element*>(l.buffers[1].address);
  const auto* index = static_cast<const Index*>(l.buffers[2].address);
  const unsigned blocks = grid_for(p.numel, i64(kGatherBlock) * kStridedUnroll);
  if (fits_31_bits(p))
    gather_strided_kernel<Element, Index, unsigned>
        <<<blocks, kGatherBlock, 0, st>>>(p, make_dividers(p), out, src, index, l.fault);
  else
    gather_strided_kernel<Element, Index, i64>
        <<<blocks, kGatherBlock, 0, st>>>(p, Dividers{}, out, src, index, l.fault);
}

template <typename Element>
void launch_strided_for_index(const abi::GatherParams& p, const GpuLaunch& l) {
  if (p.index_dtype == kInt64)
    launch_strided<Element, long long>(p, l);
  else
    launch_strided<Element, int>(p, l);
}

template <typename Unit, typename Index>
void launch_rows_unit(const abi::GatherParams& p, const RowsShape& r, const GpuLaunch& l) {
  const unsigned blocks = grid_for(r.items, i64(kGatherBlock) >> r.group_shift);
  gather_rows_kernel<Unit, Index><<<blocks, kGatherBlock, 0, static_cast<Stream>(l.stream)>>>(
      p, r, static_cast<unsigned char*>(l.buffers[0].address),
      static_cast<const unsigned char*>(l.buffers[1].address),
      static_cast<const Index*>(l.buffers[2].address), l.fault);
}

template <typename Index>
void launch_rows(const abi::GatherParams& p, const GpuLaunch& l) {
  // The family's contract (gather_family.cpp): the last dim is contiguous in the output and
  // the input, at most abi::kGatherRowsMaxLen elements, and the index does not vary along it.
  const i64 bytes = dtype_bytes(p.dtype);
  const int last = p.ndim - 1;
  const i64 len = p.sizes[last];
  // Every row start is a buffer address plus a sum of these byte counts: the copy unit is
  // the lowest bit set in any of them or in the row's length (at most 16).
  std::uint64_t bits = std::uint64_t(len * bytes);
  bits |= std::uint64_t(reinterpret_cast<std::uintptr_t>(l.buffers[0].address)) +
          std::uint64_t(p.out_offset * bytes);
  bits |= std::uint64_t(reinterpret_cast<std::uintptr_t>(l.buffers[1].address)) +
          std::uint64_t(p.src_offset * bytes);
  for (int d = 0; d < last; ++d)
    if (p.sizes[d] > 1)
      bits |= std::uint64_t(p.out_strides[d] * bytes) | std::uint64_t(p.src_strides[d] * bytes);
  if (p.bound > 1) bits |= std::uint64_t(p.src_index_stride * bytes);
  const std::uint64_t low = bits & (~bits + 1);  // bits >= len * bytes >= 1
  const int unit = low >= 16 ? 16 : int(low);
  RowsShape r;
  r.row_units = int(len * bytes / unit);  // <= len <= 2^28 (unit >= 1)
  r.group_shift = 0;
  while (r.group_shift < kRowsMaxGroupShift && (1 << r.group_shift) < r.row_units) ++r.group_shift;
  r.slice_units = kRowsSliceUnits << r.group_shift;
  r.slices = (r.row_units + r.slice_units - 1) / r.slice_units;
  r.items = p.numel / len * r.slices;
  r.element_bytes = int(bytes);
  switch (unit) {
    case 16:
      launch_rows_unit<uint4, Index>(p, r, l);
      break;
    case 8:
      launch_rows_unit<uint2, Index>(p, r, l);
      break;
    case 4:
      launch_rows_unit<unsigned, Index>(p, r, l);
      break;
    case 2:
      launch_rows_unit<unsigned short, Index>(p, r, l);
      break;
    default:
      launch_rows_unit<unsigned char, Index>(p, r, l);
      break;
  }
}

}  // namespace

ElementwiseLaunchResult launch_family(const abi::GatherParams& p, const GpuLaunch& l) {
  ElementwiseLaunchResult result;
  result.call = "gather launch";
  if (p.numel == 0) return result;
  if (p.variant == abi::kGatherRows) {
    if (p.index_dtype == kInt64)
      launch_rows<long long>(p, l);
    else
      launch_rows<int>(p, l);
    result.path = ElementwisePath::kRows;
  } else {
    switch (dtype_bytes(p.dtype)) {
      case 1:
        launch_strided_for_index<unsigned char>(p, l);
        break;
      case 2:
        launch_strided_for_index<unsigned short>(p, l);
        break;
      case 4:
        launch_strided_for_index<unsigned>(p, l);
        break;
      default:
        launch_strided_for_index<unsigned long long>(p, l);
        break;
    }
    result.path = ElementwisePath::kGeneric;
  }
  result.error = int(last_launch_error());
  return result;
}

}  // namespace nbx::gpu
