// The "reduce" kernel family for CUDA and HIP (kernel ABI: abi::ReduceParams, op codes
// core/reduce_op_list.inc, semantics backends/host/host_reduce.cpp).
//
// A group of `row_tile` threads (a power of two, at most one block) reduces one row: each
// thread folds the elements k = lane, lane + row_tile, … into a partial state, then the
// group combines states through a shared-memory tree. The tree works for any warp or
// wavefront size, so the same code is exact on NVIDIA (32) and AMD (64 or 32). States
// combine in a fixed order, so results are deterministic. Values are read through the
// input's strides (kept dims, then reduced dims): no permuted copy.
// The state, fold, combine and store rules are reduce_state.cuh's, shared with
// reduce_rows_fast.cu, which serves contiguous rows instead when NBX_GPU_ROWS=fast.
#include <string>

#include "core/errors.hpp"
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"
#include "kernels/gpu/reduce_rows_fast.hpp"
#include "kernels/gpu/reduce_state.cuh"

namespace nbx::gpu {
namespace {

using namespace reduce_detail;  // State, identity, fold, combine, store_result

constexpr int kReduceBlock = 256;

template <typename C>
NBX_GPU_INLINE State<C> group_reduce(int op, double p, State<C> s, State<C>* shared, int lane,
                                     int group) {
  shared[threadIdx.x] = s;
  __syncthreads();
  for (int half = group / 2; half > 0; half /= 2) {
    if (lane < half)
      shared[threadIdx.x] = combine(op, p, shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  const State<C> r = shared[threadIdx.x - lane];
  __syncthreads();  // the buffer is reused by the next pass
  return r;
}

template <typename C>
__global__ void __launch_bounds__(kReduceBlock)
    reduce_kernel(const abi::ReduceParams p, void* out, const void* in, void* indices) {
  __shared__ State<C> shared[kReduceBlock];
  const int group = p.row_tile;
  const int lane = int(threadIdx.x) % group;
  const i64 groups_per_block = kReduceBlock / group;
  const i64 first_row = i64(blockIdx.x) * groups_per_block + threadIdx.x / group;
  const i64 row_step = i64(gridDim.x) * groups_per_block;
  // Every thread runs the same number of iterations so that the group's barriers match.
  const i64 rounds = (p.rows + row_step - 1) / row_step;
  for (i64 round = 0; round < rounds; ++round) {
    const i64 row = first_row + round * row_step;
    const bool active = row < p.rows;
    i64 rest = active ? row : 0, in_base = p.in_offset, out_off = p.out_offset,
        idx_off = p.index_offset;
    for (int d = p.out_ndim - 1; d >= 0; --d) {
      const i64 c = next_coordinate(rest, p.out_sizes[d]);
      in_base += c * p.in_kept_strides[d];
      out_off += c * p.out_strides[d];
      idx_off += c * p.index_strides[d];
    }
    auto element = [&](i64 k) {
      i64 r = k, off = in_base;
      for (int d = p.red_ndim - 1; d >= 0; --d)
        off += next_coordinate(r, p.red_sizes[d]) * p.in_red_strides[d];
      return load_as<C>(in, p.in_dtype, off);
    };
    State<C> s = identity<C>(p.op, p.attr);
    if (active)
      for (i64 k = lane; k < p.row_len; k += group) s = fold(p.op, p.attr, s, element(k), k);
    s = group_reduce(p.op, p.attr, s, shared, lane, group);
    // Second passes over the row: var/std sum squared deviations from the mean (two
    // passes, as the host does, rather than Welford's running update); logsumexp sums
    // exp(x - max), shifted by the maximum unless it is infinite (NaN: the answer is NaN).
    const bool with_mean = p.op == abi::kReduce_var_mean || p.op == abi::kReduce_std_mean;
    if (p.op == abi::kReduce_var || p.op == abi::kReduce_std || with_mean ||
        p.op == abi::kReduce_logsumexp) {
      if constexpr (IsFloatCompute<C>::value) {
        const bool lse = p.op == abi::kReduce_logsumexp;
        const C m = lse ? s.v : total(s) / C(p.row_len);
        // Only logsumexp drops an infinite shift; var/std keep it (inf - inf = NaN, as the host).
        const C shift = (lse && isinf(m)) ? C(0) : m;
        State<C> t = identity<C>(abi::kReduce_sum, 0);
        if (active)
          for (i64 k = lane; k < p.row_len; k += group) {
            const C d = element(k) - shift;
            add_compensated(t, lse ? C(exp(d)) : d * d, C(0));
          }
        t = group_reduce(abi::kReduce_sum, 0.0, t, shared, lane, group);
        s.v = lse ? (nan_value(m) ? m : C(log(total(t)) + shift)) : total(t);
        if (with_mean) s.comp = m;  // var_mean/std_mean: the mean, for store_result
      }
    }
    if (!active || lane != 0) continue;
    store_result(p, s, out, out_off, indices, idx_off);
  }
}

}  // namespace

static ElementwiseLaunchResult launch_reduce(const abi::ReduceParams& p, const BoundBuffer* buffers,
                                             int num_buffers, const ElementwiseOptions& options,
                                             void* stream) {
  // BackendDevice::launch validated the block (core/families/reduce_family.cpp), including
  // that the variant serves it: the variant asked for is the one that runs.
  ElementwiseLaunchResult result;
  if (p.rows == 0) return result;
  if (p.variant == abi::kReduceRows) {
    if (!launch_reduce_rows_fast(p, buffers, num_buffers, options, stream, result))
      throw Internal(
          "reduce launch: the contiguous-row kernel declined a launch its variant's "
          "contract (core/families/reduce_family.cpp) admits.");
    return result;
  }
  // The group size: the wrapper's row_tile, rounded down to a power of two in [1, block].
  abi::ReduceParams q = p;
  int group = 1;
  while (group * 2 <= p.row_tile && group * 2 <= kReduceBlock) group *= 2;
  q.row_tile = group;
  const i64 groups = kReduceBlock / group;
  const i64 wanted = (p.rows + groups - 1) / groups;
  const i64 cap = i64(options.multiprocessors > 0 ? options.multiprocessors : 1) * 32;
  const unsigned blocks = unsigned(wanted < cap ? wanted : cap);
  const Stream s = static_cast<Stream>(stream);
  void* out = buffers[0].address;
  const void* in = buffers[1].address;
  void* idx = num_buffers > 2 ? buffers[2].address : nullptr;
  switch (p.accumulate_dtype) {
    case kFloat16:
    case kBFloat16:
    case kFloat32:
      reduce_kernel<float><<<blocks, kReduceBlock, 0, s>>>(q, out, in, idx);
      break;
    case kFloat64:
      reduce_kernel<double><<<blocks, kReduceBlock, 0, s>>>(q, out, in, idx);
      break;
    default:
      reduce_kernel<i64><<<blocks, kReduceBlock, 0, s>>>(q, out, in, idx);
      break;
  }
  result.error = int(last_launch_error());
  result.call = "reduce launch";
  result.path = ElementwisePath::kGeneric;
  return result;
}

ElementwiseLaunchResult launch_family(const abi::ReduceParams& p, const GpuLaunch& l) {
  return launch_reduce(p, l.buffers, l.num_buffers, *l.options, l.stream);
}

}  // namespace nbx::gpu
