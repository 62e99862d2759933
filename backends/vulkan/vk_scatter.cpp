// Kernel family "scatter" on Vulkan: this backend's own limits on an abi::ScatterParams launch
// (the 32-bit index path of kernels/vulkan/scatter.comp, maxStorageBufferRange, 64-bit buffer
// atomics for the atomic variant of 8-byte dtypes, shaderFloat64 for float64 sums and
// products), the shader's uniform block, one dispatch. The atomic variant takes
// scatter_rows.comp where its dims merge into at most two and its reduction is one store or
// native atomic (launch_rows), scatter.comp's element form otherwise. BackendDevice::launch
// validated the block (core/families/scatter_family.cpp).
#include <algorithm>
#include <string>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_int_divider.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx::vulkan {
namespace {

// The uniform block of scatter.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];     // numel, ndim, grid invocations, bound
  std::uint32_t offsets[4];  // out, src, index (sorted: keys), key_offset (keys; sorted: order)
  std::uint32_t misc[4];     // the fault record's op, index_scale
  std::uint32_t sizes[8], out_strides[8], src_strides[8], index_strides[8], positions[8];
};
static_assert(sizeof(GpuParams) == 208);

constexpr std::int64_t kMaxIndex = INT32_MAX;  // the shader's uint arithmetic, with room

// The uniform block of scatter_rows.comp (std140, all uvec4).
struct GpuRowsParams {
  std::uint32_t head[4];  // numel, cols, elements a pass of the grid, bound
  std::uint32_t misc[4];  // divider magic, shift (e / cols), index_scale, the fault record's op
  std::uint32_t out[4], src[4], index[4], pos[4];  // offset, row stride, column stride
};
static_assert(sizeof(GpuRowsParams) == 96);

constexpr std::uint32_t kRowsRun = 4;  // scatter_rows.comp's elements an invocation

const char* reduce_name(std::int32_t r) {
  switch (r) {
    case abi::kScatterAdd:
      return "add";
    case abi::kScatterMul:
      return "mul";
    case abi::kScatterMax:
      return "max";
    case abi::kScatterMin:
      return "min";
    default:
      return "assign";
  }
}

// Whether the atomic variant's launch is a single store or native atomic an element in
// scatter_rows.comp: assign of 1, 2 or 4 bytes (8 bytes stay an exchange, never two word
// stores of different sources), int32 add/max/min, float32 add where the device adds floats.
bool rows_reduction(const abi::ScatterParams& p, const DeviceFeatures& f) {
  const DType t = DType(p.dtype);
  if (p.reduce == abi::kScatterAssign) return dtype_size(t) <= 4;
  if (t == DType::kInt32)
    return p.reduce == abi::kScatterAdd || p.reduce == abi::kScatterMax ||
           p.reduce == abi::kScatterMin;
  return t == DType::kFloat32 && p.reduce == abi::kScatterAdd && f.float32_atomic_add;
}

// The atomic variant by scatter_rows.comp where the launch's dims merge into at most two
// (the CUDA twin's rows kernel: kernels/gpu/scatter_kernels.cu); false (nothing recorded)
// where it does not. The caller checked every operand's reach on the 32-bit path.
bool launch_rows(VulkanDevice& dev, const abi::ScatterParams& p, const KernelLaunch& launch,
                 const LaunchChecks& chk) {
  if (!rows_reduction(p, dev.context().features)) return false;
  // Dims of size 1 dropped, a dim merged into the one outside it where every operand (and
  // the index positions) steps across both as one: the same elements in the same order.
  std::int64_t sizes[abi::kMaxDims], out[abi::kMaxDims], src[abi::kMaxDims], index[abi::kMaxDims],
      pos[abi::kMaxDims];
  int n = 0;
  for (int d = 0; d < p.ndim; ++d) {
    if (p.sizes[d] == 1) continue;
    const auto joins = [&](const std::int64_t* merged, const std::int64_t* strides) {
      return merged[n - 1] == strides[d] * p.sizes[d];
    };
    if (n > 0 && joins(out, p.out_strides) && joins(src, p.src_strides) &&
        joins(index, p.index_strides) && joins(pos, p.index_positions)) {
      --n;
      sizes[n] *= p.sizes[d];
    } else {
      sizes[n] = p.sizes[d];
    }
    out[n] = p.out_strides[d], src[n] = p.src_strides[d], index[n] = p.index_strides[d];
    pos[n] = p.index_positions[d];
    ++n;
  }
  if (n > 2) return false;
  GpuRowsParams g{};
  const int c = n - 1;  // the column dim (none for a single element)
  const std::uint32_t cols = n > 0 ? std::uint32_t(sizes[c]) : 1u;
  const auto view = [&](std::uint32_t(&v)[4], std::int64_t offset, const std::int64_t* s) {
    v[0] = std::uint32_t(offset);
    v[1] = n == 2 ? std::uint32_t(s[0]) : 0u;
    v[2] = n > 0 ? std::uint32_t(s[c]) : 0u;
  };
  view(g.out, p.out_offset, out);
  view(g.src, p.src_offset, src);
  view(g.index, p.index_offset, index);
  view(g.pos, 0, pos);
  const IntDivider div = int_divider(cols);
  const std::uint32_t wg = dev.workgroup_size();
  const std::uint64_t groups =
      chk.grid_groups((std::uint64_t(p.numel) + kRowsRun - 1) / kRowsRun, wg);
  // At most numel + kRowsRun · wg (one pass) or 2^22 · wg · kRowsRun < numel: below 2^32.
  g.head[0] = std::uint32_t(p.numel);
  g.head[1] = cols;
  g.head[2] = std::uint32_t(groups * wg * kRowsRun);
  g.head[3] = std::uint32_t(p.bound);
  g.misc[0] = div.magic;
  g.misc[1] = div.shift;
  g.misc[2] = std::uint32_t(p.index_scale);
  g.misc[3] = std::uint32_t(abi::fault_op(abi::kFamily_scatter, p.op));
  const DType t = DType(p.dtype);
  const bool assign = p.reduce == abi::kScatterAssign;
  // Assignments move bits: one pipeline an element size, whatever the dtype.
  const std::uint32_t spec[] = {wg,
                                std::uint32_t(dtype_size(t)),
                                DType(p.index_dtype) == DType::kInt64 ? 1u : 0u,
                                std::uint32_t(p.wrap_negative),
                                std::uint32_t(p.reduce),
                                assign ? 0u : std::uint32_t(p.dtype),
                                n == 2 ? 1u : 0u};
  const DispatchBuffer bufs[3] = {{launch.buffers[0].memory, true},
                                  {launch.buffers[1].memory, false},
                                  {launch.buffers[2].memory, false}};
  dev.record({.module = t == DType::kFloat32 && p.reduce == abi::kScatterAdd ? "scatter_rows_fadd"
                                                                             : "scatter_rows",
              .spec = spec,
              .params = &g,
              .param_bytes = sizeof g,
              .buffers = bufs,
              .groups = {std::uint32_t(groups), 1, 1}});
  return true;
}

}  // namespace

void launch_family(VulkanDevice& dev, const abi::ScatterParams& p, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  const auto& f = ctx.features;
  const LaunchChecks chk(ctx, family_spec(KernelFamily::kScatter).op_name(p.op));
  if (p.numel == 0) return;
  if (p.numel > kMaxIndex || p.bound > kMaxIndex)
    chk.refuse("max_elements", std::to_string(std::max(p.numel, p.bound)) +
                                   " elements exceed the 2^31 - 1 the 32-bit index path supports");
  const DType t = DType(p.dtype), it = DType(p.index_dtype);
  const std::size_t item = dtype_size(t);
  auto reach = [&](std::int64_t offset, const std::int64_t* strides, const char* label) {
    return chk.last_element(offset, p.ndim, p.sizes, strides, label);
  };
  // An int64 array read or written as word pairs: word 2 · last + 1 stays on the index path.
  const auto int64_array = [&](const char* label, std::int64_t offset, std::int64_t last,
                               const DeviceMemory& m) {
    chk.inside(label, offset, last, DType::kInt64, m, kMaxIndex / 2 - 1);
  };
  // The checked index of the atomic and keys variants (as gather's) and its positions.
  const auto index_view = [&] {
    const std::int64_t last = reach(p.index_offset, p.index_strides, "the index");
    if (it == DType::kInt64)
      int64_array("the index", p.index_offset, last, launch.buffers[2].memory);
    else
      chk.inside("the index", p.index_offset, last, it, launch.buffers[2].memory, kMaxIndex);
    std::int64_t position_last = 0;
    for (int d = 0; d < p.ndim; ++d)
      chk.reach(position_last, p.sizes[d], p.index_positions[d], "the index positions");
    if (position_last > kMaxIndex) chk.bad("index positions beyond 2^31 - 1");
  };
  const auto source_view = [&] {
    const std::int64_t last = reach(p.src_offset, p.src_strides, "the source");
    chk.inside("the source", p.src_offset, last, t, launch.buffers[1].memory, kMaxIndex);
  };

  DispatchBuffer bufs[4] = {{launch.buffers[0].memory, true}, {}, {}, {}};
  switch (p.variant) {
    case abi::kScatterAtomic: {
      // With an empty indexed dim every index faults and nothing is written.
      if (p.bound > 0) {
        std::int64_t out_last = reach(p.out_offset, p.out_strides, "the output");
        chk.reach(out_last, p.bound, p.index_scale, "the output");
        chk.inside("the output", p.out_offset, out_last, t, launch.buffers[0].memory, kMaxIndex);
      }
      source_view();
      index_view();
      if (item == 8 && !(f.int64 && f.int64_atomics))
        chk.refuse("scatter.atomic64",
                   "the atomic variant of " + std::string(dtype_name(t)) + " " +
                       reduce_name(p.reduce) +
                       " needs 64-bit buffer atomics (shaderInt64 and shaderBufferInt64Atomics), "
                       "which this device lacks; the sorted variant runs without them "
                       "(NBX_SCATTER=sorted; NBX_DETERMINISTIC=1 takes it for assignments and "
                       "float sums and products)");
      if (launch_rows(dev, p, launch, chk)) return;
      bufs[1] = {launch.buffers[1].memory, false};
      bufs[2] = {launch.buffers[2].memory, false};
      break;
    }
    case abi::kScatterSorted: {
      if (p.bound > 0)
        chk.inside("the output", p.out_offset, p.out_offset + p.bound - 1, t,
                   launch.buffers[0].memory, kMaxIndex);
      source_view();
      int64_array("the keys", p.index_offset, p.index_offset + p.numel - 1,
                  launch.buffers[2].memory);
      int64_array("the order", p.key_offset, p.key_offset + p.numel - 1, launch.buffers[3].memory);
      bufs[1] = {launch.buffers[1].memory, false};
      bufs[2] = {launch.buffers[2].memory, false};
      bufs[3] = {launch.buffers[3].memory, false};
      break;
    }
    case abi::kScatterPartitioned: {
      // The relative destination offsets (in 32 bits), the counts', starts' and pairs' words
      // on the index path.
      std::int64_t span = reach(0, p.out_strides, "the destination offsets");
      if (p.bound > 0) chk.reach(span, p.bound, p.index_scale, "the destination offsets");
      if (span > kMaxIndex)
        chk.refuse("max_elements", "destination offsets up to " + std::to_string(span) +
                                       " exceed the 2^31 - 1 the 32-bit index path supports");
      const std::int64_t table = (p.buckets + 1) * p.parts;
      switch (p.pass) {
        case abi::kPassCount:
          chk.inside("the counts", 0, table - 1, DType::kInt32, launch.buffers[0].memory,
                     kMaxIndex);
          index_view();
          bufs[2] = {launch.buffers[2].memory, false};
          break;
        case abi::kPassPartition:
          chk.inside("the pairs", 0, 2 * p.numel - 1, DType::kInt32, launch.buffers[0].memory,
                     kMaxIndex);
          chk.inside("the starts", 0, table - 1, DType::kInt32, launch.buffers[3].memory,
                     kMaxIndex);
          index_view();
          source_view();
          bufs[1] = {launch.buffers[1].memory, false};
          bufs[2] = {launch.buffers[2].memory, false};
          bufs[3] = {launch.buffers[3].memory, false};
          break;
        default:
          if (p.bound > 0) {
            std::int64_t out_last = reach(p.out_offset, p.out_strides, "the output");
            chk.reach(out_last, p.bound, p.index_scale, "the output");
            chk.inside("the output", p.out_offset, out_last, t, launch.buffers[0].memory,
                       kMaxIndex);
          }
          chk.inside("the pairs", 0, 2 * p.numel - 1, DType::kInt32, launch.buffers[2].memory,
                     kMaxIndex);
          bufs[2] = {launch.buffers[2].memory, false};
          break;
      }
      break;
    }
    default: {  // kScatterKeys: no source, no destination element touched
      int64_array("the keys", p.key_offset, p.key_offset + p.numel - 1, launch.buffers[0].memory);
      index_view();
      // The relative destination offsets the shader adds up in 32 bits.
      std::int64_t span = reach(0, p.out_strides, "the destination offsets");
      if (p.bound > 0) chk.reach(span, p.bound, p.index_scale, "the destination offsets");
      if (span > kMaxIndex)
        chk.refuse("max_elements", "destination offsets up to " + std::to_string(span) +
                                       " exceed the 2^31 - 1 the 32-bit index path supports");
      bufs[2] = {launch.buffers[2].memory, false};
      break;
    }
  }
  const bool float_fold = t == DType::kFloat64 && p.variant != abi::kScatterKeys &&
                          (p.reduce == abi::kScatterAdd || p.reduce == abi::kScatterMul);
  if (float_fold && !f.fp64)
    chk.refuse("fp64", std::string("float64 ") + reduce_name(p.reduce) +
                           " needs shaderFloat64, which this device lacks");
  const bool atomic64 = p.variant == abi::kScatterAtomic && item == 8;

  GpuParams g{};
  const std::uint32_t wg = dev.workgroup_size();
  std::uint64_t groups = chk.grid_groups(std::uint64_t(p.numel), wg);
  // The count and partition passes: a workgroup a part; the apply pass an invocation a pair.
  const bool partitioned = p.variant == abi::kScatterPartitioned;
  if (partitioned && p.pass != abi::kPassApply) groups = std::uint64_t(p.parts);
  g.head[0] = std::uint32_t(p.numel);
  g.head[1] = std::uint32_t(p.ndim);
  g.head[2] = std::uint32_t(groups * wg);
  g.head[3] = std::uint32_t(p.bound);
  g.offsets[0] = std::uint32_t(p.out_offset);
  g.offsets[1] = std::uint32_t(p.src_offset);
  g.offsets[2] = std::uint32_t(p.index_offset);
  g.offsets[3] = partitioned ? std::uint32_t(p.bucket_shift) : std::uint32_t(p.key_offset);
  g.misc[0] = std::uint32_t(abi::fault_op(abi::kFamily_scatter, p.op));
  g.misc[1] = std::uint32_t(p.index_scale);
  g.misc[2] = partitioned ? std::uint32_t(p.buckets) : 0u;
  g.misc[3] = partitioned ? std::uint32_t(p.parts) : 0u;
  for (int d = 0; d < p.ndim; ++d) {
    g.sizes[d] = std::uint32_t(p.sizes[d]);
    g.out_strides[d] = std::uint32_t(p.out_strides[d]);
    g.src_strides[d] = std::uint32_t(p.src_strides[d]);
    g.index_strides[d] = std::uint32_t(p.index_strides[d]);
    g.positions[d] = std::uint32_t(p.index_positions[d]);
  }
  // Constants a variant does not read are zero, so no two pipelines do the same work: the
  // keys pass has no reduction, the sorted one reads no index to wrap, only keys accumulate.
  // The partitioned count pass reads no source and combines nothing; its apply pass reads
  // no index.
  const bool keys = p.variant == abi::kScatterKeys, sorted = p.variant == abi::kScatterSorted;
  const bool counting = partitioned && p.pass == abi::kPassCount;
  const bool applying = partitioned && p.pass == abi::kPassApply;
  const bool combines = !keys && !counting && !(partitioned && p.pass == abi::kPassPartition);
  const std::uint32_t spec[] = {wg,
                                counting ? 4u : std::uint32_t(item),
                                !sorted && !applying && it == DType::kInt64 ? 1u : 0u,
                                sorted || applying ? 0u : std::uint32_t(p.wrap_negative),
                                std::uint32_t(p.variant),
                                combines ? std::uint32_t(p.reduce) : 0u,
                                combines ? std::uint32_t(p.dtype) : 0u,
                                keys ? std::uint32_t(p.accumulate_keys) : 0u,
                                partitioned ? std::uint32_t(p.pass) : 0u};
  // float32 atomic sums by the device's own float atomic add where it has one.
  const bool float_add = (p.variant == abi::kScatterAtomic || applying) && t == DType::kFloat32 &&
                         p.reduce == abi::kScatterAdd && f.float32_atomic_add;
  dev.record({.module = float_add  ? "scatter_fadd"
                        : atomic64 ? (float_fold ? "scatter_a64_f64" : "scatter_a64")
                                   : (float_fold ? "scatter_f64" : "scatter"),
              .spec = spec,
              .params = &g,
              .param_bytes = sizeof g,
              .buffers = bufs,
              .groups = {std::uint32_t(groups), 1, 1}});
}

}  // namespace nbx::vulkan
