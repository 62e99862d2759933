// Kernel family "attention" on Vulkan: this backend's own limits on an abi::AttentionParams
// launch (the 32-bit index path of kernels/vulkan/attention.comp, maxStorageBufferRange,
// shaderFloat16 for float16, subgroup shuffles, the shader's shared memory), the lanes a row
// from the device's subgroup size, and the dispatches: flash one, split_kv two (the chunks'
// partial results, then attention_combine.comp; the hazard tracker puts the barrier between
// them). BackendDevice::launch validated the block (core/families/attention_family.cpp).
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <numbers>
#include <string>
#include <string_view>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/families/kernel_family.hpp"
#include "nbx_vk_spirv.hpp"

namespace nbx::vulkan {
namespace {

// The uniform block of attention.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t dims[4];   // batch, q heads, kv heads, q_len
  std::uint32_t dims2[4];  // kv_len, group, causal, causal_shift (int bits)
  std::uint32_t work[4];   // work items, row blocks a head, splits, split_len
  std::uint32_t misc[4];   // scale x log2(e) (float bits), workspace words a split
  std::uint32_t offs[4];   // q, k, v, out
  std::uint32_t qs[4], ks[4], vs[4], os[4];
};
static_assert(sizeof(GpuParams) == 144);

// The uniform block of attention_combine.comp.
struct CombineParams {
  std::uint32_t head[4];  // output elements, value_dim, splits, workspace words a split
  std::uint32_t dims[4];  // q heads, q_len, grid invocations
  std::uint32_t offs[4];  // out offset
  std::uint32_t os[4];
};

constexpr std::int64_t kMaxIndex = INT32_MAX;  // the shaders' uint arithmetic, with room
constexpr std::uint32_t kSubgroupBasic = 0x1, kSubgroupVote = 0x2,
                        kSubgroupShuffle = 0x10;  // VkSubgroupFeatureFlags

// Whether a [batch, heads, rows, dim] view's rows load as 16-byte vectors of `per` elements:
// unit dim stride, and the offset, the other strides and the row length multiples of `per`.
bool rows_of_vectors(std::int64_t offset, const std::int64_t* strides, std::int64_t dim,
                     std::int64_t per) {
  return strides[3] == 1 && dim % per == 0 && offset % per == 0 && strides[0] % per == 0 &&
         strides[1] % per == 0 && strides[2] % per == 0;
}

// flash on cooperative matrices (kernels/vulkan/attention_coopmat.comp): 64 query rows a
// workgroup of four 32-wide subgroups, K and V tiles of 64 keys staged once for all four
// (rows padded by 8 halves), a 2304-byte scratch a subgroup; its shared memory in bytes
// (27648, 35840, 44032 for head dims 64, 96, 128).
constexpr std::int64_t kCoopmatRows = 64;
std::uint64_t coopmat_shared_bytes(std::int64_t d) {
  return 2 * 64 * std::uint64_t(d + 8) * 2 + 4 * 2304;
}

enum class CoopmatSetting { kPrefetch, kSync, kOff };
CoopmatSetting coopmat_setting() {  // NBX_VULKAN_ATTENTION_COOPMAT, read once per process
  static const CoopmatSetting setting = [] {
    const char* env = std::getenv("NBX_VULKAN_ATTENTION_COOPMAT");
    const std::string_view v = env ? env : "";
    return v == "off"    ? CoopmatSetting::kOff
           : v == "sync" ? CoopmatSetting::kSync
                         : CoopmatSetting::kPrefetch;
  }();
  return setting;
}

// Whether attention_coopmat.comp serves this flash launch: float16, the device's NV
// cooperative matrices with a 16 x {8, 16} x 16 float16 shape, subgroups of exactly 32 with
// vote and shuffle, head_dim == value_dim in {64, 96, 128}, q, k and v rows of 16-byte
// vectors. Elsewhere attention.comp runs (the same variant and results to the float16
// rounding of the probabilities the matrix units multiply). NBX_VULKAN_ATTENTION_COOPMAT=off
// keeps it off; =sync stages each K/V tile without loading the next one under the math.
bool coopmat_serves(const DeviceFeatures& f, const abi::AttentionParams& p) {
  if (coopmat_setting() == CoopmatSetting::kOff) return false;
  const CoopmatShape& s = f.coopmat_f16_nv;
  const std::int64_t d = p.head_dim;
  return p.variant == abi::kAttentionFlash && DType(p.dtype) == DType::kFloat16 && f.coopmat_nv &&
         f.fp16 && f.vulkan_memory_model && s.m == 16 && s.k == 16 && (s.n == 8 || s.n == 16) &&
         f.min_subgroup_size == 32 && f.max_subgroup_size == 32 &&
         (f.subgroup_ops & kSubgroupVote) != 0 && f.max_workgroup_invocations >= 128 &&
         d == p.value_dim && (d == 64 || d == 96 || d == 128) &&
         coopmat_shared_bytes(d) <= f.max_shared_memory &&
         rows_of_vectors(p.q_offset, p.q_strides, d, 8) &&
         rows_of_vectors(p.k_offset, p.k_strides, d, 8) &&
         rows_of_vectors(p.v_offset, p.v_strides, d, 8) &&
         !spirv::find("attention_coopmat").empty();
}

std::uint32_t floor_pow2(std::uint32_t n) {
  return n ? std::bit_floor(n) : 1u;
}

}  // namespace

void launch_family(VulkanDevice& dev, const abi::AttentionParams& p, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  const DeviceFeatures& f = ctx.features;
  const LaunchChecks chk(ctx, family_spec(KernelFamily::kAttention).op_name(p.op));
  if (p.batch == 0 || p.q_heads == 0 || p.q_len == 0) return;
  const DType t = DType(p.dtype);
  if (t == DType::kFloat16 && !f.fp16)
    chk.refuse("fp16", "float16 needs shaderFloat16, which this device lacks");
  if ((f.subgroup_ops & (kSubgroupBasic | kSubgroupShuffle)) != (kSubgroupBasic | kSubgroupShuffle))
    chk.refuse("subgroup_shuffle",
               "the attention kernels pass probabilities between a row's lanes by subgroup "
               "shuffles, which this device lacks");

  // Every view inside its buffer and on the 32-bit index path.
  const auto view = [&](const char* label, std::int64_t offset, const std::int64_t* strides,
                        std::int64_t heads, std::int64_t rows, std::int64_t dim,
                        const DeviceMemory& m) {
    const std::int64_t sizes[4] = {p.batch, heads, rows, dim};
    chk.inside(label, offset, chk.last_element(offset, 4, sizes, strides, label), t, m, kMaxIndex);
  };
  view("out", p.out_offset, p.out_strides, p.q_heads, p.q_len, p.value_dim,
       launch.buffers[0].memory);
  view("q", p.q_offset, p.q_strides, p.q_heads, p.q_len, p.head_dim, launch.buffers[1].memory);
  if (p.kv_len > 0) {  // no key: k and v are never read
    view("k", p.k_offset, p.k_strides, p.kv_heads, p.kv_len, p.head_dim, launch.buffers[2].memory);
    view("v", p.v_offset, p.v_strides, p.kv_heads, p.kv_len, p.value_dim, launch.buffers[3].memory);
  }
  const bool split = p.variant == abi::kAttentionSplitKv;
  const std::int64_t split_words =
      abi::attention_workspace_words(1, p.batch, p.q_heads, p.q_len, p.value_dim);
  if (split) {
    const std::int64_t words = split_words * p.splits;
    if (words > kMaxIndex)
      chk.refuse("max_elements", "the workspace's " + std::to_string(words) +
                                     " words exceed the 2^31 - 1 the 32-bit index path supports");
    chk.storage_range(launch.buffers[4].memory);
  }

  // A row's lanes: a power of two within the smallest subgroup (a row never straddles two)
  // and the key tile, fewer for tall tiles so a workgroup stays near 256 invocations.
  // split_kv's block is the rows of one kv head's query heads (the variant's contract bounds
  // them by 16), whatever block_rows says: each K/V tile is read once for all of them.
  const std::int64_t rows = split ? p.q_len * (p.q_heads / p.kv_heads) : p.block_rows;
  const std::uint32_t rows_pow2 = std::bit_ceil(std::uint32_t(rows));
  const std::uint32_t lanes = floor_pow2(std::min<std::uint32_t>(
      {f.min_subgroup_size, std::uint32_t(p.block_keys), 32u, std::max(1u, 256u / rows_pow2)}));
  // At least 128 invocations (the idle row slots help stage K and V) and whole subgroups.
  const std::uint32_t wg = std::max({rows_pow2 * lanes, 128u, f.max_subgroup_size});
  if (wg > f.max_workgroup_invocations)
    chk.refuse("max_threads_per_block", std::to_string(wg) +
                                            " invocations a workgroup exceed "
                                            "maxComputeWorkGroupInvocations (" +
                                            std::to_string(f.max_workgroup_invocations) + ")");
  const std::uint64_t shared =
      4 * std::uint64_t(rows * p.head_dim + p.block_keys * (p.head_dim + 1) +
                        p.block_keys * p.value_dim);
  if (shared > f.max_shared_memory)
    chk.refuse("shared_memory", "the " + std::to_string(rows) + " x " +
                                    std::to_string(p.block_keys) + " tile needs " +
                                    std::to_string(shared) +
                                    " bytes of shared memory; the "
                                    "device has " +
                                    std::to_string(f.max_shared_memory));

  const std::int64_t row_blocks = (p.q_len + rows - 1) / rows;
  const std::int64_t items =
      split ? p.splits * p.batch * p.kv_heads : p.batch * p.q_heads * row_blocks;
  if (items > kMaxIndex)
    chk.refuse("max_elements", std::to_string(items) + " work items exceed 2^31 - 1");

  GpuParams g{};
  g.dims[0] = std::uint32_t(p.batch);
  g.dims[1] = std::uint32_t(p.q_heads);
  g.dims[2] = std::uint32_t(p.kv_heads);
  g.dims[3] = std::uint32_t(p.q_len);
  g.dims2[0] = std::uint32_t(p.kv_len);
  g.dims2[1] = std::uint32_t(p.q_heads / p.kv_heads);
  g.dims2[2] = std::uint32_t(p.causal);
  g.dims2[3] = std::uint32_t(std::int32_t(p.causal_shift));
  g.work[0] = std::uint32_t(items);
  g.work[1] = std::uint32_t(row_blocks);
  g.work[2] = std::uint32_t(p.splits);
  g.work[3] = std::uint32_t(split ? p.split_len : 0);
  g.misc[0] = std::bit_cast<std::uint32_t>(float(p.scale * std::numbers::log2e));
  g.misc[1] = std::uint32_t(split ? split_words : 0);
  const auto put = [](std::uint32_t* s, const std::int64_t* strides) {
    for (int d = 0; d < 4; ++d) s[d] = std::uint32_t(strides[d]);
  };
  g.offs[0] = std::uint32_t(p.q_offset);
  g.offs[1] = std::uint32_t(p.k_offset);
  g.offs[2] = std::uint32_t(p.v_offset);
  g.offs[3] = std::uint32_t(p.out_offset);
  put(g.qs, p.q_strides);
  put(g.ks, p.k_strides);
  put(g.vs, p.v_strides);
  put(g.os, p.out_strides);

  const DispatchBuffer flash_bufs[5] = {{launch.buffers[0].memory, true},
                                        {launch.buffers[1].memory, false},
                                        {p.kv_len > 0 ? launch.buffers[2].memory : DeviceMemory{}},
                                        {p.kv_len > 0 ? launch.buffers[3].memory : DeviceMemory{}},
                                        {}};
  if (coopmat_serves(f, p)) {
    const std::int64_t blocks = (p.q_len + kCoopmatRows - 1) / kCoopmatRows;
    const std::int64_t cm_items = p.batch * p.q_heads * blocks;
    g.work[0] = std::uint32_t(cm_items);
    g.work[1] = std::uint32_t(blocks);
    // Spec constants 1-3: head dim, fragment width, whether the next K/V tile loads into
    // registers under this one's math.
    const bool prefetch = coopmat_setting() == CoopmatSetting::kPrefetch;
    const std::uint32_t cm_spec[] = {128u, std::uint32_t(p.head_dim), f.coopmat_f16_nv.n,
                                     prefetch ? 1u : 0u};
    dev.record({.module = "attention_coopmat",
                .spec = cm_spec,
                .params = &g,
                .param_bytes = sizeof g,
                .buffers = flash_bufs,
                .groups = {std::uint32_t(chk.grid_groups(std::uint64_t(cm_items), 1)), 1, 1}});
    return;
  }
  const std::int64_t per = 16 / std::int64_t(dtype_size(t));
  const bool k_vec = rows_of_vectors(p.k_offset, p.k_strides, p.head_dim, per);
  const bool v_vec = rows_of_vectors(p.v_offset, p.v_strides, p.value_dim, per);
  const std::uint32_t spec[] = {wg,
                                std::uint32_t(p.dtype),
                                std::uint32_t(p.head_dim),
                                std::uint32_t(p.value_dim),
                                std::uint32_t(rows),
                                std::uint32_t(p.block_keys),
                                lanes,
                                split ? 1u : 0u,
                                k_vec ? 1u : 0u,
                                v_vec ? 1u : 0u};
  const DeviceMemory none{};
  const DispatchBuffer bufs[5] = {{split ? none : launch.buffers[0].memory, !split},
                                  {launch.buffers[1].memory, false},
                                  {p.kv_len > 0 ? launch.buffers[2].memory : none, false},
                                  {p.kv_len > 0 ? launch.buffers[3].memory : none, false},
                                  {split ? launch.buffers[4].memory : none, split}};
  dev.record({.module = "attention",
              .spec = spec,
              .params = &g,
              .param_bytes = sizeof g,
              .buffers = bufs,
              .groups = {std::uint32_t(chk.grid_groups(std::uint64_t(items), 1)), 1, 1}});
  if (!split) return;

  CombineParams c{};
  const std::uint32_t cwg = dev.workgroup_size();
  const std::int64_t elements = p.batch * p.q_heads * p.q_len * p.value_dim;
  if (elements > kMaxIndex)
    chk.refuse("max_elements", std::to_string(elements) + " output elements exceed 2^31 - 1");
  const std::uint64_t groups = chk.grid_groups(std::uint64_t(elements), cwg);
  c.head[0] = std::uint32_t(elements);
  c.head[1] = std::uint32_t(p.value_dim);
  c.head[2] = std::uint32_t(p.splits);
  c.head[3] = std::uint32_t(split_words);
  c.dims[0] = std::uint32_t(p.q_heads);
  c.dims[1] = std::uint32_t(p.q_len);
  c.dims[2] = std::uint32_t(groups * cwg);
  c.offs[0] = std::uint32_t(p.out_offset);
  put(c.os, p.out_strides);
  const std::uint32_t cspec[] = {cwg, std::uint32_t(p.dtype)};
  const DispatchBuffer cbufs[5] = {
      {launch.buffers[0].memory, true}, {}, {}, {}, {launch.buffers[4].memory, false}};
  dev.record({.module = "attention_combine",
              .spec = cspec,
              .params = &c,
              .param_bytes = sizeof c,
              .buffers = cbufs,
              .groups = {std::uint32_t(groups), 1, 1}});
}

}  // namespace nbx::vulkan
