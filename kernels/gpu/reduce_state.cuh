// The semantics of the CUDA/HIP "reduce" family, shared by its kernels (reduce_kernels.cu,
// the general one, and reduce_rows_fast.cu, contiguous rows): a reduction's state, its
// identity, how an element folds in, how two partial states combine and how the final state
// is written. Written once so both kernels give the host's answers (backends/host/
// host_reduce.cpp): NaN propagation, the first index among ties, compensated float sums,
// int64 wrap-around.
#pragma once

#include "core/kernel_abi.hpp"
#include "kernels/gpu/compensated_sum.cuh"
#include "kernels/gpu/elementwise_values.cuh"

namespace nbx::gpu::reduce_detail {

// Everything a reduction carries: a value (sum, product, extreme, count…), the running
// compensation of a floating-point sum, and the index of an extreme. aminmax keeps the
// maximum in v, the minimum in comp and idx >= 0 once it holds an element; nanmean counts
// its non-NaN elements in idx.
template <typename C>
struct State {
  C v;
  C comp;
  i64 idx;
};

// Float sums are compensated (compensated_sum.cuh); integer sums wrap like int64.
template <typename C>
NBX_GPU_INLINE void add_compensated(State<C>& a, C x, C x_comp) {
  if constexpr (IsFloatCompute<C>::value) {
    two_sum_add(a.v, a.comp, x, x_comp);
  } else {
    a.v = i64((unsigned long long)a.v + (unsigned long long)x);
  }
}
template <typename C>
NBX_GPU_INLINE C total(const State<C>& s) {
  if constexpr (IsFloatCompute<C>::value) return compensated_total(s.v, s.comp);
  return s.v + s.comp;
}

template <typename C>
NBX_GPU_INLINE C absolute(C x) {
  if constexpr (IsFloatCompute<C>::value) {
    return fabs(x);
  } else {
    return x < 0 ? -x : x;
  }
}

// The state of an empty partial for `op` (the identity of its combine).
template <typename C>
NBX_GPU_INLINE State<C> identity(int op, double p) {
  State<C> s{C(0), C(0), -1};
  if (op == abi::kReduce_prod || op == abi::kReduce_all) s.v = C(1);
  if (op == abi::kReduce_nanmean) s.idx = 0;
  if constexpr (IsFloatCompute<C>::value) {
    if (op == abi::kReduce_norm && p < 0 && isinf(p)) s.v = C(INFINITY);
    if (op == abi::kReduce_logsumexp) s.v = C(-INFINITY);
  }
  return s;
}

template <typename C>
NBX_GPU_INLINE bool nan_value(C x) {
  return x != x;
}

// Extremes: the first NaN wins; otherwise the larger (smaller) value, then the smaller index.
template <typename C>
NBX_GPU_INLINE bool better_extreme(C v, i64 i, C bv, i64 bi, bool want_max) {
  if (bi < 0) return i >= 0;
  if (i < 0) return false;
  const bool vn = nan_value(v), bn = nan_value(bv);
  if (vn || bn) return vn && (!bn || i < bi);
  if (v == bv) return i < bi;
  return want_max ? v > bv : v < bv;
}

// NaN propagates; otherwise the larger (`larger`) or the smaller of a and b.
template <typename C>
NBX_GPU_INLINE C pick_extreme(C a, C b, bool larger) {
  if (nan_value(a)) return a;
  if (nan_value(b)) return b;
  return larger == (b > a) ? b : a;
}

template <typename C>
NBX_GPU_INLINE State<C> combine(int op, double p, State<C> a, const State<C>& b) {
  switch (op) {
    case abi::kReduce_sum:
    case abi::kReduce_mean:
    case abi::kReduce_nansum:
    case abi::kReduce_var:  // both passes of var/std are sums
    case abi::kReduce_std:
    case abi::kReduce_var_mean:
    case abi::kReduce_std_mean:
      add_compensated(a, b.v, b.comp);
      return a;
    case abi::kReduce_nanmean:
      add_compensated(a, b.v, b.comp);
      a.idx += b.idx;
      return a;
    case abi::kReduce_aminmax:
      if (b.idx < 0) return a;
      if (a.idx < 0) return b;
      a.v = pick_extreme(a.v, b.v, true);
      a.comp = pick_extreme(a.comp, b.comp, false);
      return a;
    case abi::kReduce_prod:
      if constexpr (IsFloatCompute<C>::value) {
        a.v *= b.v;
      } else {
        a.v = i64((unsigned long long)a.v * (unsigned long long)b.v);
      }
      return a;
    case abi::kReduce_amax:
    case abi::kReduce_argmax:
    case abi::kReduce_max_with_index:
    case abi::kReduce_amin:
    case abi::kReduce_argmin:
    case abi::kReduce_min_with_index: {
      const bool want_max =
          op == abi::kReduce_amax || op == abi::kReduce_argmax || op == abi::kReduce_max_with_index;
      return better_extreme(b.v, b.idx, a.v, a.idx, want_max) ? b : a;
    }
    case abi::kReduce_norm:
      if (isinf(p)) {
        if (nan_value(a.v) || nan_value(b.v))
          a.v = nan_value(a.v) ? a.v : b.v;
        else
          a.v = (p > 0) == (b.v > a.v) ? b.v : a.v;
      } else {
        a.v += b.v;
      }
      return a;
    case abi::kReduce_logsumexp:  // pass 1 keeps the maximum (NaN wins), pass 2 sums in v
      if (nan_value(a.v) || nan_value(b.v))
        a.v = nan_value(a.v) ? a.v : b.v;
      else
        a.v = b.v > a.v ? b.v : a.v;
      return a;
    case abi::kReduce_any:
      a.v = (a.v != C(0) || b.v != C(0)) ? C(1) : C(0);
      return a;
    case abi::kReduce_all:
      a.v = (a.v != C(0) && b.v != C(0)) ? C(1) : C(0);
      return a;
    default:
      a.v += b.v;
      return a;  // count_nonzero
  }
}

// Folds element x (position k in the row) into a thread's state.
template <typename C>
NBX_GPU_INLINE State<C> fold(int op, double p, State<C> s, C x, i64 k) {
  State<C> e{x, C(0), k};
  switch (op) {
    case abi::kReduce_norm: {
      const C a = absolute(x);
      if (isinf(p))
        e.v = a;
      else if (p == 0)
        e.v = a != C(0) ? C(1) : C(0);
      else if (p == 1)
        e.v = a;
      else if (p == 2)
        e.v = a * a;
      else
        e.v = C(pow(double(a), p));
      return combine(op, p, s, e);
    }
    case abi::kReduce_any:
    case abi::kReduce_all:
    case abi::kReduce_count_nonzero:
      e.v = x != C(0) ? C(1) : C(0);
      return combine(op, p, s, e);
    case abi::kReduce_nansum:
    case abi::kReduce_nanmean:
      e.idx = nan_value(x) ? 0 : 1;
      if (nan_value(x)) e.v = C(0);
      return combine(op, p, s, e);
    case abi::kReduce_aminmax:
      e.comp = x;
      return combine(op, p, s, e);
    default:
      return combine(op, p, s, e);
  }
}

// Writes a row's final state: out[out_off] (and the index of an extreme, or the second
// output of aminmax and var_mean/std_mean, to indices[idx_off]). var/std/logsumexp/norm
// expect s.v to hold their second pass's result; var_mean/std_mean also s.comp their mean.
template <typename C>
NBX_GPU_INLINE void store_result(const abi::ReduceParams& p, const State<C>& s, void* out,
                                 i64 out_off, void* indices, i64 idx_off) {
  const C n = C(p.row_len);
  switch (p.op) {
    case abi::kReduce_mean:
      store_as<C>(out, p.out_dtype, out_off, total(s) / n);
      break;
    case abi::kReduce_sum:
      store_as<C>(out, p.out_dtype, out_off, total(s));
      break;
    case abi::kReduce_argmax:
    case abi::kReduce_argmin:
      store_as<i64>(out, p.out_dtype, out_off, s.idx < 0 ? 0 : s.idx);
      break;
    case abi::kReduce_max_with_index:
    case abi::kReduce_min_with_index:
      store_as<C>(out, p.out_dtype, out_off, s.v);
      store_as<i64>(indices, kInt64, idx_off, s.idx < 0 ? 0 : s.idx);
      break;
    case abi::kReduce_var:
    case abi::kReduce_std:
    case abi::kReduce_var_mean:
    case abi::kReduce_std_mean: {
      const double denom = double(p.row_len) - p.attr;
      const C var = s.v / C(denom > 0 ? denom : 0.0);
      const bool root = p.op == abi::kReduce_std || p.op == abi::kReduce_std_mean;
      store_as<C>(out, p.out_dtype, out_off, root ? C(sqrt(double(var))) : var);
      if (p.op == abi::kReduce_var_mean || p.op == abi::kReduce_std_mean)
        store_as<C>(indices, p.out_dtype, idx_off, s.comp);
      break;
    }
    case abi::kReduce_nansum:
      store_as<C>(out, p.out_dtype, out_off, total(s));
      break;
    case abi::kReduce_nanmean:  // no element counted: 0 / 0, NaN
      store_as<C>(out, p.out_dtype, out_off, total(s) / C(s.idx));
      break;
    case abi::kReduce_aminmax:
      store_as<C>(out, p.out_dtype, out_off, s.comp);
      store_as<C>(indices, p.out_dtype, idx_off, s.v);
      break;
    case abi::kReduce_norm: {
      C v = isinf(p.attr) ? s.v : total(s);
      if (!isinf(p.attr) && p.attr == 2)
        v = C(sqrt(double(v)));
      else if (!isinf(p.attr) && p.attr != 0 && p.attr != 1)
        v = C(pow(double(v), 1.0 / p.attr));
      store_as<C>(out, p.out_dtype, out_off, v);
      break;
    }
    default:
      store_as<C>(out, p.out_dtype, out_off, s.v);
      break;
  }
}

}  // namespace nbx::gpu::reduce_detail
