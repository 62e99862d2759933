// The "rotary" kernel family for CUDA and HIP (kernel ABI: abi::RotaryParams; the host
// backend holds the reference): rotary position embedding in place on q and k. One thread
// per (token, head, pair), heads numbered q's first, then k's: pairs run fastest, so a
// warp's threads share a token's position and cache row (one broadcast load) and read
// consecutive elements of a head. Each thread owns its two elements, so the update in place
// needs no synchronisation. A bad position goes to the device's fault record (the first one
// wins) and the thread touches nothing: no cache row out of range is read.
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {
namespace {

inline constexpr int kRotaryBlock = 256;
// HIP counts blocks × threads in 32 bits; 2^22 blocks of 256 is far more than any device
// keeps in flight, and the grid-stride loop covers the rest.
inline constexpr i64 kMaxBlocks = i64(1) << 22;

// Values widen to the compute type C (float, or double for double); stores round once.
NBX_GPU_INLINE float widen(half_t v) {
  return to_float(v);
}
NBX_GPU_INLINE float widen(bfloat16_t v) {
  return to_float(v);
}
NBX_GPU_INLINE float widen(float v) {
  return v;
}
NBX_GPU_INLINE double widen(double v) {
  return v;
}
template <typename T>
struct Narrow;
template <>
struct Narrow<half_t> {
  NBX_GPU_INLINE static half_t from(float v) { return half_from_float(v); }
};
template <>
struct Narrow<bfloat16_t> {
  NBX_GPU_INLINE static bfloat16_t from(float v) { return bfloat16_from_float(v); }
};
template <>
struct Narrow<float> {
  NBX_GPU_INLINE static float from(float v) { return v; }
};
template <>
struct Narrow<double> {
  NBX_GPU_INLINE static double from(double v) { return v; }
};

template <typename T>
using Compute = decltype(widen(T{}));

NBX_GPU_INLINE void record_position_fault(abi::FaultRecord* f, int op, i64 position, i64 bound,
                                          i64 token) {
  if (atomic_cas(&f->code, abi::kFaultNone, abi::kFaultIndexOutOfRange) == abi::kFaultNone) {
    f->op = abi::fault_op(abi::kFamily_rotary, op);
    f->index = position;
    f->bound = bound;
    f->position = token;
    memory_fence();
  }
}

template <typename T, typename Cache, typename Index>
__global__ void __launch_bounds__(kRotaryBlock)
    rotary_kernel(const NBX_GPU_GRID_CONSTANT abi::RotaryParams p, T* q, T* k, const Index* pos,
                  const Cache* cache, abi::FaultRecord* fault) {
  using C = Compute<T>;
  const i64 half = p.rotary_dim / 2, heads = p.q_heads + p.k_heads;
  const i64 work = p.tokens * heads * half;
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < work; e += step) {
    i64 rest = e;
    const i64 i = next_coordinate(rest, half);
    const i64 head = next_coordinate(rest, heads);
    const i64 token = rest;
    const bool is_q = head < p.q_heads;
    i64 x = is_q ? p.q_offset : p.k_offset, po = p.pos_offset;
    const std::int64_t* token_strides = is_q ? p.q_token_strides : p.k_token_strides;
    for (int d = p.token_ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.token_sizes[d]);
      x += c * token_strides[d];
      po += c * p.pos_strides[d];
    }
    const i64 position = i64(pos[po]);
    if (position < 0 || position >= p.max_position) {
      record_position_fault(fault, p.op, position, p.max_position, token);
      continue;
    }
    const i64 row = p.cache_offset + position * p.cache_row_stride;
    const C c = C(widen(cache[row + i * p.cache_col_stride]));
    const C s = C(widen(cache[row + (half + i) * p.cache_col_stride]));
    T* base = is_q ? q : k;
    const i64 head_stride = is_q ? p.q_head_stride : p.k_head_stride;
    const i64 dim_stride = is_q ? p.q_dim_stride : p.k_dim_stride;
    x += (is_q ? head : head - p.q_heads) * head_stride;
    const bool neox = p.style == abi::kRotaryHalf;
    const i64 e1 = x + (neox ? i : 2 * i) * dim_stride;
    const i64 e2 = x + (neox ? i + half : 2 * i + 1) * dim_stride;
    const C x1 = widen(base[e1]), x2 = widen(base[e2]);
    base[e1] = Narrow<T>::from(x1 * c - x2 * s);
    base[e2] = Narrow<T>::from(x2 * c + x1 * s);
  }
}

template <typename T, typename Cache>
void launch_cache(const abi::RotaryParams& p, const GpuLaunch& l) {
  const i64 work = p.tokens * (p.q_heads + p.k_heads) * (p.rotary_dim / 2);
  const i64 wanted = (work + kRotaryBlock - 1) / kRotaryBlock;
  const unsigned blocks = unsigned(wanted < kMaxBlocks ? wanted : kMaxBlocks);
  const Stream st = static_cast<Stream>(l.stream);
  T* q = static_cast<T*>(l.buffers[0].address);
  T* k = static_cast<T*>(l.buffers[1].address);  // null without k: never read
  const auto* cache = static_cast<const Cache*>(l.buffers[3].address);
  if (p.pos_dtype == kInt64)
    rotary_kernel<T, Cache, long long><<<blocks, kRotaryBlock, 0, st>>>(
        p, q, k, static_cast<const long long*>(l.buffers[2].address), cache, l.fault);
  else
    rotary_kernel<T, Cache, int><<<blocks, kRotaryBlock, 0, st>>>(
        p, q, k, static_cast<const int*>(l.buffers[2].address), cache, l.fault);
}

// The cache is float32 or T (rotary_family.cpp's validate).
template <typename T>
void launch_dtype(const abi::RotaryParams& p, const GpuLaunch& l) {
  if (p.cache_dtype == kFloat32)
    launch_cache<T, float>(p, l);
  else
    launch_cache<T, T>(p, l);
}

}  // namespace

ElementwiseLaunchResult launch_family(const abi::RotaryParams& p, const GpuLaunch& l) {
  ElementwiseLaunchResult result;
  result.call = "rotary launch";
  result.path = ElementwisePath::kGeneric;
  if (p.tokens == 0 || p.q_heads + p.k_heads == 0) return result;
  switch (p.dtype) {
    case kFloat16:
      launch_dtype<half_t>(p, l);
      break;
    case kBFloat16:
      launch_dtype<bfloat16_t>(p, l);
      break;
    case kFloat32:
      launch_cache<float, float>(p, l);
      break;
    default:
      launch_dtype<double>(p, l);
      break;
  }
  result.error = int(last_launch_error());
  return result;
}

}  // namespace nbx::gpu
