// The index writes' launch path (index_write_detail.hpp): deterministic algorithms, the
// scatter family's variant choice, and the launches — one atomic pass, or the deterministic
// one: destination keys, a stable sort of them (the sort family), one fold per destination.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/index_write.hpp"
#include "core/ops/index_write_detail.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/scan.hpp"
#include "core/ops/sort.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx {
namespace {

std::atomic<bool>& deterministic_flag() {
  static std::atomic<bool> flag = [] {
    const char* v = std::getenv("NBX_DETERMINISTIC");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return flag;
}

}  // namespace

void set_deterministic_algorithms(bool on) {
  deterministic_flag() = on;
}

bool deterministic_algorithms() {
  return deterministic_flag();
}

}  // namespace nbx

namespace nbx::ops::detail {
namespace {

const char* scatter_op_name(abi::ScatterOp op) {
  static constexpr const char* kNames[] = {
      "scatter",   "scatter_add",   "scatter_reduce", "index_add", "index_copy", "index_fill",
      "index_put", "masked_select", "nonzero",        "one_hot",   "bincount"};
  return kNames[op];
}

// NBX_SCATTER=atomic|sorted|partitioned: the variant every scatter takes (tests run each on
// every dtype; partitioned where it serves: elements of at most 4 bytes).
int forced_variant() {
  const char* v = std::getenv("NBX_SCATTER");
  if (v == nullptr || *v == 0) return -1;
  if (std::strcmp(v, "atomic") == 0) return abi::kScatterAtomic;
  if (std::strcmp(v, "sorted") == 0) return abi::kScatterSorted;
  if (std::strcmp(v, "partitioned") == 0) return abi::kScatterPartitioned;
  throw InvalidArgument("NBX_SCATTER", std::string("NBX_SCATTER must be \"atomic\", \"sorted\" or "
                                                   "\"partitioned\", got \"") +
                                           v + "\".");
}

// The partitioned variant's buckets: 4 MiB of destination each (a few of them stay in any
// current GPU's L2 while the apply pass works through them, and within the reach of its
// address translation caches), more where 1024 would not cover the destination, fewer bytes
// where that leaves fewer than about 32 buckets (small destinations: several take part).
constexpr int kBucketBytesLog2 = 22;
// The runs of elements the count and partition passes give a workgroup each: about one
// wave of the H200 (132 multiprocessors, 8 workgroups of 256 each), at least 8192 elements.
constexpr std::int64_t kPartitionParts = 1024;
constexpr std::int64_t kPartElements = 8192;

int log2_floor(std::int64_t v) {
  int k = 0;
  while (v > 1) v >>= 1, ++k;
  return k;
}

// Whether the partitioned variant serves the scatter (why not, else ""), and its buckets.
std::string partition_refusal(const ScatterPlanInput& in, const PlanTarget& target,
                              ScatterPlan& plan) {
  const std::int64_t item = std::int64_t(dtype_size(in.dtype));
  if (item > 4) return std::to_string(item) + "-byte elements (it moves at most 4 in its pairs)";
  // Offsets below the bad index's mark (Vulkan: its 32-bit index path), slots and their
  // words within int32.
  const bool vulkan = target.caps.backend == "vulkan";
  if (in.span > (vulkan ? INT32_MAX : 0xfffffffeLL))
    return "a destination beyond its 32-bit offsets";
  if (in.numel > INT32_MAX / 2) return "more writes than its 32-bit pair slots reach";
  const int item_log2 = log2_floor(item);
  int shift = std::min(kBucketBytesLog2 - item_log2,
                       std::max(0, log2_floor(std::max<std::int64_t>(in.span, 1)) - 5));
  while (((std::max<std::int64_t>(in.span, 1) - 1) >> shift) + 1 > abi::kScatterMaxBuckets) ++shift;
  plan.bucket_shift = shift;
  plan.buckets = ((std::max<std::int64_t>(in.span, 1) - 1) >> shift) + 1;
  plan.parts =
      std::clamp<std::int64_t>((in.numel + kPartElements - 1) / kPartElements, 1, kPartitionParts);
  return "";
}

PlanTarget target_of(const Device& device) {
  return {device.capabilities(), device.str(), device.display_name(),
          &device.context().backend_device()};
}

abi::ScatterParams params_of(abi::ScatterOp op, abi::ScatterReduce reduce, const Tensor& out,
                             const Tensor& src, const Tensor& index, const ScatterForm& f) {
  abi::ScatterParams p{};
  p.op = op;
  p.reduce = reduce;
  p.dtype = static_cast<std::int32_t>(out.dtype());
  p.index_dtype = static_cast<std::int32_t>(index.dtype());
  p.ndim = static_cast<std::int32_t>(f.sizes.size());
  p.wrap_negative = f.wrap_negative ? 1 : 0;
  p.numel = numel(f.sizes);
  p.bound = f.bound;
  p.index_scale = f.index_scale;
  p.out_offset = out.offset();
  p.src_offset = src.offset();
  p.index_offset = index.offset();
  for (int k = 0; k < p.ndim; ++k) {
    p.sizes[k] = f.sizes[k];
    p.out_strides[k] = f.out_strides[k];
    p.src_strides[k] = f.src_strides[k];
    p.index_strides[k] = f.index_strides[k];
    p.index_positions[k] = f.index_positions[k];
  }
  return p;
}

void launch(const Device& device, const abi::ScatterParams& p, const Tensor& out, const Tensor& src,
            const Tensor& index, const Tensor& order) {
  KernelBuffer buffers[4] = {{out.storage()->memory(), true},
                             {src.storage()->memory(), false},
                             {index.storage()->memory(), false},
                             {order.storage()->memory(), false}};
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kernel_launch(p, buffers));
}

void check_form(const ScatterForm& f) {
  const std::size_t n = f.sizes.size();
  if (n > std::size_t(abi::kMaxDims))
    throw InvalidArgument("scatter", "scatter: the iteration has " + std::to_string(n) +
                                         " dims; at most " + std::to_string(abi::kMaxDims) +
                                         " are supported.");
}

// The destination elements an in-range index reaches: 1 + the largest relative offset.
std::int64_t destination_span(const ScatterForm& f) {
  std::int64_t span = 1;
  for (int k = 0; k < int(f.sizes.size()); ++k) span += (f.sizes[k] - 1) * f.out_strides[k];
  if (f.bound > 0) span += (f.bound - 1) * f.index_scale;
  return span;
}

// The partitioned variant's three passes: counts per (bucket, part), their exclusive
// prefix (the starts), the pairs, the apply; false (nothing launched) where the pairs cannot
// be allocated, for the plain atomic pass to run instead.
bool run_partitioned(const Device& device, abi::ScatterParams p, const Tensor& out,
                     const Tensor& src, const Tensor& index, const ScatterPlan& plan) {
  Tensor pairs;
  try {
    pairs = Tensor::empty({2 * p.numel}, DType::kInt32, device);
  } catch (const OutOfMemory&) {
    return false;
  }
  p.variant = abi::kScatterPartitioned;
  p.bucket_shift = plan.bucket_shift;
  p.buckets = plan.buckets;
  p.parts = plan.parts;
  const Tensor counts = Tensor::empty({(plan.buckets + 1) * plan.parts}, DType::kInt32, device);
  p.pass = abi::kPassCount;
  launch(device, p, counts, src, index, index);
  const Tensor starts = ops::sub(ops::cumsum(counts, 0, DType::kInt32), counts);
  p.pass = abi::kPassPartition;
  launch(device, p, pairs, src, index, starts);
  p.pass = abi::kPassApply;
  launch(device, p, out, src, pairs, index);
  return true;
}

}  // namespace

std::string reduce_name(abi::ScatterReduce r) {
  switch (r) {
    case abi::kScatterAdd:
      return "sum";
    case abi::kScatterMul:
      return "prod";
    case abi::kScatterMax:
      return "amax";
    case abi::kScatterMin:
      return "amin";
    default:
      return "assign";
  }
}

ScatterPlan plan_scatter(const ScatterPlanInput& in, const PlanTarget& target,
                         std::vector<PlanChoice>& choices) {
  // Integer sums and products wrap the same in any order, max and min pick the same element;
  // what depends on the order: which duplicate an assignment keeps, how float sums and
  // products round.
  const bool float_fold =
      is_floating(in.dtype) && (in.reduce == abi::kScatterAdd || in.reduce == abi::kScatterMul);
  const bool order_dependent =
      !in.distinct_destinations && (in.reduce == abi::kScatterAssign || float_fold);
  int variant = abi::kScatterAtomic;
  std::string reason;
  const int forced = forced_variant();
  if (forced >= 0) {
    variant = forced == abi::kScatterSorted ? forced : abi::kScatterAtomic;
    reason = "NBX_SCATTER forces it.";
  } else if (order_dependent && deterministic_algorithms()) {
    variant = abi::kScatterSorted;
    reason =
        "deterministic algorithms are on: destinations sorted stably, each one's sources "
        "folded in index order on one thread (the host's result).";
  } else if (order_dependent && target.device_id.rfind("host", 0) == 0) {
    reason =
        "the host runs the elements one after another, in index order: its result is the "
        "deterministic one (the last write wins, sums in index order).";
  } else if (order_dependent) {
    reason = in.reduce == abi::kScatterAssign
                 ? "duplicate destinations keep one of their writes, which one unspecified (as "
                   "PyTorch); set_deterministic_algorithms(true) or NBX_DETERMINISTIC=1 keeps "
                   "the last."
                 : "float " + reduce_name(in.reduce) +
                       " accumulates in arrival order: not deterministic; "
                       "set_deterministic_algorithms(true) or NBX_DETERMINISTIC=1 folds in "
                       "index order.";
  } else {
    reason = in.distinct_destinations
                 ? "no two writes share a destination: the result is deterministic."
                 : "integer and bool " + reduce_name(in.reduce) +
                       " (and max/min) give the same result in any order: deterministic.";
  }
  // The atomic pass bucket by bucket of destinations, where NBX_SCATTER asks for it. Not
  // planned otherwise: on the H200 (docs/performance.md, 2026-12-04) it did not beat the
  // plain atomics on either backend for 2^26 uniform float32 writes into as many destinations
  // (cuda:0 3.9–4.4 against 3.8 ms; vulkan:0 3.9–12.6 against 3.9–9.7 ms, both erratic from
  // run to run), and lost to them 2.4 times on sorted indices (vulkan:0 1.46 against 0.60).
  ScatterPlan plan;
  std::string partitioned;
  if (forced == abi::kScatterPartitioned) {
    const std::string refusal = partition_refusal(in, target, plan);
    if (refusal.empty()) {
      variant = abi::kScatterPartitioned;
      partitioned = std::to_string(in.numel) + " writes into " + std::to_string(in.span) +
                    " destinations: pairs (offset, value) grouped into " +
                    std::to_string(plan.buckets) + " buckets of 2^" +
                    std::to_string(plan.bucket_shift) +
                    " destinations (counts per bucket and run of " +
                    std::to_string((in.numel + plan.parts - 1) / plan.parts) +
                    " elements, their prefix, a partition pass), then the atomics bucket by "
                    "bucket, each bucket's destinations held in the cache; 8 bytes of "
                    "workspace per write, the plain atomic pass where they cannot be had.";
    } else {
      reason = "NBX_SCATTER asks for partitioned, which does not serve " + refusal + ".";
    }
  } else if (variant == abi::kScatterAtomic && target.device_id.rfind("host", 0) != 0) {
    partitioned =
        "one atomic pass. The partitioned one (NBX_SCATTER=partitioned: the atomics bucket by "
        "bucket of destinations) is not planned: on the H200 it did not beat this pass.";
  }
  plan.variant = variant;
  abi::ScatterParams p{};
  p.variant = variant;
  const int candidates[] = {variant};
  choose_variant(p, candidates, target, choices);
  choices.push_back({"accumulation",
                     variant == abi::kScatterSorted        ? "sorted segments (deterministic)"
                     : variant == abi::kScatterPartitioned ? "atomic read-modify-write, bucket "
                                                             "by bucket of destinations"
                                                           : "atomic read-modify-write",
                     "", "", reason});
  if (!partitioned.empty())
    choices.push_back({"destinations",
                       variant == abi::kScatterPartitioned ? "partitioned" : "as indexed", "", "",
                       partitioned});
  // Vulkan's float32 atomic sums: the device's float add where VK_EXT_shader_atomic_float
  // gives one (vk_scatter.cpp), else a compare-and-swap loop on the bits.
  if ((variant == abi::kScatterAtomic || variant == abi::kScatterPartitioned) &&
      target.caps.backend == "vulkan" && in.dtype == DType::kFloat32 &&
      in.reduce == abi::kScatterAdd) {
    bool native = false;
    if (target.device) {
      const auto& extra = target.device->properties().extra;
      const auto it = extra.find("shader_float32_atomic_add");
      native = it != extra.end() && it->second == "yes";
    }
    choices.push_back(
        {"float atomics", native ? "native add" : "compare-and-swap loop", "",
         target.device ? "runtime: property shader_float32_atomic_add" : "",
         native ? "the device's shaderBufferFloat32AtomicAdd (VK_EXT_shader_atomic_float)."
                : "no float32 atomic add on this device (or no device to ask): each add "
                  "retries a compare-and-swap of the element's bits."});
  }
  return plan;
}

void run_scatter_keys(abi::ScatterOp op, const Tensor& keys, const Tensor& index,
                      const ScatterForm& form, bool accumulate) {
  check_form(form);
  abi::ScatterParams p = params_of(op, abi::kScatterAssign, keys, keys, index, form);
  if (p.numel == 0) return;
  p.variant = abi::kScatterKeys;
  p.accumulate_keys = accumulate ? 1 : 0;
  p.key_offset = keys.offset();
  p.out_offset = 0;
  launch(keys.device(), p, keys, index, index, index);
}

void run_scatter(abi::ScatterOp op, abi::ScatterReduce reduce, const Tensor& out, const Tensor& src,
                 const Tensor& index, const ScatterForm& form, bool distinct_destinations) {
  check_form(form);
  const Device& device = out.device();
  const PlanTarget target = target_of(device);
  const std::string name = scatter_op_name(op);
  require_dtype_support(name, out.dtype(), device);
  require_dtype_support(name, index.dtype(), device);
  std::vector<PlanChoice> choices;
  const ScatterPlan plan = plan_scatter(
      {name, out.dtype(), reduce, distinct_destinations, numel(form.sizes), destination_span(form)},
      target, choices);
  abi::ScatterParams p = params_of(op, reduce, out, src, index, form);
  if (p.numel == 0) return;
  if (plan.variant == abi::kScatterPartitioned && run_partitioned(device, p, out, src, index, plan))
    return;
  if (plan.variant != abi::kScatterSorted) {
    p.variant = abi::kScatterAtomic;
    return launch(device, p, out, src, index, index);
  }
  // The deterministic pass: each element's destination, sorted stably (ties keep index
  // order), then a fold per run of equal destinations. The keys are int64.
  require_dtype_support(name, DType::kInt64, device);
  const Tensor keys = Tensor::empty({p.numel}, DType::kInt64, device);
  run_scatter_keys(op, keys, index, form, false);
  const ValuesAndIndices sorted = ops::sort(keys, 0, false, true);
  const std::int64_t span = destination_span(form);  // every destination offset lies below
  p.variant = abi::kScatterSorted;
  p.index_dtype = static_cast<std::int32_t>(DType::kInt64);
  p.index_offset = sorted.values.offset();
  p.key_offset = sorted.indices.offset();
  p.bound = form.bound > 0 ? span : 0;
  launch(device, p, out, src, sorted.values, sorted.indices);
}

std::vector<std::int64_t> strides_of(const Tensor& t) {
  return {t.strides().begin(), t.strides().end()};
}

std::vector<std::int64_t> row_major_positions(const Shape& shape) {
  const Strides s = contiguous_strides(shape);
  return {s.begin(), s.end()};
}

std::int64_t count_true(const Tensor& mask) {
  return ops::sum(mask).item().to_int();
}

Tensor compact(const char* op, abi::ScatterOp code, const Tensor& values, const Tensor& mask,
               std::int64_t count) {
  (void)op;
  const Device& device = values.device();
  const Tensor out = Tensor::empty({count + 1}, values.dtype(), device);  // [count]: discarded
  const Tensor flat_mask = mask.reshape({-1});
  // Element e goes to (its true elements before it) or, when false, to the discarded slot.
  const Tensor slot =
      ops::where(flat_mask, ops::sub(ops::cumsum(flat_mask, 0, DType::kInt64), 1), Scalar(count))
          .reshape(values.shape());
  ScatterForm f;
  f.sizes = values.shape();
  f.out_strides.assign(f.sizes.size(), 0);
  f.src_strides = strides_of(values);
  f.index_strides = strides_of(slot);
  f.index_positions = row_major_positions(f.sizes);
  f.bound = count + 1;
  f.index_scale = 1;
  if (f.sizes.empty()) {  // a 0-d value: one element
    f.sizes = {1};
    f.out_strides = {0}, f.src_strides = {0}, f.index_strides = {0}, f.index_positions = {0};
  }
  run_scatter(code, abi::kScatterAssign, out, values, slot, f, true);
  return out.narrow(0, 0, count);
}

}  // namespace nbx::ops::detail
