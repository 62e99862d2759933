// Subnormal floats in the backend's shaders. Without a float-controls execution mode a
// driver may flush subnormal inputs and results to zero (NVIDIA's does for float32: log(3e-39)
// gave -inf, softplus(-45) gave 0), where PyTorch on CUDA keeps them. Where the device can
// preserve them (shaderDenormPreserveFloat32/64), every module gets the DenormPreserve
// execution mode before it is created; elsewhere the device's properties say subnormals may
// flush (extra["float32_subnormals"]).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace nbx::vulkan {

struct DenormPreserve {
  bool float32 = false;
  bool float64 = false;  // applied only to modules that declare the Float64 capability
};

// `words` (a SPIR-V module) with OpCapability DenormPreserve and one
// OpExecutionMode <entry point> DenormPreserve <width> per requested width and entry point
// (plus OpExtension "SPV_KHR_float_controls" below SPIR-V 1.4, where it is not core). A width
// whose denorm mode the module already sets is left as it is. Throws Internal on a module
// that is not SPIR-V.
std::vector<std::uint32_t> with_denorm_preserve(std::span<const std::uint32_t> words,
                                                DenormPreserve request);

}  // namespace nbx::vulkan
