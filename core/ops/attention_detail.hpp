// Internal to scaled_dot_product_attention (attention*.cpp): the fused-path choice and the
// parameter block its plan is checked with.
#pragma once

#include <optional>
#include <string_view>

#include "core/kernel_abi.hpp"
#include "core/ops/attention.hpp"

namespace nbx::ops::detail {

// Sets plan.path (and the block sizes and splits of a fused path) and appends the "path"
// choice with its reason; NBX_ATTENTION forces a path (Unsupported where it cannot run).
void choose_attention_path(std::string_view op, DType dtype, const AttentionDims& d,
                           const PlanTarget& target, AttentionPlan& plan);

// The block a contiguous problem of these dims launches with the plan's sizes (the variant
// unset, scale 1): what the plan asks the family's variant contracts about.
abi::AttentionParams attention_model_block(DType dtype, const AttentionDims& d,
                                           const AttentionPlan& plan);

// One operand as the fused kernels read it: [batch, heads, rows, dim] from `offset`.
struct FusedView {
  std::int64_t batch = 1, heads = 1;
  std::int64_t offset = 0;
  std::int64_t strides[4] = {};
};
// `t` (q, k or v) against the output's shape `out` ([..., H, L, Ev]): its batch dims,
// broadcast to the output's, merged into one stride; nothing when they do not merge.
std::optional<FusedView> fused_view(const Tensor& t, const Shape& out);

struct FusedOperands {
  FusedView q, k, v;
  std::int64_t heads = 1, kv_heads = 1;  // the output's heads; the key/value heads they read
};

// The fused launch of `plan` (a fused path): the output of shape `out_shape`.
Tensor run_fused_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                           const FusedOperands& f, const AttentionPlan& plan,
                           const AttentionDims& d, double scale, std::int64_t causal_shift,
                           const Shape& out_shape);

}  // namespace nbx::ops::detail
