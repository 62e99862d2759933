#include "core/ops/variant_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/backend.hpp"
#include "core/families/backend_variants.hpp"
#include "core/kernel_abi_sort_select.hpp"

namespace nbx::ops {

bool target_offers(const PlanTarget& target, KernelFamily family, int variant) {
  if (target.device) return target.device->offers(family, variant);
  return (implemented_variants(backend_kind(target.caps.backend), family) & variant_bit(variant)) !=
         0;
}

int choose_variant(KernelFamily family, std::byte* params, std::span<const int> candidates,
                   const PlanTarget& target, std::vector<PlanChoice>& choices) {
  const FamilySpec& spec = family_spec(family);
  const int subgroup = target.caps.subgroup_size.value > 0 ? target.caps.subgroup_size.value : 32;
  std::string passed;  // why better candidates were not taken
  int fallback = -1;
  for (const int v : candidates) {
    spec.set_variant(params, v);
    const std::string refusal = spec.variant_refusal(v, params, subgroup);
    const std::string name = variant_name(family, v);
    if (!refusal.empty()) {
      passed += name + " does not serve it (" + refusal + "); ";
      continue;
    }
    if (!target_offers(target, family, v)) {
      passed += target.device_name + " does not offer " + name + "; ";
      fallback = v;
      continue;
    }
    choices.push_back({"variant", name, target.device ? "" : "backend." + target.caps.backend,
                       target.device ? "runtime: offers(" + name + ")"
                                     : "derived: the " + target.caps.backend +
                                           " backend's kernels (backend_variants.hpp)",
                       passed + name + " serves it and " + target.device_name + " offers it."});
    return v;
  }
  const int v = fallback >= 0 ? fallback : candidates.back();
  spec.set_variant(params, v);
  choices.push_back({"variant", variant_name(family, v), "", "",
                     passed + "none of the candidates is both offered and serving: refused."});
  return v;
}

}  // namespace nbx::ops

namespace nbx::ops {
namespace {

// The target's batch size: the present device's property, else its backend's default.
std::int64_t batch_limit(const BackendDevice* device, BackendKind kind, std::string* source) {
  if (device) {
    const auto& extra = device->properties().extra;
    const auto it = extra.find("elementwise.batch_max_numel");
    if (source) *source = "runtime: property elementwise.batch_max_numel";
    return it == extra.end() ? 0 : std::stoll(it->second);
  }
  if (source) *source = "derived: the backend's default (abi::kElementwiseBatchMaxNumel)";
  return (implemented_variants(kind, KernelFamily::kElementwise) &
          variant_bit(abi::kElementwiseBatched)) != 0
             ? abi::kElementwiseBatchMaxNumel
             : 0;
}

}  // namespace

int plan_elementwise_variant(abi::ElementwiseParams& p, const PlanTarget& target,
                             std::vector<PlanChoice>& choices) {
  std::string source;
  const std::int64_t limit = batch_limit(target.device, backend_kind(target.caps.backend), &source);
  if (limit > 0 && p.numel <= limit) {
    const int candidates[] = {abi::kElementwiseBatched, abi::kElementwiseStrided};
    const int v = choose_variant(p, candidates, target, choices);
    choices.push_back({"batch_max_numel", std::to_string(limit), "", source,
                       "launches of at most this many elements join the device's queue of small "
                       "ops, run together in one launch before anything that must see them."});
    return v;
  }
  p.variant = abi::kElementwiseStrided;
  choices.push_back(
      {"variant", variant_name(KernelFamily::kElementwise, abi::kElementwiseStrided), "", source,
       limit > 0 ? std::to_string(p.numel) + " elements are more than the batch size " +
                       std::to_string(limit) + ": a launch of its own."
                 : target.device_name + " does not batch launches: a launch of its own."});
  return p.variant;
}

int elementwise_variant_for(const BackendDevice& device, std::int64_t numel) {
  // On every launch: the device's offer first, so a device that does not batch (host,
  // Vulkan, NBX_GPU_BATCH=0) never looks its batch size up.
  if (!device.offers(KernelFamily::kElementwise, abi::kElementwiseBatched))
    return abi::kElementwiseStrided;
  const std::int64_t limit = batch_limit(&device, BackendKind::kUnknown, nullptr);
  return limit > 0 && numel <= limit ? abi::kElementwiseBatched : abi::kElementwiseStrided;
}

int plan_scan_variant(abi::ScanParams& p, const PlanTarget& target,
                      std::vector<PlanChoice>& choices) {
  const BackendKind kind = backend_kind(target.caps.backend);
  const std::int64_t sms = target.device ? target.device->properties().compute_units : 0;
  std::vector<int> candidates;
  std::string why;
  p.lanes = 1;
  p.chunk_len = 0;
  if (kind == BackendKind::kHost) {
    candidates = {abi::kScanLanes};
    why = "the reference walks each row in order.";
  } else if (kind == BackendKind::kVulkan) {
    // kernels/vulkan/scan.comp: an invocation walks a short row by itself (no barriers); a
    // longer row keeps a whole workgroup busy.
    if (p.row_len <= 64) {
      candidates = {abi::kScanLanes};
      why = "rows of at most 64 elements: an invocation each, walked in order.";
    } else {
      candidates = {abi::kScanBlock};
      why = "rows longer than 64 elements: a workgroup each.";
    }
  } else {
    const std::string sm_text =
        sms > 0 ? std::to_string(sms) + " SMs" : "an unknown SM count (an absent architecture)";
    const bool side_by_side =
        p.in_row_stride != 1 && p.outer_ndim > 0 && p.in_outer_strides[p.outer_ndim - 1] == 1;
    if (sms > 0 && side_by_side && p.rows >= sms * 256) {
      candidates = {abi::kScanLanes};
      why = "rows lie side by side in memory and fill " + sm_text +
            ": a lane per row reads one coalesced line per warp and element.";
    } else if (p.row_len <= std::int64_t(abi::kScanMaxLanes) * abi::kScanLaneItems) {
      while (std::int64_t(p.lanes) * abi::kScanLaneItems < p.row_len) p.lanes *= 2;
      candidates = {abi::kScanLanes};
      why = "short rows: " + std::to_string(p.lanes) + " lanes of " +
            std::to_string(abi::kScanLaneItems) + " elements cover a row.";
    } else if (sms == 0 || p.rows >= sms * 64) {
      p.lanes = abi::kScanMaxLanes;
      candidates = {abi::kScanLanes};
      why = sms > 0 ? "enough rows that a warp each keeps " + sm_text + " busy."
                    : "long rows on " + sm_text +
                          ": a warp each (the runtime's count may "
                          "choose a block per row or chunks instead).";
    } else {
      candidates = {abi::kScanBlock};
      why = "few long rows on " + sm_text + ": a block each.";
      if (p.rows < sms * 2) {
        // Fewer rows than two per SM leave most of the GPU idle: chunks of whole tiles,
        // about 8 blocks per SM in all (two waves of 4 resident 512-thread blocks).
        const std::int64_t tiles = (p.row_len + abi::kScanTile - 1) / abi::kScanTile;
        const std::int64_t per_row = std::min(sms * 8 / p.rows, tiles);
        if (per_row >= 2) {
          const std::int64_t chunk_len = (tiles + per_row - 1) / per_row * abi::kScanTile;
          if (chunk_len < p.row_len) {
            p.chunk_len = chunk_len;
            candidates = {abi::kScanChunked, abi::kScanBlock};
            why = "fewer rows than two per SM on " + sm_text + ": each row in chunks of " +
                  std::to_string(chunk_len) + " elements, a block each (three kernels).";
          }
        }
      }
    }
  }
  const int v = choose_variant(p, candidates, target, choices);
  choices.push_back({"layout",
                     v == abi::kScanLanes   ? std::to_string(p.lanes) + " lanes per row"
                     : v == abi::kScanBlock ? "a block per row"
                                            : "chunks of " + std::to_string(p.chunk_len),
                     sms > 0 ? "compute_units" : "",
                     sms > 0 ? "runtime: " + std::to_string(sms) + " compute units" : "", why});
  return v;
}

std::int64_t sort_workspace_budget_words() {
  // NBX_SORT_WORKSPACE_BYTES lowers the budget (tests reach the chunked path with small rows).
  const char* env = std::getenv("NBX_SORT_WORKSPACE_BYTES");
  const long long bytes = env ? std::atoll(env) : 0;
  return bytes > 0 ? std::min<std::int64_t>(bytes / 4, abi::kSortWorkspaceBudgetWords)
                   : abi::kSortWorkspaceBudgetWords;
}

std::int64_t sort_rows_per_launch(std::int32_t variant, std::int64_t row_len,
                                  std::int32_t key_bits) {
  const std::int64_t per_row = abi::sort_variant_workspace_words(variant, 1, row_len, key_bits);
  return std::max<std::int64_t>(1, sort_workspace_budget_words() / per_row);
}

namespace {

// Vulkan's radix shaders (kernels/vulkan/sort_rank.glsl, backends/vulkan/vk_sort.cpp): a
// buffer of `exchange` words that also holds 16-bit digit counters for each subgroup of a
// 256-wide workgroup, the digits' starts and counts, the subgroups' totals and `extra` words.
std::int64_t vulkan_rank_bytes(std::int64_t exchange, std::int64_t extra,
                               const PlanTarget& target) {
  const int size = target.caps.subgroup_size.value;  // unknown: 32, as choose_variant
  const std::int64_t sg = size > 0 ? std::min(size, 256) : 32;
  return 4 * (std::max<std::int64_t>(exchange, 128 * (256 / sg)) + 2 * 256 + 256 / sg + extra);
}

// The rows variant's shared memory for a tile: Vulkan exchanges a word at a time through the
// ranking's buffer (256 · 4 words at least); elsewhere key and position pairs of the tile.
std::int64_t rows_tile_bytes(std::int64_t tile, std::int32_t key_bits, const PlanTarget& target) {
  if (target.caps.backend == "vulkan")
    return vulkan_rank_bytes(std::max<std::int64_t>(tile, 1024), 0, target);
  return tile * (4 * abi::sort_key_words(key_bits) + 4);
}

}  // namespace

std::int64_t sort_rows_tile_cap(DType dtype, const PlanTarget& target) {
  const std::int32_t key_bits = 8 * std::int32_t(dtype_size(dtype));
  std::int64_t cap = abi::kSortRowsTileMax;
  while (cap > 1 &&
         rows_tile_bytes(cap, key_bits, target) > target.caps.shared_memory_per_block.value)
    cap /= 2;
  return cap;
}

int plan_sort_variant(abi::SortParams& p, const PlanTarget& target,
                      std::vector<PlanChoice>& choices) {
  p.key_bits = 8 * std::int32_t(dtype_size(DType(p.dtype)));
  const Capability<std::int64_t>& shared = target.caps.shared_memory_per_block;
  const bool vulkan = target.caps.backend == "vulkan";
  const std::int64_t cap = sort_rows_tile_cap(DType(p.dtype), target);
  p.segment = 1;
  while (p.segment < p.row_len) p.segment *= 2;
  // Short rows share a tile (tile / segment rows a block); no tile larger than all the rows.
  std::int64_t tile = std::max<std::int64_t>(p.segment, std::min<std::int64_t>(cap, 1024));
  while (tile > p.segment && tile / 2 >= p.rows * p.segment) tile /= 2;
  p.tile = tile;
  const bool fits = p.row_len <= cap;
  const std::string cap_text =
      std::to_string(cap) + " (" +
      (vulkan ? std::to_string(rows_tile_bytes(cap, p.key_bits, target)) +
                    " bytes for its keys, exchanged a word at a time, and digit counters"
              : std::to_string(4 * abi::sort_key_words(p.key_bits) + 4) +
                    "-byte key and position pairs") +
      " in " + std::to_string(shared.value) + " bytes of shared memory" +
      (cap < abi::kSortRowsTileMax
           ? ", clamped below the variant's " + std::to_string(abi::kSortRowsTileMax)
           : "") +
      ")";
  // The onesweep kernel's shared memory: on CUDA/HIP (kernels/gpu/sort_onesweep_kernels.cu) a
  // tile of keys, 256 digit counters per warp of 32 (at most 8 warps) and a few hundred words
  // more; on Vulkan (kernels/vulkan/sort_onesweep.comp) a tile of words, which also holds the
  // digit counters, and the digits' bases and the tile's id.
  const std::int64_t onesweep_bytes =
      vulkan ? vulkan_rank_bytes(abi::kSortOnesweepTile, 257, target)
             : abi::kSortOnesweepTile * 4 * abi::sort_key_words(p.key_bits) + 8 * 1024 + 2 * 1024;
  std::vector<int> candidates;
  if (fits) candidates.push_back(abi::kSortRows);
  if (shared.value >= onesweep_bytes) candidates.push_back(abi::kSortOnesweep);
  candidates.push_back(abi::kSortRadix);
  const int v = choose_variant(p, candidates, target, choices);
  // CUDA, HIP and Vulkan sort a tile by radix ranks in registers (kernels/gpu/sort_kernels.cu,
  // kernels/vulkan/sort_rows.comp); the host sorts every variant as (key, position) pairs
  // (backends/host/host_sort.cpp).
  const std::string& backend = target.caps.backend;
  const bool gpu = backend == "cuda" || backend == "hip";
  if (v == abi::kSortRows)
    choices.push_back(
        {"tile",
         std::to_string(p.tile) + " elements, rows in segments of " + std::to_string(p.segment),
         "shared_memory.per_block", shared.source,
         "a row fits the largest tile, " + cap_text +
             (gpu ? ": a block radix sort (8-bit digits ranked in registers, exchanged through "
                    "shared memory; the row's number as the last digits)."
              : vulkan
                  ? ": a block radix sort (8-bit digits ranked in registers by subgroup "
                    "ballots, keys exchanged through shared memory a word at a time; the row's "
                    "number as the last digits)."
                  : ": the host sorts (key, position) pairs.")});
  const std::int64_t per_launch =
      v == abi::kSortRows ? p.rows : sort_rows_per_launch(v, p.row_len, p.key_bits);
  if (v != abi::kSortRows && p.rows > per_launch)
    choices.push_back({"chunks", std::to_string(per_launch) + " rows a launch", "", "",
                       "the " + variant_name(KernelFamily::kSort, v) +
                           " workspace of all rows would pass its budget of " +
                           std::to_string((4 * sort_workspace_budget_words()) >> 20) +
                           " MiB: the rows are sorted in groups, one launch each."});
  const int bits = v == abi::kSortOnesweep ? abi::kSortOnesweepBits : abi::kSortRadixBits;
  const std::string workspace =
      std::to_string(4 * abi::sort_variant_workspace_words(v, std::min(p.rows, per_launch),
                                                           p.row_len, p.key_bits)) +
      " bytes";
  if (v != abi::kSortRows)
    choices.push_back(
        {"passes",
         std::to_string(p.key_bits / bits) + " digits of " + std::to_string(bits) + " bits",
         fits ? "" : "shared_memory.per_block", fits ? "" : shared.source,
         "rows of " + std::to_string(p.row_len) + " elements exceed the tile of " + cap_text +
             (v == abi::kSortOnesweep
                  ? ": one histogram of every digit, then a pass per digit over tiles of " +
                        std::to_string(abi::kSortOnesweepTile) +
                        " whose offsets come by decoupled look-back (onesweep" +
                        (vulkan ? "; on a CPU device such as llvmpipe, whose shader loops end "
                                  "after 65535 iterations, by a count and a scan of each pass's "
                                  "tiles instead"
                                : "") +
                        "), in a workspace of " + workspace + "."
                  : ": least-significant-digit radix passes over a workspace of " + workspace +
                        ".")});
  return v;
}

bool plan_topk_select(abi::SortParams& p, const PlanTarget& target,
                      std::vector<PlanChoice>& choices) {
  p.key_bits = 8 * std::int32_t(dtype_size(DType(p.dtype)));
  const Capability<std::int64_t>& shared = target.caps.shared_memory_per_block;
  // The select kernels' shared memory (kernels/gpu/sort_select_kernels.cu,
  // kernels/vulkan/sort_select.comp): the candidates' keys and positions, and at most 12 KiB
  // more (CUDA's digit counters, 256 per warp of 32). The candidates: the most that fit, a
  // power of two no smaller than k.
  const auto bytes_for = [&](std::int64_t c) {
    return c * (4 * abi::sort_key_words(p.key_bits) + 4) + 12 * 1024;
  };
  // At most sort.select_candidates_max where the device file caps them (a smaller footprint the
  // driver keeps more workgroups of), for k up to an eighth of the cap: a larger k fills the
  // smaller buffer after every chunk (k = 1024 over 2048 candidates compacts each time, 13.9 ms
  // against 5.6 with 4096 on an H100, 2026-12-06).
  const Capability<std::int64_t>& cap = target.caps.sort.select_candidates_max;
  const bool cap_holds = cap.value > 0 && p.k * 8 <= cap.value;
  const auto over = [&](std::int64_t c) {
    return bytes_for(c) > shared.value || (cap_holds && c > cap.value);
  };
  std::int64_t candidates = abi::sort_select_candidates(p.key_bits);
  while (candidates > 1 && candidates / 2 >= p.k && over(candidates)) candidates /= 2;
  const bool capped = cap_holds && candidates <= cap.value &&
                      candidates < abi::sort_select_candidates(p.key_bits) &&
                      bytes_for(candidates * 2) <= shared.value;
  const std::int64_t bytes = bytes_for(candidates);
  const std::string name = variant_name(KernelFamily::kSort, abi::kSortSelect);
  std::string why;
  if (!target_offers(target, KernelFamily::kSort, abi::kSortSelect))
    why = target.device_name + " does not offer " + name;
  else if (p.row_len <= sort_rows_tile_cap(DType(p.dtype), target))
    why = "rows of " + std::to_string(p.row_len) +
          " fit the rows variant's tile, whose sort of many rows a block is cheaper";
  else if (p.k > abi::kSortSelectMaxK)
    why = "k " + std::to_string(p.k) + " is above " + std::to_string(abi::kSortSelectMaxK);
  else if (p.row_len > kSortSelectMaxRow)
    why = "rows of " + std::to_string(p.row_len) + " are longer than a block a row takes well (" +
          std::to_string(kSortSelectMaxRow) + ")";
  else if (shared.value < bytes)
    why = "its " + std::to_string(bytes) + " bytes of shared memory do not fit " +
          std::to_string(shared.value);
  if (!why.empty()) {
    choices.push_back({"select", "not taken", "", "", name + ": " + why + "."});
    return false;
  }
  p.variant = abi::kSortSelect;
  p.tile = candidates;
  const std::string method =
      abi::sort_select_filters(p.k, candidates)
          ? "reads its row once, in chunks of " +
                std::to_string(abi::sort_select_filter_chunk(candidates)) +
                ", keeping the elements that can still be among the k (all until it holds "
                "more than max(4k, 256) or its " +
                std::to_string(candidates) +
                " candidates might not take the next chunk, then it compacts them to the k "
                "smallest and keeps only keys below the largest of those, first compared in "
                "the element's own dtype)"
          : "narrows the k-th key by digit histograms (12 bits, then 8), most significant "
            "first, until the keys at or below it fit " +
                std::to_string(candidates) + " candidates, and gathers them in row order";
  choices.push_back(
      {"variant", name, capped ? "sort.select_candidates_max" : "shared_memory.per_block",
       capped ? cap.source : shared.source,
       "topk of k <= " + std::to_string(abi::kSortSelectMaxK) + ": a block a row " + method +
           ", then sorts the candidates in shared memory (" + std::to_string(bytes) + " bytes" +
           (capped ? "; " + std::to_string(candidates) + " candidates, the device's cap for k <= " +
                         std::to_string(cap.value / 8) + ", where shared memory takes more"
                   : "") +
           ")."});
  return true;
}

}  // namespace nbx::ops
