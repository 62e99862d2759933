// The shaders' 32-bit division by a launch constant without a division instruction: for
// 1 <= d < 2^31 and n < 2^31, n / d == (umulhi(n, magic) + n) >> shift (Granlund and
// Montgomery, "Division by invariant integers using multiplication", PLDI 1994: the
// round-up method, as PyTorch's IntDivider). Used by scatter_rows.comp and gather_vec.comp.
#pragma once

#include <cstdint>

namespace nbx::vulkan {

struct IntDivider {
  std::uint32_t magic = 1, shift = 0;
};

// The divider of d (1 <= d < 2^31): shift = ceil(log2 d), magic = 2^32 (2^shift - d) / d + 1,
// below 2^32 because 2^shift < 2 d.
inline IntDivider int_divider(std::uint32_t d) {
  IntDivider v;
  while (v.shift < 31 && (std::uint64_t(1) << v.shift) < d) ++v.shift;
  v.magic = std::uint32_t(((std::uint64_t(1) << 32) * ((std::uint64_t(1) << v.shift) - d)) / d + 1);
  return v;
}

// The shaders' quotient, for tests of the divider against n / d.
inline std::uint32_t divide(std::uint32_t n, IntDivider v) {
  const std::uint32_t hi = std::uint32_t((std::uint64_t(n) * v.magic) >> 32);
  return (hi + n) >> v.shift;
}

}  // namespace nbx::vulkan
