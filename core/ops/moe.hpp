// Mixture of experts, vLLM's fused_moe semantics: routing, the permutation of (token, slot)
// rows by expert, the grouped GEMM over experts (the "grouped_matmul" kernel family,
// core/families/grouped_matmul_family.cpp), the weighted combine, and fused_moe composed of
// them. Everything stays on the device: no count is read to the host.
//
// grouped_matmul(a, b, group_offsets, layout): out [R, N] with out[r] = a[r] @ b[e]^T for every
//   row r of group e, offsets[e] <= r < offsets[e + 1]. a is [R, K] (rows grouped by expert),
//   b is [E, N, K] (kNK: each expert a PyTorch Linear weight [N, K]) or [E, K, N] (kKN: out[r]
//   = a[r] @ b[e]); any strides. group_offsets is [E + 1], int32 or int64, on the device: it
//   must start at 0, never decrease and end at R. Other offsets touch no memory out of range:
//   they are recorded on the device and raised as nbx::DeviceFault at the next synchronize or
//   read back (the host at once), naming the entry and its value; that launch writes nothing,
//   the device stays usable. a and b share one dtype, float16, bfloat16 or float32, which the
//   result takes; products accumulate in float32 (the host reference in float64) and round
//   once, as PyTorch's bf16 matmul. One launch for all groups.
//   Throws InvalidArgument for undefined tensors, tensors on different devices, a that is not
//   2-d, b that is not 3-d, K or the expert counts that disagree, offsets that are not 1-d
//   [E + 1] int32/int64, a and b of different dtypes or of another dtype; Unsupported where
//   the device lacks the dtype. The variant (`nbx explain grouped_matmul`): mma (CUDA sm_80+,
//   float16/bfloat16 with k-contiguous a and b) where the device offers it, tiled otherwise;
//   NBX_GROUPED_MATMUL=tiled|mma forces one (a forced mma the device cannot run is refused by
//   name: Unsupported), so a CUDA device also checks the tiled kernel HIP runs.
// moe_route(router_logits [T, E], top_k, renormalize): softmax over the experts in float32,
//   the top_k largest (ties to the lower expert), divided by their sum when renormalize.
//   Returns weights [T, top_k] float32 (vLLM's fused_topk; Mixtral's reference casts them to
//   the hidden dtype later — fused_moe keeps float32 until the combine) and expert ids
//   [T, top_k] int32 (vLLM's). Logits float16/bfloat16/float32; 1 <= top_k <= E.
// moe_permute(expert_ids [T, k], num_experts): the (token, slot) rows grouped by expert,
//   stably (within an expert in token order, so the result is deterministic): order [T·k]
//   int64 holds the flat index t·k + j of each grouped row, group_offsets [E + 1] int64 the
//   exclusive scan of the per-expert row counts (offsets[E] = T·k), inverse [T·k] int64 the
//   grouped row of each flat index (order[inverse[i]] = i). An expert id outside
//   [0, num_experts) faults (DeviceFault from the index_select that checks the ids).
// moe_combine(expert_out [T·k, D] (grouped rows), weights [T, k], inverse [T·k]): out[t] =
//   Σ_j weights[t, j] · expert_out[inverse[t·k + j]], in float32, rounded once to
//   expert_out's dtype; [T, D].
// fused_moe(hidden [T, D], router_logits [T, E], w13 [E, 2F, D], w2 [E, D, F], top_k,
//   renormalize, activation): out[t] = Σ_j w_tj · (silu(h W_gate^T) ⊙ (h W_up^T)) W2^T with
//   W_gate the first F rows of w13[e] and W_up the last F (vLLM's w13 = cat(w1, w3)). Runs
//   moe_route, moe_permute, index_select of the hidden rows, grouped_matmul, silu_and_mul,
//   grouped_matmul, moe_combine. hidden, w13 and w2 share a dtype (float16, bfloat16,
//   float32), which the result takes; each GEMM rounds once.
#pragma once

#include <cstdint>

#include "core/tensor.hpp"

namespace nbx::ops {

enum class GroupedWeights {
  kNK,  // b [E, N, K]: PyTorch Linear weights, out[r] = a[r] @ b[e]^T
  kKN,  // b [E, K, N]: out[r] = a[r] @ b[e]
};
Tensor grouped_matmul(const Tensor& a, const Tensor& b, const Tensor& group_offsets,
                      GroupedWeights layout = GroupedWeights::kNK);

struct MoeRouting {
  Tensor weights;     // [T, top_k] float32
  Tensor expert_ids;  // [T, top_k] int32
};
MoeRouting moe_route(const Tensor& router_logits, std::int64_t top_k, bool renormalize = true);

struct MoePermutation {
  Tensor order;          // [T·k] int64: flat (token, slot) index of each grouped row
  Tensor group_offsets;  // [E + 1] int64
  Tensor inverse;        // [T·k] int64: grouped row of each flat index
};
MoePermutation moe_permute(const Tensor& expert_ids, std::int64_t num_experts);

Tensor moe_combine(const Tensor& expert_out, const Tensor& weights, const Tensor& inverse);

enum class MoeActivation { kSilu };
Tensor fused_moe(const Tensor& hidden, const Tensor& router_logits, const Tensor& w13,
                 const Tensor& w2, std::int64_t top_k, bool renormalize = true,
                 MoeActivation activation = MoeActivation::kSilu);

}  // namespace nbx::ops
