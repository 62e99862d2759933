// The "softmax" kernel family for CUDA and HIP (kernel ABI: abi::SoftmaxParams, semantics
// backends/host/host_softmax.cpp).
//
// A group of `row_tile` threads (a power of two, at most one block) handles one row. Pass 1
// folds the row into an online (max, sum) state — the sum is rescaled whenever the maximum
// grows, so one read suffices — and the group merges states through a shared-memory tree
// (any warp or wavefront size). Pass 2 writes exp(x - max) / sum or (x - max) - log(sum).
// The one-pass variant keeps the scaled row in shared memory during pass 1, so pass 2 does
// not read the input again; the looped variant reads it twice. PyTorch's special values
// follow from the state: a kept +inf, NaN, or only -inf values make the maximum non-finite
// and every kept element NaN; a fully masked row gives 0 (softmax) or -inf (log_softmax).
// Rows of stride 1 take softmax_rows_fast.cu instead when NBX_GPU_ROWS=fast.
#include <string>

#include "core/errors.hpp"
#include "kernels/gpu/compensated_sum.cuh"
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"
#include "kernels/gpu/softmax_rows_fast.hpp"

namespace nbx::gpu {
namespace {

constexpr int kSoftmaxBlock = 256;
// Static plus dynamic shared memory must stay within the 48 KiB every device grants
// without an opt-in; the tree's scratch takes its share first.
constexpr int kSharedBudget = 48 * 1024;

NBX_GPU_INLINE float exp_of(float x) {
  return expf(x);
}
NBX_GPU_INLINE double exp_of(double x) {
  return exp(x);
}
NBX_GPU_INLINE float log_of(float x) {
  return logf(x);
}
NBX_GPU_INLINE double log_of(double x) {
  return log(x);
}

// The running maximum, the compensated sum of exp(x - m) over kept elements, and whether
// any element was kept.
template <typename C>
struct Online {
  C m;
  C s;
  C comp;
  int kept;
};

// Compensated: float32 sums of 128k terms keep float32 accuracy.
template <typename C>
NBX_GPU_INLINE void add_term(Online<C>& a, C x, C x_comp) {
  two_sum_add(a.s, a.comp, x, x_comp);
}

template <typename C>
NBX_GPU_INLINE void fold(Online<C>& a, C x) {
  a.kept = 1;
  if (x != x) a.m = x;                          // NaN: the row's answer is NaN
  if (a.m != a.m || x == C(-INFINITY)) return;  // exp(-inf - m) adds nothing
  if (x > a.m) {
    const C f = exp_of(a.m - x);
    a.s *= f;
    a.comp *= f;
    a.m = x;
    add_term(a, C(1), C(0));
  } else {
    add_term(a, exp_of(x - a.m), C(0));
  }
}

template <typename C>
NBX_GPU_INLINE Online<C> merge(Online<C> a, const Online<C>& b) {
  a.kept |= b.kept;
  if (a.m != a.m || b.m != b.m) {
    a.m = a.m != a.m ? a.m : b.m;
    return a;
  }
  const C m = a.m > b.m ? a.m : b.m;
  if (m == C(-INFINITY)) return a;  // both sums are empty
  const C fa = exp_of(a.m - m), fb = exp_of(b.m - m);
  a.s *= fa;
  a.comp *= fa;
  a.m = m;
  add_term(a, b.s * fb, b.comp * fb);
  return a;
}

template <typename C>
NBX_GPU_INLINE Online<C> group_merge(Online<C> v, Online<C>* scratch, int lane, int group) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int half = group / 2; half > 0; half /= 2) {
    if (lane < half)
      scratch[threadIdx.x] = merge(scratch[threadIdx.x], scratch[threadIdx.x + half]);
    __syncthreads();
  }
  const Online<C> r = scratch[threadIdx.x - lane];
  __syncthreads();
  return r;
}

template <typename C, bool kOnePass>
__global__ void __launch_bounds__(kSoftmaxBlock)
    softmax_kernel(const abi::SoftmaxParams p, void* out, const void* in,
                   const unsigned char* mask) {
  __shared__ Online<C> scratch[kSoftmaxBlock];
  extern __shared__ __align__(16) unsigned char row_cache_bytes[];
  const int group = p.row_tile;
  const int lane = int(threadIdx.x) % group;
  const i64 groups_per_block = i64(blockDim.x) / group;
  C* cache = reinterpret_cast<C*>(row_cache_bytes) + (threadIdx.x / group) * p.row_len;
  const i64 first_row = i64(blockIdx.x) * groups_per_block + threadIdx.x / group;
  const i64 row_step = i64(gridDim.x) * groups_per_block;
  const i64 rounds = (p.rows + row_step - 1) / row_step;  // equal for all: barriers match
  const bool log_out = p.op == abi::kSoftmax_log_softmax;
  const C scale = C(p.scale);
  for (i64 round = 0; round < rounds; ++round) {
    const i64 row = first_row + round * row_step;
    const bool active = row < p.rows;
    i64 rest = active ? row : 0, in_off = p.in_offset, out_off = p.out_offset,
        mask_off = p.mask_offset;
    for (int d = p.outer_ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.outer_sizes[d]);
      in_off += c * p.in_outer_strides[d];
      out_off += c * p.out_outer_strides[d];
      mask_off += c * p.mask_outer_strides[d];
    }
    auto excluded = [&](i64 k) { return mask && mask[mask_off + k * p.mask_row_stride] != 0; };
    Online<C> st{C(-INFINITY), C(0), C(0), 0};
    if (active)
      for (i64 k = lane; k < p.row_len; k += group) {
        const C x = scale * load_as<C>(in, p.in_dtype, in_off + k * p.in_row_stride);
        if constexpr (kOnePass) cache[k] = x;
        if (!excluded(k)) fold(st, x);
      }
    st = group_merge(st, scratch, lane, group);
    if (!active) continue;
    const C m = st.m, sum = compensated_total(st.s, st.comp);
    const bool nan_row = st.kept && !(m > C(-INFINITY) && m < C(INFINITY));
    const C log_sum = log_of(sum);
    for (i64 k = lane; k < p.row_len; k += group) {
      C y;
      if (!st.kept || excluded(k)) {
        y = log_out ? C(-INFINITY) : C(0);
      } else if (nan_row) {
        y = C(NAN);
      } else {
        C x;
        if constexpr (kOnePass)
          x = cache[k];  // written by this same thread in pass 1
        else
          x = scale * load_as<C>(in, p.in_dtype, in_off + k * p.in_row_stride);
        y = log_out ? (x - m) - log_sum : exp_of(x - m) / sum;
      }
      store_as<C>(out, p.out_dtype, out_off + k * p.out_row_stride, y);
    }
  }
}

// The wrapper's one-pass rule holds here (kernel_abi_families.hpp).
static_assert(kSoftmaxBlock <= abi::kSoftmaxMaxThreads);
static_assert(sizeof(Online<double>) <= abi::kSoftmaxScratchPerThread);
static_assert(kSharedBudget >= abi::kSoftmaxSharedCap);

template <typename C>
void enqueue(const abi::SoftmaxParams& q, const BoundBuffer* buffers, const ElementwiseOptions& o,
             Stream s) {
  const int group = q.row_tile;
  i64 rows_per_block = kSoftmaxBlock / group;
  const i64 budget = kSharedBudget - i64(sizeof(Online<C>)) * kSoftmaxBlock;
  const i64 row_bytes = q.row_len * i64(sizeof(C));
  // The wrapper took one-pass only for rows that fit every backend's budget
  // (abi::kSoftmaxSharedCap less kSoftmaxMaxThreads × kSoftmaxScratchPerThread).
  const bool one_pass = q.variant == abi::kSoftmaxOnePass;
  if (one_pass && row_bytes > budget)
    throw Internal("softmax launch: a one-pass row of " + std::to_string(row_bytes) +
                   " bytes exceeds the kernel's shared-memory budget of " + std::to_string(budget) +
                   " bytes.");
  if (one_pass && rows_per_block * row_bytes > budget) rows_per_block = budget / row_bytes;
  const i64 wanted = (q.rows + rows_per_block - 1) / rows_per_block;
  const i64 cap = i64(o.multiprocessors > 0 ? o.multiprocessors : 1) * 32;
  const unsigned blocks = unsigned(wanted < cap ? wanted : cap);
  const unsigned threads = unsigned(rows_per_block * group);
  void* out = buffers[0].address;
  const void* in = buffers[1].address;
  const auto* mask = q.has_mask ? static_cast<const unsigned char*>(buffers[2].address) : nullptr;
  if (one_pass)
    softmax_kernel<C, true>
        <<<blocks, threads, size_t(rows_per_block * row_bytes), s>>>(q, out, in, mask);
  else
    softmax_kernel<C, false><<<blocks, threads, 0, s>>>(q, out, in, mask);
}

}  // namespace

static ElementwiseLaunchResult launch_softmax(const abi::SoftmaxParams& p,
                                              const BoundBuffer* buffers, int num_buffers,
                                              const ElementwiseOptions& options, void* stream) {
  // BackendDevice::launch validated the block (core/families/softmax_family.cpp), including
  // that the variant serves it: the variant asked for is the one that runs.
  ElementwiseLaunchResult result;
  result.call = "softmax launch";
  result.path = ElementwisePath::kGeneric;
  if (p.rows == 0 || p.row_len == 0) return result;
  if (p.variant == abi::kSoftmaxRows) {
    if (!launch_softmax_rows_fast(p, buffers, num_buffers, options, stream, result))
      throw Internal(
          "softmax launch: the contiguous-row kernel declined a launch its variant's "
          "contract (core/families/softmax_family.cpp) admits.");
    return result;
  }
  abi::SoftmaxParams q = p;
  int group = 1;
  while (group * 2 <= p.row_tile && group * 2 <= kSoftmaxBlock) group *= 2;
  q.row_tile = group;
  const Stream s = static_cast<Stream>(stream);
  if (p.accumulate_dtype == kFloat64)
    enqueue<double>(q, buffers, options, s);
  else
    enqueue<float>(q, buffers, options, s);
  result.error = int(last_launch_error());
  return result;
}

ElementwiseLaunchResult launch_family(const abi::SoftmaxParams& p, const GpuLaunch& l) {
  return launch_softmax(p, l.buffers, l.num_buffers, *l.options, l.stream);
}

}  // namespace nbx::gpu
