// launch_elementwise: validation, then the choice between the fast paths and the generic
// kernel. The choice depends only on the parameter block, the buffer addresses and the
// options, so it is the same on CUDA and HIP.
#include <cstdint>
#include <vector>

#include "core/errors.hpp"
#include "kernels/gpu/elementwise_batch.hpp"
#include "kernels/gpu/elementwise_fast.cuh"
#include "kernels/gpu/elementwise_generic.hpp"
#include "kernels/gpu/elementwise_launch.hpp"
#include "kernels/gpu/elementwise_plan.hpp"
#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {
namespace {

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
    // A cast's math is the conversion itself: its compute dtype does not select a kernel.
    if (e->op == p.op && e->in_dtype == in_dtype && e->out_dtype == p.out.dtype &&
        (e->compute_dtype == p.compute_dtype || p.op == abi::kOp_copy))
      return e;
  return nullptr;
}

}  // namespace

ElementwiseLaunchResult launch_elementwise(const abi::ElementwiseParams& p,
                                           const BoundBuffer* buffers, int num_buffers,
                                           abi::FaultRecord* fault,
                                           const ElementwiseOptions& options, void* stream,
                                           ElementwiseBatch* batch) {
  // BackendDevice::launch validated the block (core/families/elementwise_family.cpp).
  (void)num_buffers;
  ElementwiseLaunchResult result;
  if (p.numel == 0) return result;
  // The wrapper chose the variant (core/ops/variant_plan.cpp: batched for launches of at
  // most the device's batch size); the device offers batched only with a batch.
  if (p.variant == abi::kElementwiseBatched) {
    if (!batch) throw Internal("elementwise: a batched launch reached a device without a batch.");
    return batch->append(p, buffers);
  }
  if (batch) {
    // This launch goes straight to the stream: what was queued before it goes first.
    result = batch->flush();
    if (result.error != 0) return result;
  }
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
      const void* addresses[1 + abi::kMaxElementwiseInputs] = {L.ptr.out, L.ptr.in[0], L.ptr.in[1],
                                                               L.ptr.in[2]};
      L.view = choose_path(p, collapse_dimensions(p), e->vec, e->in_bytes, addresses, options);
      if (L.view.path != ElementwisePath::kNone) {
        result.error = int(e->launch(L));
        result.call = "elementwise fast-path launch";
        result.path = L.view.path;
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

ElementwiseLaunchResult launch_family(const abi::ElementwiseParams& p, const GpuLaunch& l) {
  return launch_elementwise(p, l.buffers, l.num_buffers, l.fault, *l.options, l.stream, l.batch);
}

}  // namespace nbx::gpu
