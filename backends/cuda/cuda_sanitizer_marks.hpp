// What a vendor library wrote, told to compute-sanitizer (NVTX memory API).
#pragma once

#include <cstddef>

namespace nbx::cuda {

// Marks [address, address + bytes) as initialized, by work on `stream` (a cudaStream_t), for
// compute-sanitizer's initcheck. Called after a vendor library (cuBLASLt, cuDNN) is given an
// output to write: initcheck does not see their kernels' stores (on the H100, 2026-12-07, every
// read back of a float16 attention or grouped-product output they wrote was reported, 888
// reports over those two ops, with values equal to the host's; the project's own kernels on
// the same cases: 0). A no-op costing a pointer test when no tool is attached;
// compute-sanitizer reads it under --nvtx yes, its default. Thread-safe; never throws.
void mark_written_by_vendor(void* stream, const void* address, std::size_t bytes) noexcept;

}  // namespace nbx::cuda
