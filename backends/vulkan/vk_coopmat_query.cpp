// Cooperative-matrix shape lists (vk_coopmat_query.hpp). The KHR structures are newer than
// Debian's 1.3.239 headers and are declared here from the Vulkan specification.
#include "backends/vulkan/vk_coopmat_query.hpp"

#include <cstdlib>
#include <vector>

#include "nbx_vk_spirv.hpp"

namespace nbx::vulkan {
namespace {

// VK_KHR_cooperative_matrix (specification values; VkComponentTypeKHR/VkScopeKHR share
// the NV enums' numbers: float16 0, float32 1, subgroup scope 3).
constexpr VkStructureType kCoopmatPropertiesKhr = static_cast<VkStructureType>(1000506001);
constexpr std::int32_t kFloat16 = 0, kFloat32 = 1, kBFloat16 = 1000141000, kSubgroup = 3;
struct CoopmatPropertiesKhr {
  VkStructureType sType;
  void* pNext;
  std::uint32_t MSize, NSize, KSize;
  std::int32_t AType, BType, CType, ResultType;
  VkBool32 saturatingAccumulation;
  std::int32_t scope;
};
using GetKhr = VkResult(VKAPI_PTR*)(VkPhysicalDevice, std::uint32_t*, CoopmatPropertiesKhr*);

const char* type_text(std::int32_t t) {
  switch (t) {
    case 0:
      return "f16";
    case 1:
      return "f32";
    case 2:
      return "f64";
    case 3:
      return "s8";
    case 5:
      return "s32";
    case 7:
      return "u8";
    case kBFloat16:
      return "bf16";
    default:
      return "t";
  }
}

// Prefers 16x16x16 (two fragments per 32-wide subgroup block), then the widest k.
bool better(const CoopmatShape& a, const CoopmatShape& b) {
  if (b.m == 0) return true;
  const bool a16 = a.m == 16 && a.n == 16 && a.k == 16, b16 = b.m == 16 && b.n == 16 && b.k == 16;
  if (a16 != b16) return a16;
  return a.k > b.k;
}

// A shape the shader can tile: fragments divide its 64 x 32 subgroup block and its 32-deep
// k tile, and fit its 256-float scratch.
bool tileable(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  return m && n && k && 64 % m == 0 && 32 % n == 0 && 32 % k == 0 && m * n <= 256 && k % 8 == 0 &&
         n % 8 == 0;
}

void consider(CoopmatShape& best, std::string& listing, const char* api, std::uint32_t m,
              std::uint32_t n, std::uint32_t k, std::int32_t a, std::int32_t b, std::int32_t c,
              std::int32_t r, std::int32_t scope) {
  listing += (listing.empty() ? "" : ", ") + std::string(api) + " " + std::to_string(m) + "x" +
             std::to_string(n) + "x" + std::to_string(k) + " " + type_text(a) + "." + type_text(b) +
             "." + type_text(c) + "." + type_text(r) +
             (scope == kSubgroup ? "" : " (not subgroup)");
  if (a != kFloat16 || b != kFloat16 || c != kFloat32 || r != kFloat32 || scope != kSubgroup)
    return;
  const CoopmatShape s{m, n, k};
  if (tileable(m, n, k) && better(s, best)) best = s;
}

}  // namespace

CoopmatShapes query_coopmat_shapes(const InstanceApi& api, VkPhysicalDevice pd,
                                   const DeviceFeatures& f) {
  CoopmatShapes out;
  if (f.coopmat_khr) {
    auto get = reinterpret_cast<GetKhr>(api.vkGetInstanceProcAddr(
        api.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    std::uint32_t count = 0;
    if (get && get(pd, &count, nullptr) == VK_SUCCESS && count > 0) {
      std::vector<CoopmatPropertiesKhr> props(count, CoopmatPropertiesKhr{kCoopmatPropertiesKhr});
      if (get(pd, &count, props.data()) >= VK_SUCCESS) {
        props.resize(count);
        for (const auto& p : props) {
          consider(out.khr, out.listing, "khr", p.MSize, p.NSize, p.KSize, p.AType, p.BType,
                   p.CType, p.ResultType, p.scope);
          out.khr_bf16 |= p.AType == kBFloat16;
        }
      }
    }
  }
  if (f.coopmat_nv) {
    auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        api.vkGetInstanceProcAddr(api.instance,
                                  "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    std::uint32_t count = 0;
    if (get && get(pd, &count, nullptr) == VK_SUCCESS && count > 0) {
      std::vector<VkCooperativeMatrixPropertiesNV> props(
          count,
          VkCooperativeMatrixPropertiesNV{VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
      if (get(pd, &count, props.data()) >= VK_SUCCESS) {
        props.resize(count);
        for (const auto& p : props)
          consider(out.nv, out.listing, "nv", p.MSize, p.NSize, p.KSize, p.AType, p.BType, p.CType,
                   p.DType, p.scope);
      }
    }
  }
  return out;
}

CoopmatChoice choose_coopmat(const DeviceFeatures& f) {
  const char* env = std::getenv("NBX_VULKAN_COOPMAT");
  const std::string want = env ? env : "";
  if (want == "off") return {nullptr, {}, "none: NBX_VULKAN_COOPMAT=off"};
  if (!f.coopmat_khr && !f.coopmat_nv)
    return {nullptr, {}, "none: no VK_KHR_cooperative_matrix or VK_NV_cooperative_matrix"};
  // The shader computes in float16 shared memory under the Vulkan memory model, with eight
  // subgroups per workgroup and 27 KiB of shared memory.
  if (!f.fp16) return {nullptr, {}, "none: no shaderFloat16"};
  if (!f.vulkan_memory_model) return {nullptr, {}, "none: no vulkanMemoryModel"};
  if (8 * f.subgroup_size > f.max_workgroup_invocations || f.max_shared_memory < 27136)
    return {nullptr, {}, "none: eight subgroups or 27 KiB of shared memory do not fit a workgroup"};
  const struct {
    const char* api;
    const char* ext;
    const char* module;
    CoopmatShape shape;
  } builds[] = {{"nv", "VK_NV_cooperative_matrix", "matmul_coopmat_nv", f.coopmat_f16_nv},
                {"khr", "VK_KHR_cooperative_matrix", "matmul_coopmat_khr", f.coopmat_f16_khr}};
  std::string why;
  for (const auto& b : builds) {
    if (!want.empty() && want != b.api) continue;
    if (b.shape.m == 0) {
      why += std::string(why.empty() ? "" : "; ") + b.api +
             ": no float16 x float16 -> float32 subgroup shape the kernel tiles";
      continue;
    }
    if (spirv::find(b.module).empty()) {
      why += std::string(why.empty() ? "" : "; ") + b.api + ": the " + b.module +
             " build is not embedded";
      continue;
    }
    const std::string shape = std::to_string(b.shape.m) + "x" + std::to_string(b.shape.n) + "x" +
                              std::to_string(b.shape.k);
    return {b.module, b.shape, "float16 " + shape + " (" + b.ext + ", " + b.module + ")"};
  }
  return {nullptr,
          {},
          "none: " + (why.empty() ? "NBX_VULKAN_COOPMAT=" + want + " names no build" : why)};
}

}  // namespace nbx::vulkan
