// HipDevice: the one instantiation of the shared GPU device over the HIP
// runtime.
#include "backends/hip/hip_device.hpp"

#include "backends/gpu_runtime/gpu_device_impl.hpp"

template class nbx::gpu_runtime::GpuDevice<nbx::hip::HipRuntime>;
