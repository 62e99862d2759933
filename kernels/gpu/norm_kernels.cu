// The "norm" kernel family for CUDA and HIP (kernel ABI: abi::NormParams, semantics
// backends/host/host_norm.cpp): layer_norm, rms_norm, group_norm and batch_norm in
// inference, over rows of a contiguous input.
//
// A group of `row_tile` threads (a power of two, at most one block) handles one row, with
// statistics in the accumulate dtype (float32 for half types, as PyTorch). The mean and the
// biased variance take two passes, as the host does: the second sums squared deviations
// from the finished mean, which loses nothing to cancellation the way E[x²] - E[x]² does,
// and corrects for the rounding of the mean (as kernels/vulkan/norm.comp does). Sums are
// compensated and combined through a shared-memory tree (any warp size), in a fixed order,
// so results are deterministic. batch_norm reads running statistics instead.
//
// Contiguous layer_norm/rms_norm rows take norm_rows_fast.cu instead when the device was
// opened with NBX_GPU_ROWS=fast.
#include <string>

#include "core/errors.hpp"
#include "kernels/gpu/compensated_sum.cuh"
#include "kernels/gpu/elementwise_kernels.cuh"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"
#include "kernels/gpu/norm_rows_fast.hpp"

namespace nbx::gpu {
namespace {

constexpr int kNormBlock = 256;

template <typename C>
struct Sum {
  C v;
  C comp;
};

template <typename C>
NBX_GPU_INLINE void add(Sum<C>& a, C x, C x_comp) {
  two_sum_add(a.v, a.comp, x, x_comp);
}

template <typename C>
NBX_GPU_INLINE C group_sum(Sum<C> v, Sum<C>* scratch, int lane, int group) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int half = group / 2; half > 0; half /= 2) {
    if (lane < half) {
      Sum<C> a = scratch[threadIdx.x];
      add(a, scratch[threadIdx.x + half].v, scratch[threadIdx.x + half].comp);
      scratch[threadIdx.x] = a;
    }
    __syncthreads();
  }
  const Sum<C> r = scratch[threadIdx.x - lane];
  __syncthreads();
  return compensated_total(r.v, r.comp);
}

NBX_GPU_INLINE float inv_sqrt(float x) {
  return 1.0f / sqrtf(x);
}
NBX_GPU_INLINE double inv_sqrt(double x) {
  return 1.0 / sqrt(x);
}

struct NormPointers {
  void* out;
  const void* in;
  const void* weight;
  const void* bias;
  const void* running_mean;
  const void* running_var;
};

template <typename C>
__global__ void __launch_bounds__(kNormBlock) norm_kernel(const abi::NormParams p, NormPointers b) {
  __shared__ Sum<C> scratch[kNormBlock];
  const int group = p.row_tile;
  const int lane = int(threadIdx.x) % group;
  const i64 groups_per_block = kNormBlock / group;
  const i64 first_row = i64(blockIdx.x) * groups_per_block + threadIdx.x / group;
  const i64 row_step = i64(gridDim.x) * groups_per_block;
  const i64 rounds = (p.rows + row_step - 1) / row_step;  // equal for all: barriers match
  const C n = C(p.row_len), eps = C(p.eps);
  for (i64 round = 0; round < rounds; ++round) {
    const i64 row = first_row + round * row_step;
    const bool active = row < p.rows;
    const i64 base = (active ? row : 0) * p.row_len;
    C mean = C(0), delta = C(0), inv_std = C(1);
    if (p.op == abi::kNorm_rms_norm) {
      Sum<C> sq{C(0), C(0)};
      if (active)
        for (i64 k = lane; k < p.row_len; k += group) {
          const C v = load_as<C>(b.in, p.in_dtype, base + k);
          add(sq, v * v, C(0));
        }
      inv_std = inv_sqrt(group_sum(sq, scratch, lane, group) / n + eps);
    } else if (p.op != abi::kNorm_batch_norm) {
      Sum<C> s{C(0), C(0)};
      if (active)
        for (i64 k = lane; k < p.row_len; k += group)
          add(s, load_as<C>(b.in, p.in_dtype, base + k), C(0));
      mean = group_sum(s, scratch, lane, group) / n;
      // The corrected two-pass algorithm (Chan, Golub, LeVeque): the deviations' own sum
      // measures the rounding of `mean` (half an ulp of the mean: 3e-5 at 1000 in float32),
      // which is taken out of the variance and of every output below.
      Sum<C> sd{C(0), C(0)}, m2{C(0), C(0)};
      if (active)
        for (i64 k = lane; k < p.row_len; k += group) {
          const C d = load_as<C>(b.in, p.in_dtype, base + k) - mean;
          add(sd, d, C(0));
          add(m2, d * d, C(0));
        }
      delta = group_sum(sd, scratch, lane, group) / n;
      C var = group_sum(m2, scratch, lane, group) / n - delta * delta;
      if (var < C(0)) var = C(0);  // not max(): a NaN variance must stay NaN
      inv_std = inv_sqrt(var + eps);
    }
    if (!active) continue;
    // The channel of element k: its position (layer/rms), or its channel within the
    // row's group (group_norm) or sample (batch_norm).
    const i64 channel_base =
        p.op == abi::kNorm_group_norm ? (row % p.groups) * (p.channels / p.groups) : 0;
    const bool by_channel = p.op == abi::kNorm_group_norm || p.op == abi::kNorm_batch_norm;
    for (i64 k = lane; k < p.row_len; k += group) {
      const i64 c = by_channel ? channel_base + k / p.inner : k;
      const C v = load_as<C>(b.in, p.in_dtype, base + k);
      C y;
      if (p.op == abi::kNorm_batch_norm) {
        const C rm = load_as<C>(b.running_mean, p.param_dtype, c);
        const C rv = load_as<C>(b.running_var, p.param_dtype, c);
        y = (v - rm) / C(sqrt(rv + eps));
      } else {
        y = ((v - mean) - delta) * inv_std;
      }
      if (b.weight) y *= load_as<C>(b.weight, p.param_dtype, c);
      if (b.bias) y += load_as<C>(b.bias, p.param_dtype, c);
      store_as<C>(b.out, p.out_dtype, base + k, y);
    }
  }
}

}  // namespace

static ElementwiseLaunchResult launch_norm(const abi::NormParams& p, const BoundBuffer* buffers,
                                           int num_buffers, const ElementwiseOptions& options,
                                           void* stream) {
  // BackendDevice::launch validated the block (core/families/norm_family.cpp), including
  // that the variant serves it: the variant asked for is the one that runs.
  const bool batch = p.op == abi::kNorm_batch_norm;
  ElementwiseLaunchResult result;
  result.call = "norm launch";
  result.path = ElementwisePath::kGeneric;
  if (p.rows == 0 || p.row_len == 0) return result;
  auto optional = [&](int k, bool wanted) -> const void* {
    return wanted ? buffers[k].address : nullptr;
  };
  NormPointers b{buffers[0].address,           buffers[1].address, optional(2, p.has_weight != 0),
                 optional(3, p.has_bias != 0), optional(4, batch), optional(5, batch)};
  if (p.variant == abi::kNormRows) {
    if (!launch_norm_rows_fast(p, buffers, num_buffers, options, stream, result))
      throw Internal(
          "norm launch: the contiguous-row kernel declined a launch its variant's "
          "contract (core/families/norm_family.cpp) admits.");
    return result;
  }
  abi::NormParams q = p;
  int group = 1;
  while (group * 2 <= p.row_tile && group * 2 <= kNormBlock) group *= 2;
  q.row_tile = group;
  const i64 groups = kNormBlock / group;
  const i64 wanted = (p.rows + groups - 1) / groups;
  const i64 cap = i64(options.multiprocessors > 0 ? options.multiprocessors : 1) * 32;
  const unsigned blocks = unsigned(wanted < cap ? wanted : cap);
  const Stream s = static_cast<Stream>(stream);
  if (p.accumulate_dtype == kFloat64)
    norm_kernel<double><<<blocks, kNormBlock, 0, s>>>(q, b);
  else
    norm_kernel<float><<<blocks, kNormBlock, 0, s>>>(q, b);
  result.error = int(last_launch_error());
  return result;
}

ElementwiseLaunchResult launch_family(const abi::NormParams& p, const GpuLaunch& l) {
  return launch_norm(p, l.buffers, l.num_buffers, *l.options, l.stream);
}

}  // namespace nbx::gpu
