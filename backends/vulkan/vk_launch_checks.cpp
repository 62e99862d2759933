#include "backends/vulkan/vk_launch_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/errors.hpp"
#include "core/shape.hpp"

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
  // `last` is an element already reached (non-negative, or bad() below): extend it by one dim.
  ViewExtent extent(std::max<std::int64_t>(last, 0));
  extent.dim(size, stride);
  if (extent.fault() == ViewExtent::Fault::kNegativeStride) bad(label + " has a negative stride");
  if (extent.fault() == ViewExtent::Fault::kNegativeSize) bad(label + " has a negative size");
  if (extent.fault() == ViewExtent::Fault::kOverflow)
    bad(label + "'s offset and strides overflow 64-bit element indices");
  if (last >= 0 && !extent.empty()) last = extent.last();
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
  const std::int64_t last = last_element(last_element(offset, 1, &row_len, &row_stride, label),
                                         outer_ndim, outer_sizes, outer_strides, label);
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
