// copy_by_shader: splits a byte copy into a head of bytes, whole words of the widest size
// (16, 4 or 1 bytes) the two offsets agree on, and a tail of bytes, for one dispatch of
// kernels/vulkan/copy.comp.
#include "backends/vulkan/vk_copy.hpp"

#include <algorithm>
#include <cstdint>

#include "backends/vulkan/vk_device.hpp"

namespace nbx::vulkan {

bool copy_by_shader(VulkanDevice& device, DeviceMemory dst, std::size_t dst_offset,
                    DeviceMemory src, std::size_t src_offset, std::size_t bytes) {
  const auto& f = device.context().features;
  // Each allocation is bound whole (VulkanDevice::record) and addressed in 32-bit units.
  const std::uint64_t limit = std::min<std::uint64_t>(f.max_storage_buffer_range, UINT32_MAX);
  if (bytes == 0 || dst.bytes > limit || src.bytes > limit) return false;
  // 16-byte words when the offsets agree modulo 16 (every whole-tensor copy: allocations
  // start aligned), else 4-byte words, else bytes.
  const std::uint64_t word = (dst_offset - src_offset) % 16 == 0  ? 16
                             : (dst_offset - src_offset) % 4 == 0 ? 4
                                                                  : 1;
  const std::uint64_t head = std::min<std::uint64_t>((word - dst_offset % word) % word, bytes);
  const std::uint64_t words = (bytes - head) / word;
  const std::uint64_t tail = bytes - head - words * word;
  const std::uint64_t items = words + head + tail;
  const std::uint32_t wg = device.workgroup_size();
  const std::uint64_t groups =
      std::min<std::uint64_t>({(items + wg - 1) / wg, f.max_workgroup_count_x, 1u << 22});
  const std::uint64_t body = head + words * word;
  const std::uint32_t params[12] = {std::uint32_t(words),
                                    std::uint32_t((dst_offset + head) / word),
                                    std::uint32_t((src_offset + head) / word),
                                    std::uint32_t(groups * wg),
                                    std::uint32_t(head),
                                    std::uint32_t(tail),
                                    std::uint32_t(dst_offset),
                                    std::uint32_t(src_offset),
                                    std::uint32_t(dst_offset + body),
                                    std::uint32_t(src_offset + body),
                                    0,
                                    0};
  const std::uint32_t spec[] = {wg, std::uint32_t(word)};
  const DispatchBuffer bufs[] = {{dst, true}, {src, false}};
  Dispatch d;
  d.module = "copy";
  d.spec = spec;
  d.params = params;
  d.param_bytes = sizeof params;
  d.buffers = bufs;
  d.groups[0] = std::uint32_t(groups);
  device.record(d);
  return true;
}

}  // namespace nbx::vulkan
