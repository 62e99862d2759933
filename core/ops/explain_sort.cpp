// The sort family's explain: the plan sort_rows makes (core/ops/sort.cpp) for a contiguous
// input sorted along its last dim, and what each op built on it takes from the sorted rows.
#include <string>

#include "core/errors.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops::detail {

void explain_sort(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const Shape& s = call.shapes[0];
  const DType t = call.dtypes[0];
  const std::string& op = entry.name;
  const bool quantiles = op == "quantile" || op == "nanquantile";
  if (quantiles && t != DType::kFloat32 && t != DType::kFloat64)
    throw InvalidArgument(op, op + "() input tensor must be either float or double dtype (got " +
                                  std::string(dtype_name(t)) + ").");
  for (DType d : {t, DType::kInt64})
    require_dtype_support(op, d, call.target.caps, call.target.device_id, call.target.device_name);
  abi::SortParams p{};
  p.dtype = std::int32_t(t);
  // msort sorts along dim 0, the others (as explained) along the last dim.
  p.row_len = s.empty() ? 1 : op == "msort" ? s[0] : s[s.size() - 1];
  p.rows = p.row_len == 0 ? 0 : numel(s) / p.row_len;
  p.outer_ndim = 1, p.outer_sizes[0] = p.rows;
  p.in_outer_strides[0] = p.values_outer_strides[0] = p.indices_outer_strides[0] = p.row_len;
  p.in_row_stride = p.values_row_stride = p.indices_row_stride = 1;
  std::vector<PlanChoice> choices;
  if (p.rows > 0) plan_sort_variant(p, call.target, choices);
  const std::int64_t tile = sort_rows_tile_cap(t, call.target);
  // topk and kthvalue of k <= kSortSelectMaxK: the select variant where planned (k is not
  // an explain argument: the plan of k = 1 is shown), else the tournament below.
  bool select = false;
  if ((op == "topk" || op == "kthvalue") && p.rows > 0) {
    abi::SortParams q = p;
    q.op = abi::kSort_topk;
    q.k = 1;
    std::vector<PlanChoice> select_choices;
    select = plan_topk_select(q, call.target, select_choices);
    for (PlanChoice c : select_choices) {
      c.what = "select";
      if (select)
        c.value = c.value + " for k <= " + std::to_string(abi::kSortSelectMaxK) +
                  " (a larger k sorts the rows as planned here)";
      choices.push_back(c);
    }
  }
  if ((op == "topk" || op == "kthvalue") && p.row_len > tile && !select)
    choices.push_back({"tournament", "chunks of " + std::to_string(tile), "", "",
                       "for k <= " + std::to_string(tile / 4) +
                           ": each chunk sorted by the rows variant keeps its first k, the "
                           "candidates cut again until they fit one tile (topk_chunks.cpp); "
                           "a larger k sorts the whole rows as planned here."});
  choices.push_back({"order", "stable", "", "",
                     "ties keep their input order on every backend (position is the second "
                     "key); -0 equals +0; NaN sorts above +inf, as PyTorch."});
  const std::string what =
      op == "sort" || op == "argsort" || op == "msort" ? "the sorted rows"
      : op == "topk"     ? "the first k of each row sorted descending (largest) or ascending"
      : op == "kthvalue" ? "element k - 1 of each row sorted ascending"
      : op == "mode"
          ? "the runs of equal values (starts, their running maximum by cummax); the first "
            "longest run's end gathered"
      : op == "unique"
          ? "the flattened input sorted; run starts compacted by a stable sort of their flags "
            "(one host read: the count), values, counts and inverse gathered"
      : op == "median" || op == "nanmedian"
          ? "the lower median's position, from each row's NaN count, gathered (gather family)"
          : "ranks q · (n - 1) from each row's NaN count, the elements below and above "
            "gathered and interpolated (elementwise lerp)";
  choices.push_back({"result", what, "", "",
                     op == "unique" ? "a composition on the device; the number of distinct "
                                      "values is read back once (the output's size)."
                                    : "a composition on the device; nothing is read back."});
  out.output = std::string(dtype_name(t)) + " values and int64 indices";
  if (quantiles) out.output = std::string(dtype_name(t)) + " quantiles";
  std::string text = "sort (" + std::to_string(p.rows) + (p.rows == 1 ? " row of " : " rows of ") +
                     std::to_string(p.row_len);
  for (const PlanChoice& c : choices)
    if (c.what == "variant") text += "; variant " + c.value;
  if (select) text += "; topk of k <= " + std::to_string(abi::kSortSelectMaxK) + ": sort.select";
  out.kernel = text + ")";
  out.choices = choices;
}

}  // namespace nbx::ops::detail
