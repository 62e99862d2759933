#include "backends/vulkan/vk_launch_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/errors.hpp"

namespace nbx::vulkan {

LaunchChecks::LaunchChecks(const DeviceContext& ctx, std::string op)
    : ctx_(ctx), op_(std::move(op)), where_(op_ + " on " + ctx.name) {}

void LaunchChecks::bad(const std::string& why) const {
  throw InvalidArgument(op_, where_ + ": " + why + ".");
}

void LaunchChecks::refuse(const char* capability, const std::string& why) const {
  throw Unsupported(op_, ctx_.name, capability, where_ + ": " + why + "; refused.");
}

void LaunchChecks::reach(std::int64_t& last, std::int64_t size, std::int64_t stride,
                         const std::string& label) const {
  if (stride < 0) bad(label + " has a negative stride");
  std::int64_t step = 0;
  if (size > 0 && (__builtin_mul_overflow(size - 1, stride, &step) ||
                   __builtin_add_overflow(last, step, &last)))
    bad(label + "'s offset and strides overflow 64-bit element indices");
}

std::int64_t LaunchChecks::last_element(std::int64_t offset, int ndim, const std::int64_t* sizes,
                                        const std::int64_t* strides,
                                        const std::string& label) const {
  for (int d = 0; d < ndim; ++d) reach(offset, sizes[d], strides[d], label);
  return offset;
}

std::uint64_t LaunchChecks::grid_groups(std::uint64_t items, std::uint32_t wg) const {
  return std::min<std::uint64_t>(
      {(items + wg - 1) / wg, ctx_.features.max_workgroup_count_x, std::uint64_t(1) << 22});
}

void LaunchChecks::inside(const std::string& label, std::int64_t offset, std::int64_t last, DType t,
                          const DeviceMemory& m, std::int64_t max_index) const {
  if (!m || offset < 0 || last < 0 || std::uint64_t(last) >= m.bytes / dtype_size(t)) {
    const std::string reaches = label + " reaches element " + std::to_string(last) + " of a " +
                                std::to_string(m.bytes) + "-byte buffer";
    bad(m ? reaches : label + " has no buffer (" + reaches + ")");
  }
  if (max_index >= 0 && last > max_index)
    refuse("max_elements", label + " reaches element " + std::to_string(last) +
                               "; the 32-bit index path supports 2^31 - 1");
  storage_range(m);
}

void LaunchChecks::rows_view(const std::string& label, std::int64_t offset, std::int64_t row_stride,
                             std::int64_t row_len, std::int64_t rows, int outer_ndim,
                             const std::int64_t* outer_sizes, const std::int64_t* outer_strides,
                             DType t, const DeviceMemory& m) const {
  if (offset < 0 || row_stride < 0) bad(label + " has a negative offset or stride");
  std::int64_t last = offset;
  reach(last, row_len, row_stride, label);
  for (int d = 0; d < outer_ndim; ++d) reach(last, outer_sizes[d], outer_strides[d], label);
  if (rows > INT32_MAX)
    refuse("max_elements",
           std::to_string(rows) + " rows exceed the 2^31 - 1 the 32-bit index path supports");
  inside(label, offset, last, t, m, INT32_MAX - 1);
}

void LaunchChecks::storage_range(const DeviceMemory& m) const {
  const std::uint64_t limit = ctx_.features.max_storage_buffer_range;
  if (m.bytes > limit)
    refuse("maxStorageBufferRange", "a " + std::to_string(m.bytes) +
                                        "-byte operand exceeds maxStorageBufferRange (" +
                                        std::to_string(limit) + " bytes)");
}

}  // namespace nbx::vulkan
