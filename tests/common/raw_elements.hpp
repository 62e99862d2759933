// Writing one element of any dtype into a raw little-endian buffer, shared by the CUDA/HIP
// and Vulkan tests that fill kernel-ABI operands by hand (tests/gpu put_element,
// tests/vulkan set_element). Floats are rounded to the dtype; integers and bool take `i`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.hpp"

namespace nbx::testing {

void store_element(std::byte* data, DType t, std::int64_t index, double f, std::int64_t i);

}  // namespace nbx::testing
