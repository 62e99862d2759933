// Host interface of the CUDA/HIP "matmul" family, plain C++ like elementwise_launch.hpp: the
// own tiled kernel (matmul_kernels.cu, compiled by nvcc and by hipcc; variant kMatmulTiled)
// and the hook through which a backend module brings a vendor BLAS (variant
// kMatmulVendorBlas, has_kernel("matmul.blas")).
#pragma once

#include <cstdint>
#include <string>

#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// The device a matmul runs on, as launches need it.
struct MatmulDevice {
  int index = 0;                             // the runtime's device index
  std::string name;                          // "cuda:0 (NVIDIA H200)", for messages
  std::int64_t shared_memory_per_block = 0;  // the runtime's per-block limit, bytes
};

// False when the output is empty (nothing to launch). The block was validated by
// BackendDevice::launch (core/families/matmul_family.cpp).
bool matmul_has_work(const abi::MatmulParams& params);

// Validates `params` (InvalidArgument naming the problem) and enqueues the tiled kernel on
// `stream`: out[b] = alpha * A[b] @ B[b] + beta * addend[b] through the operands' strides.
// The tile is params.tile_m/n/k (one of the wrapper's shapes: 128x128x32, 128x64x32,
// 64x64x32, 64x64x16, 32x32x16, 16x16x16); stages = min(num_stages, 2) shared-memory
// buffers. Throws Unsupported (capability "shared_memory.per_block") when that footprint
// exceeds the device's limit, and for a variant other than kMatmulTiled.
ElementwiseLaunchResult launch_matmul(const abi::MatmulParams& params, const BoundBuffer* buffers,
                                      int num_buffers, const MatmulDevice& device, void* stream);

// out = scale * addend (converted to the out dtype), or 0 without an addend or with beta 0,
// over the product's whole output: the vendor-BLAS path lays the addend into its C matrix
// with this (scale 1), and k = 0 products are just this (scale beta). Floating dtypes only.
ElementwiseLaunchResult launch_matmul_addend(const abi::MatmulParams& params,
                                             const BoundBuffer* buffers, int num_buffers,
                                             double scale, void* stream);

// ---- The backend module's vendor BLAS. Each module defines these once: the CUDA module
// loads cuBLASLt at run time (backends/cuda/cuda_blas.cpp); the HIP module has none
// (matmul_kernels.cu: hipBLAS is not a dependency, the tiled kernel is HIP's matmul).

// Loads the library once per process (never throws); the line devices show as
// DeviceProperties::extra["matmul.blas"]: "cuBLASLt 130100 (libcublasLt.so.13)" or why not.
std::string vendor_blas_status();
bool vendor_blas_available();
// Validates and enqueues `params` on `stream` through the vendor BLAS (InvalidArgument for a
// block it cannot express, Unsupported when the library is absent, Internal for its errors).
ElementwiseLaunchResult launch_matmul_vendor_blas(const abi::MatmulParams& params,
                                                  const BoundBuffer* buffers, int num_buffers,
                                                  const MatmulDevice& device, void* stream);
// Frees device `index`'s handle and workspace (the device is closing). Never throws.
void release_vendor_blas(int device_index);

}  // namespace nbx::gpu
