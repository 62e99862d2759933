// CudaDevice: memory, copies, the stream, synchronisation with the fault channel, launches.
#include "backends/cuda/cuda_device.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "backends/cuda/cuda_errors.hpp"
#include "core/errors.hpp"
#include "kernels/gpu/fill_launch.hpp"
#include "kernels/gpu/reduce_launch.hpp"

namespace nbx::cuda {

CudaDevice::CudaDevice(int index, DeviceProperties properties)
    : BackendDevice(DeviceId{"cuda", index}, std::move(properties)), index_(index) {
  name_ = display_name();
  make_current();
  // A blocking stream (not cudaStreamNonBlocking): it orders with the legacy default
  // stream, so tools that time with events on stream 0 bracket this stream's work.
  check(cudaStreamCreate(&stream_), "cudaStreamCreate", name_);
  for (int s = 0; s < kStagingSlots; ++s) {
    check(cudaMallocHost(&staging_[s], kStagingBytes), "cudaMallocHost(staging)", name_);
    check(cudaEventCreateWithFlags(&staging_free_[s], cudaEventDisableTiming), "cudaEventCreate",
          name_);
  }
  // Mapped pinned memory: kernels write a fault straight into host memory, and
  // synchronize() reads it without a copy.
  void* fault = nullptr;
  check(cudaHostAlloc(&fault, sizeof(abi::FaultRecord), cudaHostAllocMapped),
        "cudaHostAlloc(fault record)", name_);
  fault_host_ = static_cast<abi::FaultRecord*>(fault);
  std::memset(fault_host_, 0, sizeof(abi::FaultRecord));
  void* fault_device = nullptr;
  check(cudaHostGetDevicePointer(&fault_device, fault, 0), "cudaHostGetDevicePointer", name_);
  fault_device_ = static_cast<abi::FaultRecord*>(fault_device);

  options_.warp_size = *this->properties().subgroup_size;  // always set by query_properties
  options_.multiprocessors = this->properties().compute_units;
  gpu::apply_environment(options_);
  if (options_.batch_max_numel > 0)
    batch_.emplace(gpu::elementwise_batch_capacity(), fault_device_, stream_);
}

CudaDevice::~CudaDevice() {
  // Errors are ignored here: a destructor must not throw, and a lost device fails them all.
  make_current();
  if (batch_) (void)batch_->flush();
  (void)cudaStreamSynchronize(stream_);
  for (int s = 0; s < kStagingSlots; ++s) {
    (void)cudaEventDestroy(staging_free_[s]);
    (void)cudaFreeHost(staging_[s]);
  }
  (void)cudaFreeHost(fault_host_);
  (void)cudaStreamDestroy(stream_);
}

void CudaDevice::make_current() const {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != index_)
    check(cudaSetDevice(index_), "cudaSetDevice", name_);
}

DeviceMemory CudaDevice::allocate_impl(std::size_t bytes) {
  make_current();
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess)
    throw_error(e, "cudaMalloc(" + std::to_string(bytes) + " bytes)", name_, bytes);
  allocated_ += bytes;
  return {p, bytes};
}

void CudaDevice::free_impl(DeviceMemory memory) {
  make_current();
  flush_batch();  // queued ops may still use the block
  check(cudaFree(memory.handle), "cudaFree", name_);
  allocated_ -= memory.bytes;
}

MemoryInfo CudaDevice::memory_info_impl() const {
  make_current();
  std::size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo", name_);
  return {free_bytes, total};
}

// Host → device through the staging slots in turn: the caller's bytes are copied into
// pinned memory before this returns (so the caller may reuse them at once), while the DMA
// of one slot overlaps the memcpy into the other.
void CudaDevice::copy_from_host_impl(DeviceMemory dst, std::size_t dst_offset, const void* src,
                                     std::size_t bytes) {
  make_current();
  flush_batch();
  auto* out = static_cast<char*>(dst.handle) + dst_offset;
  const auto* in = static_cast<const char*>(src);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(kStagingBytes, bytes - done);
    const int s = next_slot_;
    next_slot_ = (next_slot_ + 1) % kStagingSlots;
    check(cudaEventSynchronize(staging_free_[s]), "cudaEventSynchronize(staging)", name_);
    std::memcpy(staging_[s], in + done, n);
    check(cudaMemcpyAsync(out + done, staging_[s], n, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync(host to device)", name_);
    check(cudaEventRecord(staging_free_[s], stream_), "cudaEventRecord", name_);
    done += n;
  }
}

// Device → host: chunk k is copied out of its slot while chunk k + 1 is in flight.
void CudaDevice::copy_to_host_impl(void* dst, DeviceMemory src, std::size_t src_offset,
                                   std::size_t bytes) {
  make_current();
  flush_batch();
  const auto* in = static_cast<const char*>(src.handle) + src_offset;
  auto* out = static_cast<char*>(dst);
  std::size_t pending_at = 0, pending_n = 0;
  int pending_slot = -1;
  auto drain = [&] {
    if (pending_slot < 0) return;
    check(cudaEventSynchronize(staging_free_[pending_slot]), "cudaEventSynchronize", name_);
    std::memcpy(out + pending_at, staging_[pending_slot], pending_n);
    pending_slot = -1;
  };
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(kStagingBytes, bytes - done);
    const int s = next_slot_;
    next_slot_ = (next_slot_ + 1) % kStagingSlots;
    check(cudaEventSynchronize(staging_free_[s]), "cudaEventSynchronize(staging)", name_);
    check(cudaMemcpyAsync(staging_[s], in + done, n, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync(device to host)", name_);
    check(cudaEventRecord(staging_free_[s], stream_), "cudaEventRecord", name_);
    drain();
    pending_slot = s, pending_at = done, pending_n = n;
    done += n;
  }
  drain();
  raise_recorded_fault();
}

void CudaDevice::copy_on_device_impl(DeviceMemory dst, std::size_t dst_offset, DeviceMemory src,
                                     std::size_t src_offset, std::size_t bytes) {
  make_current();
  flush_batch();
  // cudaMemcpyDefault: with unified addressing this also copies from a peer device.
  check(cudaMemcpyAsync(static_cast<char*>(dst.handle) + dst_offset,
                        static_cast<const char*>(src.handle) + src_offset, bytes, cudaMemcpyDefault,
                        stream_),
        "cudaMemcpyAsync(device to device)", name_);
}

void CudaDevice::synchronize_impl() {
  make_current();
  flush_batch();
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", name_);
  raise_recorded_fault();
}

void CudaDevice::raise_recorded_fault() {
  // The stream has drained, so the record is final; volatile keeps the read from being
  // hoisted above the synchronisation.
  const volatile abi::FaultRecord* f = fault_host_;
  if (f->code == abi::kFaultNone) return;
  const abi::FaultRecord r{f->code, f->op, f->index, f->bound, f->position};
  std::memset(fault_host_, 0, sizeof(abi::FaultRecord));
  const std::string op = gpu::elementwise_op_name(r.op);
  if (r.code == abi::kFaultIntegerDivisionByZero)
    throw DeviceFault(op, id().str(), r.index, r.bound, r.position,
                      op + " on " + name_ + ": integer division by zero at position " +
                          std::to_string(r.position) + " (dividend " + std::to_string(r.index) +
                          ").");
  throw DeviceFault(op, id().str(), r.index, r.bound, r.position,
                    op + " on " + name_ + ": index " + std::to_string(r.index) +
                        " is out of range [0, " + std::to_string(r.bound) + ") at position " +
                        std::to_string(r.position) + ".");
}

void CudaDevice::flush_batch() {
  if (!batch_ || batch_->empty()) return;
  const gpu::ElementwiseLaunchResult r = batch_->flush();
  if (r.error != 0) throw_error(static_cast<cudaError_t>(r.error), r.call, name_);
}

bool CudaDevice::has_kernel_impl(std::string_view kernel) const {
  return kernel == "elementwise" || kernel == "fill" || kernel == "reduce";
}

namespace {

// The family's parameter block, copied out of the launch (whose bytes need not be aligned).
template <class Params>
Params read_params(const KernelLaunch& launch, const std::string& device) {
  const std::string family(launch.kernel);
  if (launch.params.size() != sizeof(Params))
    throw InvalidArgument(family, family + " on " + device + ": the parameter block has " +
                                      std::to_string(launch.params.size()) +
                                      " bytes; the kernel expects " +
                                      std::to_string(sizeof(Params)) + ".");
  Params p;
  std::memcpy(&p, launch.params.data(), sizeof p);
  return p;
}

}  // namespace

void CudaDevice::launch_impl(const KernelLaunch& launch) {
  gpu::BoundBuffer buffers[1 + abi::kMaxElementwiseInputs];
  const int n = static_cast<int>(launch.buffers.size());
  if (n > 1 + abi::kMaxElementwiseInputs)
    throw InvalidArgument(std::string(launch.kernel), std::string(launch.kernel) + " on " + name_ +
                                                          ": " + std::to_string(n) +
                                                          " buffers bound; at most 4 are read.");
  for (int k = 0; k < n; ++k)
    buffers[k] = {launch.buffers[k].memory.handle, launch.buffers[k].memory.bytes};
  make_current();
  gpu::ElementwiseLaunchResult r;
  if (launch.kernel != "elementwise") flush_batch();
  if (launch.kernel == "reduce") {
    r = gpu::launch_reduce(read_params<abi::ReduceParams>(launch, name_), buffers, n, options_,
                           stream_);
  } else if (launch.kernel == "fill") {
    r = gpu::launch_fill(read_params<abi::FillParams>(launch, name_), buffers, n, options_,
                         stream_);
  } else {
    r = gpu::launch_elementwise(read_params<abi::ElementwiseParams>(launch, name_), buffers, n,
                                fault_device_, options_, stream_, batch_ ? &*batch_ : nullptr);
  }
  if (r.error != 0) throw_error(static_cast<cudaError_t>(r.error), r.call, name_);
}

}  // namespace nbx::cuda
