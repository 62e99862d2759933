#include "core/backend.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "core/errors.hpp"

namespace nbx {
namespace {

void check_range(const BackendDevice& dev, const char* what, DeviceMemory mem, std::size_t offset,
                 std::size_t bytes) {
  if (offset > mem.bytes || bytes > mem.bytes - offset)
    throw InvalidArgument(std::string(what), std::string(what) + " on " + dev.display_name() +
                                                 ": bytes [" + std::to_string(offset) + ", " +
                                                 std::to_string(offset + bytes) +
                                                 ") fall outside a buffer of " +
                                                 std::to_string(mem.bytes) + " bytes.");
}

}  // namespace

std::string BackendDevice::display_name() const {
  return id_.str() + " (" + properties_.name + ")";
}

DeviceMemory BackendDevice::allocate(std::size_t bytes) {
  if (bytes == 0) return {};
  const DeviceMemory m = allocate_impl(bytes);
  std::lock_guard<std::mutex> lock(owned_mutex_);
  owned_[m.handle] = m.bytes;
  return m;
}

void BackendDevice::require_owned(std::string_view what,
                                  std::initializer_list<DeviceMemory> memories) const {
  std::lock_guard<std::mutex> lock(owned_mutex_);
  for (const DeviceMemory& m : memories) check_owned(what, m);
}

void BackendDevice::check_owned(std::string_view what, DeviceMemory memory, bool lent_ok) const {
  if (!memory) return;
  std::optional<std::size_t> live;  // the largest live size under this handle
  if (const auto it = owned_.find(memory.handle); it != owned_.end()) live = it->second;
  if (lent_ok) {
    const auto [first, last] = borrowed_.equal_range(memory.handle);
    for (auto b = first; b != last; ++b) live = std::max(live.value_or(0), b->second);
  }
  if (!live)
    throw InvalidArgument(std::string(what), std::string(what) + " on " + display_name() +
                                                 ": a buffer that is not live memory of this "
                                                 "device (another device's, or already freed).");
  if (memory.bytes > *live)
    throw InvalidArgument(std::string(what), std::string(what) + " on " + display_name() +
                                                 ": a buffer of " + std::to_string(memory.bytes) +
                                                 " bytes names an allocation of " +
                                                 std::to_string(*live) + ".");
}

void BackendDevice::free(DeviceMemory memory) {
  if (!memory) return;
  {
    std::lock_guard<std::mutex> lock(owned_mutex_);
    check_owned("free", memory, /*lent_ok=*/false);  // a borrow is ended, never freed
  }
  free_impl(memory);
  std::lock_guard<std::mutex> lock(owned_mutex_);
  owned_.erase(memory.handle);
}

void* BackendDevice::address_of(DeviceMemory memory) const {
  require_owned("address_of", {memory});
  if (!memory) return nullptr;
  void* address = address_of_impl(memory);
  if (!address)
    throw Unsupported("to_dlpack", id_.str(), "dlpack",
                      "to_dlpack on " + display_name() + ": " + id_.backend +
                          " memory is not an address other libraries can use; copy the tensor "
                          "to the host first; refused.");
  return address;
}

BorrowedMemory BackendDevice::borrow(void* address, std::size_t bytes) {
  if (bytes == 0) return {{}, 0};
  if (!accepts_foreign_impl(address, bytes))
    throw Unsupported("from_dlpack", id_.str(), "dlpack",
                      "from_dlpack on " + display_name() + ": " + id_.backend +
                          " takes no memory allocated by other libraries; refused.");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  const std::size_t head = at % kBorrowAlignment;
  const DeviceMemory m{reinterpret_cast<void*>(at - head), head + bytes};
  std::lock_guard<std::mutex> lock(owned_mutex_);
  borrowed_.emplace(m.handle, m.bytes);
  return {m, head};
}

void BackendDevice::end_borrow(DeviceMemory memory) noexcept {
  if (!memory) return;
  wait_idle_impl();
  std::lock_guard<std::mutex> lock(owned_mutex_);
  const auto [first, last] = borrowed_.equal_range(memory.handle);
  for (auto b = first; b != last; ++b)
    if (b->second == memory.bytes) {
      borrowed_.erase(b);
      return;
    }
}

void BackendDevice::copy_from_host(DeviceMemory dst, std::size_t dst_offset, const void* src,
                                   std::size_t bytes) {
  if (bytes == 0) return;
  require_owned("copy_from_host", {dst});
  check_range(*this, "copy_from_host", dst, dst_offset, bytes);
  copy_from_host_impl(dst, dst_offset, src, bytes);
}

void BackendDevice::copy_to_host(void* dst, DeviceMemory src, std::size_t src_offset,
                                 std::size_t bytes) {
  if (bytes == 0) return;
  require_owned("copy_to_host", {src});
  check_range(*this, "copy_to_host", src, src_offset, bytes);
  copy_to_host_impl(dst, src, src_offset, bytes);
}

void BackendDevice::copy_on_device(DeviceMemory dst, std::size_t dst_offset, DeviceMemory src,
                                   std::size_t src_offset, std::size_t bytes) {
  if (bytes == 0) return;
  require_owned("copy_on_device", {dst, src});
  check_range(*this, "copy_on_device", dst, dst_offset, bytes);
  check_range(*this, "copy_on_device", src, src_offset, bytes);
  copy_on_device_impl(dst, dst_offset, src, src_offset, bytes);
}

const char* peer_route_name(PeerRoute route) {
  switch (route) {
    case PeerRoute::kPeer:
      return "peer";
    case PeerRoute::kStaged:
      return "staged";
    case PeerRoute::kNone:
      break;
  }
  return "none";
}

PeerRoute BackendDevice::peer_route(const BackendDevice& src, std::string* why) const {
  if (&src == this || src.id().backend != id().backend) {
    if (why) *why = &src == this ? "the same device" : "devices of two backends";
    return PeerRoute::kNone;
  }
  return peer_route_impl(src, why);
}

void BackendDevice::copy_from_peer(DeviceMemory dst, std::size_t dst_offset, BackendDevice& src,
                                   DeviceMemory src_memory, std::size_t src_offset,
                                   std::size_t bytes) {
  if (bytes == 0) return;
  if (peer_route(src) == PeerRoute::kNone)
    throw InvalidArgument("to", "copy_from_peer: " + display_name() + " has no route from " +
                                    src.display_name() + " (stage through host memory).");
  require_owned("copy_from_peer", {dst});
  src.require_owned("copy_from_peer", {src_memory});
  check_range(*this, "copy_from_peer", dst, dst_offset, bytes);
  check_range(src, "copy_from_peer", src_memory, src_offset, bytes);
  copy_from_peer_impl(dst, dst_offset, src, src_memory, src_offset, bytes);
}

void BackendDevice::synchronize() {
  synchronize_impl();
}

bool BackendDevice::offers(KernelFamily family, int variant) const {
  return static_cast<std::size_t>(family) < kKernelFamilyCount && variant >= 0 && variant < 32 &&
         offers_impl(family, variant);
}

void BackendDevice::launch(const KernelLaunch& launch) {
  if (static_cast<std::size_t>(launch.family) >= kKernelFamilyCount)
    throw InvalidArgument("launch", "launch on " + display_name() + ": family code " +
                                        std::to_string(static_cast<int>(launch.family)) +
                                        " is not a kernel family.");
  const FamilySpec& spec = family_spec(launch.family);
  const std::string_view family = spec.name;
  if (launch.params.size() != spec.param_bytes)
    throw InvalidArgument(std::string(family),
                          std::string(family) + " launch on " + display_name() +
                              ": the parameter block has " + std::to_string(launch.params.size()) +
                              " bytes; the family's has " + std::to_string(spec.param_bytes) + ".");
  const std::byte* params = launch.params.data();
  const LaunchCheck check(launch.family, spec.op_of(params), this);
  if (launch.buffers.size() > spec.buffers.size())
    check.fail(std::to_string(launch.buffers.size()) + " buffers bound; the family binds at most " +
               std::to_string(spec.buffers.size()));
  for (std::size_t k = 0; k < launch.buffers.size(); ++k)
    if (launch.buffers[k].memory && launch.buffers[k].written != spec.buffers[k].written)
      check.fail("buffer " + std::to_string(k) + " (" + std::string(spec.buffers[k].name) +
                 ") is marked " + (launch.buffers[k].written ? "written" : "read-only") +
                 "; the family " + (spec.buffers[k].written ? "writes" : "only reads") + " it");
  spec.validate(params, launch.buffers, check);
  const int variant = spec.variant_of(params);
  const std::string refusal =
      spec.variant_refusal(variant, params, properties_.subgroup_size.value_or(32));
  if (!refusal.empty())
    check.fail("the " + variant_name(launch.family, variant) + " variant does not serve it (" +
               refusal + ")");
  if (!offers(launch.family, variant)) {
    const std::string name = variant_name(launch.family, variant);
    throw Unsupported(check.op_name(), id_.str(), name,
                      check.op_name() + " on " + display_name() + ": this device does not offer " +
                          name + "; refused.");
  }
  bool writes_lent = false;
  {
    std::lock_guard<std::mutex> lock(owned_mutex_);  // once per launch, not per buffer
    for (const KernelBuffer& b : launch.buffers) {
      check_owned(family, b.memory);
      writes_lent =
          writes_lent || (b.written && !borrowed_.empty() && borrowed_.count(b.memory.handle) > 0);
    }
  }
  ++launches_;
  const int ran = launch_impl(launch);
  last_launch_ = {launch.family, ran};
  // A write into memory another library lent (DLPack) goes on the device's queue at once, not
  // into a batch of small launches (GpuDevice's elementwise batch): that library's next work
  // on its own stream must be able to follow it (the legacy default stream orders after ours;
  // seen on the H100: PyTorch read a borrowed view before nbx's queued fill_ ran).
  if (writes_lent) (void)native_queue_impl();
  if (ran != variant)
    throw Internal(check.op_name() + " on " + display_name() + ": the backend ran " +
                   variant_name(launch.family, ran) + " where the launch asked for " +
                   variant_name(launch.family, variant) + ".");
}

}  // namespace nbx
