// moe_route, moe_permute, moe_combine and fused_moe (moe.hpp): compositions of softmax, topk,
// sort, searchsorted, index_select, the grouped GEMM and silu_and_mul, all on the device; and
// their explain entries (family "moe").
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/glu.hpp"
#include "core/ops/index.hpp"
#include "core/ops/index_write.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/moe.hpp"
#include "core/ops/moe_detail.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/softmax.hpp"
#include "core/ops/sort.hpp"

namespace nbx::ops {
namespace {

[[noreturn]] void bad(const std::string& op, const std::string& why) {
  throw InvalidArgument(op, op + ": " + why + ".");
}

bool is_moe_float(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32;
}

void require_defined(const std::string& op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (!t->defined()) bad(op, "a tensor is undefined");
  const Device& d = (*ts.begin())->device();
  for (const Tensor* t : ts)
    if (t->device() != d) bad(op, "operands are on " + d.str() + " and " + t->device().str());
}

void check_route(const std::string& op, DType logits, const Shape& shape, std::int64_t top_k) {
  if (shape.size() != 2)
    bad(op, "router_logits must be [tokens, experts], got " + to_string(shape));
  if (!is_moe_float(logits))
    bad(op, "router_logits must be float16, bfloat16 or float32, got " +
                std::string(dtype_name(logits)));
  if (top_k < 1 || top_k > shape[1])
    bad(op, "top_k " + std::to_string(top_k) + " must lie in [1, " + std::to_string(shape[1]) +
                "] (the experts of " + to_string(shape) + ")");
}

// The permutation without the id check: ids from moe_route are in range by construction.
MoePermutation permute(const Tensor& expert_ids, std::int64_t num_experts) {
  const Tensor flat = expert_ids.reshape({-1});
  // Stable: within an expert, rows keep token order, so every backend groups alike.
  const ValuesAndIndices sorted = sort(flat, 0, false, true);
  const Tensor bounds = arange(0, num_experts + 1, 1, flat.dtype(), flat.device());
  // offsets[e] = the rows with an id below e: the exclusive scan of the counts.
  const Tensor offsets = searchsorted(sorted.values, bounds);
  const std::int64_t n = flat.numel();
  const Tensor rows = arange(0, n, 1, DType::kInt64, flat.device());
  // In place into an empty tensor: order is a permutation, so every slot is written. The
  // out-of-place scatter first copied the empty tensor's never-written bytes (compute-sanitizer
  // initcheck, H100, 2026-12-07), a wasted pass over garbage.
  const Tensor inverse = Tensor::empty({n}, DType::kInt64, flat.device());
  scatter_(inverse, 0, sorted.indices, rows);
  return {sorted.indices, offsets, inverse};
}

}  // namespace

MoeRouting moe_route(const Tensor& router_logits, std::int64_t top_k, bool renormalize) {
  const std::string op = "moe_route";
  require_defined(op, {&router_logits});
  check_route(op, router_logits.dtype(), router_logits.shape(), top_k);
  const Tensor probs = softmax(router_logits, -1, DType::kFloat32);
  ValuesAndIndices top = topk(probs, top_k, -1, true, true);
  Tensor weights = top.values;
  if (renormalize) weights = div(weights, sum(weights, {-1}, true));
  return {weights, top.indices.to(DType::kInt32)};
}

MoePermutation moe_permute(const Tensor& expert_ids, std::int64_t num_experts) {
  const std::string op = "moe_permute";
  require_defined(op, {&expert_ids});
  const DType t = expert_ids.dtype();
  if (t != DType::kInt32 && t != DType::kInt64)
    bad(op, "expert_ids must be int32 or int64, got " + std::string(dtype_name(t)));
  if (expert_ids.dim() != 2)
    bad(op, "expert_ids must be [tokens, top_k], got " + to_string(expert_ids.shape()));
  if (num_experts < 1) bad(op, "num_experts " + std::to_string(num_experts) + " must be positive");
  // An id outside [0, E) would leave its row in no group: index_select over E slots checks
  // every id on the device (a DeviceFault at the next synchronize), with no host read.
  index_select(Tensor::zeros({num_experts}, DType::kInt32, expert_ids.device()), 0,
               expert_ids.reshape({-1}));
  return permute(expert_ids, num_experts);
}

Tensor moe_combine(const Tensor& expert_out, const Tensor& weights, const Tensor& inverse) {
  const std::string op = "moe_combine";
  require_defined(op, {&expert_out, &weights, &inverse});
  const std::string all = " (expert_out " + to_string(expert_out.shape()) + ", weights " +
                          to_string(weights.shape()) + ", inverse " + to_string(inverse.shape()) +
                          ")";
  if (expert_out.dim() != 2 || weights.dim() != 2 || inverse.dim() != 1)
    bad(op, "expected expert_out [T·k, D], weights [T, k], inverse [T·k]" + all);
  const std::int64_t tokens = weights.shape()[0], k = weights.shape()[1];
  if (expert_out.shape()[0] != tokens * k || inverse.shape()[0] != tokens * k)
    bad(op, "expert_out and inverse must have T·k = " + std::to_string(tokens * k) + " rows" + all);
  if (!is_moe_float(expert_out.dtype()) || !is_moe_float(weights.dtype()))
    bad(op, "expert_out and weights must be float16, bfloat16 or float32, got " +
                std::string(dtype_name(expert_out.dtype())) + " and " +
                std::string(dtype_name(weights.dtype())) + all);
  if (inverse.dtype() != DType::kInt64 && inverse.dtype() != DType::kInt32)
    bad(op,
        "inverse must be int64 or int32, got " + std::string(dtype_name(inverse.dtype())) + all);
  const std::int64_t d = expert_out.shape()[1];
  // Each token's k rows side by side, weighted and summed in float32, rounded once — as one
  // batched product [T, 1, k] × [T, k, D] in float32. The broadcast multiply then a sum over
  // the middle dim took 13.2 ms for Mixtral's shapes on the H100 (2026-12-07: a [4096, 2,
  // 4096] float32 temporary, and a reduction over a non-contiguous dim of length 2); the
  // product reads the rows once.
  const Tensor rows = index_select(expert_out, 0, inverse).view({tokens, k, d});
  const Tensor w = weights.to(DType::kFloat32).unsqueeze(1);
  return matmul(w, rows.to(DType::kFloat32)).squeeze(1).to(expert_out.dtype());
}

Tensor fused_moe(const Tensor& hidden, const Tensor& router_logits, const Tensor& w13,
                 const Tensor& w2, std::int64_t top_k, bool renormalize, MoeActivation activation) {
  const std::string op = "fused_moe";
  require_defined(op, {&hidden, &router_logits, &w13, &w2});
  if (activation != MoeActivation::kSilu) bad(op, "the activation must be silu");
  const std::string all = " (hidden " + to_string(hidden.shape()) + ", router_logits " +
                          to_string(router_logits.shape()) + ", w13 " + to_string(w13.shape()) +
                          ", w2 " + to_string(w2.shape()) + ")";
  if (hidden.dim() != 2 || w13.dim() != 3 || w2.dim() != 3)
    bad(op, "expected hidden [T, D], w13 [E, 2F, D], w2 [E, D, F]" + all);
  const std::int64_t tokens = hidden.shape()[0], d = hidden.shape()[1];
  const std::int64_t experts = w13.shape()[0], f2 = w13.shape()[1];
  if (f2 % 2 != 0 || w13.shape()[2] != d || w2.shape()[0] != experts || w2.shape()[1] != d ||
      w2.shape()[2] != f2 / 2)
    bad(op, "expected hidden [T, D], w13 [E, 2F, D], w2 [E, D, F]" + all);
  if (router_logits.dim() != 2 || router_logits.shape()[0] != tokens ||
      router_logits.shape()[1] != experts)
    bad(op, "router_logits must be [T, E] = [" + std::to_string(tokens) + ", " +
                std::to_string(experts) + "]" + all);
  if (!is_moe_float(hidden.dtype()) || w13.dtype() != hidden.dtype() ||
      w2.dtype() != hidden.dtype())
    bad(op, "hidden, w13 and w2 must share one dtype of float16, bfloat16 or float32, got " +
                std::string(dtype_name(hidden.dtype())) + ", " +
                std::string(dtype_name(w13.dtype())) + " and " +
                std::string(dtype_name(w2.dtype())) + all);
  check_route(op, router_logits.dtype(), router_logits.shape(), top_k);
  detail::require_dtype_support(op, hidden.dtype(), hidden.device());

  const MoeRouting route = moe_route(router_logits, top_k, renormalize);
  const MoePermutation perm = permute(route.expert_ids, experts);
  // Grouped row i is token order[i] / top_k.
  const Tensor token_rows = floor_divide(perm.order, top_k);
  const Tensor rows = index_select(hidden, 0, token_rows);
  const Tensor gate_up = grouped_matmul(rows, w13, perm.group_offsets);
  const Tensor act = silu_and_mul(gate_up);
  const Tensor down = grouped_matmul(act, w2, perm.group_offsets);
  return moe_combine(down, route.weights, perm.inverse);
}

namespace detail {
namespace {

std::string described(DType t, const Shape& s) {
  return std::string(dtype_name(t)) + " " + to_string(s);
}

}  // namespace

// fused_moe: hidden [T, D]; router_logits [T, E]; w13 [E, 2F, D]; w2 [E, D, F] (top_k 2).
// moe_route: router_logits [T, E] (top_k 2). moe_permute: expert_ids [T, k] (E = 8).
// moe_combine: expert_out [T·k, D]; weights [T, k]; inverse [T·k].
void explain_moe(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const std::string& n = entry.name;
  const PlanTarget& target = call.target;
  for (DType t : call.dtypes)
    require_dtype_support(n, t, target.caps, target.device_id, target.device_name);
  if (n == "moe_route") {
    check_route(n, call.dtypes[0], call.shapes[0],
                std::min<std::int64_t>(2, call.shapes[0].size() == 2 ? call.shapes[0][1] : 0));
    const Shape s{call.shapes[0][0], std::min<std::int64_t>(2, call.shapes[0][1])};
    out.output = described(DType::kFloat32, s) + " weights and " + described(DType::kInt32, s) +
                 " expert ids (top_k 2)";
    out.kernel = "moe (composition): softmax (float32), topk (sort family), sum and div";
    out.choices.push_back({"weights", "float32", "", "",
                           "vLLM's fused_topk: softmax in float32, the weights kept in float32 "
                           "until the combine rounds once."});
    return;
  }
  if (n == "moe_permute") {
    const std::int64_t rows = numel(call.shapes[0]);
    out.output = "order [" + std::to_string(rows) + "] int64, group_offsets [E + 1] int64, " +
                 "inverse [" + std::to_string(rows) + "] int64";
    out.kernel =
        "moe (composition): index_select (the id check), stable sort (sort family), "
        "searchsorted (search family), scatter";
    out.choices.push_back({"order", "stable", "", "",
                           "rows of one expert keep token order, so every backend groups alike; "
                           "the counts never reach the host."});
    return;
  }
  if (n == "moe_combine") {
    const Shape& e = call.shapes[0];
    const Shape& w = call.shapes[1];
    out.output = described(call.dtypes[0], {w.empty() ? 0 : w[0], e.size() > 1 ? e[1] : 0});
    out.kernel =
        "moe (composition): index_select (gather family), a batched float32 matmul "
        "[T, 1, k] x [T, k, D] (matmul family)";
    out.choices.push_back({"compute", "float32", "", "",
                           "each token's k rows weighted and summed in float32, rounded once."});
    return;
  }
  // fused_moe: the two grouped GEMMs decide the time; explain the first one's plan.
  const Shape& h = call.shapes[0];
  const Shape& w13 = call.shapes[2];
  if (h.size() != 2 || w13.size() != 3) bad(n, "expected hidden [T, D] and w13 [E, 2F, D]");
  const std::int64_t rows = h[0] * 2;
  std::vector<PlanChoice> choices;
  const GroupedOperands gemm{
      call.dtypes[0], call.dtypes[2], DType::kInt64, {rows, h[1]}, w13, {w13[0] + 1}, true};
  const abi::GroupedMatmulParams p = plan_grouped_matmul("grouped_matmul", gemm, target, choices);
  out.output = described(call.dtypes[0], h);
  out.kernel = "moe (composition): moe_route, moe_permute, index_select, grouped_matmul (variant " +
               variant_name(KernelFamily::kGroupedMatmul, p.variant) +
               "), silu_and_mul, grouped_matmul, moe_combine";
  out.choices.push_back({"weights", "w13 = [gate; up]", "", "",
                         "the first F rows of each w13[e] are the gate, the last F the up "
                         "projection (vLLM's w13 = cat(w1, w3)); top_k 2 here."});
  for (PlanChoice& c : choices) out.choices.push_back(std::move(c));
}

}  // namespace detail

}  // namespace nbx::ops
