// scaled_dot_product_attention's rules and plan (attention.hpp): dtypes, shapes and GQA
// grouping, the path, the tile against the device file's floor and ceiling, the math path's
// chunk of query rows. Shared by the op and `nbx explain`.
#include <algorithm>
#include <string>

#include "core/ops/attention.hpp"
#include "core/ops/attention_detail.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/tiling.hpp"

namespace nbx::ops {
namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

[[noreturn]] void bad(const std::string& message) {
  throw InvalidArgument(kOp, std::string(kOp) + ": " + message);
}

Shape leading(const Shape& s, int drop) {  // s without its last `drop` dims
  Shape out;
  for (int i = 0; i + drop < s.size(); ++i) out.push_back(s[i]);
  return out;
}

Shape with_tail(Shape a, std::int64_t x, std::int64_t y) {
  a.push_back(x);
  a.push_back(y);
  return a;
}

Shape with_rank(Shape s, int rank) {
  while (s.size() < rank) s.insert(0, 1);
  return s;
}

// dim -3 of `s` (hk * g, or 1) as [hk, g] (or [1, 1]).
Shape split_heads(const Shape& s, std::int64_t hk, std::int64_t g) {
  Shape out;
  for (int i = 0; i < s.size(); ++i) {
    if (i == s.size() - 3) {
      out.push_back(s[i] == 1 ? 1 : hk);
      out.push_back(s[i] == 1 ? 1 : g);
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

Shape insert_group(const Shape& s) {  // [.., H, S, E] → [.., H, 1, S, E]
  Shape out = s;
  out.insert(s.size() - 2, 1);
  return out;
}

std::string three(const Shape& q, const Shape& k, const Shape& v) {
  return to_string(q) + ", " + to_string(k) + ", " + to_string(v);
}

}  // namespace

const char* attention_path_name(AttentionPath p) {
  switch (p) {
    case AttentionPath::kMath:
      return "math";
    case AttentionPath::kFlash:
      return "flash";
    case AttentionPath::kFlashMma:
      return "flash_mma";
    case AttentionPath::kSplitKv:
      return "split_kv";
    case AttentionPath::kCudnn:
      return "cudnn";
  }
  return "?";
}

abi::AttentionVariant attention_variant(AttentionPath p) {
  return p == AttentionPath::kFlashMma  ? abi::kAttentionFlashMma
         : p == AttentionPath::kSplitKv ? abi::kAttentionSplitKv
         : p == AttentionPath::kCudnn   ? abi::kAttentionCudnn
                                        : abi::kAttentionFlash;
}

AttentionDims::Mask attention_mask_kind(DType q, DType k, DType v, std::optional<DType> mask,
                                        bool is_causal) {
  if (q != k || q != v)
    bad("Expected query, key, and value to have the same dtype, but got query.dtype: " +
        std::string(dtype_name(q)) + " key.dtype: " + std::string(dtype_name(k)) +
        " and value.dtype: " + std::string(dtype_name(v)) + " instead.");
  if (!is_floating(q))
    bad("it takes floating dtypes (float16, bfloat16, float32, float64), got " +
        std::string(dtype_name(q)) + ".");
  if (mask && is_causal) bad("Explicit attn_mask should not be set when is_causal=True.");
  if (mask && *mask != DType::kBool && *mask != q)
    bad("Expected attn_mask dtype to be bool or to match query dtype, but got attn_mask.dtype: " +
        std::string(dtype_name(*mask)) + " and query.dtype: " + std::string(dtype_name(q)) +
        " instead.");
  if (mask)
    return *mask == DType::kBool ? AttentionDims::Mask::kBool : AttentionDims::Mask::kAdditive;
  return is_causal ? AttentionDims::Mask::kCausal : AttentionDims::Mask::kNone;
}

AttentionShapes attention_shapes(const Shape& q, const Shape& k, const Shape& v,
                                 const std::optional<Shape>& mask, AttentionDims::Mask kind,
                                 bool enable_gqa) {
  if (q.size() < 2 || k.size() < 2 || v.size() < 2)
    bad("query, key and value need at least 2 dims (got " + three(q, k, v) + ").");
  AttentionShapes s;
  AttentionDims& d = s.dims;
  d.mask = kind;
  d.q_len = q[q.size() - 2], d.head_dim = q[q.size() - 1];
  d.kv_len = k[k.size() - 2], d.value_dim = v[v.size() - 1];
  if (k[k.size() - 1] != d.head_dim)
    bad("query's last dim (" + std::to_string(d.head_dim) + ") and key's (" +
        std::to_string(k[k.size() - 1]) + ") differ (" + three(q, k, v) + ").");
  if (v[v.size() - 2] != d.kv_len)
    bad("key and value have different sequence lengths (" + three(q, k, v) + ").");
  const auto heads = [](const Shape& x) { return x.size() >= 3 ? x[x.size() - 3] : 1; };
  d.q_heads = heads(q), d.kv_heads = heads(k), d.value_heads = heads(v);
  s.q = q, s.k = k, s.v = v;
  if (mask) s.mask = with_rank(*mask, 2);  // a 1-d mask is one row of S
  if (enable_gqa) {
    if (q.size() < 3 || k.size() < 3 || v.size() < 3)
      bad("enable_gqa needs query, key and value with a heads dim (-3); got " + three(q, k, v) +
          ".");
    if (d.kv_heads == 0 || d.q_heads % d.kv_heads != 0 || d.value_heads == 0 ||
        d.q_heads % d.value_heads != 0)
      bad("number of heads in key and value must divide the number of heads in query (query " +
          std::to_string(d.q_heads) + ", key " + std::to_string(d.kv_heads) + ", value " +
          std::to_string(d.value_heads) + ").");
    d.gqa = d.kv_heads != d.q_heads || d.value_heads != d.q_heads;
    // Key and value heads that differ: plan_attention refuses them by name (no one grouping
    // view serves both), so no shape is derived here.
    if (d.gqa && d.kv_heads != d.value_heads) return s;
    if (d.gqa) {
      s.grouped = true;
      s.groups = d.q_heads / d.kv_heads;
      s.q = split_heads(q, d.kv_heads, s.groups);
      s.k = insert_group(k), s.v = insert_group(v);
      if (mask) {
        s.mask = with_rank(*mask, 3);
        const std::int64_t mh = s.mask[s.mask.size() - 3];
        if (mh != 1 && mh != d.q_heads)
          bad("attn_mask of shape " + to_string(*mask) +
              " does not broadcast to the attention weights' heads (" + std::to_string(d.q_heads) +
              ").");
        s.mask = split_heads(s.mask, d.kv_heads, s.groups);
      }
    }
  }
  // The weights' shape: the query's and key's batch dims broadcast, then the mask's.
  Shape weights;
  try {
    weights = with_tail(broadcast_shapes(leading(s.q, 2), leading(s.k, 2)), d.q_len, d.kv_len);
  } catch (const InvalidArgument&) {
    bad("the batch dims of query and key do not broadcast (" + three(q, k, v) +
        (enable_gqa ? "" : "; enable_gqa=false") + ").");
  }
  if (mask) {
    Shape with_mask;
    try {
      with_mask = broadcast_shapes(weights, s.mask);
    } catch (const InvalidArgument&) {
      with_mask = Shape{};
    }
    if (with_mask.size() < 2 || with_mask[with_mask.size() - 2] != d.q_len ||
        with_mask[with_mask.size() - 1] != d.kv_len)
      bad("attn_mask of shape " + to_string(*mask) +
          " does not broadcast to the attention weights " + to_string(weights) + ".");
    weights = with_mask;
  }
  try {
    s.out_batch = broadcast_shapes(leading(weights, 2), leading(s.v, 2));
  } catch (const InvalidArgument&) {
    bad("the batch dims of the attention weights " + to_string(weights) + " and value " +
        to_string(v) + " do not broadcast.");
  }
  d.batch = numel(s.out_batch);
  Shape user;  // the grouped heads [Hk, G] merged back into Hq
  for (int i = 0; i < s.out_batch.size(); ++i) {
    if (s.grouped && i == s.out_batch.size() - 1) continue;
    user.push_back(s.grouped && i == s.out_batch.size() - 2 ? s.out_batch[i] * s.out_batch[i + 1]
                                                            : s.out_batch[i]);
  }
  s.out = with_tail(user, d.q_len, d.value_dim);
  return s;
}

AttentionPlan plan_attention(std::string_view op, DType dtype, const AttentionDims& d,
                             const PlanTarget& target) {
  const Capabilities& caps = target.caps;
  detail::require_dtype_support(op, dtype, caps, target.device_id, target.device_name);
  if (d.gqa && d.kv_heads != d.value_heads)
    throw Unsupported(std::string(op), target.device_id, "attention.gqa_mixed_heads",
                      std::string(op) + " on " + target.device_name + ": enable_gqa with " +
                          std::to_string(d.kv_heads) + " key heads and " +
                          std::to_string(d.value_heads) +
                          " value heads is not implemented (one grouping view serves both only "
                          "when they are equal); refused.");
  AttentionPlan plan;
  plan.out_dtype = dtype;
  plan.compute_dtype = dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  plan.choices.push_back(
      {"compute_dtype", std::string(dtype_name(plan.compute_dtype)), "", "",
       dtype == DType::kFloat16 || dtype == DType::kBFloat16
           ? "scores, softmax and the weighted sum in float32, rounded once to the output "
             "(PyTorch's math path upcasts half types alike)."
           : "the input's dtype."});

  // The tile: the ceiling the device file proposes, never under the floor the matrix unit sets.
  const int floor = caps.attention.min_tile.value, ceiling = caps.attention.block_ceiling.value;
  plan.tile = std::max(floor, ceiling);
  plan.tile_clamped = floor > ceiling;
  if (plan.tile_clamped)
    detail::announce_once(
        "attention tile " + target.device_id + " " + std::to_string(ceiling) + " " +
            std::to_string(floor),
        std::string(op) + " on " + target.device_name + ": attention.block_ceiling proposes " +
            std::to_string(ceiling) + " rows (" + caps.attention.block_ceiling.source +
            ") but attention tiles are never under attention.min_tile " + std::to_string(floor) +
            " (" + caps.attention.min_tile.source + "); using " + std::to_string(plan.tile) +
            ". The row promises a tile the backend will not lower: raise it, or scope it.");
  plan.choices.push_back(
      {"tile", std::to_string(plan.tile) + " rows", "attention.block_ceiling",
       caps.attention.block_ceiling.source + "; floor attention.min_tile " + std::to_string(floor) +
           " (" + caps.attention.min_tile.source + ")",
       plan.tile_clamped ? "the ceiling (" + std::to_string(ceiling) +
                               ") is under the floor: clamped up to it, announced once."
                         : "the ceiling, at or above the floor " + std::to_string(floor) + "."});

  // The math path's chunk: whole tiles of query rows whose scores fit the budget, never fewer
  // rows than memory.attention_min_chunk_rows, never more than the query has.
  const std::int64_t per_row =
      std::max<std::int64_t>(1, d.batch * d.kv_len * std::int64_t(dtype_size(plan.compute_dtype)));
  const std::int64_t fit = kMathScoresBudgetBytes / per_row;
  const std::int64_t min_rows = std::max(1, caps.memory.attention_min_chunk_rows.value);
  std::int64_t rows = fit >= plan.tile ? fit / plan.tile * plan.tile : fit;
  rows = std::max(rows, min_rows);
  plan.chunk_rows = std::max<std::int64_t>(1, std::min(rows, d.q_len));
  detail::choose_attention_path(op, dtype, d, target, plan);
  if (plan.path == AttentionPath::kMath)
    plan.choices.push_back(
        {"chunk_rows", std::to_string(plan.chunk_rows), "memory.attention_min_chunk_rows",
         caps.memory.attention_min_chunk_rows.source,
         "query rows a step: " + std::to_string(d.batch) + " x rows x " + std::to_string(d.kv_len) +
             " scores within " + std::to_string(kMathScoresBudgetBytes >> 20) +
             " MiB (whole tiles), at least " + std::to_string(min_rows) + " rows, at most L (" +
             std::to_string(d.q_len) + ")."});
  if (d.gqa) {
    const std::string group = std::to_string(d.q_heads / std::max<std::int64_t>(1, d.kv_heads));
    plan.choices.push_back({"gqa", group + " query heads a kv head", "", "",
                            "the query's heads read as [" + std::to_string(d.kv_heads) + ", " +
                                group +
                                "] and key/value broadcast over the group: views, no copy."});
  }
  const char* mask = d.mask == AttentionDims::Mask::kNone       ? "none"
                     : d.mask == AttentionDims::Mask::kBool     ? "bool (true takes part)"
                     : d.mask == AttentionDims::Mask::kAdditive ? "additive"
                                                                : "causal";
  plan.choices.push_back(
      {"mask", mask, "", "", "a row that sees no key gives zeros (PyTorch's math path, >= 2.5)."});
  return plan;
}

}  // namespace nbx::ops
