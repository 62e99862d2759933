// The "attention" kernel family's CUDA/HIP launcher (kernel ABI: abi::AttentionParams): the
// block's variant, validated and served (core/families/attention_family.cpp), to its kernels
// — flash_mma (attention_flash_mma.cu, CUDA sm_80+), flash (attention_flash.cu), split_kv
// (attention_split_kv.cu) and the vendor's (vendor_launch.hpp: CUDA's cuDNN). HIP offers
// neither flash_mma nor a vendor attention (backend_variants.hpp).
#include "core/errors.hpp"
#include "kernels/gpu/attention_common.cuh"
#include "kernels/gpu/vendor_launch.hpp"

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
    case abi::kAttentionCudnn:
      return launch_attention_vendor(p, l);
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

#if NBX_GPU_HIP
// The HIP module's vendor attention: none (no AMD library is a dependency); HIP runs flash and
// split_kv, which the H200 verifies with NBX_ATTENTION=own.
std::string vendor_attention_status() {
  return "none: the HIP backend runs the own attention kernels";
}
bool vendor_attention_available() {
  return false;
}
ElementwiseLaunchResult launch_attention_vendor(const abi::AttentionParams&, const GpuLaunch& l) {
  throw Unsupported("scaled_dot_product_attention", *l.device_name, "attention.cudnn",
                    "scaled_dot_product_attention on " + *l.device_name +
                        ": the HIP backend has no vendor attention; refused.");
}
void release_vendor_attention(int) {}
#endif

}  // namespace nbx::gpu
