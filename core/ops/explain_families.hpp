// The explain function of each kernel family (op_catalog.hpp: OpEntry::explain). Each runs
// the planner the family's ops run and writes what it decided. Internal to core/ops.
#pragma once

#include "core/ops/op_catalog.hpp"

namespace nbx::ops::detail {

void explain_elementwise(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
// glu, silu_and_mul, gelu_and_mul: one input split in halves along its last dim.
void explain_gated(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_cast(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_creation(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_reduce(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_scan(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_softmax(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_norm(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_gather(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_sort(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_scatter(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_search(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_join(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
// rotary.cpp: rotary_embedding's checks and its one variant.
void explain_rotary(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
// grouped_matmul.cpp: the grouped GEMM's checks, variant and stages.
void explain_grouped_matmul(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
// moe.cpp: fused_moe, moe_route, moe_permute, moe_combine (family "moe": compositions).
void explain_moe(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
void explain_matmul(const OpEntry& entry, const ExplainCall& call, OpExplanation& out);
// The shape ops (op_catalog_shape.cpp): compositions of views, copies and index_select.
void add_shape_ops(std::vector<OpEntry>& ops);
// scaled_dot_product_attention (explain_attention.cpp).
void add_attention_ops(std::vector<OpEntry>& ops);
// The losses (op_catalog_loss.cpp): compositions of reductions, gathers and elementwise ops.
void add_loss_ops(std::vector<OpEntry>& ops);
// Adds the "variant" choice of a family with one variant (elementwise, scan, fill).
void name_single_variant(OpExplanation& out);

}  // namespace nbx::ops::detail
