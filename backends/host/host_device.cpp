#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_scratch.hpp"
#include "core/errors.hpp"
#include "core/families/backend_variants.hpp"

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
  int launch_impl(const KernelLaunch& launch) override {
    const LaunchScope scope(*this);  // the kernel's scratch comes from this device's allocator
    const auto& entry = launchers()[static_cast<std::size_t>(launch.family)];
    entry.launch(launch);  // offers_impl granted it, so the entry has a launcher
    return family_spec(launch.family).variant_of(launch.params.data());
  }
  bool offers_impl(KernelFamily family, int variant) const override {
    const auto& entry = launchers()[static_cast<std::size_t>(family)];
    return entry.launch != nullptr && (entry.variants & variant_bit(variant)) != 0;
  }
  // Host memory is a plain address, and any host address is memory the kernels can take.
  void* address_of_impl(DeviceMemory memory) const override { return memory.handle; }
  bool accepts_foreign_impl(const void*, std::size_t) const override { return true; }
  std::unique_ptr<TimingEvent> record_timing_event_impl() override {
    return std::make_unique<HostClockEvent>();
  }

  // The host's event is its clock: every launch has finished when it returns.
  class HostClockEvent final : public TimingEvent {
   public:
    double ms_since(const TimingEvent& start) const override {
      const auto* begin = dynamic_cast<const HostClockEvent*>(&start);
      if (!begin)
        throw InvalidArgument("Event",
                              "Event: elapsed time between a host event and another "
                              "device's; one device's clock only.");
      return std::chrono::duration<double, std::milli>(at_ - begin->at_).count();
    }

   private:
    std::chrono::steady_clock::time_point at_ = std::chrono::steady_clock::now();
  };

  using Launcher = void (*)(const KernelLaunch&);
  template <class Params>
  static void run(const KernelLaunch& launch) {
    Params p;  // validated by BackendDevice::launch, including its size
    std::memcpy(&p, launch.params.data(), sizeof p);
    run_family(p, launch.buffers);
  }
  // A family the host implements (backend_variants.hpp) takes its run_family overload; one
  // it does not (the timestamp and copy_probe diagnostics) has no launcher and is refused.
  template <class Params, KernelFamily F>
  static constexpr FamilyEntry<Launcher> entry() {
    constexpr std::uint32_t variants = implemented_variants(BackendKind::kHost, F);
    if constexpr (variants == 0)
      return {F, nullptr, 0};
    else
      return {F, &run<Params>, variants};
  }
  // The reference computes each family one way; the variants it offers are the ones whose
  // results it defines identically (a variant is a GPU speed choice, never a semantic one).
  static const std::array<FamilyEntry<Launcher>, kKernelFamilyCount>& launchers() {
    static constexpr std::array<FamilyEntry<Launcher>, kKernelFamilyCount> table = {{
#define NBX_KERNEL_FAMILY(kId, id, Params) entry<Params, KernelFamily::kId>(),
#include "core/families/family_list.inc"
#undef NBX_KERNEL_FAMILY
    }};
    static_assert(covers_every_family(table));  // every family, in order
    return table;
  }

  mutable std::mutex mutex_;
  std::uint64_t limit_;
  std::uint64_t used_ = 0;
};

}  // namespace

std::uint64_t host_memory_limit_from_env() {
  const char* env = std::getenv("NBX_HOST_MEMORY_LIMIT");
  if (!env || !*env) return 0;
  const auto refuse = [&](const std::string& why) {
    throw InvalidArgument("NBX_HOST_MEMORY_LIMIT", "NBX_HOST_MEMORY_LIMIT='" + std::string(env) +
                                                       "' " + why +
                                                       " (examples: 1048576, 512M, 2G).");
  };
  // Digits first: strtoull would read "-5M" as 2^64 - 5 MiB and skip leading blanks.
  if (*env < '0' || *env > '9') refuse("is not a byte count");
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(env, &end, 10);
  if (errno == ERANGE) refuse("is larger than 2^64 bytes");
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
  if (end == env || scale == 0) refuse("is not a byte count");
  std::uint64_t bytes = 0;
  // 17592186044417M wrapped to a 1 MiB cap.
  if (__builtin_mul_overflow(std::uint64_t(v), scale, &bytes)) refuse("is larger than 2^64 bytes");
  return bytes;
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
