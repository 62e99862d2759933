// The variants each backend's kernels implement, family by family: the one table the
// backends' launcher tables take their variant masks from and `nbx explain --arch` reads for
// an architecture that is not present. A device may offer fewer at run time (cuBLASLt not
// loaded, no cooperative-matrix shape, NBX_GPU_ROWS), never more; a test checks that.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/families/kernel_family.hpp"

namespace nbx {

enum class BackendKind { kHost, kCuda, kHip, kVulkan, kUnknown };

constexpr BackendKind backend_kind(std::string_view name) {
  return name == "host"     ? BackendKind::kHost
         : name == "cuda"   ? BackendKind::kCuda
         : name == "hip"    ? BackendKind::kHip
         : name == "vulkan" ? BackendKind::kVulkan
                            : BackendKind::kUnknown;
}

// Bit v set: the backend's kernels implement variant v of `family`; 0: the family is not
// offered at all (refused by name).
constexpr std::uint32_t implemented_variants(BackendKind backend, KernelFamily family) {
  const bool gpu = backend == BackendKind::kCuda || backend == BackendKind::kHip;
  const auto bit = variant_bit;
  switch (family) {
    case KernelFamily::kElementwise:
      return gpu ? bit(abi::kElementwiseStrided) | bit(abi::kElementwiseBatched)
             : backend == BackendKind::kUnknown ? 0
                                                : bit(abi::kElementwiseStrided);
    case KernelFamily::kFill:
      return backend == BackendKind::kUnknown ? 0 : bit(0);
    case KernelFamily::kGather:  // rows: gather_kernels.cu and gather_rows.comp
      return gpu || backend == BackendKind::kVulkan
                 ? bit(abi::kGatherStrided) | bit(abi::kGatherRows)
             : backend == BackendKind::kUnknown ? 0
                                                : bit(abi::kGatherStrided);
    case KernelFamily::kReduce:
      return gpu                                ? bit(abi::kReduceGeneral) | bit(abi::kReduceRows)
             : backend == BackendKind::kUnknown ? 0
                                                : bit(abi::kReduceGeneral);
    case KernelFamily::kSoftmax:
      return gpu ? bit(abi::kSoftmaxOnePass) | bit(abi::kSoftmaxLooped) | bit(abi::kSoftmaxRows)
             : backend == BackendKind::kUnknown
                 ? 0
                 : bit(abi::kSoftmaxOnePass) | bit(abi::kSoftmaxLooped);
    case KernelFamily::kNorm:
      return gpu                                ? bit(abi::kNormGeneral) | bit(abi::kNormRows)
             : backend == BackendKind::kUnknown ? 0
                                                : bit(abi::kNormGeneral);
    case KernelFamily::kScan:
      return backend == BackendKind::kVulkan ? bit(abi::kScanLanes) | bit(abi::kScanBlock)
             : backend == BackendKind::kUnknown
                 ? 0
                 : bit(abi::kScanLanes) | bit(abi::kScanBlock) | bit(abi::kScanChunked);
    case KernelFamily::kMatmul:
      return backend == BackendKind::kCuda ? bit(abi::kMatmulTiled) | bit(abi::kMatmulVendorBlas)
             : backend == BackendKind::kVulkan
                 ? bit(abi::kMatmulTiled) | bit(abi::kMatmulCoopMatrix)
             : backend == BackendKind::kUnknown ? 0
                                                : bit(abi::kMatmulTiled);
    case KernelFamily::kScatter:
      return backend == BackendKind::kUnknown
                 ? 0
                 : bit(abi::kScatterAtomic) | bit(abi::kScatterSorted) | bit(abi::kScatterKeys) |
                       bit(abi::kScatterPartitioned);
    case KernelFamily::kSearch:
      return backend == BackendKind::kUnknown ? 0 : bit(abi::kSearchBinary);
    case KernelFamily::kRotary:  // host_rotary.cpp, rotary_kernels.cu, rotary.comp
      return backend == BackendKind::kUnknown ? 0 : bit(abi::kRotaryPairs);
    case KernelFamily::kAttention:  // host_attention.cpp, attention_*_kernels.cu, attention.comp
      return backend == BackendKind::kCuda
                 ? bit(abi::kAttentionFlash) | bit(abi::kAttentionFlashMma) |
                       bit(abi::kAttentionSplitKv) | bit(abi::kAttentionCudnn)
             : backend == BackendKind::kHost || backend == BackendKind::kHip ||
                     backend == BackendKind::kVulkan
                 ? bit(abi::kAttentionFlash) | bit(abi::kAttentionSplitKv)
                 : 0;
    case KernelFamily::kGroupedMatmul:  // host_grouped_matmul.cpp, grouped_matmul*.cu/.comp
      return backend == BackendKind::kCuda
                 ? bit(abi::kGroupedMatmulTiled) | bit(abi::kGroupedMatmulMma) |
                       bit(abi::kGroupedMatmulBlas)
             : backend == BackendKind::kUnknown ? 0
                                                : bit(abi::kGroupedMatmulTiled);
    case KernelFamily::kJoin:  // join_kernels.cu, join.comp, host_join.cpp
      return backend == BackendKind::kUnknown ? 0 : bit(abi::kJoinStrided) | bit(abi::kJoinFlat);
    case KernelFamily::kSort:
      return backend == BackendKind::kCuda || backend == BackendKind::kHip
                 ? bit(abi::kSortRows) | bit(abi::kSortRadix) | bit(abi::kSortOnesweep) |
                       bit(abi::kSortSelect)
             : backend == BackendKind::kVulkan
                 ? bit(abi::kSortRows) | bit(abi::kSortOnesweep) | bit(abi::kSortSelect)
             : backend == BackendKind::kUnknown ? 0
                                                : bit(abi::kSortRows) | bit(abi::kSortRadix);
    case KernelFamily::kTimestamp:
    case KernelFamily::kCopyProbe:
      return backend == BackendKind::kVulkan ? bit(0) : 0;
  }
  return 0;
}

}  // namespace nbx
