// Adds DenormPreserve to a SPIR-V module by editing its word stream (SPIR-V 1.6 spec, 2.3
// "Physical Layout" and 2.4 "Logical Layout"): capabilities come first, then extensions,
// imports, the memory model, entry points and execution modes. Patching the embedded modules
// at load keeps one build of each shader for every driver; a second set of modules compiled
// with GL_EXT_spirv_intrinsics would double the embedded SPIR-V for one execution mode.
#include "backends/vulkan/vk_float_controls.hpp"

#include <string>

#include "core/errors.hpp"

namespace nbx::vulkan {
namespace {

constexpr std::uint32_t kMagic = 0x07230203;
constexpr std::uint32_t kHeaderWords = 5;
constexpr std::uint32_t kVersion14 = 0x00010400;
// Opcodes, capabilities and execution modes (SPIR-V 1.6 spec, 3.x tables).
constexpr std::uint16_t kOpExtension = 10, kOpExtInstImport = 11, kOpMemoryModel = 14,
                        kOpEntryPoint = 15, kOpExecutionMode = 16, kOpCapability = 17,
                        kOpExecutionModeId = 331;
constexpr std::uint32_t kCapFloat64 = 10, kCapDenormPreserve = 4464;
constexpr std::uint32_t kModeDenormPreserve = 4459, kModeDenormFlushToZero = 4460;

std::uint16_t opcode(std::uint32_t w) {
  return static_cast<std::uint16_t>(w & 0xffffu);
}
std::uint32_t word_count(std::uint32_t w) {
  return w >> 16;
}
std::uint32_t first_word(std::uint16_t op, std::uint32_t count) {
  return (count << 16) | op;
}

// The words of a literal string operand: UTF-8, nul-terminated, padded to whole words.
std::vector<std::uint32_t> string_words(const std::string& s) {
  std::vector<std::uint32_t> w((s.size() + 4) / 4, 0u);
  for (std::size_t i = 0; i < s.size(); ++i)
    w[i / 4] |= static_cast<std::uint32_t>(static_cast<unsigned char>(s[i])) << (8 * (i % 4));
  return w;
}

}  // namespace

std::vector<std::uint32_t> with_denorm_preserve(std::span<const std::uint32_t> words,
                                                DenormPreserve request) {
  if (words.size() < kHeaderWords || words[0] != kMagic)
    throw Internal("vulkan: a shader module to patch for DenormPreserve is not SPIR-V.");
  // One pass over the preamble: where capabilities end, where execution modes end, which
  // entry points exist, and which widths already have a denorm mode.
  std::size_t capabilities_end = kHeaderWords, modes_end = 0;
  bool has_float64 = false, has_capability = false;
  std::vector<std::uint32_t> entry_points;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> set_modes;  // (entry point, width)
  for (std::size_t i = kHeaderWords; i < words.size();) {
    const std::uint32_t n = word_count(words[i]);
    if (n == 0 || i + n > words.size())
      throw Internal("vulkan: a shader module to patch for DenormPreserve is truncated.");
    const std::uint16_t op = opcode(words[i]);
    if (op == kOpCapability) {
      capabilities_end = i + n;
      has_float64 |= words[i + 1] == kCapFloat64;
      has_capability |= words[i + 1] == kCapDenormPreserve;
    } else if (op == kOpEntryPoint) {
      entry_points.push_back(words[i + 2]);
      modes_end = i + n;
    } else if (op == kOpExecutionMode || op == kOpExecutionModeId) {
      modes_end = i + n;
      const std::uint32_t mode = words[i + 2];
      if ((mode == kModeDenormPreserve || mode == kModeDenormFlushToZero) && n >= 4)
        set_modes.emplace_back(words[i + 1], words[i + 3]);
    } else if (op != kOpExtension && op != kOpExtInstImport && op != kOpMemoryModel) {
      break;  // past the execution modes: debug names, annotations, types
    }
    i += n;
  }
  if (entry_points.empty()) return {words.begin(), words.end()};

  std::vector<std::uint32_t> widths;
  if (request.float32) widths.push_back(32);
  if (request.float64 && has_float64) widths.push_back(64);
  std::vector<std::uint32_t> modes;
  for (std::uint32_t ep : entry_points)
    for (std::uint32_t width : widths) {
      bool already = false;
      for (const auto& [e, w] : set_modes) already |= e == ep && w == width;
      if (already) continue;
      for (std::uint32_t w : {first_word(kOpExecutionMode, 4), ep, kModeDenormPreserve, width})
        modes.push_back(w);
    }
  if (modes.empty()) return {words.begin(), words.end()};

  std::vector<std::uint32_t> head;  // capability and, below 1.4, extension
  if (!has_capability) {
    head.push_back(first_word(kOpCapability, 2));
    head.push_back(kCapDenormPreserve);
  }
  if (words[1] < kVersion14) {
    const std::vector<std::uint32_t> name = string_words("SPV_KHR_float_controls");
    head.push_back(first_word(kOpExtension, static_cast<std::uint32_t>(1 + name.size())));
    head.insert(head.end(), name.begin(), name.end());
  }
  std::vector<std::uint32_t> out;
  out.reserve(words.size() + head.size() + modes.size());
  out.insert(out.end(), words.begin(),
             words.begin() + static_cast<std::ptrdiff_t>(capabilities_end));
  out.insert(out.end(), head.begin(), head.end());
  out.insert(out.end(), words.begin() + static_cast<std::ptrdiff_t>(capabilities_end),
             words.begin() + static_cast<std::ptrdiff_t>(modes_end));
  out.insert(out.end(), modes.begin(), modes.end());
  out.insert(out.end(), words.begin() + static_cast<std::ptrdiff_t>(modes_end), words.end());
  return out;
}

}  // namespace nbx::vulkan
