#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "backends/host/host_backend.hpp"
#include "core/errors.hpp"

namespace nbx::host {
namespace {

constexpr std::size_t kAlignment = 64;  // a cache line; also enough for any vector load

DeviceProperties host_properties() {
  DeviceProperties p;
  p.name = "host";
  p.vendor = "host";
  p.arch = "host";
  p.driver = "nbx reference backend";
  p.compute_units = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  p.fp64 = p.fp16 = p.bf16 = p.int64 = p.int8 = true;
  return p;
}

std::uint64_t system_available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

class HostDevice final : public BackendDevice {
 public:
  HostDevice()
      : BackendDevice(DeviceId::host(), host_properties()), limit_(host_memory_limit_from_env()) {}

 private:
  DeviceMemory allocate_impl(std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    if (limit_ && used_ + bytes > limit_)
      throw OutOfMemory("host", bytes, limit_ - used_, 0, used_,
                        "The host memory cap (NBX_HOST_MEMORY_LIMIT=" + std::to_string(limit_) +
                            " bytes) leaves " + std::to_string(limit_ - used_) + " bytes; " +
                            std::to_string(bytes) + " were requested.");
    void* p = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    if (!p)
      throw OutOfMemory("host", bytes, system_available_memory(), 0, used_,
                        "The host could not allocate " + std::to_string(bytes) + " bytes.");
    used_ += bytes;
    return {p, bytes};
  }
  void free_impl(DeviceMemory memory) override {
    std::lock_guard lock(mutex_);
    std::free(memory.handle);
    used_ -= memory.bytes;
  }
  MemoryInfo memory_info_impl() const override {
    std::lock_guard lock(mutex_);
    if (limit_) return {limit_ - used_, limit_};
    const std::uint64_t avail = system_available_memory();
    return {avail, avail + used_};
  }
  void copy_from_host_impl(DeviceMemory dst, std::size_t off, const void* src,
                           std::size_t bytes) override {
    std::memcpy(static_cast<std::byte*>(dst.handle) + off, src, bytes);
  }
  void copy_to_host_impl(void* dst, DeviceMemory src, std::size_t off, std::size_t bytes) override {
    std::memcpy(dst, static_cast<const std::byte*>(src.handle) + off, bytes);
  }
  void copy_on_device_impl(DeviceMemory dst, std::size_t dst_off, DeviceMemory src,
                           std::size_t src_off, std::size_t bytes) override {
    std::memmove(static_cast<std::byte*>(dst.handle) + dst_off,
                 static_cast<const std::byte*>(src.handle) + src_off, bytes);
  }
  void synchronize_impl() override {}  // every launch has finished when it returns
  void launch_impl(const KernelLaunch& launch) override {
    const std::string_view k = launch.kernel;
    if (k == "elementwise")
      return run_elementwise(params_as<abi::ElementwiseParams>(launch), launch.buffers);
    if (k == "reduce") return run_reduce(params_as<abi::ReduceParams>(launch), launch.buffers);
    if (k == "softmax") return run_softmax(params_as<abi::SoftmaxParams>(launch), launch.buffers);
    if (k == "norm") return run_norm(params_as<abi::NormParams>(launch), launch.buffers);
    if (k == "scan") return run_scan(params_as<abi::ScanParams>(launch), launch.buffers);
    if (k == "matmul") return run_matmul(params_as<abi::MatmulParams>(launch), launch.buffers);
    if (k == "fill") return run_fill(params_as<abi::FillParams>(launch), launch.buffers);
    // Families are added here as their host reference lands.
    throw Internal("The host backend has no " + std::string(k) + " kernel.");
  }
  bool has_kernel_impl(std::string_view kernel) const override {
    for (const char* k : {"elementwise", "reduce", "softmax", "norm", "scan", "matmul", "fill"})
      if (kernel == k) return true;
    return false;
  }

  template <class Params>
  static Params params_as(const KernelLaunch& launch) {
    if (launch.params.size() != sizeof(Params))
      throw InvalidArgument(std::string(launch.kernel), std::string(launch.kernel) +
                                                            ": the parameter block has " +
                                                            std::to_string(launch.params.size()) +
                                                            " bytes; the host kernel expects " +
                                                            std::to_string(sizeof(Params)) + ".");
    Params p;
    std::memcpy(&p, launch.params.data(), sizeof p);
    return p;
  }

  mutable std::mutex mutex_;
  std::uint64_t limit_;
  std::uint64_t used_ = 0;
};

}  // namespace

std::uint64_t host_memory_limit_from_env() {
  const char* env = std::getenv("NBX_HOST_MEMORY_LIMIT");
  if (!env || !*env) return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(env, &end, 10);
  std::uint64_t scale = 1;
  if (end && *end) {
    switch (*end) {
      case 'K':
      case 'k':
        scale = 1ull << 10;
        break;
      case 'M':
      case 'm':
        scale = 1ull << 20;
        break;
      case 'G':
      case 'g':
        scale = 1ull << 30;
        break;
      default:
        scale = 0;
    }
    if (scale && end[1] != '\0' && std::strcmp(end + 1, "iB") != 0 &&
        std::strcmp(end + 1, "B") != 0)
      scale = 0;
  }
  if (end == env || scale == 0)
    throw InvalidArgument("NBX_HOST_MEMORY_LIMIT",
                          "NBX_HOST_MEMORY_LIMIT='" + std::string(env) +
                              "' is not a byte count (examples: 1048576, 512M, 2G).");
  return v * scale;
}

DeviceListing HostBackend::list_devices() {
  return {{host_properties()}, ""};
}

std::unique_ptr<BackendDevice> HostBackend::open(int index) {
  if (index != 0)
    throw Unavailable(
        "host", "no such device",
        "There is one host device (host); host:" + std::to_string(index) + " does not exist.");
  return std::make_unique<HostDevice>();
}

}  // namespace nbx::host
