// GpuDevice<Rt>'s members: memory, copies, the stream, synchronisation with the fault
// channel, launches. Included by the one .cpp of each backend that instantiates it.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "backends/gpu_runtime/gpu_device.hpp"
#include "backends/gpu_runtime/gpu_device_peer.hpp"
#include "core/errors.hpp"
#include "kernels/gpu/family_launch.hpp"
#include "kernels/gpu/matmul_launch.hpp"
#include "kernels/gpu/vendor_launch.hpp"

namespace nbx::gpu_runtime {

// The vendor BLAS loads when a device opens; whether it did (and why not) is a property, and
// so is the elementwise batch size the wrapper plans batched launches by (NBX_GPU_BATCH).
inline DeviceProperties with_launch_properties(DeviceProperties p) {
  p.extra["matmul.blas"] = gpu::vendor_blas_status();
  p.extra["attention.cudnn"] = gpu::vendor_attention_status();
  gpu::ElementwiseOptions options;
  gpu::apply_environment(options);
  p.extra["elementwise.batch_max_numel"] = std::to_string(options.batch_max_numel);
  return p;
}

template <class Rt>
GpuDevice<Rt>::GpuDevice(int index, DeviceProperties properties)
    : BackendDevice(DeviceId{Rt::kBackend, index}, with_launch_properties(std::move(properties))),
      index_(index) {
  name_ = display_name();
  make_current();
  // A blocking stream (not a non-blocking one): it orders with the legacy default stream,
  // so tools that time with events on stream 0 bracket this stream's work.
  check(Rt::stream_create(&stream_), "StreamCreate");
  for (int s = 0; s < kStagingSlots; ++s) {
    const Error e = Rt::pinned_alloc(&staging_[s], kStagingBytes);
    if (e != Rt::kSuccess) Rt::fail(e, std::string(Rt::kPinnedAlloc) + "(staging)", name_);
    check(Rt::event_create(&staging_free_[s]), "EventCreate");
  }
  check(Rt::event_create(&handoff_), "EventCreate");
  // Mapped pinned memory: kernels write a fault straight into host memory, and
  // synchronize() reads it without a copy.
  void* fault = nullptr;
  const Error e = Rt::mapped_alloc(&fault, sizeof(abi::FaultRecord));
  if (e != Rt::kSuccess) Rt::fail(e, std::string(Rt::kMappedAlloc) + "(fault record)", name_);
  fault_host_ = static_cast<abi::FaultRecord*>(fault);
  std::memset(fault_host_, 0, sizeof(abi::FaultRecord));
  void* fault_device = nullptr;
  check(Rt::device_pointer(&fault_device, fault), "HostGetDevicePointer");
  fault_device_ = static_cast<abi::FaultRecord*>(fault_device);

  options_.warp_size = *this->properties().subgroup_size;  // always set by query_properties
  options_.multiprocessors = this->properties().compute_units;
  gpu::apply_environment(options_);
  // NBX_GPU_ROWS: the contiguous-row kernels of reduce, softmax and norm
  // (ElementwiseOptions::rows_fast).
  if (const char* rows = std::getenv("NBX_GPU_ROWS"); rows && *rows) {
    const std::string v = rows;
    if (v == "fast" || v == "default" || v == "fast-only" || v == "general")
      options_.rows_fast = v == "general" ? 0 : v == "fast-only" ? 2 : 1;
    else
      throw InvalidArgument("NBX_GPU_ROWS",
                            "NBX_GPU_ROWS must be fast (the default), general or "
                            "fast-only (got '" +
                                v + "').");
  }
  if (options_.batch_max_numel > 0)
    batch_.emplace(gpu::elementwise_batch_capacity(), fault_device_, stream_);
}

template <class Rt>
GpuDevice<Rt>::~GpuDevice() {
  // Errors are ignored here: a destructor must not throw, and a lost device fails them all.
  (void)Rt::set_device(index_);
  if (batch_) (void)batch_->flush();
  (void)Rt::stream_synchronize(stream_);
  gpu::release_vendor_blas(index_);
  gpu::release_vendor_attention(index_);
  for (int s = 0; s < kStagingSlots; ++s) {
    (void)Rt::event_destroy(staging_free_[s]);
    (void)Rt::pinned_free(staging_[s]);
  }
  (void)Rt::event_destroy(handoff_);
  (void)Rt::pinned_free(fault_host_);
  (void)Rt::stream_destroy(stream_);
}

template <class Rt>
void GpuDevice<Rt>::check(Error e, const char* call) const {
  if (e != Rt::kSuccess) Rt::fail(e, std::string(Rt::kPrefix) + call, name_);
}

template <class Rt>
void GpuDevice<Rt>::make_current() const {
  int current = -1;
  if (Rt::get_device(&current) != Rt::kSuccess || current != index_)
    check(Rt::set_device(index_), "SetDevice");
}

template <class Rt>
DeviceMemory GpuDevice<Rt>::allocate_impl(std::size_t bytes) {
  make_current();
  void* p = nullptr;
  const Error e = Rt::device_alloc(&p, bytes);
  if (e != Rt::kSuccess)
    Rt::fail(e, std::string(Rt::kPrefix) + "Malloc(" + std::to_string(bytes) + " bytes)", name_,
             bytes);
  allocated_ += bytes;
  return {p, bytes};
}

template <class Rt>
void GpuDevice<Rt>::free_impl(DeviceMemory memory) {
  make_current();
  flush_batch();  // queued ops may still use the block
  check(Rt::device_free(memory.handle), "Free");
  allocated_ -= memory.bytes;
}

template <class Rt>
MemoryInfo GpuDevice<Rt>::memory_info_impl() const {
  make_current();
  std::size_t free_bytes = 0, total = 0;
  check(Rt::mem_get_info(&free_bytes, &total), "MemGetInfo");
  return {free_bytes, total};
}

// Host → device through the staging slots in turn: the caller's bytes are copied into
// pinned memory before this returns (so the caller may reuse them at once), while the DMA
// of one slot overlaps the memcpy into the other.
template <class Rt>
void GpuDevice<Rt>::copy_from_host_impl(DeviceMemory dst, std::size_t dst_offset, const void* src,
                                        std::size_t bytes) {
  make_current();
  flush_batch();
  auto* out = static_cast<char*>(dst.handle) + dst_offset;
  const auto* in = static_cast<const char*>(src);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(kStagingBytes, bytes - done);
    const int s = next_slot_;
    next_slot_ = (next_slot_ + 1) % kStagingSlots;
    check(Rt::event_synchronize(staging_free_[s]), "EventSynchronize(staging)");
    std::memcpy(staging_[s], in + done, n);
    check(Rt::copy_to_device_async(out + done, staging_[s], n, stream_),
          "MemcpyAsync(host to device)");
    check(Rt::event_record(staging_free_[s], stream_), "EventRecord");
    done += n;
  }
}

// Device → host: chunk k is copied out of its slot while chunk k + 1 is in flight.
template <class Rt>
void GpuDevice<Rt>::copy_to_host_impl(void* dst, DeviceMemory src, std::size_t src_offset,
                                      std::size_t bytes) {
  make_current();
  flush_batch();
  const auto* in = static_cast<const char*>(src.handle) + src_offset;
  auto* out = static_cast<char*>(dst);
  std::size_t pending_at = 0, pending_n = 0;
  int pending_slot = -1;
  auto drain = [&] {
    if (pending_slot < 0) return;
    check(Rt::event_synchronize(staging_free_[pending_slot]), "EventSynchronize");
    std::memcpy(out + pending_at, staging_[pending_slot], pending_n);
    pending_slot = -1;
  };
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(kStagingBytes, bytes - done);
    const int s = next_slot_;
    next_slot_ = (next_slot_ + 1) % kStagingSlots;
    check(Rt::event_synchronize(staging_free_[s]), "EventSynchronize(staging)");
    check(Rt::copy_to_host_async(staging_[s], in + done, n, stream_),
          "MemcpyAsync(device to host)");
    check(Rt::event_record(staging_free_[s], stream_), "EventRecord");
    drain();
    pending_slot = s, pending_at = done, pending_n = n;
    done += n;
  }
  drain();
  raise_recorded_fault();
}

template <class Rt>
void GpuDevice<Rt>::copy_on_device_impl(DeviceMemory dst, std::size_t dst_offset, DeviceMemory src,
                                        std::size_t src_offset, std::size_t bytes) {
  make_current();
  flush_batch();
  // The runtime's "default" direction: with unified addressing this also copies from a
  // peer device.
  check(Rt::copy_any_async(static_cast<char*>(dst.handle) + dst_offset,
                           static_cast<const char*>(src.handle) + src_offset, bytes, stream_),
        "MemcpyAsync(device to device)");
}

template <class Rt>
void GpuDevice<Rt>::synchronize_impl() {
  make_current();
  flush_batch();
  check(Rt::stream_synchronize(stream_), "StreamSynchronize");
  raise_recorded_fault();
}

template <class Rt>
bool GpuDevice<Rt>::accepts_foreign_impl(const void* address, std::size_t bytes) const {
  make_current();
  int owner = -1;
  bool device_memory = false;
  check(Rt::pointer_device(address, &owner, &device_memory), "PointerGetAttributes");
  if (!device_memory || owner != index_)
    throw InvalidArgument(
        "from_dlpack",
        "from_dlpack on " + name_ + ": " + std::to_string(bytes) +
            " bytes lent at a pointer that is " +
            (device_memory ? Rt::kBackend + std::string(":") + std::to_string(owner) + "'s memory"
                           : std::string("not device memory")) +
            " (" + Rt::kPrefix + "PointerGetAttributes); refused.");
  return true;
}

template <class Rt>
void GpuDevice<Rt>::wait_idle_impl() noexcept {
  // A failing launch of the queued batch or a failing wait is the device's error, which the
  // next synchronize() reports; a borrow's end cannot throw it.
  try {
    make_current();
    flush_batch();
  } catch (...) {
  }
  (void)Rt::stream_synchronize(stream_);
}

template <class Rt>
void* GpuDevice<Rt>::native_queue_impl() {
  make_current();
  flush_batch();  // the batched elementwise ops go first
  return stream_;
}

template <class Rt>
class GpuDevice<Rt>::StreamEvent final : public TimingEvent {
 public:
  explicit StreamEvent(const GpuDevice& device) : device_(device) {
    device_.check(Rt::timed_event_create(&event_), "EventCreate");
  }
  ~StreamEvent() override { (void)Rt::event_destroy(event_); }
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;

  double ms_since(const TimingEvent& start) const override {
    const auto* begin = dynamic_cast<const StreamEvent*>(&start);
    if (!begin || &begin->device_ != &device_)
      throw InvalidArgument("Event", "Event on " + device_.name_ +
                                         ": elapsed time from another device's event; one "
                                         "device's clock only.");
    device_.make_current();
    device_.check(Rt::event_synchronize(event_), "EventSynchronize");
    float ms = 0;
    device_.check(Rt::event_elapsed_ms(&ms, begin->event_, event_), "EventElapsedTime");
    return ms;
  }

  typename Rt::Event event_ = nullptr;

 private:
  const GpuDevice& device_;
};

template <class Rt>
std::unique_ptr<TimingEvent> GpuDevice<Rt>::record_timing_event_impl() {
  make_current();
  flush_batch();  // the queued small launches come before the event
  auto event = std::make_unique<StreamEvent>(*this);
  check(Rt::event_record(event->event_, stream_), "EventRecord");
  return event;
}

template <class Rt>
void GpuDevice<Rt>::raise_recorded_fault() {
  // The stream has drained, so the record is final; volatile keeps the read from being
  // hoisted above the synchronisation.
  const volatile abi::FaultRecord* f = fault_host_;
  if (f->code == abi::kFaultNone) return;
  const abi::FaultRecord r{f->code, f->op, f->index, f->bound, f->position};
  std::memset(fault_host_, 0, sizeof(abi::FaultRecord));
  throw fault_error(r, id().str(), name_);
}

template <class Rt>
void GpuDevice<Rt>::flush_batch() {
  if (!batch_ || batch_->empty()) return;
  const gpu::ElementwiseLaunchResult r = batch_->flush();
  if (r.error != 0) Rt::fail(static_cast<Error>(r.error), r.call, name_);
}

// The family's parameter block, copied out of the launch (whose bytes need not be aligned);
// BackendDevice::launch has checked its size and contents.
template <class Params>
Params read_params(const KernelLaunch& launch) {
  Params p;
  std::memcpy(&p, launch.params.data(), sizeof p);
  return p;
}

template <class Rt>
bool GpuDevice<Rt>::offers_impl(KernelFamily family, int variant) const {
  const auto& entry = launchers()[static_cast<std::size_t>(family)];
  if (entry.launch == nullptr || (entry.variants & variant_bit(variant)) == 0) return false;
  // cuBLASLt is dlopen'ed when the device opens: offered only where it loaded.
  if (family == KernelFamily::kMatmul && variant == abi::kMatmulVendorBlas)
    return gpu::vendor_blas_available();
  // flash_mma's mma.sync and cp.async: CUDA compute capability 8.0 and newer; cuDNN's fused
  // attention the same, where the library loaded.
  if (family == KernelFamily::kAttention && variant == abi::kAttentionFlashMma)
    return this->properties().compute_capability_major >= 8;
  if (family == KernelFamily::kAttention && variant == abi::kAttentionCudnn)
    return this->properties().compute_capability_major >= 8 && gpu::vendor_attention_available();
  // The grouped GEMM's mma kernel needs cp.async and bf16 mma.sync: compute capability 8.0+.
  if (family == KernelFamily::kGroupedMatmul && variant == abi::kGroupedMatmulMma)
    return this->properties().compute_capability_major >= 8;
  // The grouped GEMM's blas variant runs cuBLASLt, like matmul.blas.
  if (family == KernelFamily::kGroupedMatmul && variant == abi::kGroupedMatmulBlas)
    return gpu::vendor_blas_available();
  // Batching needs the device's queue (absent with NBX_GPU_BATCH=0).
  if (family == KernelFamily::kElementwise && variant == abi::kElementwiseBatched)
    return batch_.has_value();
  // NBX_GPU_ROWS: general offers only the general kernels of the row families, fast-only
  // only their contiguous-row kernels (tests: a passing case proves those ran).
  const bool rows_variant = (family == KernelFamily::kReduce && variant == abi::kReduceRows) ||
                            (family == KernelFamily::kSoftmax && variant == abi::kSoftmaxRows) ||
                            (family == KernelFamily::kNorm && variant == abi::kNormRows);
  const bool row_family = family == KernelFamily::kReduce || family == KernelFamily::kSoftmax ||
                          family == KernelFamily::kNorm;
  if (rows_variant) return options_.rows_fast != 0;
  if (row_family && options_.rows_fast == 2) return false;
  return true;
}

template <class Rt>
int GpuDevice<Rt>::launch_impl(const KernelLaunch& launch) {
  // The join family binds the most buffers: its output and up to kJoinMaxInputs inputs.
  constexpr int kMaxBuffers = 1 + abi::kJoinMaxInputs;
  gpu::BoundBuffer buffers[kMaxBuffers];
  // ≤ the family's roles: validated (join_family.cpp bounds count by kJoinMaxInputs).
  const int n = static_cast<int>(launch.buffers.size());
  for (int k = 0; k < n; ++k)
    buffers[k] = {launch.buffers[k].memory.handle, launch.buffers[k].memory.bytes};
  make_current();
  if (launch.family != KernelFamily::kElementwise) flush_batch();
  const auto& entry = launchers()[static_cast<std::size_t>(launch.family)];
  const gpu::ElementwiseLaunchResult r = entry.launch(*this, launch, buffers, n);
  if (r.error != 0) Rt::fail(static_cast<Error>(r.error), r.call, name_);
  return family_spec(launch.family).variant_of(launch.params.data());
}

template <class Rt>
template <class Params>
gpu::ElementwiseLaunchResult GpuDevice<Rt>::run(GpuDevice& device, const KernelLaunch& launch,
                                                const gpu::BoundBuffer* buffers, int n) {
  gpu::GpuLaunch l;
  l.buffers = buffers;
  l.num_buffers = n;
  l.options = &device.options_;
  l.stream = device.stream_;
  l.fault = device.fault_device_;
  l.batch = device.batch_ ? &*device.batch_ : nullptr;
  l.device_index = device.index_;
  l.device_name = &device.name_;
  l.shared_memory_per_block = device.properties().shared_memory_per_block.value_or(49152);
  return gpu::launch_family(read_params<Params>(launch), l);
}

}  // namespace nbx::gpu_runtime
