// The bounds check of a row-wise family's operand (softmax, scan: a params struct with
// rows, row_len, outer_ndim, outer_sizes), shared by their CUDA/HIP launchers. Plain C++.
// Overflow-checked in elements, as backends/vulkan/vk_launch_checks.cpp: an offset near 2^62
// plus (size - 1)·stride must not wrap below the buffer's end.
#pragma once

#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "core/kernel_abi.hpp"
#include "kernels/gpu/elementwise_launch.hpp"

namespace nbx::gpu {

// Throws InvalidArgument(op, "<op> launch: <label> …") unless the view from element `offset`
// — rows of p.row_len elements `row_stride` apart, placed by p.outer_sizes and
// `outer_strides` — lies inside `b`, whose elements are `dtype_size` bytes.
template <class RowParams>
void check_row_view(const char* op, const RowParams& p, std::int64_t offset,
                    const std::int64_t* outer_strides, std::int64_t row_stride,
                    std::uint64_t dtype_size, const BoundBuffer& b, const char* label) {
  auto reject = [&](const std::string& why) {
    throw InvalidArgument(op, std::string(op) + " launch: " + label + why + ".");
  };
  if (offset < 0 || row_stride < 0) reject(" has a negative offset or stride");
  std::int64_t last = offset;
  bool overflow = false;
  auto reach = [&](std::int64_t size, std::int64_t stride) {
    std::int64_t step = 0;
    if (size > 0)
      overflow |= __builtin_mul_overflow(size - 1, stride, &step) ||
                  __builtin_add_overflow(last, step, &last);
  };
  reach(p.row_len, row_stride);
  for (int d = 0; d < p.outer_ndim; ++d) {
    if (outer_strides[d] < 0) reject(" has a negative stride");
    reach(p.outer_sizes[d], outer_strides[d]);
  }
  if (overflow || b.address == nullptr || std::uint64_t(last) >= b.bytes / dtype_size)
    reject(" reaches beyond its buffer of " + std::to_string(b.bytes) + " bytes");
}

}  // namespace nbx::gpu
