// launch_elementwise: validation, then the choice between the fast paths and the generic
// kernel. The choice depends only on the parameter block, the buffer addresses and the
// options, so it is the same on CUDA and HIP.
#include <cstdint>
#include <vector>

#include "kernels/gpu/elementwise_fast.cuh"
#include "kernels/gpu/elementwise_generic.hpp"
#include "kernels/gpu/elementwise_launch.hpp"
#include "kernels/gpu/elementwise_plan.hpp"

namespace nbx::gpu {
namespace {

// The default per-block shared memory every CUDA and HIP device grants without opt-in.
constexpr std::size_t kSharedMemoryWithoutOptIn = 48 * 1024;

// All fast entries, gathered once; a linear scan of ~70 entries costs well under 100 ns.
struct FastIndex {
  std::vector<const FastEntry*> all;
};

const FastIndex& fast_index() {
  static const FastIndex index = [] {
    FastIndex ix;
    for (FastTable t : {fast_table_16bit_and_float(), fast_table_wide()})
      for (int i = 0; i < t.count; ++i) ix.all.push_back(&t.entries[i]);
    return ix;
  }();
  return index;
}

const FastEntry* find_fast(const abi::ElementwiseParams& p) {
  int in_dtype = -1;
  for (int k = 0; k < p.num_inputs; ++k) {
    if (p.in[k].is_scalar) continue;
    if (in_dtype >= 0 && p.in[k].dtype != in_dtype) return nullptr;  // mixed (where's bool)
    in_dtype = p.in[k].dtype;
  }
  if (in_dtype < 0) return nullptr;  // all-scalar inputs: rare, the generic kernel does it
  for (const FastEntry* e : fast_index().all)
    if (e->op == p.op && e->in_dtype == in_dtype && e->out_dtype == p.out.dtype &&
        e->compute_dtype == p.compute_dtype)
      return e;
  return nullptr;
}

bool aligned(const void* address, std::int64_t bytes) {
  return reinterpret_cast<std::uintptr_t>(address) % std::uintptr_t(bytes) == 0;
}

// Fills the path and the 2-D view of `L`; kNone when no fast path applies.
ElementwisePath choose_path(const abi::ElementwiseParams& p, const ElementwisePlan& plan,
                            const FastEntry& e, const ElementwiseOptions& options, FastLaunch& L) {
  const int out_bytes = dtype_bytes(p.out.dtype);
  auto access_bytes = [&](int k) {
    return std::int64_t(e.vec) * (k == 0 ? out_bytes : e.in_bytes);
  };
  auto address = [&](int k) -> const void* { return k == 0 ? L.ptr.out : L.ptr.in[k - 1]; };
  bool flat = plan.ndim <= 1;
  for (int k = 0; flat && k < plan.operands; ++k)
    if (plan.tensor[k] && plan.ndim == 1 && plan.strides[k][0] != 1) flat = false;
  if (flat) {
    for (int k = 0; k < plan.operands; ++k)
      if (plan.tensor[k] && !aligned(address(k), access_bytes(k))) return ElementwisePath::kNone;
    return ElementwisePath::kContiguous;
  }
  if (plan.ndim > 2) return ElementwisePath::kNone;
  // A 1-D view with a broadcast operand is one row of a 2-D view.
  const bool one_d = plan.ndim == 1;
  L.rows = one_d ? 1 : plan.sizes[0];
  L.cols = one_d ? plan.sizes[0] : plan.sizes[1];
  auto s0 = [&](int k) { return one_d ? std::int64_t(0) : plan.strides[k][0]; };
  auto s1 = [&](int k) { return one_d ? plan.strides[k][0] : plan.strides[k][1]; };
  if (s1(0) != 1) return ElementwisePath::kNone;
  L.out_stride0 = s0(0);
  bool rows_ok = L.cols % e.vec == 0 && (L.out_stride0 * out_bytes) % access_bytes(0) == 0 &&
                 aligned(address(0), access_bytes(0));
  bool transposed = false;
  for (int k = 1; k < plan.operands; ++k) {
    L.in_stride0[k - 1] = plan.tensor[k] ? s0(k) : 0;
    L.in_stride1[k - 1] = plan.tensor[k] ? s1(k) : 0;
    if (!plan.tensor[k]) continue;
    if (s1(k) > 1) rows_ok = false;
    if (s1(k) == 1 &&
        ((s0(k) * e.in_bytes) % access_bytes(k) != 0 || !aligned(address(k), access_bytes(k))))
      rows_ok = false;
    if (s0(k) == 1 && s1(k) > 1) transposed = true;
  }
  if (rows_ok) return ElementwisePath::kRows;
  if (!transposed) return ElementwisePath::kNone;
  L.tile = options.tile > 0 ? options.tile : options.warp_size;
  const std::size_t smem = std::size_t(p.num_inputs) * L.tile * (L.tile + 1) * e.in_bytes;
  if (smem > kSharedMemoryWithoutOptIn) return ElementwisePath::kNone;
  return ElementwisePath::kTiled;
}

}  // namespace

ElementwiseLaunchResult launch_elementwise(const abi::ElementwiseParams& p,
                                           const BoundBuffer* buffers, int num_buffers,
                                           abi::FaultRecord* fault,
                                           const ElementwiseOptions& options, void* stream) {
  validate_elementwise(p, buffers, num_buffers);
  ElementwiseLaunchResult result;
  if (p.numel == 0) return result;
  const Stream s = static_cast<Stream>(stream);
  if (!options.generic_only) {
    if (const FastEntry* e = find_fast(p)) {
      FastLaunch L{};
      L.params = &p;
      L.stream = s;
      L.ptr.fault = fault;
      L.ptr.out = operand_address(p, buffers, 0);
      for (int k = 0; k < p.num_inputs; ++k)
        L.ptr.in[k] = p.in[k].is_scalar ? nullptr : operand_address(p, buffers, 1 + k);
      const ElementwisePlan plan = collapse_dimensions(p);
      L.path = choose_path(p, plan, *e, options, L);
      if (L.path != ElementwisePath::kNone) {
        result.error = int(e->launch(L));
        result.call = "elementwise fast-path launch";
        result.path = L.path;
        return result;
      }
    }
  }
  GenericPointers ptr{};
  ptr.out = buffers[0].address;
  for (int k = 0; k < p.num_inputs; ++k) ptr.in[k] = buffers[1 + k].address;
  ptr.fault = fault;
  result.error = int(launch_generic(p, ptr, options.multiprocessors, s));
  result.call = "elementwise generic launch";
  result.path = ElementwisePath::kGeneric;
  return result;
}

}  // namespace nbx::gpu
