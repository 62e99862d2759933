// The CUDA backend's collectives: NCCL (cuda_nccl_loader.hpp) behind core's seam
// (core/collective_seam.hpp), on each device's own stream.
#pragma once

#include <string>

#include "core/collective_seam.hpp"

namespace nbx::cuda {

// The process's NCCL, or nullptr with the reason in `why_not` (no nccl.h at build time, no
// libnccl.so.2, a different major version).
CollectiveLibrary* nccl_library(std::string& why_not);

}  // namespace nbx::cuda
