// The kernel variant of a launch, chosen here and nowhere below the seam: the first of the
// family's candidates (best first) that the target offers and whose contract serves the
// parameter block (core/families: variant_refusal). Ops call it with the block they launch;
// `nbx explain` with the block the op would build, so both name the same variant.
#pragma once

#include <cstring>
#include <span>
#include <vector>

#include "core/families/kernel_family.hpp"
#include "core/ops/plan.hpp"

namespace nbx::ops {

// Whether the target offers `variant` of `family`: the present device's answer, or for an
// absent architecture what its backend's kernels implement (backend_variants.hpp).
bool target_offers(const PlanTarget& target, KernelFamily family, int variant);

// Writes the chosen variant into `params` (sizeof the family's block) and returns it;
// appends a "variant" PlanChoice naming it, the capability behind it and why better
// candidates were passed over. Where no candidate is both offered and serving, the last one
// that serves is taken, so the launch is refused by name at the seam.
int choose_variant(KernelFamily family, std::byte* params, std::span<const int> candidates,
                   const PlanTarget& target, std::vector<PlanChoice>& choices);

template <class Params>
int choose_variant(Params& params, std::span<const int> candidates, const PlanTarget& target,
                   std::vector<PlanChoice>& choices) {
  std::byte bytes[sizeof(Params)];
  std::memcpy(bytes, &params, sizeof params);
  const int v = choose_variant(FamilyOf<Params>::value, bytes, candidates, target, choices);
  std::memcpy(&params, bytes, sizeof params);
  return v;
}

// ---- Elementwise batching (abi::kElementwiseBatched) ----
// A launch of at most the device's batch size joins its queue of small ops, where the device
// offers that: its property "elementwise.batch_max_numel" (CUDA/HIP: NBX_GPU_BATCH, default
// abi::kElementwiseBatchMaxNumel; 0 turns batching off), or for an absent architecture its
// backend's default. Writes the variant into `p` and appends the "variant" choice.
int plan_elementwise_variant(abi::ElementwiseParams& p, const PlanTarget& target,
                             std::vector<PlanChoice>& choices);
// The same rule for a raw launch on `device` (tests, benchmarks).
int elementwise_variant_for(const BackendDevice& device, std::int64_t numel);

// ---- Scan layout (abi::ScanVariant) ----
// Lanes per row, a block per row, or rows in chunks, from the rows, the row length, whether
// rows lie side by side in memory (a scan along a leading dim) and the device's SM count
// (DeviceProperties::compute_units; an absent architecture has none, so its plan never
// chunks and says so). Writes variant, lanes and chunk_len into `p`.
int plan_scan_variant(abi::ScanParams& p, const PlanTarget& target,
                      std::vector<PlanChoice>& choices);

// ---- Sort layout (abi::SortVariant) ----
// key_bits from the dtype; the rows variant where a row fits the largest power-of-two tile
// whose keys and positions fit the device's shared memory (capped at abi::kSortRowsTileMax),
// with its segment (the row's power of two) and tile; for longer rows the onesweep variant
// where the backend offers it and its tile fits shared memory, the radix variant otherwise.
// `p` has dtype, rows and row_len set.
// The largest power-of-two row the rows variant sorts: what its kernel keeps in shared memory
// for the tile (key and position pairs on CUDA/HIP; on Vulkan a word a key and the digit
// counters) fits the device's, at most abi::kSortRowsTileMax.
std::int64_t sort_rows_tile_cap(DType dtype, const PlanTarget& target);
int plan_sort_variant(abi::SortParams& p, const PlanTarget& target,
                      std::vector<PlanChoice>& choices);
// topk's select variant (abi::kSortSelect, `p` with op kSort_topk and k set): taken where the
// target offers it, k <= abi::kSortSelectMaxK, rows hold at most kSortSelectMaxRow elements (a
// block a row; the tournament spreads a longer row over many blocks) and its shared memory
// fits. Sets key_bits and the variant and returns true, or returns false with the reason in
// `choices`.
inline constexpr std::int64_t kSortSelectMaxRow = std::int64_t(1) << 24;
bool plan_topk_select(abi::SortParams& p, const PlanTarget& target,
                      std::vector<PlanChoice>& choices);
// The most rows of row_len keys one launch of a workspace variant (radix, onesweep) takes (at
// least 1): its workspace stays within abi::kSortWorkspaceBudgetWords (2 GiB; Vulkan's storage
// buffers reach 4 GiB at most; $NBX_SORT_WORKSPACE_BYTES may set less), so sort_rows launches
// larger row counts in chunks.
std::int64_t sort_rows_per_launch(std::int32_t variant, std::int64_t row_len,
                                  std::int32_t key_bits);

}  // namespace nbx::ops
