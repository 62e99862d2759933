// Kernel "reduce" on Vulkan: checks an abi::ReduceParams launch against the device, folds
// its kept and reduced dims (adjacent dims that walk memory as one become one dim, so the
// common case reads each row with a single stride), translates it into the uniform block
// of kernels/vulkan/reduce.comp, picks the build (accumulate class × 64-bit operands) and
// the lanes per row, records one dispatch.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "backends/vulkan/vk_device.hpp"
#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_launch_checks.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::vulkan {
namespace {

// reduce.comp's UNROLL: a lane loads four elements before folding them, in order (amax over
// 4096 x 128256 float32 rows 1.13 -> 0.87 ms on an H100, 2026-12-06).
constexpr std::uint32_t kReduceUnroll = 4;

constexpr const char* kOpNames[] = {
#define NBX_REDUCE_OP(name, code) #name,
#include "core/reduce_op_list.inc"
#undef NBX_REDUCE_OP
};
constexpr int kNumOps = int(sizeof kOpNames / sizeof kOpNames[0]);

// The uniform block of reduce.comp (std140, all uvec4).
struct GpuParams {
  std::uint32_t head[4];  // rows, row_len, kept dims, reduced dims
  std::uint32_t grid[4];  // lanes per row, rows per grid step, rounds, the one reduced stride
  std::uint32_t offsets[4];
  std::uint32_t out_sizes[8], red_sizes[8], in_kept[8], in_red[8], out_strides[8], idx_strides[8];
  std::uint32_t attr[4], attr2[4], attr3[4];
  std::uint32_t split[4];  // chunks per row, chunk length, work items
};
static_assert(sizeof(GpuParams) == 304);

// Lanes per row: `want` as a power of two within the workgroup, and no more lanes than
// elements, so many short rows keep every invocation busy.
std::uint32_t lanes_for(std::int64_t want, std::uint32_t wg, std::int64_t len) {
  std::uint32_t tile = 1;
  while (tile * 2 <= std::uint32_t(std::max<std::int64_t>(want, 1)) && tile * 2 <= wg &&
         std::int64_t(tile) * 2 <= len)
    tile *= 2;
  return tile;
}

// Dims after folding: sizes and one stride array per operand walked along them.
struct Dims {
  int n = 0;
  std::int64_t size[abi::kMaxDims];
  std::int64_t stride[3][abi::kMaxDims];
};

// Drops size-1 dims and merges dim d into d + 1 where every operand steps over d + 1's
// whole extent in one stride of d: the row-major order of positions is unchanged, so the
// position k of an element in its row (argmax's answer) is too.
Dims fold_dims(int n, const std::int64_t* size, const std::int64_t* const* strides, int ops) {
  Dims out;
  for (int d = 0; d < n; ++d) {
    if (size[d] == 1) continue;
    if (out.n > 0) {
      const int last = out.n - 1;
      bool merge = true;
      for (int k = 0; k < ops; ++k) merge &= out.stride[k][last] == strides[k][d] * size[d];
      if (merge) {
        out.size[last] *= size[d];
        for (int k = 0; k < ops; ++k) out.stride[k][last] = strides[k][d];
        continue;
      }
    }
    out.size[out.n] = size[d];
    for (int k = 0; k < ops; ++k) out.stride[k][out.n] = strides[k][d];
    ++out.n;
  }
  return out;
}

std::uint32_t lo32(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, 8);
  return std::uint32_t(b);
}
std::uint32_t hi32(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, 8);
  return std::uint32_t(b >> 32);
}
std::uint32_t f32_bits(double v) {
  const float f = float(v);
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

enum class Cls { F, I, D, L };

void launch_reduce(VulkanDevice& dev, const KernelLaunch& launch) {
  const DeviceContext& ctx = dev.context();
  // BackendDevice::launch validated the block (core/families/reduce_family.cpp); what is
  // checked here is this backend's own: shader features and the 32-bit index path.
  abi::ReduceParams p;
  std::memcpy(&p, launch.params.data(), sizeof p);
  const std::string op = kOpNames[p.op];
  const LaunchChecks chk(ctx, op);
  const bool index_buffer =
      p.op == abi::kReduce_max_with_index || p.op == abi::kReduce_min_with_index;
  // aminmax's maxima, var_mean/std_mean's means: a second output of the output's dtype.
  const bool second_value = p.op == abi::kReduce_aminmax || p.op == abi::kReduce_var_mean ||
                            p.op == abi::kReduce_std_mean;
  const bool with_index = index_buffer || second_value;
  const std::int64_t rows = p.rows, len = p.row_len;
  if (rows == 0) return;

  const DType in = DType(p.in_dtype), out = DType(p.out_dtype), acc = DType(p.accumulate_dtype);
  const bool index_out = p.op == abi::kReduce_argmax || p.op == abi::kReduce_argmin ||
                         p.op == abi::kReduce_count_nonzero;
  const Cls cls = acc == DType::kFloat64 ? Cls::D
                  : acc == DType::kInt64 ? Cls::L
                  : is_floating(acc)     ? Cls::F
                                         : Cls::I;
  // Index and count outputs are written as raw 64-bit words: only values need the types.
  bool f64 = false, i64 = false, f16 = false;
  for (DType t : {in, acc, index_out ? in : out}) {
    f64 |= t == DType::kFloat64;
    i64 |= t == DType::kInt64;
    f16 |= t == DType::kFloat16;
  }
  const auto& f = ctx.features;
  if (f64 && !f.fp64) chk.refuse("fp64", "float64 needs shaderFloat64, which this device lacks");
  if (i64 && !f.int64) chk.refuse("int64", "int64 needs shaderInt64, which this device lacks");
  if (f16 && !f.fp16) chk.refuse("fp16", "float16 needs shaderFloat16, which this device lacks");
  if (rows > INT32_MAX || len > INT32_MAX || rows * len > INT32_MAX)
    chk.refuse("max_elements", std::to_string(rows) + " rows of " + std::to_string(len) +
                                   " elements exceed the 2^31 - 1 the 32-bit index path supports");

  // Every view inside its buffer, every buffer inside one binding.
  auto check = [&](std::size_t b, DType t, std::int64_t offset, std::int64_t last,
                   const char* label) {
    chk.inside(label, offset, last, t, launch.buffers[b].memory);
  };
  auto reach = [&](std::int64_t offset, const std::int64_t* sizes, const std::int64_t* strides,
                   int n) { return chk.last_element(offset, n, sizes, strides, "a view"); };
  check(0, out, p.out_offset, reach(p.out_offset, p.out_sizes, p.out_strides, p.out_ndim),
        "the output");
  if (len > 0)
    check(1, in, p.in_offset,
          reach(reach(p.in_offset, p.out_sizes, p.in_kept_strides, p.out_ndim), p.red_sizes,
                p.in_red_strides, p.red_ndim),
          "the input");
  if (with_index)
    check(2, second_value ? out : DType::kInt64, p.index_offset,
          reach(p.index_offset, p.out_sizes, p.index_strides, p.out_ndim),
          second_value ? "the second output" : "the index output");

  GpuParams g{};
  const std::int64_t* kept_strides[3] = {p.in_kept_strides, p.out_strides, p.index_strides};
  const Dims kept = fold_dims(p.out_ndim, p.out_sizes, kept_strides, with_index ? 3 : 2);
  const std::int64_t* red_strides[1] = {p.in_red_strides};
  Dims red = fold_dims(p.red_ndim, p.red_sizes, red_strides, 1);
  if (red.n == 0) {  // a row of one element (or none)
    red.n = 1;
    red.size[0] = len;
    red.stride[0][0] = 0;
  }
  for (int d = 0; d < kept.n; ++d) {
    g.out_sizes[d] = std::uint32_t(kept.size[d]);
    g.in_kept[d] = std::uint32_t(kept.stride[0][d]);
    g.out_strides[d] = std::uint32_t(kept.stride[1][d]);
    g.idx_strides[d] = with_index ? std::uint32_t(kept.stride[2][d]) : 0u;
  }
  for (int d = 0; d < red.n; ++d) {
    g.red_sizes[d] = std::uint32_t(red.size[d]);
    g.in_red[d] = std::uint32_t(red.stride[0][d]);
  }

  const std::uint32_t wg = dev.workgroup_size();
  g.head[0] = std::uint32_t(rows);
  g.head[1] = std::uint32_t(len);
  g.head[2] = std::uint32_t(kept.n);
  g.head[3] = std::uint32_t(red.n);
  g.grid[3] = std::uint32_t(red.stride[0][0]);
  g.offsets[0] = std::uint32_t(p.in_offset);
  g.offsets[1] = std::uint32_t(p.out_offset);
  g.offsets[2] = std::uint32_t(p.index_offset);
  const double pn = p.attr, denom = std::max(0.0, double(len) - p.attr);
  g.attr[0] = lo32(pn);
  g.attr[1] = hi32(pn);
  g.attr[2] = f32_bits(pn);
  g.attr[3] = f32_bits(1.0 / pn);
  g.attr2[0] = lo32(1.0 / pn);
  g.attr2[1] = hi32(1.0 / pn);
  g.attr2[2] = lo32(denom);
  g.attr2[3] = hi32(denom);
  g.attr3[0] = f32_bits(denom);
  const std::uint32_t norm_kind = pn == 0          ? 0
                                  : pn == 1        ? 1
                                  : pn == 2        ? 2
                                  : std::isinf(pn) ? (pn > 0 ? 3 : 4)
                                                   : 5;

  std::uint32_t spec[] = {wg,
                          std::uint32_t(p.op),
                          std::uint32_t(acc),
                          std::uint32_t(in),
                          std::uint32_t(out),
                          p.op == abi::kReduce_norm ? norm_kind : 2u,
                          0,
                          kReduceUnroll};
  static constexpr const char* kClassNames[] = {"f", "i", "d", "l"};
  const std::string module =
      std::string("reduce_") + kClassNames[int(cls)] + (f64 ? "_f64" : "") + (i64 ? "_i64" : "");
  // One dispatch of `stage` over `items` work items of `tile` lanes each.
  auto dispatch = [&](std::uint32_t stage, std::uint32_t tile, std::uint64_t items,
                      std::span<const DispatchBuffer> bufs) {
    const std::uint64_t per_group = wg / tile;
    const std::uint64_t groups = std::min<std::uint64_t>(
        {(items + per_group - 1) / per_group, f.max_workgroup_count_x, 1u << 16});
    const std::uint64_t step = groups * per_group;
    g.grid[0] = tile;
    g.grid[1] = std::uint32_t(step);
    g.grid[2] = std::uint32_t((items + step - 1) / step);
    g.split[2] = std::uint32_t(items);
    spec[6] = stage;
    Dispatch d;
    d.module = module;
    d.spec = spec;
    d.params = &g;
    d.param_bytes = sizeof g;
    d.buffers = bufs;
    d.groups[0] = std::uint32_t(groups);
    dev.record(d);
  };
  const DeviceMemory out_mem = launch.buffers[0].memory, in_mem = launch.buffers[1].memory;
  const DeviceMemory idx_mem = with_index ? launch.buffers[2].memory : DeviceMemory{};

  // Few long rows: a workgroup per row would leave most of a GPU idle (one SM of the
  // H200's 132), so each row is split into chunks of at least 4 elements per lane over
  // ~1024 workgroups, and a second dispatch combines the chunks' partial states in chunk
  // order (var/std/logsumexp: each chunk's mean or maximum and its second-pass sum).
  const std::uint32_t row_lanes = lanes_for(p.row_tile, wg, len);
  const std::int64_t one_pass_groups = (rows * row_lanes + wg - 1) / wg;
  const std::int64_t min_chunk = 4 * std::int64_t(wg);
  if (one_pass_groups < 128 && len >= 2 * min_chunk) {
    std::int64_t splits = std::clamp<std::int64_t>(1024 / rows, 2, len / min_chunk);
    const std::int64_t chunk = (len + splits - 1) / splits;
    splits = (len + chunk - 1) / chunk;
    g.split[0] = std::uint32_t(splits);
    g.split[1] = std::uint32_t(chunk);
    // The scratch's range is freed now but reused only by later commands, which the
    // hazard tracker orders after these two dispatches (as any freed tensor's).
    const DeviceMemory scratch = dev.allocate(std::size_t(rows * splits) * 32);
    const DispatchBuffer partial[4] = {{}, {in_mem, false}, {}, {scratch, true}};
    dispatch(1, wg, std::uint64_t(rows * splits), partial);
    const DispatchBuffer final_[4] = {{out_mem, true}, {}, {idx_mem, true}, {scratch, false}};
    dispatch(2, lanes_for(splits, wg, splits), std::uint64_t(rows), final_);
    dev.free(scratch);
    return;
  }
  g.split[0] = 1;
  g.split[1] = std::uint32_t(len);
  // Rows next to each other in memory, elements of a row apart (a reduction over an outer
  // dim): a row per 32 adjacent invocations' slot, its lanes spread over the workgroup,
  // so each load instruction reads 32 neighbouring elements instead of 32 strided ones.
  std::uint32_t tile = row_lanes;
  if (kept.n > 0 && kept.stride[0][kept.n - 1] == 1 && red.stride[0][red.n - 1] != 1 && rows > 1) {
    std::uint32_t rpg = 1;
    while (rpg * 2 <= 32 && rpg * 2 <= wg && rpg * 2 <= rows) rpg *= 2;
    tile = std::min(tile, wg / rpg);
    g.split[3] = 1;
  }
  const DispatchBuffer bufs[3] = {{out_mem, true}, {in_mem, false}, {idx_mem, true}};
  dispatch(0, tile, std::uint64_t(rows), std::span<const DispatchBuffer>(bufs, with_index ? 3 : 2));
}

}  // namespace

void launch_family(VulkanDevice& device, const abi::ReduceParams&, const KernelLaunch& launch) {
  launch_reduce(device, launch);
}

}  // namespace nbx::vulkan
