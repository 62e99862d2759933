// The hooks through which a backend module brings vendor libraries to the attention and
// grouped_matmul families (matmul's vendor BLAS hook is in matmul_launch.hpp). Each module
// defines these once: the CUDA module loads cuDNN and cuBLASLt at run time
// (backends/cuda/cuda_cudnn_sdpa.cpp, cuda_grouped_blas.cpp); the HIP module has neither
// (attention_kernels.cu, grouped_matmul_kernels.cu). Plain C++.
#pragma once

#include <string>

#include "kernels/gpu/family_launch.hpp"

namespace nbx::gpu {

// ---- attention's kAttentionCudnn variant ----
// Loads the library once per process (never throws); the line devices show as
// DeviceProperties::extra["attention.cudnn"]: "cuDNN 91900 (libcudnn.so.9)" or why not.
std::string vendor_attention_status();
bool vendor_attention_available();
// Runs `params` (validated by the family, variant kAttentionCudnn) on launch.stream: builds
// (once per problem and device) and executes the library's plan. Unsupported when the library
// is absent or finds no engine for the problem, naming why; Internal for its other errors.
ElementwiseLaunchResult launch_attention_vendor(const abi::AttentionParams& params,
                                                const GpuLaunch& launch);
// Frees device `index`'s handle, plans and workspace (the device is closing). Never throws.
void release_vendor_attention(int device_index);

// ---- grouped_matmul's kGroupedMatmulBlas variant (offered where vendor_blas_available()) ----
// Reads the group offsets back (a stream synchronisation), then runs one vendor GEMM a
// non-empty group; offsets that do not partition the rows go to the tiled kernel, which
// records the fault and writes nothing.
ElementwiseLaunchResult launch_grouped_matmul_vendor(const abi::GroupedMatmulParams& params,
                                                     const GpuLaunch& launch);

}  // namespace nbx::gpu
