#include "backends/cuda/cuda_sanitizer_marks.hpp"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExtMemCudaRt.h>

namespace nbx::cuda {

void mark_written_by_vendor(void* stream, const void* address, std::size_t bytes) noexcept {
  if (bytes == 0) return;
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("nbxtensor");
  nvtxMemVirtualRangeDesc_t range{};
  range.ptr = address;
  range.size = bytes;
  nvtxMemMarkInitializedBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof batch;
  batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.regionDescCount = 1;
  batch.regionDescElementSize = sizeof range;
  batch.regionDescElements = &range;
  nvtxMemCudaMarkInitialized(domain, static_cast<cudaStream_t>(stream), 0, &batch);
}

}  // namespace nbx::cuda
