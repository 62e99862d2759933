// The op catalog, built once from the op tables (op_catalog.hpp says which).
#include "core/ops/op_catalog.hpp"

#include <algorithm>
#include <string_view>

#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_rules.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/linalg.hpp"

namespace nbx::ops {
namespace {

using detail::Domain;

// ---- The families whose ops are an enum, not an X-macro list. A switch without a
// default over each enum: -Wswitch (in -Wall) names an enumerator added without a name
// here, and every named code enters the catalog by itself.

const char* op_name(abi::ScanOp op) {
  switch (op) {
    case abi::kScan_cumsum:
      return "cumsum";
    case abi::kScan_cumprod:
      return "cumprod";
    case abi::kScan_cummax:
      return "cummax";
    case abi::kScan_cummin:
      return "cummin";
    case abi::kScan_logcumsumexp:
      return "logcumsumexp";
  }
  return nullptr;
}

const char* op_name(abi::SoftmaxOp op) {
  switch (op) {
    case abi::kSoftmax_softmax:
      return "softmax";
    case abi::kSoftmax_log_softmax:
      return "log_softmax";
  }
  return nullptr;
}

const char* op_name(abi::NormOp op) {
  switch (op) {
    case abi::kNorm_layer_norm:
      return "layer_norm";
    case abi::kNorm_rms_norm:
      return "rms_norm";
    case abi::kNorm_group_norm:
      return "group_norm";
    case abi::kNorm_batch_norm:
      return "batch_norm";
  }
  return nullptr;
}

const char* op_name(abi::FillOp op) {
  switch (op) {
    case abi::kFill_arange:
      return "arange";
    case abi::kFill_linspace:
      return "linspace";
    case abi::kFill_triu:
      return "triu";
    case abi::kFill_tril:
      return "tril";
    case abi::kFill_eye:
      return "eye";
  }
  return nullptr;
}

const char* op_name(abi::GatherOp op) {
  switch (op) {
    case abi::kGather_index_select:
      return "index_select";
    case abi::kGather_gather:
      return "gather";
    case abi::kGather_take_along_dim:
      return "take_along_dim";
    case abi::kGather_embedding:
      return "embedding";
    case abi::kGather_take:
      return "take";
  }
  return nullptr;
}

const char* op_name(abi::SortOp op) {
  switch (op) {
    case abi::kSort_sort:
      return "sort";
    case abi::kSort_topk:
      return "topk";
  }
  return nullptr;
}

const char* op_name(abi::ScatterOp op) {
  switch (op) {
    case abi::kScatter_scatter:
      return "scatter";
    case abi::kScatter_scatter_add:
      return "scatter_add";
    case abi::kScatter_scatter_reduce:
      return "scatter_reduce";
    case abi::kScatter_index_add:
      return "index_add";
    case abi::kScatter_index_copy:
      return "index_copy";
    case abi::kScatter_index_fill:
      return "index_fill";
    case abi::kScatter_index_put:
      return "index_put";
    case abi::kScatter_masked_select:
      return "masked_select";
    case abi::kScatter_nonzero:
      return "nonzero";
    case abi::kScatter_one_hot:
      return "one_hot";
    case abi::kScatter_bincount:
      return "bincount";
  }
  return nullptr;
}

const char* op_name(abi::GroupedMatmulOp op) {
  switch (op) {
    case abi::kGroupedMatmul_grouped_matmul:
      return "grouped_matmul";
  }
  return nullptr;
}

const char* op_name(abi::RotaryOp op) {
  switch (op) {
    case abi::kRotary_rotary_embedding:
      return "rotary_embedding";
  }
  return nullptr;
}

const char* op_name(abi::SearchOp op) {
  switch (op) {
    case abi::kSearch_searchsorted:
      return "searchsorted";
    case abi::kSearch_bucketize:
      return "bucketize";
  }
  return nullptr;
}

const char* op_name(abi::JoinOp op) {
  switch (op) {
    case abi::kJoin_cat:
      return "cat";
  }
  return nullptr;
}

// Op codes are small and dense; past this no enum of kernel_abi_families.hpp reaches.
constexpr int kMaxEnumCode = 64;

template <class Enum>
void add_enum_family(std::vector<OpEntry>& ops, const char* family, ExplainFn explain,
                     const OpEntry& shape_of_entries) {
  for (int code = 0; code < kMaxEnumCode; ++code) {
    const char* name = op_name(static_cast<Enum>(code));
    if (!name) continue;
    OpEntry e = shape_of_entries;
    e.name = e.table_op = name;
    e.family = family;
    e.code = code;
    e.explain = explain;
    ops.push_back(std::move(e));
  }
}

// ---- Examples: a call devices plan without a refusal (float32 where the op takes
// it), so tests and `--list` can show each op.

const Shape kRows{4, 1000};

std::vector<DType> repeat(DType t, int n) {
  return std::vector<DType>(static_cast<std::size_t>(n), t);
}

OpEntry elementwise_entry(const detail::OpRule& rule, std::string_view table_op, int arity) {
  OpEntry e;
  e.name = std::string(rule.name);
  e.family = "elementwise";
  e.table_op = std::string(table_op);
  e.code = rule.op;
  e.operands = arity;
  e.explain = detail::explain_elementwise;
  const bool integers = rule.domain == Domain::kIntegral || rule.domain == Domain::kIntegralOrBool;
  e.example_dtypes = repeat(integers ? DType::kInt32 : DType::kFloat32, arity);
  e.example_shapes = {kRows};
  if (arity == 1) e.operand_names = "x";
  if (arity == 2) {
    e.operand_names = "a; b";
    e.example_shapes = {kRows, Shape{1000}};  // b broadcast along the rows
  }
  if (arity == 3) e.operand_names = "x; a; b";
  switch (rule.op) {
    case abi::kOp_where:
      e.operand_names = "condition (bool); a; b";
      e.example_dtypes[0] = DType::kBool;
      break;
    case abi::kOp_clamp:
      e.operand_names = "x; min; max";
      break;
    case abi::kOp_lerp:
      e.operand_names = "start; end; weight";
      break;
    case abi::kOp_addcmul:
    case abi::kOp_addcdiv:
      e.operand_names = "x; t1; t2";
      break;
    default:
      break;
  }
  return e;
}

// isclose and allclose take two tensors of one dtype, as PyTorch; allclose then reads one
// bool: all() of isclose's result, reduced on the device.
void explain_closeness(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  if (call.dtypes.size() == 2 && call.dtypes[0] != call.dtypes[1])
    throw InvalidArgument(entry.name, entry.name +
                                          ": the operands must share one dtype, as "
                                          "PyTorch requires (a is " +
                                          std::string(dtype_name(call.dtypes[0])) + ", b " +
                                          std::string(dtype_name(call.dtypes[1])) + ").");
  detail::explain_elementwise(entry, call, out);
  if (entry.name != "allclose") return;
  out.choices.push_back(
      {"reduction", "all", "", "",
       "isclose's bool " + out.output + " is reduced by all() on the device; one scalar is read."});
  out.output = "bool (a host value)";
}

// The public forms of the elementwise copy (op copy): casts, copies and scalar fills.
void add_copy_forms(std::vector<OpEntry>& ops) {
  const auto form = [](const char* name, int operands, const char* names, ExplainFn fn,
                       std::vector<DType> dtypes) {
    OpEntry e;
    e.name = name;
    e.family = "elementwise";
    e.table_op = "copy";
    e.code = abi::kOp_copy;
    e.operands = operands;
    e.operand_names = names;
    e.example_dtypes = std::move(dtypes);
    e.example_shapes = {kRows};
    e.explain = fn;
    return e;
  };
  ops.push_back(form("copy", 1, "x (a contiguous copy)", detail::explain_cast, {DType::kFloat32}));
  ops.push_back(form("cast", 2, "x; target dtype", detail::explain_cast,
                     {DType::kFloat32, DType::kBFloat16}));
  ops.push_back(form("to", 2, "x; target dtype (Tensor::to)", detail::explain_cast,
                     {DType::kFloat32, DType::kInt32}));
  ops.push_back(
      form("full", 1, "the output's dtype and shape", detail::explain_creation, {DType::kFloat32}));
  ops.push_back(form("fill", 1, "like (the output's dtype and shape)", detail::explain_creation,
                     {DType::kFloat32}));
  // torch.*_like: the same copy of one scalar (empty_like: an allocation only).
  for (const char* name : {"zeros_like", "ones_like", "full_like", "empty_like"})
    ops.push_back(form(name, 1, "like (the output's dtype and shape; dtype/device overrides)",
                       detail::explain_creation, {DType::kFloat32}));
  ops.push_back(form("empty_strided", 1, "the output's dtype and sizes (strides change nothing)",
                     detail::explain_creation, {DType::kFloat32}));
}

void add_elementwise(std::vector<OpEntry>& ops) {
  struct TableOp {
    const char* name;
    abi::ElementwiseOp code;
    int arity;
  };
  static constexpr TableOp kTable[] = {
#define NBX_ELEMENTWISE_OP(name, code, arity) {#name, abi::kOp_##name, arity},
#include "core/elementwise_op_list.inc"
#undef NBX_ELEMENTWISE_OP
  };
  for (const TableOp& t : kTable) {
    if (t.code == abi::kOp_copy) {
      add_copy_forms(ops);
      continue;
    }
    // The public name is the dtype rule's (gelu_erf is "gelu").
    ops.push_back(elementwise_entry(detail::rule_for(t.code), t.name, t.arity));
    if (detail::takes_fused_halves(t.code)) {  // one input: its halves are a and b
      OpEntry& g = ops.back();
      g.operands = 1;
      g.operand_names = "x (split in halves a, b along the last dim)";
      g.example_dtypes = {DType::kFloat32};
      g.example_shapes = {kRows};
      g.explain = detail::explain_gated;
    }
    if (t.code == abi::kOp_where) {
      OpEntry m = ops.back();
      m.name = "masked_fill";
      m.operands = 2;
      m.operand_names = "x; mask (bool); the value is a scalar";
      m.example_dtypes = {DType::kFloat32, DType::kBool};
      m.example_shapes = {kRows, Shape{1000}};
      ops.push_back(std::move(m));
    }
    // clamp_min/clamp_max with a tensor bound run maximum/minimum (a scalar bound runs
    // clamp, whose plan is the same but for the absent bound).
    if (t.code == abi::kOp_maximum || t.code == abi::kOp_minimum) {
      OpEntry c = ops.back();
      const bool lower = t.code == abi::kOp_maximum;
      c.name = lower ? "clamp_min" : "clamp_max";
      c.operand_names = lower ? "x; min (a tensor bound)" : "x; max (a tensor bound)";
      ops.push_back(std::move(c));
    }
    if (t.code == abi::kOp_isclose) {
      ops.back().explain = explain_closeness;
      ops.back().operand_names = "a; b (one dtype)";
      OpEntry a = ops.back();
      a.name = "allclose";
      ops.push_back(std::move(a));
    }
  }
}

void add_reductions(std::vector<OpEntry>& ops) {
  struct TableOp {
    std::string_view name;
    abi::ReduceOp code;
  };
  static constexpr TableOp kTable[] = {
#define NBX_REDUCE_OP(name, code) {#name, abi::kReduce_##name},
#include "core/reduce_op_list.inc"
#undef NBX_REDUCE_OP
  };
  // "<op>_with_index" is the kernel op behind the public max/min (values and indices).
  constexpr std::string_view kWithIndex = "_with_index";
  for (const TableOp& t : kTable) {
    std::string_view name = t.name;
    if (name.ends_with(kWithIndex)) name.remove_suffix(kWithIndex.size());
    OpEntry e;
    e.name = std::string(name);
    e.family = "reduce";
    e.table_op = std::string(t.name);
    e.code = t.code;
    e.operand_names = "x (reduced over the last dim)";
    e.example_dtypes = {DType::kFloat32};
    e.example_shapes = {kRows};
    e.explain = detail::explain_reduce;
    ops.push_back(std::move(e));
  }
}

// The matmul family's forms, each with an example whose sizes multiply.
struct ProductExample {
  std::string_view form;
  std::vector<Shape> shapes;
};
const std::vector<ProductExample>& product_examples() {
  static const std::vector<ProductExample> examples = {
      {"matmul", {{8, 64, 32}, {32, 16}}},
      {"mm", {{64, 32}, {32, 16}}},
      {"mv", {{64, 32}, {32}}},
      {"dot", {{32}, {32}}},
      {"bmm", {{8, 64, 32}, {8, 32, 16}}},
      {"addmm", {{64, 16}, {64, 32}, {32, 16}}},
      {"baddbmm", {{8, 64, 16}, {8, 64, 32}, {8, 32, 16}}},
      {"addmv", {{64}, {64, 32}, {32}}},
      {"addr", {{64, 16}, {64}, {16}}},
      {"linear", {{8, 32}, {16, 32}, {16}}},
  };
  return examples;
}

void add_products(std::vector<OpEntry>& ops) {
  for (const ProductForm& f : product_forms()) {
    OpEntry e;
    e.name = e.table_op = std::string(f.name);
    e.family = "matmul";
    e.operands = f.operands;
    e.optional_operands = f.optional_operands;
    e.operand_names = std::string(f.operand_names);
    e.explain = detail::explain_matmul;
    for (const ProductExample& x : product_examples())
      if (x.form == f.name) e.example_shapes = x.shapes;
    e.example_dtypes = repeat(DType::kFloat32, static_cast<int>(e.example_shapes.size()));
    ops.push_back(std::move(e));
  }
}

// The sort family's op and the ops composed on it (one launch each, then views or gathers).
void add_sort_ops(std::vector<OpEntry>& ops, const OpEntry& rows) {
  OpEntry e = rows;
  e.operand_names = "x (sorted along the last dim)";
  add_enum_family<abi::SortOp>(ops, "sort", detail::explain_sort, e);  // sort, topk
  const OpEntry sort_entry = ops[ops.size() - 2];
  for (const char* name : {"argsort", "msort", "kthvalue", "median", "nanmedian", "quantile",
                           "nanquantile", "mode", "unique"}) {
    OpEntry c = sort_entry;
    c.name = name;
    ops.push_back(std::move(c));
  }
}

// The scatter family's ops (self; index) with the compositions on it, and the search family's
// (sorted sequence; values).
void add_index_write_ops(std::vector<OpEntry>& ops, const OpEntry& reads) {
  OpEntry writes = reads;
  writes.operand_names = "self (written along the last dim; index_put, index_add: dim 0); index";
  writes.example_shapes = {{1000, 64}, {1000, 8}};
  add_enum_family<abi::ScatterOp>(ops, "scatter", detail::explain_scatter, writes);
  OpEntry argwhere = ops.back();  // nonzero under its other name
  argwhere.name = "argwhere";
  argwhere.table_op = "nonzero";
  argwhere.code = abi::kScatter_nonzero;
  ops.push_back(argwhere);
  OpEntry masked_scatter = argwhere;  // a gather (take) of source selected by where
  masked_scatter.name = "masked_scatter";
  masked_scatter.family = "gather";
  masked_scatter.table_op = "take";
  masked_scatter.code = abi::kGather_take;
  masked_scatter.operand_names = "self; mask";
  masked_scatter.example_dtypes = {DType::kFloat32, DType::kBool};
  ops.push_back(masked_scatter);
  OpEntry search = reads;
  search.operand_names = "sorted_sequence (along its last dim); values";
  search.example_shapes = {{1000}, {4096}};
  search.example_dtypes = {DType::kFloat32, DType::kFloat32};
  add_enum_family<abi::SearchOp>(ops, "search", detail::explain_search, search);
}

// The rotary family's op: q and k (a [B, S, H, D] layout), positions, the cos/sin cache.
void add_rotary_ops(std::vector<OpEntry>& ops) {
  OpEntry e;
  e.operands = 4;
  e.operand_names =
      "q [..., Hq, D]; k [..., Hk, D]; positions (the token dims); cos_sin_cache "
      "[max_position, rotary_dim]";
  e.example_dtypes = {DType::kFloat32, DType::kFloat32, DType::kInt64, DType::kFloat32};
  e.example_shapes = {{2, 128, 8, 64}, {2, 128, 2, 64}, {2, 128}, {4096, 64}};
  add_enum_family<abi::RotaryOp>(ops, "rotary", detail::explain_rotary, e);
}

// The grouped_matmul family's op (the experts' GEMM: a [R, K] grouped by expert, b [E, N, K],
// offsets [E + 1]) and the MoE compositions on it (family "moe", moe.cpp).
void add_moe_ops(std::vector<OpEntry>& ops) {
  const DType f32 = DType::kFloat32, i64 = DType::kInt64;
  OpEntry g;
  g.operands = 3;
  g.operand_names = "a [R, K] (rows grouped by expert); b [E, N, K]; group_offsets [E + 1]";
  g.example_dtypes = {f32, f32, i64};
  g.example_shapes = {{512, 256}, {8, 384, 256}, {9}};
  add_enum_family<abi::GroupedMatmulOp>(ops, "grouped_matmul", detail::explain_grouped_matmul, g);
  const auto moe = [&](const char* name, int operands, const char* names, std::vector<DType> dtypes,
                       std::vector<Shape> shapes) {
    OpEntry e;
    e.name = name;
    e.family = "moe";
    e.table_op = "composition";
    e.operands = operands;
    e.operand_names = names;
    e.example_dtypes = std::move(dtypes);
    e.example_shapes = std::move(shapes);
    e.explain = detail::explain_moe;
    ops.push_back(std::move(e));
  };
  moe("fused_moe", 4, "hidden [T, D]; router_logits [T, E]; w13 [E, 2F, D]; w2 [E, D, F] (top_k 2)",
      {f32, f32, f32, f32}, {{256, 128}, {256, 8}, {8, 512, 128}, {8, 128, 256}});
  moe("moe_route", 1, "router_logits [T, E] (top_k 2)", {f32}, {{256, 8}});
  moe("moe_permute", 1, "expert_ids [T, k]", {DType::kInt32}, {{256, 2}});
  moe("moe_combine", 3, "expert_out [T·k, D]; weights [T, k]; inverse [T·k]", {f32, f32, i64},
      {{512, 128}, {256, 2}, {512}});
}

// The join family's op, cat, and stack on it (a new dim 0, then cat): 1-8 tensors.
void add_join_ops(std::vector<OpEntry>& ops) {
  OpEntry joins;
  joins.operands = 1;
  joins.optional_operands = 7;
  joins.operand_names = "tensors (1-8; joined along dim 0)";
  joins.example_shapes = {{64, 32}, {16, 32}};
  joins.example_dtypes = {DType::kFloat32, DType::kFloat32};
  add_enum_family<abi::JoinOp>(ops, "join", detail::explain_join, joins);
  OpEntry stack = ops.back();
  stack.name = "stack";
  stack.operand_names = "tensors (1-8 of one shape; a new dim 0)";
  stack.example_shapes = {{64, 32}, {64, 32}};
  ops.push_back(std::move(stack));
}

std::vector<OpEntry> build_catalog() {
  std::vector<OpEntry> ops;
  add_elementwise(ops);
  add_reductions(ops);

  OpEntry rows;
  rows.example_dtypes = {DType::kFloat32};
  rows.example_shapes = {kRows};
  rows.operand_names = "x (along the last dim)";
  add_enum_family<abi::ScanOp>(ops, "scan", detail::explain_scan, rows);
  add_enum_family<abi::SoftmaxOp>(ops, "softmax", detail::explain_softmax, rows);
  OpEntry scaled = rows;  // softmax(scale * x) with a mask: the same kernel, the same plan
  scaled.name = "scaled_masked_softmax";
  scaled.family = "softmax";
  scaled.table_op = "softmax";
  scaled.code = abi::kSoftmax_softmax;
  scaled.operand_names = "x (along the last dim; the mask changes no decision)";
  scaled.explain = detail::explain_softmax;
  ops.push_back(std::move(scaled));
  OpEntry tempered = ops.back();  // softmax(x / T): scale 1 / T, the same plan
  tempered.name = "softmax_with_temperature";
  tempered.operand_names = "x (along the last dim; the temperature changes no decision)";
  ops.push_back(std::move(tempered));

  OpEntry norms = rows;
  norms.operand_names = "x (layer/rms norm: over the last dim; group/batch norm: [N, C, *])";
  norms.example_shapes = {{8, 32, 16, 16}};
  add_enum_family<abi::NormOp>(ops, "norm", detail::explain_norm, norms);

  const std::size_t first_fill = ops.size();
  add_enum_family<abi::FillOp>(ops, "fill", detail::explain_creation, rows);
  for (std::size_t k = first_fill; k < ops.size(); ++k) {
    OpEntry& e = ops[k];
    const bool range = e.code == abi::kFill_arange || e.code == abi::kFill_linspace;
    e.operand_names = range ? "the output's dtype and 1-d shape [n]" : "x (the last two dims)";
    if (e.code == abi::kFill_eye) e.operand_names = "the output's dtype and shape [n, m]";
    e.example_shapes = {range ? Shape{1000} : Shape{64, 64}};
  }
  OpEntry reads;  // an input and an index tensor
  reads.operands = 2;
  reads.operand_names =
      "input (index_select, embedding: along dim 0; gather, take_along_dim: the last dim); index";
  reads.example_dtypes = {DType::kFloat32, DType::kInt64};
  reads.example_shapes = {{1000, 64}, {1000, 8}};
  add_enum_family<abi::GatherOp>(ops, "gather", detail::explain_gather, reads);
  for (OpEntry& e : ops)
    if (e.code == abi::kGather_index_select && e.family == "gather") e.example_shapes[1] = {256};
  add_sort_ops(ops, rows);
  add_index_write_ops(ops, reads);
  add_products(ops);
  add_join_ops(ops);
  add_rotary_ops(ops);
  add_moe_ops(ops);
  detail::add_shape_ops(ops);
  detail::add_attention_ops(ops);
  detail::add_loss_ops(ops);
  std::sort(ops.begin(), ops.end(),
            [](const OpEntry& a, const OpEntry& b) { return a.name < b.name; });
  return ops;
}

}  // namespace

std::span<const OpEntry> op_catalog() {
  static const std::vector<OpEntry> catalog = build_catalog();
  return catalog;
}

const OpEntry* find_op(std::string_view name) {
  const std::span<const OpEntry> ops = op_catalog();
  const auto it = std::lower_bound(ops.begin(), ops.end(), name,
                                   [](const OpEntry& e, std::string_view n) { return e.name < n; });
  return it != ops.end() && it->name == name ? &*it : nullptr;
}

}  // namespace nbx::ops
