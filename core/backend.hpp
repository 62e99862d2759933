// The backend seam: the whole contract a vendor implements, in one header.
//
// A `Backend` lists its devices and opens one. A `BackendDevice` reports runtime-queried
// properties, allocates raw memory, copies, synchronizes and launches named kernels.
// Public methods are non-virtual: they validate, then call the private `…_impl` that a
// backend overrides. Everything above this seam (tensors, the caching allocator, the op
// wrappers) is backend-neutral; everything below it never sees a Tensor.
//
// Threading: a BackendDevice is used from one thread at a time; the runtime serialises.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/device_id.hpp"
#include "core/families/kernel_family.hpp"
#include "core/kernel_buffer.hpp"

namespace nbx {

class CollectiveLibrary;  // core/collective_seam.hpp

// Facts the vendor runtime itself reports about a device. Optional fields stay empty where
// the runtime cannot tell; the capability model cross-checks them against device files.
struct DeviceProperties {
  std::string name;    // "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)", "host"
  std::string vendor;  // "nvidia", "amd", "intel", "mesa", "host", …
  std::string arch;    // "sm_90", "gfx90a", "llvmpipe", "host": the device-file match key
  std::string driver;  // driver / runtime version text
  std::uint32_t pci_vendor_id = 0;  // Vulkan vendorID (0x10de NVIDIA, 0x1002 AMD, 0x10005 Mesa)
  std::uint32_t pci_device_id = 0;
  std::uint32_t vulkan_driver_id = 0;  // VkDriverId, 0 outside Vulkan
  int compute_capability_major = 0;    // CUDA only
  int compute_capability_minor = 0;
  std::uint64_t total_memory = 0;  // bytes
  int compute_units = 0;           // SMs, CUs, or host threads

  // bf16: true = the device can hold and compute bfloat16 tensors. Whether that is native
  // arithmetic or float32 emulation is told by extra["bf16"] ("native …" / "emulated (why)");
  // without that entry, true means native.
  std::optional<bool> fp64, fp16, bf16, int64, int8;
  std::optional<int> subgroup_size;  // the size kernels run with
  std::vector<int> subgroup_sizes;   // all sizes the device allows (subgroup size control)
  std::optional<int> max_threads_per_block;
  std::optional<std::int64_t> shared_memory_per_block;        // default, bytes
  std::optional<std::int64_t> shared_memory_per_block_optin;  // opt-in maximum, bytes
  std::optional<std::int64_t> l2_cache_bytes;
  std::optional<std::string> matrix_unit;  // "mma", "wgmma", "coopmat", … when the runtime says
  std::optional<std::uint32_t> max_push_constant_bytes;  // Vulkan
  // Anything else worth showing (extensions, limits): printed by `nbx devices -v`. A key
  // "source.<capability>" names the runtime query behind a value, for provenance.
  std::map<std::string, std::string> extra;
};

// A kernel launch: its family, its buffers in the order the family defines
// (core/families/<family>_family.cpp lists their roles), and the family's POD parameter
// block (kernel_abi.hpp). Build it with kernel_launch(params, buffers).
struct KernelLaunch {
  KernelFamily family = KernelFamily::kElementwise;
  std::span<const KernelBuffer> buffers;
  std::span<const std::byte> params;
};

template <class Params>
KernelLaunch kernel_launch(const Params& params, std::span<const KernelBuffer> buffers) {
  return {FamilyOf<Params>::value, buffers, std::as_bytes(std::span(&params, 1))};
}

// What the last launch ran: its family and the variant the backend launched.
struct LaunchRecord {
  KernelFamily family = KernelFamily::kElementwise;
  int variant = -1;  // -1 before the first launch
};

// A point in a device's queue for nbx::Event (core/event.hpp): it completes once every
// launch and copy issued before it has. Backends subclass it (CUDA/HIP: a stream event with
// timing; the host: its clock, its work being done when a launch returns).
class TimingEvent {
 public:
  virtual ~TimingEvent() = default;
  // Milliseconds from `start`, an earlier event of the same device, to this one; waits until
  // this one has completed. Throws InvalidArgument for an event of another kind of device.
  virtual double ms_since(const TimingEvent& start) const = 0;
};

// Memory another library allocated, lent to a device (BackendDevice::borrow).
struct BorrowedMemory {
  DeviceMemory memory;     // what copies and launches take; its handle is aligned (below)
  std::size_t head_bytes;  // where the lent address lies in it
};

struct MemoryInfo {
  std::uint64_t free = 0;   // bytes the driver could still give
  std::uint64_t total = 0;  // bytes the device has (or the cap, on a capped host)
};

class CachingAllocator;  // core/caching_allocator.hpp

// How bytes go from one device to another of the same backend (Tensor::to, core/ops/copy.cpp).
enum class PeerRoute {
  kNone,    // the backend has no copy between its devices: core stages through host memory
  kPeer,    // the runtime copies between the two directly (peer access over NVLink or PCIe)
  kStaged,  // through the backend's pinned host buffers, on the two devices' own queues
};
const char* peer_route_name(PeerRoute route);  // "none", "peer", "staged"

// Memory a launcher holds only while it runs (BackendDevice::scratch); it goes back to the
// device's caching allocator when the block goes out of scope. Move-only.
class ScratchBlock {
 public:
  ScratchBlock() = default;
  ScratchBlock(CachingAllocator* allocator, DeviceMemory memory)
      : allocator_(allocator), memory_(memory) {}
  ScratchBlock(ScratchBlock&& other) noexcept
      : allocator_(other.allocator_), memory_(other.memory_) {
    other.memory_ = {};
  }
  ScratchBlock& operator=(ScratchBlock&& other) noexcept;
  ScratchBlock(const ScratchBlock&) = delete;
  ScratchBlock& operator=(const ScratchBlock&) = delete;
  ~ScratchBlock();
  // At least the bytes asked for (the allocator's size class); empty for zero bytes.
  const DeviceMemory& memory() const { return memory_; }

 private:
  CachingAllocator* allocator_ = nullptr;
  DeviceMemory memory_;
};

class BackendDevice {
 public:
  virtual ~BackendDevice() = default;
  BackendDevice(const BackendDevice&) = delete;
  BackendDevice& operator=(const BackendDevice&) = delete;

  const DeviceId& id() const { return id_; }
  const DeviceProperties& properties() const { return properties_; }
  // "cuda:0 (NVIDIA H200)": how error messages name the device.
  std::string display_name() const;

  // Raw allocation, no caching (the CachingAllocator above does that). Throws OutOfMemory
  // when the driver has no memory; the allocator retries once after returning its pool.
  // A zero-byte request returns an empty DeviceMemory.
  //
  // The device remembers what it allocated: free, the copies and launch refuse
  // (InvalidArgument) memory it did not allocate or has freed — another device's, a double
  // free — and a DeviceMemory claiming more bytes than its allocation, where a backend would
  // otherwise cast a foreign handle or read past the end.
  DeviceMemory allocate(std::size_t bytes);
  void free(DeviceMemory memory);
  MemoryInfo memory_info() const { return memory_info_impl(); }

  // Copies are ordered with launches on the device's one queue/stream. A copy *to* the
  // host returns once the bytes are there; the others may return before completion.
  void copy_from_host(DeviceMemory dst, std::size_t dst_offset, const void* src, std::size_t bytes);
  void copy_to_host(void* dst, DeviceMemory src, std::size_t src_offset, std::size_t bytes);
  void copy_on_device(DeviceMemory dst, std::size_t dst_offset, DeviceMemory src,
                      std::size_t src_offset, std::size_t bytes);
  // Waits until every launch and copy issued so far has finished, then reports any fault
  // a kernel recorded (DeviceFault) and any lost device (DeviceLost).
  void synchronize();

  // Validates the launch through its family (core/families: parameter-block size, every
  // count, dtype, offset and stride, each view against its buffer, overflow-checked) and
  // throws InvalidArgument naming the op and the device when it breaks the ABI; throws
  // Unsupported naming "<family>.<variant>" when this device does not offer the variant the
  // block asks for. Then the backend runs exactly that variant: it never substitutes one.
  void launch(const KernelLaunch& launch);
  // Whether this device runs `variant` of `family` (a cheap, constant answer per device).
  bool offers(KernelFamily family, int variant = 0) const;
  // The family and variant of the last launch (tests compare it with `nbx explain`).
  LaunchRecord last_launch() const { return last_launch_; }

  std::uint64_t launches() const { return launches_; }

  // Scratch memory for the launch in progress (the host reference holds each reduced row
  // there), from the caching allocator of the Device that owns this device: it counts
  // against the same memory (NBX_HOST_MEMORY_LIMIT on the host), and a request the device
  // cannot meet throws OutOfMemory with the allocator's figures (requested, free, reserved,
  // allocated), as a tensor's would. `count` items of `item_bytes` each, the product
  // overflow-checked (OutOfMemory past 2^64 bytes). Throws Internal for a device no Device
  // owns. Call it only from a launch: the allocator's lock is taken, the launch mutex held.
  ScratchBlock scratch(std::uint64_t count, std::size_t item_bytes);
  // Set once by the DeviceContext that owns this device and its allocator.
  void attach_allocator(CachingAllocator* allocator) { allocator_ = allocator; }

  // ---- memory shared with other libraries (DLPack: core/dlpack.cpp) ----
  // The address of `memory`'s first byte as other code on this device uses it (a host or
  // device pointer). Throws Unsupported (capability "dlpack") where this device's memory is
  // not such an address (a Vulkan buffer), InvalidArgument for memory it does not own.
  void* address_of(DeviceMemory memory) const;
  // Lends this device `bytes` at `address`, memory another library allocated for it: copies
  // and launches take the returned memory until end_borrow; nothing is allocated or freed.
  // The memory's handle is `address` rounded down to kBorrowAlignment — the alignment of the
  // device's own allocations, which kernels may assume — and head_bytes the difference.
  // Throws Unsupported (capability "dlpack") where the device takes no foreign memory,
  // InvalidArgument where its runtime says the address is not memory of this device.
  static constexpr std::size_t kBorrowAlignment = 256;
  BorrowedMemory borrow(void* address, std::size_t bytes);
  // Ends a borrow: waits for the work issued so far (the lender may reuse the memory at
  // once), then forgets it. Never throws: it runs when the last tensor view goes.
  void end_borrow(DeviceMemory memory) noexcept;

  // ---- timing (nbx::Event: core/event.hpp) ----
  // An event after the work issued so far; nullptr where the device has no timed events of
  // its own (nbx::Event then uses the "timestamp" family where the device offers it).
  std::unique_ptr<TimingEvent> record_timing_event() { return record_timing_event_impl(); }

  // ---- another library's work on this device's queue (collectives) ----
  // The runtime's queue (a cudaStream_t) with everything issued so far enqueued before what
  // is put on it next, the device made current for the calling thread; nullptr where the
  // device has no such queue (host, Vulkan). Call with the device's launch mutex held.
  void* native_queue() { return native_queue_impl(); }

  // ---- copies between two devices of one backend (Tensor::to: core/ops/copy.cpp) ----
  // The route from `src` to this device and, in `why`, what decided it (the runtime's peer
  // query, or NBX_PEER_COPY=staged). kNone for another backend's device or this device itself.
  PeerRoute peer_route(const BackendDevice& src, std::string* why = nullptr) const;
  // Copies `bytes` of `src_memory` (src's) into `dst` (this device's) by peer_route's route,
  // ordered after the work issued to both devices so far and before what either is issued
  // next; it may return before the bytes are there. Throws InvalidArgument where the route
  // is kNone or either memory is not its device's, as copy_on_device checks. Call with both
  // devices' launch mutexes held.
  void copy_from_peer(DeviceMemory dst, std::size_t dst_offset, BackendDevice& src,
                      DeviceMemory src_memory, std::size_t src_offset, std::size_t bytes);

 protected:
  BackendDevice(DeviceId id, DeviceProperties properties)
      : id_(std::move(id)), properties_(std::move(properties)) {}

 private:
  virtual DeviceMemory allocate_impl(std::size_t bytes) = 0;
  virtual void free_impl(DeviceMemory memory) = 0;
  virtual MemoryInfo memory_info_impl() const = 0;
  virtual void copy_from_host_impl(DeviceMemory dst, std::size_t dst_offset, const void* src,
                                   std::size_t bytes) = 0;
  virtual void copy_to_host_impl(void* dst, DeviceMemory src, std::size_t src_offset,
                                 std::size_t bytes) = 0;
  virtual void copy_on_device_impl(DeviceMemory dst, std::size_t dst_offset, DeviceMemory src,
                                   std::size_t src_offset, std::size_t bytes) = 0;
  virtual void synchronize_impl() = 0;
  // Runs a launch that passed validation and whose variant offers() granted; returns the
  // variant it ran, which must be the one the parameter block asks for.
  virtual int launch_impl(const KernelLaunch& launch) = 0;
  virtual bool offers_impl(KernelFamily family, int variant) const = 0;
  // Optional: the address other code uses for `memory`; default nullptr, which address_of
  // refuses by name (memory that is not a plain address).
  virtual void* address_of_impl(DeviceMemory) const { return nullptr; }
  // Optional: whether this device can take [address, address + bytes) as memory of its own,
  // throwing InvalidArgument where its runtime says the range is another device's or none;
  // default false, which borrow refuses by name.
  virtual bool accepts_foreign_impl(const void* /*address*/, std::size_t /*bytes*/) const {
    return false;
  }
  // Optional: waits for the work issued so far without reporting faults (synchronize
  // reports them) and without throwing; default nothing, for a device whose work has
  // finished when launch returns.
  virtual void wait_idle_impl() noexcept {}
  // Optional: an event of the device's own (see record_timing_event); default nullptr.
  virtual std::unique_ptr<TimingEvent> record_timing_event_impl() { return nullptr; }
  // Optional: see native_queue; default nullptr.
  virtual void* native_queue_impl() { return nullptr; }
  // Optional: see peer_route and copy_from_peer; src is another device of this backend,
  // both memories checked. Default kNone, which copy_from_peer refuses.
  virtual PeerRoute peer_route_impl(const BackendDevice& /*src*/, std::string* /*why*/) const {
    return PeerRoute::kNone;
  }
  virtual void copy_from_peer_impl(DeviceMemory /*dst*/, std::size_t /*dst_offset*/,
                                   BackendDevice& /*src*/, DeviceMemory /*src_memory*/,
                                   std::size_t /*src_offset*/, std::size_t /*bytes*/) {}

  // Throws InvalidArgument unless each non-empty memory is a live allocation or borrow of
  // this device of at least memory.bytes bytes (an allocation only, without lent_ok);
  // check_owned expects owned_mutex_ held.
  void require_owned(std::string_view what, std::initializer_list<DeviceMemory> memories) const;
  void check_owned(std::string_view what, DeviceMemory memory, bool lent_ok = true) const;

  DeviceId id_;
  DeviceProperties properties_;
  CachingAllocator* allocator_ = nullptr;  // the owning DeviceContext's (scratch)
  std::uint64_t launches_ = 0;
  LaunchRecord last_launch_;
  mutable std::mutex owned_mutex_;
  std::unordered_map<const void*, std::size_t> owned_;  // live allocations: handle → bytes
  // Live borrows, handle → bytes; one handle may be lent several times (two views of one
  // foreign tensor), and may also be an allocation of ours lent back (a round trip).
  std::unordered_multimap<const void*, std::size_t> borrowed_;
};

// What a backend says when asked for its devices: the devices, or why there are none.
struct DeviceListing {
  std::vector<DeviceProperties> devices;  // index i is device "<backend>:i"
  std::string unavailable_reason;         // non-empty when the backend has no device
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "host", "cuda", "hip", "vulkan".
  virtual std::string_view name() const = 0;
  // Never throws for an absent driver or device: reports the reason instead.
  virtual DeviceListing list_devices() = 0;
  // Throws Unavailable when the index does not name a present device.
  virtual std::unique_ptr<BackendDevice> open(int index) = 0;
  // The library this backend runs collectives with (NCCL on CUDA), loaded on first use and
  // owned by the backend; nullptr with the reason in `why_not` where there is none.
  virtual CollectiveLibrary* collectives(std::string& why_not) {
    why_not = "the " + std::string(name()) + " backend has no collective library";
    return nullptr;
  }
  // Where collectives() gives nullptr: whether core may run them by staging through host
  // memory (host, Vulkan: no vendor library exists) or must refuse (CUDA/HIP without
  // NCCL/RCCL: staging would hide a missing library behind a far slower path).
  virtual bool stages_collectives_through_host() const { return true; }
};

}  // namespace nbx
