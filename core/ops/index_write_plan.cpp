// The index writes' launch path (index_write_detail.hpp): deterministic algorithms, the
// scatter family's variant choice, and the launches — one atomic pass, or the deterministic
// one: destination keys, a stable sort of them (the sort family), one fold per destination.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/backend.hpp"
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

// NBX_SCATTER=atomic|sorted: the variant every scatter takes (tests run both on every dtype).
int forced_variant() {
  const char* v = std::getenv("NBX_SCATTER");
  if (v == nullptr || *v == 0) return -1;
  if (std::strcmp(v, "atomic") == 0) return abi::kScatterAtomic;
  if (std::strcmp(v, "sorted") == 0) return abi::kScatterSorted;
  throw InvalidArgument(
      "NBX_SCATTER",
      std::string("NBX_SCATTER must be \"atomic\" or \"sorted\", got \"") + v + "\".");
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

int plan_scatter(const ScatterPlanInput& in, const PlanTarget& target,
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
    variant = forced;
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
  abi::ScatterParams p{};
  p.variant = variant;
  const int candidates[] = {variant};
  choose_variant(p, candidates, target, choices);
  choices.push_back({"accumulation",
                     variant == abi::kScatterSorted ? "sorted segments (deterministic)"
                                                    : "atomic read-modify-write",
                     "", "", reason});
  // Vulkan's float32 atomic sums: the device's float add where VK_EXT_shader_atomic_float
  // gives one (vk_scatter.cpp), else a compare-and-swap loop on the bits.
  if (variant == abi::kScatterAtomic && target.caps.backend == "vulkan" &&
      in.dtype == DType::kFloat32 && in.reduce == abi::kScatterAdd) {
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
  return variant;
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
  const int variant =
      plan_scatter({name, out.dtype(), reduce, distinct_destinations}, target, choices);
  abi::ScatterParams p = params_of(op, reduce, out, src, index, form);
  if (p.numel == 0) return;
  if (variant == abi::kScatterAtomic) {
    p.variant = abi::kScatterAtomic;
    return launch(device, p, out, src, index, index);
  }
  // The deterministic pass: each element's destination, sorted stably (ties keep index
  // order), then a fold per run of equal destinations. The keys are int64.
  require_dtype_support(name, DType::kInt64, device);
  const Tensor keys = Tensor::empty({p.numel}, DType::kInt64, device);
  run_scatter_keys(op, keys, index, form, false);
  const ValuesAndIndices sorted = ops::sort(keys, 0, false, true);
  std::int64_t span = 1;  // every destination offset lies below
  for (int k = 0; k < form.sizes.size(); ++k) span += (form.sizes[k] - 1) * form.out_strides[k];
  span += (form.bound - 1) * form.index_scale;
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
