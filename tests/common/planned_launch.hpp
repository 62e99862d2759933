// Raw launches with the variant a wrapper would choose, for the backend tests of the row
// kernels: the family's row variant (reduce.rows, softmax.rows, norm.rows) where the device
// offers it and its contract serves the block, else the block's own variant. Devices opened
// with NBX_GPU_ROWS=general or fast-only offer fewer variants, so the same call reaches the
// general kernels, or is refused by name where only the row kernels are offered.
#pragma once

#include "core/backend.hpp"

namespace nbx::testing {

// Launches `launch` on `device` (BackendDevice::launch) with the chosen variant written into
// a copy of its parameter block; returns that variant.
int launch_planned(BackendDevice& device, const KernelLaunch& launch);

}  // namespace nbx::testing
