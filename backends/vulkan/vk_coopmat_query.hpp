// Which cooperative-matrix fragment shapes a physical device offers for the matmul kernel's
// float16 x float16 -> float32 products at subgroup scope: the KHR list
// (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR) and the NV one
// (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV), queried once at device listing.
#pragma once

#include <cstdint>
#include <string>

#include "backends/vulkan/vk_api.hpp"
#include "backends/vulkan/vk_context.hpp"

namespace nbx::vulkan {

struct CoopmatShapes {
  CoopmatShape khr, nv;   // float16 x float16 -> float32, subgroup scope; m == 0: none
  bool khr_bf16 = false;  // a bfloat16 shape is listed (glslc cannot emit the type)
  std::string listing;    // every listed shape, for nbx caps: "khr 16x16x16 f16.f16.f32.f32, ..."
};

// Queries the lists where the device has the extension and cooperativeMatrix enabled in
// `f` (coopmat_khr / coopmat_nv). Never throws: a failing query reads as no shape.
CoopmatShapes query_coopmat_shapes(const InstanceApi& api, VkPhysicalDevice pd,
                                   const DeviceFeatures& f);

// The cooperative-matrix build the matmul kernel runs on a device with features `f`:
// module "matmul_coopmat_nv" (VK_NV_cooperative_matrix: glslc's own output, checked by
// spirv-val) else "matmul_coopmat_khr" (VK_KHR_cooperative_matrix, rewritten from it by
// kernels/vulkan/matmul_coopmat_khr.py, where that build is embedded).
// NBX_VULKAN_COOPMAT=khr|nv|off restricts the choice (tests run each build that exists). `status`
// reads "float16 16x16x16 (…)" when there is one, "none: <reason>" otherwise (properties().extra).
struct CoopmatChoice {
  const char* module = nullptr;  // nullptr: none
  CoopmatShape shape;
  std::string status;
};
CoopmatChoice choose_coopmat(const DeviceFeatures& f);

}  // namespace nbx::vulkan
