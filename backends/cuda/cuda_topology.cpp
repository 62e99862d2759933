#include "backends/cuda/cuda_topology.hpp"

#include <cuda_runtime.h>

#include <mutex>
#include <string>

#include "backends/cuda/cuda_library_search.hpp"

namespace nbx::cuda {
namespace {

// The few NVML entry points used, declared here (the toolkit here ships no nvml.h); NVML's C
// ABI is stable across drivers. Values: NVML's nvmlGpuTopologyLevel_t (0, 10, … 50),
// nvmlGpuP2PCapsIndex_t (NVLINK = 2), nvmlGpuP2PStatus_t (OK = 0), nvmlEnableState_t.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kP2pCapsNvlink = 2;
constexpr int kP2pStatusOk = 0;
constexpr unsigned kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (H100/H200: 18)

struct Nvml {
  bool ok = false;
  std::string status;
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*handle_by_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*nvlink_state)(NvmlDevice, unsigned, unsigned*) = nullptr;
  NvmlReturn (*common_ancestor)(NvmlDevice, NvmlDevice, int*) = nullptr;
  NvmlReturn (*p2p_status)(NvmlDevice, NvmlDevice, int, int*) = nullptr;
};

const Nvml& nvml() {
  static Nvml api;
  static std::once_flag once;
  std::call_once(once, [] {
    const gpu::OpenedLibrary lib = gpu::open_vendor_library({"libnvidia-ml.so.1"});
    if (!lib.handle) {
      api.status = "not loadable (" + lib.tried + ")";
      return;
    }
    std::string missing;
    gpu::bind_symbol(lib.handle, "nvmlInit_v2", api.init, missing);
    gpu::bind_symbol(lib.handle, "nvmlDeviceGetHandleByPciBusId_v2", api.handle_by_bus_id, missing);
    gpu::bind_symbol(lib.handle, "nvmlDeviceGetNvLinkState", api.nvlink_state, missing);
    gpu::bind_symbol(lib.handle, "nvmlDeviceGetTopologyCommonAncestor", api.common_ancestor,
                     missing);
    gpu::bind_symbol(lib.handle, "nvmlDeviceGetP2PStatus", api.p2p_status, missing);
    if (!missing.empty()) {
      api.status = lib.path + " lacks " + missing;
      return;
    }
    if (const NvmlReturn r = api.init(); r != kNvmlSuccess) {
      api.status = lib.path + ": nvmlInit_v2 returned " + std::to_string(r);
      return;
    }
    api.ok = true;
    api.status = lib.path;
  });
  return api;
}

std::string bus_id(int index) {
  char bus[32] = {};
  return cudaDeviceGetPCIBusId(bus, sizeof bus, index) == cudaSuccess ? bus : "";
}

NvmlDevice nvml_device(int index) {
  NvmlDevice d = nullptr;
  const std::string bus = bus_id(index);
  if (bus.empty() || nvml().handle_by_bus_id(bus.c_str(), &d) != kNvmlSuccess) return nullptr;
  return d;
}

// nvidia-smi topo -m's words for NVML's common-ancestor levels.
std::string level_text(int level) {
  switch (level) {
    case 0:
      return "the same board";
    case 10:
      return "PIX (one PCIe switch)";
    case 20:
      return "PXB (several PCIe switches)";
    case 30:
      return "PHB (a PCIe host bridge)";
    case 40:
      return "NODE (host bridges of one NUMA node)";
    case 50:
      return "SYS (across NUMA nodes)";
  }
  return "level " + std::to_string(level);
}

}  // namespace

void add_topology(int index, DeviceProperties& p) {
  const Nvml& api = nvml();
  p.extra["topology.nvml"] = api.status;
  NvmlDevice self = api.ok ? nvml_device(index) : nullptr;
  if (self) {
    unsigned active = 0, links = 0;
    for (unsigned l = 0; l < kNvlinkMaxLinks; ++l) {
      unsigned state = 0;
      if (api.nvlink_state(self, l, &state) != kNvmlSuccess) continue;
      ++links;
      active += state == 1 ? 1 : 0;
    }
    p.extra["topology.nvlink"] =
        links == 0 ? "none (NVML reports no NVLink)"
                   : std::to_string(active) + " of " + std::to_string(links) + " links active";
  } else {
    p.extra["topology.nvlink"] =
        "unknown (" +
        (api.ok ? "NVML has no device at bus " + bus_id(index) : "NVML " + api.status) + ")";
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  if (count <= 1) p.extra["topology.peers"] = "none (the only CUDA device)";
  for (int j = 0; j < count; ++j) {
    if (j == index) continue;
    int can = 0;
    const bool asked = cudaDeviceCanAccessPeer(&can, index, j) == cudaSuccess;
    std::string text = !asked ? "peer access unknown" : can ? "peer access" : "no peer access";
    if (NvmlDevice other = self ? nvml_device(j) : nullptr) {
      int nvlink = -1, level = -1;
      if (api.p2p_status(self, other, kP2pCapsNvlink, &nvlink) == kNvmlSuccess &&
          nvlink == kP2pStatusOk)
        text += ", NV (NVLink)";
      else if (api.common_ancestor(self, other, &level) == kNvmlSuccess)
        text += ", " + level_text(level);
    }
    p.extra["topology.peer.cuda:" + std::to_string(j)] = text;
  }
}

}  // namespace nbx::cuda
