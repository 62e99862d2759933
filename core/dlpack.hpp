// Zero-copy exchange of tensors with other libraries (PyTorch, NumPy, CuPy, JAX …) through
// DLPack's C structs (dlpack/dlpack.h, version 0.6 or later; include it to read the struct).
// Export is Tensor::to_dlpack() (tensor.hpp). Host, CUDA and HIP memory cross without a copy;
// Vulkan memory is a buffer, not an address, and is refused by name both ways.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "core/tensor.hpp"

struct DLManagedTensor;

namespace nbx {

// A tensor viewing the memory `managed` describes, without a copy: its device (kDLCPU and
// kDLCUDAHost → host, kDLCUDA → cuda:N, kDLROCM → hip:N), dtype (int8–64, uint8, float16/32/64,
// bfloat16, bool), shape, strides (null: row-major) and byte_offset. On success the tensor owns
// `managed`: its deleter runs once, after the last view is gone and the device has finished
// the work issued on it. When this throws, the caller still owns `managed`.
//
// The producer's work on the memory must be complete or ordered before the device's queue
// (CUDA: the legacy default stream, which nbx's blocking stream follows — what the Python
// protocol's stream=1 asks for). Throws InvalidArgument for a null pointer, a dtype nbx has no
// counterpart of (uint16, complex, vector lanes), more than 8 dims, negative strides or a
// misaligned address; Unsupported for Vulkan memory; Unavailable when the device's backend is
// absent; what the device's runtime says when the address is not its memory.
Tensor from_dlpack(DLManagedTensor* managed);

// The general form (torch::from_blob's): a tensor viewing `data` — memory another library
// owns on `device`, elements of `dtype` at `strides` (in elements, none negative) — without a
// copy. On success the tensor owns the memory's lease: `release` (which must not throw) runs
// once, after the last view is gone and the device has finished the work issued on it. When
// this throws, `release` never runs. Throws InvalidArgument for a rank past 8, sizes and
// strides of different lengths, negative sizes or strides, an address not aligned to the
// dtype; Unsupported where the device takes no foreign memory (Vulkan); what the device's
// runtime says when `data` is not its memory.
Tensor from_blob(void* data, const Shape& shape, const Strides& strides, DType dtype,
                 const Device& device, std::function<void()> release);

// DLPack's (device_type, device_id) for a device: kDLCPU for the host, kDLCUDA, kDLROCM,
// kDLVulkan — what the Python protocol's __dlpack_device__ returns.
std::pair<std::int32_t, std::int32_t> dlpack_device(const Device& device);

}  // namespace nbx
