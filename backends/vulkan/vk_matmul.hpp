// Kernel family "matmul" on Vulkan, shared by its two variants: the checks of an
// abi::MatmulParams launch and its translation into the uniform block both shaders read
// (kernels/vulkan/matmul.comp, matmul_coopmat.comp). vk_matmul.cpp holds the tiled variant
// and the launcher; vk_matmul_coopmat.cpp the cooperative-matrix one.
#pragma once

#include <cstdint>
#include <string>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::vulkan {

class VulkanDevice;

// The std140 uniform block of both matmul shaders (uvec4 rows; see matmul.comp).
struct MatmulUniform {
  std::uint32_t dims[4];  // m, n, k, batch
  std::uint32_t misc[4];  // batch ndim, tiles along m, tiles along n, 0
  std::uint32_t batch_sizes[8];
  std::uint32_t batch_strides[4][8];  // A, B, out, addend
  std::uint32_t strides[8];  // A row, A col, B row, B col, out row, out col, addend row, col
  std::uint32_t offsets[4];  // A, B, out, addend
  std::uint32_t scal[4];     // 64-bit alpha (xy) and beta (zw): float64 or int64 bits
  std::uint32_t scal32[4];   // 32-bit alpha (x) and beta (y): float32 or int32 bits
};
static_assert(sizeof(MatmulUniform) == 272);

// A checked launch: the parameters, what the shaders need beyond them, and names for messages.
struct MatmulLaunch {
  abi::MatmulParams p{};
  DType in = DType::kFloat32, out = DType::kFloat32, addend = DType::kFloat32;
  bool use_addend = false;  // has an addend and beta != 0 (a NaN addend is then not read)
  bool empty = false;       // no output element: nothing to record
  std::string where;        // "matmul on vulkan:0 (llvmpipe …)"
  MatmulUniform u{};
};

// Checks `launch` (parameter size, dtypes, shapes, every operand inside its buffer and
// below 2^31 elements, strides non-negative) and fills the uniform block except the tile
// counts. Throws InvalidArgument for a malformed launch, Unsupported naming the capability
// (fp64, int64, maxStorageBufferRange, max_elements) where the device cannot run it.
MatmulLaunch check_matmul(const VulkanDevice& device, const KernelLaunch& launch);

// The cooperative-matrix variant (vk_matmul_coopmat.cpp). Throws Unsupported naming
// "matmul.coopmat" where the device has no suitable cooperative-matrix shape or the dtype
// is not float16.
void launch_matmul_coopmat(VulkanDevice& device, const KernelLaunch& launch, MatmulLaunch& l);

// Whether `device` runs the cooperative-matrix variant for float16 operands.
bool matmul_coopmat_available(const VulkanDevice& device);

}  // namespace nbx::vulkan
