// The "attention" kernel family's CUDA/HIP launcher (kernel ABI: abi::AttentionParams): the
// block's variant, validated and served (core/families/attention_family.cpp), to its kernels
// — flash_mma (attention_flash_mma.cu, CUDA sm_80+), flash (attention_flash.cu) and split_kv
// (attention_split_kv.cu). HIP offers no flash_mma (backend_variants.hpp), so its build has
// none to call.
#include "kernels/gpu/attention_common.cuh"

namespace nbx::gpu {

ElementwiseLaunchResult launch_family(const abi::AttentionParams& p, const GpuLaunch& l) {
  ElementwiseLaunchResult result;
  result.call = "attention launch";
  result.path = ElementwisePath::kGeneric;
  if (p.batch == 0 || p.q_heads == 0 || p.q_len == 0) return result;
  Error e = kSuccess;
  switch (p.variant) {
#if !NBX_GPU_HIP
    case abi::kAttentionFlashMma:
      e = attention::launch_flash_mma(p, l);
      break;
#endif
    case abi::kAttentionSplitKv:
      e = attention::launch_split_kv(p, l);
      break;
    default:
      e = attention::launch_flash(p, l);
      break;
  }
  result.error = int(e);
  return result;
}

}  // namespace nbx::gpu
