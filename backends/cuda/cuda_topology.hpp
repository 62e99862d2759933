// How a CUDA device reaches the others, for `nbx caps` and Tensor::to's route: the runtime's
// peer access per pair (cudaDeviceCanAccessPeer) and, where NVML loads (libnvidia-ml.so.1,
// opened at run time: the driver ships it), the facts `nvidia-smi topo -m` prints — active
// NVLink links and each pair's connection (NV, PIX, PXB, PHB, NODE, SYS).
#pragma once

#include "core/backend.hpp"

namespace nbx::cuda {

// Adds extra["topology.*"] to `p`, the properties of device `index`: "topology.nvml" (the
// library, or why it is not there), "topology.nvlink" (active links), and one
// "topology.peer.cuda:J" for every other device J. Never throws: a fact not found says why.
void add_topology(int index, DeviceProperties& p);

}  // namespace nbx::cuda
