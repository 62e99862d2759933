// The runner's calls for the sort family's ops (torch_diff_ops_sort.py has the PyTorch side).
#include "tests/torch/torch_diff_ops.hpp"

namespace nbx::torch_diff {

namespace {

using A = const CaseArgs&;
using D = const Device&;

Outputs both(const ops::ValuesAndIndices& r) {
  return {r.values, r.indices};
}

// quantile/nanquantile: a scalar q ("q") or a 1-d q of the input's dtype ("qs").
template <Tensor (*Scalar)(const Tensor&, double, std::optional<std::int64_t>, bool,
                           std::string_view),
          Tensor (*WithTensor)(const Tensor&, const Tensor&, std::optional<std::int64_t>, bool,
                               std::string_view)>
Outputs quantiles(A a, D d) {
  const Tensor& x = a.t(0);
  const std::string mode = a.text("interpolation");
  if (a.has("q")) return {Scalar(x, a.real("q"), a.opt_integer("dim"), a.flag("keepdim"), mode)};
  const std::vector<double> qs = a.reals("qs");
  const Tensor q = Tensor::from_host(qs, {std::int64_t(qs.size())}).to(x.dtype()).to(d);
  return {WithTensor(x, q, a.opt_integer("dim"), a.flag("keepdim"), mode)};
}

}  // namespace

const std::map<std::string, OpCall>& sort_op_table() {
  static const std::map<std::string, OpCall> table = {
      {"sort",
       [](A a, D) { return both(ops::sort(a.t(0), a.integer("dim"), a.flag("descending"))); }},
      {"argsort",
       [](A a, D) -> Outputs {
         return {ops::argsort(a.t(0), a.integer("dim"), a.flag("descending"))};
       }},
      {"msort", [](A a, D) -> Outputs { return {ops::msort(a.t(0))}; }},
      {"topk",
       [](A a, D) {
         return both(ops::topk(a.t(0), a.integer("k"), a.integer("dim"), a.flag("largest")));
       }},
      {"kthvalue",
       [](A a, D) {
         return both(ops::kthvalue(a.t(0), a.integer("k"), a.integer("dim"), a.flag("keepdim")));
       }},
      {"median_dim",
       [](A a, D) { return both(ops::median(a.t(0), a.integer("dim"), a.flag("keepdim"))); }},
      {"nanmedian_dim",
       [](A a, D) { return both(ops::nanmedian(a.t(0), a.integer("dim"), a.flag("keepdim"))); }},
      {"median_all", [](A a, D) -> Outputs { return {ops::median(a.t(0))}; }},
      {"nanmedian_all", [](A a, D) -> Outputs { return {ops::nanmedian(a.t(0))}; }},
      {"mode", [](A a, D) { return both(ops::mode(a.t(0), a.integer("dim"), a.flag("keepdim"))); }},
      {"unique",
       [](A a, D) -> Outputs {
         const ops::UniqueResult u = ops::unique(a.t(0), true, true, true);
         return {u.values, u.inverse, u.counts};
       }},
      {"quantile", quantiles<ops::quantile, ops::quantile>},
      {"nanquantile", quantiles<ops::nanquantile, ops::nanquantile>},
  };
  return table;
}

}  // namespace nbx::torch_diff
