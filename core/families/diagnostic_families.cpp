// The two diagnostic families benchmarks use (abi::TimestampParams, abi::CopyProbeParams):
// the device clock into a slot, and a plain copy of 16-byte words, the bandwidth ceiling an
// elementwise kernel is compared with. Offered by Vulkan; refused by name elsewhere.
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

std::string timestamp_name(std::int32_t) {
  return "timestamp";
}
std::string copy_probe_name(std::int32_t) {
  return "copy_probe";
}

void validate_timestamp(const abi::TimestampParams& p, std::span<const KernelBuffer> buffers,
                        const LaunchCheck& check) {
  check.buffer_count(buffers.size(), 1);
  check.view("the slot", p.slot).dim(1, 1).inside(buffers[0], std::int32_t(DType::kInt64));
}

void validate_copy_probe(const abi::CopyProbeParams& p, std::span<const KernelBuffer> buffers,
                         const LaunchCheck& check) {
  check.buffer_count(buffers.size(), 2);
  // 16-byte words, counted as pairs of int64.
  if (p.words < 0 || p.words > (std::int64_t(1) << 40)) check.fail("words is out of range");
  check.view("the destination", 0)
      .dim(2 * p.words, 1)
      .inside(buffers[0], std::int32_t(DType::kInt64));
  check.view("the source", 0).dim(2 * p.words, 1).inside(buffers[1], std::int32_t(DType::kInt64));
}

constexpr BufferRole kTimestampBuffers[] = {{"slots", true}};
constexpr BufferRole kCopyBuffers[] = {{"destination", true}, {"source"}};
constexpr std::string_view kOneVariant[] = {"plain"};

}  // namespace

extern const FamilySpec timestamp_family{KernelFamily::kTimestamp,
                                         "timestamp",
                                         sizeof(abi::TimestampParams),
                                         kTimestampBuffers,
                                         kOneVariant,
                                         no_field,
                                         no_field,
                                         timestamp_name,
                                         validate_bytes<abi::TimestampParams, validate_timestamp>,
                                         serves_all,
                                         no_variant_field,
                                         describe_common_fault};

extern const FamilySpec copy_probe_family{KernelFamily::kCopyProbe,
                                          "copy_probe",
                                          sizeof(abi::CopyProbeParams),
                                          kCopyBuffers,
                                          kOneVariant,
                                          no_field,
                                          no_field,
                                          copy_probe_name,
                                          validate_bytes<abi::CopyProbeParams, validate_copy_probe>,
                                          serves_all,
                                          no_variant_field,
                                          describe_common_fault};

}  // namespace nbx::families
