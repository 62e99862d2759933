// The kernel family as one typed object. Each family (family_list.inc) has one entry in the
// table behind family_spec(): its name, its parameter block, the roles of the buffers it
// binds, the variants a backend may offer, one validate() that checks everything its
// kernels rely on, and the decoder of the faults its kernels record.
//
// BackendDevice::launch validates through this table once, for every backend, then hands
// the launch to the backend's launcher table (a FamilyEntry per family, checked complete at
// compile time by covers_every_family). Adding a family: docs/adding-a-family.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/kernel_abi.hpp"
#include "core/kernel_buffer.hpp"
#include "core/shape.hpp"

namespace nbx {

class BackendDevice;
class DeviceFault;

enum class KernelFamily : std::int32_t {
#define NBX_KERNEL_FAMILY(kId, id, Params) kId = abi::kFamily_##id,
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY
};
inline constexpr std::size_t kKernelFamilyCount = abi::kFamilyCount;

// The family whose parameter block is `Params`.
template <class Params>
struct FamilyOf;
#define NBX_KERNEL_FAMILY(kId, id, Params)                   \
  template <>                                                \
  struct FamilyOf<Params> {                                  \
    static constexpr KernelFamily value = KernelFamily::kId; \
  };
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY

// What buffer k of a family is: its name in messages, and whether kernels write it (the
// KernelBuffer's `written` must agree: Vulkan's hazard tracking trusts it).
struct BufferRole {
  std::string_view name;
  bool written = false;
};

// How a family's validate() reports a broken launch: InvalidArgument(op, "<op> launch on
// <device>: <why>."), the op named from the block's op code. Messages are built only when
// a check fails, so a valid launch allocates nothing here.
class LaunchCheck {
 public:
  // `device` may be null (a launch checked outside any device: tests).
  LaunchCheck(KernelFamily family, std::int32_t op, const BackendDevice* device)
      : family_(family), op_(op), device_(device) {}

  [[noreturn]] void fail(const std::string& why) const;
  void require(bool ok, const char* why) const {
    if (!ok) fail(why);
  }
  // `code` is an nbx::DType value (any dtype, or a floating one).
  void dtype(std::int32_t code, const char* label) const;
  void floating_dtype(std::int32_t code, const char* label) const;
  // 0 <= n <= max.
  void count(std::int64_t n, std::int64_t max, const char* label) const;
  // Every size is >= 0 and their product does not overflow; returns the product.
  std::int64_t product(int n, const std::int64_t* sizes, const char* label) const;
  // Exactly `expected` buffers bound (optional operands are bound as empty memory).
  void buffer_count(std::size_t bound, std::size_t expected) const;

  // Builds the furthest element a strided view reaches (a ViewExtent: offset + Σ (size - 1) ·
  // stride, overflow-checked; strides and the offset must be >= 0) and checks that it lies inside
  // a buffer: check.view("the input", p.in_offset).dims(n, sizes, strides).inside(b, dtype).
  class View {
   public:
    View& dims(int n, const std::int64_t* sizes, const std::int64_t* strides);
    View& dim(std::int64_t size, std::int64_t stride);
    // A view with no elements reaches nothing and fits any buffer.
    void inside(const KernelBuffer& buffer, std::int32_t dtype) const;

   private:
    friend class LaunchCheck;
    View(const LaunchCheck& check, const char* label, std::int64_t offset);
    const LaunchCheck& check_;
    const char* label_;
    ViewExtent extent_;
  };
  View view(const char* label, std::int64_t offset) const { return View(*this, label, offset); }

  std::string op_name() const;
  std::string device_name() const;

 private:
  KernelFamily family_;
  std::int32_t op_;
  const BackendDevice* device_;
};

struct FamilySpec {
  KernelFamily family;
  std::string_view name;                       // "softmax"
  std::size_t param_bytes;                     // sizeof its abi:: parameter block
  std::span<const BufferRole> buffers;         // every buffer it may bind, in order
  std::span<const std::string_view> variants;  // variant code → name ("rows")
  // The block's op code and variant code (0 where the family has none).
  std::int32_t (*op_of)(const std::byte* params);
  std::int32_t (*variant_of)(const std::byte* params);
  // The public name of op `code` ("log_softmax"); "<family> op <code>" for an unknown one.
  std::string (*op_name)(std::int32_t code);
  // Throws InvalidArgument (through `check`) unless the block and the buffers hold
  // everything the family's kernels rely on. `params` has param_bytes bytes (any alignment).
  void (*validate)(const std::byte* params, std::span<const KernelBuffer> buffers,
                   const LaunchCheck& check);
  // Why `variant` cannot run this block, "" when it can: the variant's own contract
  // (contiguous rows, the dtypes and ops its kernel implements, its thread needs on a device
  // of `subgroup_size`). Launches asking for a variant that does not serve them are refused;
  // planners (core/ops/variant_plan.hpp) skip such variants.
  std::string (*variant_refusal)(std::int32_t variant, const std::byte* params, int subgroup_size);
  void (*set_variant)(std::byte* params, std::int32_t variant);
  // What a fault record of this family means, after "<op> on <device>: ".
  std::string (*describe_fault)(const abi::FaultRecord& record);
};

const FamilySpec& family_spec(KernelFamily family);
std::span<const FamilySpec> all_families();
std::optional<KernelFamily> family_named(std::string_view name);
// "softmax.rows"; "softmax.variant 7" for a code the family does not define.
std::string variant_name(KernelFamily family, int variant);

// The DeviceFault a fault record means, decoded by the family that wrote it
// (abi::fault_op); `device` names it in the message ("cuda:0 (NVIDIA H200)").
DeviceFault fault_error(const abi::FaultRecord& record, const std::string& device_id,
                        const std::string& device);

// One backend's launcher for one family: `launch` null means the backend does not offer the
// family (launches are refused by name); `variants` has bit v set for each variant it runs
// (a backend may narrow that at run time in its offers_impl).
template <class Fn>
struct FamilyEntry {
  KernelFamily family;
  Fn launch = nullptr;
  std::uint32_t variants = 0;
};
inline constexpr std::uint32_t variant_bit(int v) {
  return std::uint32_t(1) << v;
}

// A backend's launcher table must name every family, in order (static_assert it).
template <class Fn, std::size_t N>
constexpr bool covers_every_family(const std::array<FamilyEntry<Fn>, N>& table) {
  if (N != kKernelFamilyCount) return false;
  for (std::size_t i = 0; i < N; ++i)
    if (static_cast<std::size_t>(table[i].family) != i) return false;
  return true;
}

}  // namespace nbx
