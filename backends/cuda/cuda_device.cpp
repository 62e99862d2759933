// CudaDevice: the one instantiation of the shared GPU device over the CUDA
// runtime.
#include "backends/cuda/cuda_device.hpp"

#include "backends/gpu_runtime/gpu_device_impl.hpp"

template class nbx::gpu_runtime::GpuDevice<nbx::cuda::CudaRuntime>;
