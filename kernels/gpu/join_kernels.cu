// The "join" kernel family for CUDA and HIP (kernel ABI: abi::JoinParams; the host backend
// holds the reference): cat's inputs, up to abi::kJoinMaxInputs of one dtype, copied bit for
// bit into their slices of the output by one kernel launch. The idea is PyTorch's batched cat
// (CatArrayBatchedCopy: a grid over the inputs instead of a launch each); the code is our own.
//
// Every input gets its own run of consecutive blocks, as many as its size needs, so one
// grid covers all of them with no launch gap and no partial last wave per input: a block
// finds its input by a scan of the (at most 16) first-block numbers, uniform across the block.
// The block's variant picks the kernel:
//  - join_flat_kernel (kJoinFlat): each input is rows of contiguous bytes (join_family.cpp).
//    A block copies flat_block_bytes of one input in the widest unit of 16/8/4/2/1 bytes that
//    divides both start addresses, the row's bytes and (with several rows) both row strides
//    (inputs of different units, rare, take one kernel per unit); a thread loads 4 16-byte
//    units (16 KiB a block; 8 narrower ones) before it stores any. A unit's row comes from a 32-bit
//    multiply-high divider (Granlund and Montgomery's round-up method) over its place in its
//    block's rows; one row (or rows that lie end to end in both operands) needs none.
//  - join_strided_kernel (kJoinStrided): any strides. A thread takes kStridedUnroll elements a
//    block apart, finds each one's coordinates in its input (32-bit division where they fit)
//    and loads all of them before it stores any.
// Both grids cover the work in one pass up to kMaxBlocks blocks and loop beyond it.
#include <cstdint>

#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {
namespace {

inline constexpr int kJoinBlock = 256;
// The flat kernel's 16-byte units a thread loads before it stores, plain loads and stores
// (cat8 on an H100, 2026-12-06: 4 units 0.188-0.195 ms, 8 0.190-0.195, 8 with the streaming
// cache hints __ldcs/__stcs 0.195-0.198, 2 0.189-0.192; PyTorch 0.191-0.195: noise-level
// differences, so the smaller unroll and no hints).
inline constexpr int kFlatUnroll = 4;
inline constexpr int kStridedUnroll = 4;
inline constexpr i64 kStridedBlockElements = i64(kJoinBlock) * kStridedUnroll;
// HIP counts blocks × threads in 32 bits; 2^22 blocks of 256 is 2^30 threads, far more than
// any device keeps in flight.
inline constexpr i64 kMaxBlocks = i64(1) << 22;
inline constexpr int kMaxInputs = abi::kJoinMaxInputs;

// How a flat input's units map to rows. A block's units start at row r0, unit c0 of it (one
// 64-bit division a block); unit t of the block is then at c0 + t of row r0, which is below
// row_units + a block's bytes < 2^31, so a 32-bit divider finds its row, or (rows of 2^30
// units and more, which a block crosses at most once) one comparison.
enum FlatRows : int {
  kOneRun = 0,    // unit u is at u in both operands: one row, or rows end to end in both
  kRows = 1,      // row_units < 2^30: the 32-bit divider
  kLongRows = 2,  // row_units >= 2^30: one comparison
};
inline constexpr i64 kLongRowUnits = i64(1) << 30;

struct FlatInput {
  const unsigned char* src;  // row 0 of the input
  unsigned char* dst;        // row 0 of its slice of the output
  i64 units;                 // rows × row_units
  i64 row_units;
  i64 src_row;  // units from one input row to the next
  i64 dst_row;  // units from one output row to the next
  i64 first_block;
  unsigned magic, shift;  // the divider of row_units (kRows)
  int unit_shift;         // log2 of the unit's bytes
  int mapping;            // FlatRows
};

struct FlatArgs {
  FlatInput in[kMaxInputs];
  i64 blocks;  // every input's, in all
  int count;
};

struct StridedInput {
  const unsigned char* src;  // its element 0 (buffer address + offset · itemsize)
  i64 numel;
  i64 extent;    // along dim
  i64 out_base;  // the output element its element 0 goes to
  i64 first_block;
  i64 strides[abi::kMaxDims];
};

struct StridedArgs {
  StridedInput in[kMaxInputs];
  unsigned char* out;
  i64 blocks;
  i64 sizes[abi::kMaxDims];
  i64 out_strides[abi::kMaxDims];
  int ndim, dim, count;
};
static_assert(sizeof(FlatArgs) < kMaxKernelParamBytes &&
              sizeof(StridedArgs) < kMaxKernelParamBytes);

// The input block b belongs to: the last whose first block is at or before it (inputs with no
// blocks share their successor's first block and are passed over).
template <class Args>
NBX_GPU_INLINE int input_of(const Args& a, i64 b) {
  int k = 0;
  while (k + 1 < a.count && b >= a.in[k + 1].first_block) ++k;
  return k;
}

// Where a block's units start: row r0, unit c0 of it.
struct RowStart {
  i64 r0 = 0;
  i64 c0 = 0;
};

// Unit t of the block (t below its bytes): its offsets, in units, in the input and in the
// output.
template <int M>
NBX_GPU_INLINE void flat_locate(const FlatInput& in, const RowStart& at, i64 begin, unsigned t,
                                i64& s, i64& d) {
  if constexpr (M == kOneRun) {
    s = d = begin + t;
    return;
  }
  i64 r, c;
  if constexpr (M == kRows) {
    const unsigned x = unsigned(at.c0) + t, len = unsigned(in.row_units);
    const unsigned q = unsigned((unsigned long long)(__umulhi(x, in.magic)) + x) >> in.shift;
    r = at.r0 + q, c = i64(x - q * len);
  } else {
    const i64 x = at.c0 + t, q = x >= in.row_units ? 1 : 0;
    r = at.r0 + q, c = x - q * in.row_units;
  }
  s = r * in.src_row + c;
  d = r * in.dst_row + c;
}

// Units [begin, end) of one input (at most a block's bytes), kU a thread loaded before any is
// stored.
template <typename U, int M, int kU>
NBX_GPU_INLINE void flat_copy(const FlatInput& in, i64 begin, i64 end) {
  const U* __restrict__ src = reinterpret_cast<const U*>(in.src);
  U* __restrict__ dst = reinterpret_cast<U*>(in.dst);
  RowStart at;
  if constexpr (M != kOneRun) {
    at.r0 = begin / in.row_units;
    at.c0 = begin - at.r0 * in.row_units;
  }
  const unsigned n = unsigned(end - begin);
  for (unsigned first = threadIdx.x; first < n; first += unsigned(kJoinBlock) * kU) {
    U v[kU];
    i64 d[kU];
#pragma unroll
    for (int j = 0; j < kU; ++j) {
      const unsigned t = first + unsigned(j) * kJoinBlock;
      i64 s = 0;
      d[j] = -1;
      if (t < n) flat_locate<M>(in, at, begin, t, s, d[j]);
      if (t < n) v[j] = src[s];
    }
#pragma unroll
    for (int j = 0; j < kU; ++j)
      if (d[j] >= 0) dst[d[j]] = v[j];
  }
}

// A block's bytes: kU 16-byte units a thread (32 KiB for 8), taken in smaller units as the
// inputs allow.
constexpr i64 flat_block_bytes(int unroll) {
  return i64(kJoinBlock) * unroll * 16;
}

template <typename U, int kU>
__global__ void __launch_bounds__(kJoinBlock)
    join_flat_kernel(const NBX_GPU_GRID_CONSTANT FlatArgs a) {
  constexpr i64 kPerBlock = flat_block_bytes(kU) / i64(sizeof(U));
  for (i64 b = blockIdx.x; b < a.blocks; b += gridDim.x) {
    const FlatInput& in = a.in[input_of(a, b)];
    const i64 begin = (b - in.first_block) * kPerBlock;
    const i64 end = begin + kPerBlock < in.units ? begin + kPerBlock : in.units;
    if (in.mapping == kOneRun)  // uniform across the block
      flat_copy<U, kOneRun, kU>(in, begin, end);
    else if (in.mapping == kRows)
      flat_copy<U, kRows, kU>(in, begin, end);
    else
      flat_copy<U, kLongRows, kU>(in, begin, end);
  }
}

// Element e of input k: its offsets in the input and in the output (elements).
NBX_GPU_INLINE void strided_locate(const StridedArgs& a, const StridedInput& in, i64 e, i64& s,
                                   i64& o) {
  s = 0, o = in.out_base;
  i64 rest = e;
  for (int d = a.ndim - 1; d > 0; --d) {
    const i64 c = next_coordinate(rest, d == a.dim ? in.extent : a.sizes[d]);
    s += c * in.strides[d];
    o += c * a.out_strides[d];
  }
  s += rest * in.strides[0];  // what is left is dim 0's coordinate
  o += rest * a.out_strides[0];
}

template <typename T>
__global__ void __launch_bounds__(kJoinBlock)
    join_strided_kernel(const NBX_GPU_GRID_CONSTANT StridedArgs a) {
  constexpr int kU = kStridedUnroll;
  T* __restrict__ out = reinterpret_cast<T*>(a.out);
  for (i64 b = blockIdx.x; b < a.blocks; b += gridDim.x) {
    const StridedInput& in = a.in[input_of(a, b)];
    const T* __restrict__ src = reinterpret_cast<const T*>(in.src);
    const i64 first = (b - in.first_block) * kStridedBlockElements + threadIdx.x;
    T v[kU];
    i64 o[kU];
#pragma unroll
    for (int j = 0; j < kU; ++j) {
      const i64 e = first + i64(j) * kJoinBlock;
      i64 s = 0;
      o[j] = -1;
      if (e < in.numel) strided_locate(a, in, e, s, o[j]);
      if (e < in.numel) v[j] = src[s];
    }
#pragma unroll
    for (int j = 0; j < kU; ++j)
      if (o[j] >= 0) out[o[j]] = v[j];
  }
}

i64 blocks_for(i64 work, i64 per_block) {
  return (work + per_block - 1) / per_block;
}

unsigned grid_of(i64 blocks) {
  return unsigned(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

// The largest power of two up to 16 dividing every value.
int unit_shift_of(std::initializer_list<std::uint64_t> values) {
  std::uint64_t all = 16;
  for (std::uint64_t v : values) all |= v;
  int shift = 0;
  while (shift < 4 && ((all >> shift) & 1) == 0) ++shift;
  return shift;
}

// n / divisor for n < 2^31 and 1 <= divisor < 2^31 as (umulhi(n, magic) + n) >> shift.
void set_divider(FlatInput& in) {
  const std::uint64_t divisor = std::uint64_t(in.row_units);
  unsigned s = 0;
  while (s < 31 && (std::uint64_t(1) << s) < divisor) ++s;
  in.shift = s;
  // < 2^32 for 1 <= divisor < 2^31: 2^s < 2 · divisor.
  in.magic =
      unsigned(((std::uint64_t(1) << 32) * ((std::uint64_t(1) << s) - divisor)) / divisor + 1);
}

// Units narrower than 16 bytes (an odd offset or row: rare) take 8 a thread, blocks of
// flat_block_bytes(8); 16-byte units kFlatUnroll.
constexpr int kNarrowUnroll = 8;

template <typename U>
void launch_flat_unit(const FlatArgs& a, const GpuLaunch& l) {
  constexpr int kU = sizeof(U) < 16 ? kNarrowUnroll : kFlatUnroll;
  join_flat_kernel<U, kU><<<grid_of(a.blocks), kJoinBlock, 0, static_cast<Stream>(l.stream)>>>(a);
}

// One kernel for every input, in the unit the inputs allow; inputs that allow different units
// (an odd offset, an odd row) take one kernel per unit, each over the inputs of that unit.
void launch_flat(const abi::JoinParams& p, const GpuLaunch& l) {
  const std::uint64_t item = std::uint64_t(dtype_bytes(p.dtype));
  auto* out = static_cast<unsigned char*>(l.buffers[0].address);
  const i64 rows = p.sizes[0];
  FlatInput all[kMaxInputs];
  bool present[5] = {};
  for (int k = 0; k < p.count; ++k) {
    const abi::JoinInput& x = p.inputs[k];
    FlatInput& in = all[k];
    in = FlatInput{};
    if (x.extent == 0 || rows == 0) continue;
    in.src = static_cast<const unsigned char*>(l.buffers[1 + k].address) + x.offset * item;
    in.dst = out + (p.out_offset + x.at * p.out_strides[1]) * item;
    const std::uint64_t row_bytes = std::uint64_t(x.extent) * item;
    const std::uint64_t src_row = std::uint64_t(x.strides[0]) * item;
    const std::uint64_t dst_row = std::uint64_t(p.out_strides[0]) * item;
    in.unit_shift = rows > 1
                        ? unit_shift_of({std::uint64_t(in.src), std::uint64_t(in.dst), row_bytes,
                                         src_row, dst_row})
                        : unit_shift_of({std::uint64_t(in.src), std::uint64_t(in.dst), row_bytes});
    in.row_units = i64(row_bytes >> in.unit_shift);
    in.src_row = i64(src_row >> in.unit_shift);
    in.dst_row = i64(dst_row >> in.unit_shift);
    in.units = rows * in.row_units;
    if (rows == 1 || (in.src_row == in.row_units && in.dst_row == in.row_units)) {
      in.mapping = kOneRun;
    } else if (in.row_units < kLongRowUnits) {
      in.mapping = kRows;
      set_divider(in);
    } else {
      in.mapping = kLongRows;
    }
    present[in.unit_shift] = true;
  }
  for (int shift = 4; shift >= 0; --shift) {
    if (!present[shift]) continue;
    const i64 unit_block_bytes = flat_block_bytes(shift == 4 ? kFlatUnroll : kNarrowUnroll);
    FlatArgs a{};
    for (int k = 0; k < p.count; ++k) {
      if (all[k].units == 0 || all[k].unit_shift != shift) continue;
      a.in[a.count] = all[k];
      a.in[a.count].first_block = a.blocks;
      a.blocks += blocks_for(all[k].units, unit_block_bytes >> shift);
      ++a.count;
    }
    switch (shift) {
      case 4:
        launch_flat_unit<uint4>(a, l);
        break;
      case 3:
        launch_flat_unit<uint2>(a, l);
        break;
      case 2:
        launch_flat_unit<unsigned>(a, l);
        break;
      case 1:
        launch_flat_unit<unsigned short>(a, l);
        break;
      default:
        launch_flat_unit<unsigned char>(a, l);
        break;
    }
  }
}

template <typename T>
void launch_strided(const abi::JoinParams& p, const GpuLaunch& l) {
  const i64 item = i64(sizeof(T));
  StridedArgs a{};
  a.out = static_cast<unsigned char*>(l.buffers[0].address);
  a.ndim = p.ndim, a.dim = p.dim, a.count = p.count;
  for (int d = 0; d < p.ndim; ++d) a.sizes[d] = p.sizes[d], a.out_strides[d] = p.out_strides[d];
  i64 outer = 1;
  for (int d = 0; d < p.ndim; ++d)
    if (d != p.dim) outer *= p.sizes[d];
  for (int k = 0; k < p.count; ++k) {
    const abi::JoinInput& x = p.inputs[k];
    StridedInput& in = a.in[k];
    in.first_block = a.blocks;
    in.numel = outer * x.extent;
    if (in.numel == 0) continue;
    in.src = static_cast<const unsigned char*>(l.buffers[1 + k].address) + x.offset * item;
    in.extent = x.extent;
    in.out_base = p.out_offset + x.at * p.out_strides[p.dim];
    for (int d = 0; d < p.ndim; ++d) in.strides[d] = x.strides[d];
    a.blocks += blocks_for(in.numel, kStridedBlockElements);
  }
  if (a.blocks == 0) return;
  join_strided_kernel<T><<<grid_of(a.blocks), kJoinBlock, 0, static_cast<Stream>(l.stream)>>>(a);
}

}  // namespace

ElementwiseLaunchResult launch_family(const abi::JoinParams& p, const GpuLaunch& l) {
  ElementwiseLaunchResult result;
  result.call = "join launch";
  if (p.variant == abi::kJoinFlat) {
    launch_flat(p, l);
    result.path = ElementwisePath::kContiguous;
  } else {
    switch (dtype_bytes(p.dtype)) {
      case 1:
        launch_strided<unsigned char>(p, l);
        break;
      case 2:
        launch_strided<unsigned short>(p, l);
        break;
      case 4:
        launch_strided<unsigned>(p, l);
        break;
      default:
        launch_strided<unsigned long long>(p, l);
        break;
    }
    result.path = ElementwisePath::kGeneric;
  }
  result.error = int(last_launch_error());
  return result;
}

}  // namespace nbx::gpu
