// grouped_matmul (moe.hpp): its checks and plan (plan_grouped_matmul, which fused_moe and
// `nbx explain` run too), one "grouped_matmul" launch through every operand's strides.
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/moe.hpp"
#include "core/ops/moe_detail.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops {
namespace detail {
namespace {

[[noreturn]] void bad(const std::string& op, const std::string& why) {
  throw InvalidArgument(op, op + ": " + why + ".");
}

bool is_operand_dtype(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32;
}

// Whether the target's matrix unit runs the mma kernel for `t`, and the stages that fit its
// shared memory; "" and the stages, or the reason it does not.
struct MmaFit {
  std::string refusal;
  int stages = 0;
};
MmaFit mma_fit(DType t, const PlanTarget& target) {
  const Capabilities& caps = target.caps;
  const MatrixUnit unit = caps.matrix_unit.value;
  if (unit != MatrixUnit::kMma && unit != MatrixUnit::kWgmma)
    return {"the device's matrix unit is " + std::string(to_string(unit)) + " (" +
            caps.matrix_unit.source + "), not mma/wgmma"};
  const auto& dtypes = caps.matrix_dtypes.value;
  if (std::find(dtypes.begin(), dtypes.end(), t) == dtypes.end())
    return {"the matrix unit does not take " + std::string(dtype_name(t)) + " (" +
            caps.matrix_dtypes.source + ")"};
  // cp.async (sm_80+) is what the device file's stage count above 2 stands for.
  const int max_stages = std::min(caps.pipelining.max_num_stages.value, 4);
  if (max_stages < 3)
    return {"pipelining.max_num_stages is " + std::to_string(caps.pipelining.max_num_stages.value) +
            " (" + caps.pipelining.max_num_stages.source +
            "): the kernel keeps 3 or 4 cp.async stages in flight"};
  const std::int64_t smem = caps.shared_memory_per_block_optin.value;
  for (int s = max_stages; s >= 3; --s)
    if (abi::grouped_mma_shared_bytes(s) <= smem) return {"", s};
  return {"shared_memory.per_block_optin " + std::to_string(smem) + " (" +
          caps.shared_memory_per_block_optin.source + ") is below the " +
          std::to_string(abi::grouped_mma_shared_bytes(3)) + " bytes of 3 stages"};
}

// NBX_GROUPED_MATMUL=auto|own|tiled|mma|blas (read at each plan: tests and benchmarks switch
// it): own keeps to the project's kernels (mma, then tiled); tiled runs the kernel HIP runs on
// a CUDA device, so the H200 checks that code too.
enum class Request { kAuto, kOwn, kTiled, kMma, kBlas };
Request request() {
  const char* env = std::getenv("NBX_GROUPED_MATMUL");
  const std::string v = env ? env : "";
  if (v.empty() || v == "auto") return Request::kAuto;
  if (v == "own") return Request::kOwn;
  if (v == "tiled") return Request::kTiled;
  if (v == "mma") return Request::kMma;
  if (v == "blas") return Request::kBlas;
  throw InvalidArgument("grouped_matmul", "NBX_GROUPED_MATMUL='" + v +
                                              "' is not a grouped_matmul variant (auto, own, "
                                              "tiled, mma, blas).");
}

}  // namespace

void replan_variant(abi::GroupedMatmulParams& p, const PlanTarget& target,
                    std::vector<PlanChoice>& choices) {
  const MmaFit fit = mma_fit(DType(p.dtype), target);
  const Request wanted = request();
  if (wanted == Request::kMma && !fit.refusal.empty())
    throw Unsupported("grouped_matmul", target.device_name, "matrix.unit",
                      "grouped_matmul on " + target.device_name +
                          ": NBX_GROUPED_MATMUL asks for the mma variant, but " + fit.refusal +
                          "; refused.");
  p.num_stages = fit.refusal.empty() ? fit.stages : 0;
  std::vector<int> candidates;
  // The vendor GEMM first where it loads (cuBLASLt on CUDA: one launch a group after reading
  // the offsets back), then the own kernels.
  if (wanted == Request::kAuto || wanted == Request::kBlas)
    candidates.push_back(abi::kGroupedMatmulBlas);
  const bool own = wanted == Request::kAuto || wanted == Request::kOwn;
  if (fit.refusal.empty() && (own || wanted == Request::kMma))
    candidates.push_back(abi::kGroupedMatmulMma);
  if (own || wanted == Request::kTiled) candidates.push_back(abi::kGroupedMatmulTiled);
  if (candidates.empty())
    throw Unsupported(
        "grouped_matmul", target.device_name, "matrix.unit",
        "grouped_matmul on " + target.device_name +
            ": NBX_GROUPED_MATMUL asks for a variant the device cannot run; refused.");
  const int v = choose_variant(p, candidates, target, choices);
  if (v != abi::kGroupedMatmulMma) p.num_stages = 0;
  if (wanted != Request::kAuto)
    choices.push_back({"request",
                       wanted == Request::kOwn     ? "own"
                       : wanted == Request::kTiled ? "tiled"
                       : wanted == Request::kMma   ? "mma"
                                                   : "blas",
                       "", "", "NBX_GROUPED_MATMUL asks for this variant."});
  if (!fit.refusal.empty())
    choices.push_back(
        {"mma", "not taken", "matrix.unit", target.caps.matrix_unit.source, fit.refusal + "."});
  else if (v == abi::kGroupedMatmulMma)
    choices.push_back({"stages", std::to_string(p.num_stages), "shared_memory.per_block_optin",
                       target.caps.shared_memory_per_block_optin.source,
                       "128x256x32 tiles, " + std::to_string(p.num_stages) + " cp.async stages (" +
                           std::to_string(abi::grouped_mma_shared_bytes(p.num_stages)) +
                           " bytes of shared memory), bf16/f16 mma.sync m16n8k16 into float32."});
}

abi::GroupedMatmulParams plan_grouped_matmul(const std::string& op, const GroupedOperands& o,
                                             const PlanTarget& target,
                                             std::vector<PlanChoice>& choices) {
  const std::string all = " (a " + to_string(o.a_shape) + ", b " + to_string(o.b_shape) +
                          ", offsets " + to_string(o.offsets_shape) + ")";
  if (o.a_shape.size() != 2) bad(op, "a must be [rows, K]" + all);
  if (o.b_shape.size() != 3)
    bad(op, std::string("b must be ") + (o.b_is_nk ? "[E, N, K]" : "[E, K, N]") + all);
  const std::int64_t experts = o.b_shape[0];
  const std::int64_t k = o.b_is_nk ? o.b_shape[2] : o.b_shape[1];
  const std::int64_t n = o.b_is_nk ? o.b_shape[1] : o.b_shape[2];
  if (o.a_shape[1] != k)
    bad(op,
        "a's K " + std::to_string(o.a_shape[1]) + " differs from b's " + std::to_string(k) + all);
  if (experts < 1) bad(op, "b must hold at least one expert" + all);
  if (o.offsets_shape.size() != 1 || o.offsets_shape[0] != experts + 1)
    bad(op, "group_offsets must be [E + 1] = [" + std::to_string(experts + 1) + "]" + all);
  if (o.a != o.b)
    bad(op, "a and b must have one dtype, got " + std::string(dtype_name(o.a)) + " and " +
                std::string(dtype_name(o.b)) + all);
  if (!is_operand_dtype(o.a))
    bad(op,
        "a and b must be float16, bfloat16 or float32, got " + std::string(dtype_name(o.a)) + all);
  if (o.offsets != DType::kInt32 && o.offsets != DType::kInt64)
    bad(op,
        "group_offsets must be int32 or int64, got " + std::string(dtype_name(o.offsets)) + all);
  for (DType t : {o.a, o.offsets})
    require_dtype_support(op, t, target.caps, target.device_id, target.device_name);

  abi::GroupedMatmulParams p{};
  p.op = abi::kGroupedMatmul_grouped_matmul;
  p.dtype = p.out_dtype = static_cast<std::int32_t>(o.a);
  p.offsets_dtype = static_cast<std::int32_t>(o.offsets);
  p.groups = experts;
  p.rows = o.a_shape[0];
  p.n = n;
  p.k = k;
  p.a_row_stride = k;
  p.a_col_stride = 1;
  p.b_group_stride = n * k;
  p.b_n_stride = o.b_is_nk ? k : 1;
  p.b_k_stride = o.b_is_nk ? 1 : n;
  p.out_row_stride = n;
  p.out_col_stride = 1;
  p.offsets_stride = 1;
  choices.push_back({"compute", "float32", "", "",
                     "products accumulate in float32 (the host reference in float64) and round "
                     "once to " +
                         std::string(dtype_name(o.a)) + "."});
  choices.push_back({"bounds", "device fault channel", "", "",
                     "offsets that do not start at 0, rise and end at the row count are "
                     "recorded on the device and raised as DeviceFault; nothing out of range "
                     "is read."});
  replan_variant(p, target, choices);
  return p;
}

// Operands: a [R, K]; b [E, N, K]; group_offsets [E + 1].
void explain_grouped_matmul(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const auto dtype = [&](std::size_t i) {
    return call.dtypes[std::min(i, call.dtypes.size() - 1)];
  };
  const auto shape = [&](std::size_t i) {
    return call.shapes[std::min(i, call.shapes.size() - 1)];
  };
  const GroupedOperands o{dtype(0), dtype(1), dtype(2), shape(0), shape(1), shape(2), true};
  std::vector<PlanChoice> choices;
  const abi::GroupedMatmulParams p = plan_grouped_matmul(entry.name, o, call.target, choices);
  out.output = std::string(dtype_name(o.a)) + " [" + std::to_string(p.rows) + ", " +
               std::to_string(p.n) + "]";
  out.kernel = "grouped_matmul (one launch for " + std::to_string(p.groups) + " groups, " +
               std::to_string(p.rows) + " rows × " + std::to_string(p.n) + " × " +
               std::to_string(p.k) + "; variant " +
               variant_name(KernelFamily::kGroupedMatmul, p.variant) + ")";
  out.choices = std::move(choices);
}

}  // namespace detail

Tensor grouped_matmul(const Tensor& a, const Tensor& b, const Tensor& group_offsets,
                      GroupedWeights layout) {
  const std::string op = "grouped_matmul";
  if (!a.defined() || !b.defined() || !group_offsets.defined())
    throw InvalidArgument(op, op + ": a tensor is undefined.");
  const Device& device = a.device();
  for (const Tensor* t : {&b, &group_offsets})
    if (t->device() != device)
      throw InvalidArgument(op, op + ": a is on " + device.str() + " and another operand on " +
                                    t->device().str() + ".");
  const bool nk = layout == GroupedWeights::kNK;
  const detail::GroupedOperands o{
      a.dtype(), b.dtype(), group_offsets.dtype(), a.shape(), b.shape(), group_offsets.shape(), nk};
  const PlanTarget target{device.capabilities(), device.str(), device.display_name(),
                          &device.context().backend_device()};
  std::vector<PlanChoice> choices;
  abi::GroupedMatmulParams p = detail::plan_grouped_matmul(op, o, target, choices);
  const Tensor out = Tensor::empty({p.rows, p.n}, a.dtype(), device);
  Tensor a_in = a, b_in = b;
  const auto bind_operands = [&] {
    p.a_offset = a_in.offset();
    p.a_row_stride = a_in.strides()[0];
    p.a_col_stride = a_in.strides()[1];
    p.b_offset = b_in.offset();
    p.b_group_stride = b_in.strides()[0];
    p.b_n_stride = b_in.strides()[nk ? 1 : 2];
    p.b_k_stride = b_in.strides()[nk ? 2 : 1];
  };
  bind_operands();
  p.out_offset = out.offset();
  p.out_row_stride = out.strides()[0];
  p.out_col_stride = out.strides()[1];
  p.offsets_offset = group_offsets.offset();
  p.offsets_stride = group_offsets.strides()[0];
  choices.clear();
  detail::replan_variant(p, target, choices);
  // The vendor GEMM reads row- or column-major matrices only (a group's rows of a, an
  // expert's matrix of b); another layout — an expanded weight's stride 0 — is copied first.
  if (p.variant == abi::kGroupedMatmulBlas) {
    if (!detail::blas_layout(a.shape()[0], a.shape()[1], a.strides()[0], a.strides()[1]))
      a_in = a.contiguous();
    if (!detail::blas_layout(b.shape()[1], b.shape()[2], b.strides()[1], b.strides()[2]))
      b_in = b.contiguous();
    bind_operands();
  }
  // Even an empty product reads the offsets: bad ones fault whatever the sizes.
  const KernelBuffer buffers[4] = {{out.storage()->memory(), true},
                                   {a_in.storage()->memory(), false},
                                   {b_in.storage()->memory(), false},
                                   {group_offsets.storage()->memory(), false}};
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kernel_launch(p, buffers));
  return out;
}

}  // namespace nbx::ops
