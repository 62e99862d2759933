// The checks every Vulkan kernel family makes on its parameter block before anything is
// recorded: typed errors named after the op and the device, and the bounds of each strided
// view — overflow-checked and compared in elements (an offset near 2^62 made
// (last + 1) * itemsize wrap below the buffer size), inside the 32-bit index path, and within
// maxStorageBufferRange.
#pragma once

#include <cstdint>
#include <string>

#include "backends/vulkan/vk_context.hpp"
#include "core/backend.hpp"
#include "core/dtype.hpp"

namespace nbx::vulkan {

class LaunchChecks {
 public:
  LaunchChecks(const DeviceContext& ctx, std::string op);

  // InvalidArgument("<op> on <device>: <why>.")
  [[noreturn]] void bad(const std::string& why) const;
  // Unsupported naming the capability: "<op> on <device>: <why>; refused."
  [[noreturn]] void refuse(const char* capability, const std::string& why) const;

  // Moves `last` by (size - 1) * stride (nothing for an empty dim); bad() for a negative
  // stride or a 64-bit overflow.
  void reach(std::int64_t& last, std::int64_t size, std::int64_t stride,
             const std::string& label) const;
  // The last element of a view from element `offset` over `ndim` dims of `sizes` and
  // `strides` (reach() along each).
  std::int64_t last_element(std::int64_t offset, int ndim, const std::int64_t* sizes,
                            const std::int64_t* strides, const std::string& label) const;
  // Workgroups of `wg` invocations for a grid-stride loop over `items`: one per item up to
  // maxComputeWorkGroupCount[0] and 2^22 (the shaders loop over the rest).
  std::uint64_t grid_groups(std::uint64_t items, std::uint32_t wg) const;
  // A view from element `offset` to element `last` of dtype `t` lies in `m`, and `m` within
  // maxStorageBufferRange; with `max_index` >= 0, `last` must stay at or below it.
  void inside(const std::string& label, std::int64_t offset, std::int64_t last, DType t,
              const DeviceMemory& m, std::int64_t max_index = -1) const;
  // Only the maxStorageBufferRange limit (families that check sizes themselves).
  void storage_range(const DeviceMemory& m) const;

  // A view of a row-wise family's operand (softmax, scan: RowParams has rows, row_len,
  // outer_ndim, outer_sizes): rows of p.row_len elements `row_stride` apart, placed by
  // p.outer_sizes and `outer_strides`, from element `offset` — non-negative, inside `m`, and
  // within the 32-bit index path the row shaders use (rows too).
  template <class RowParams>
  void rows_view(const RowParams& p, std::int64_t offset, const std::int64_t* outer_strides,
                 std::int64_t row_stride, DType t, const DeviceMemory& m, const char* label) const {
    rows_view(label, offset, row_stride, p.row_len, p.rows, p.outer_ndim, p.outer_sizes,
              outer_strides, t, m);
  }
  void rows_view(const std::string& label, std::int64_t offset, std::int64_t row_stride,
                 std::int64_t row_len, std::int64_t rows, int outer_ndim,
                 const std::int64_t* outer_sizes, const std::int64_t* outer_strides, DType t,
                 const DeviceMemory& m) const;

 private:
  const DeviceContext& ctx_;
  std::string op_;
  std::string where_;
};

}  // namespace nbx::vulkan
