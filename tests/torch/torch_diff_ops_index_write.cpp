// The runner's calls for the index writes (torch_diff_ops_index_write.py has the PyTorch side).
// The "_det" ops run with set_deterministic_algorithms(true): duplicates folded in index order,
// the last write winning, as PyTorch's CPU kernels do.
#include <optional>
#include <string>
#include <string_view>

#include "core/ops/index_write.hpp"
#include "tests/torch/torch_diff_ops.hpp"

namespace nbx::torch_diff {

namespace {

using A = const CaseArgs&;
using D = const Device&;

// Deterministic algorithms on for one call.
class Deterministic {
 public:
  Deterministic() : was_(deterministic_algorithms()) { set_deterministic_algorithms(true); }
  ~Deterministic() { set_deterministic_algorithms(was_); }
  Deterministic(const Deterministic&) = delete;
  Deterministic& operator=(const Deterministic&) = delete;

 private:
  bool was_;
};

template <Outputs (*Call)(A, D)>
Outputs deterministic(A a, D d) {
  Deterministic on;
  return Call(a, d);
}

std::optional<std::string_view> opt_text(A a, const char* name, std::string& keep) {
  if (!a.has(name)) return std::nullopt;
  keep = a.text(name);
  return std::string_view(keep);
}

Outputs scatter(A a, D) {
  std::string keep;
  const std::optional<std::string_view> reduce = opt_text(a, "reduce", keep);
  if (a.has("value"))
    return {ops::scatter(a.t(0), a.integer("dim"), a.t(1), a.scalar("value"), reduce)};
  return {ops::scatter(a.t(0), a.integer("dim"), a.t(1), a.t(2), reduce)};
}

Outputs scatter_add(A a, D) {
  return {ops::scatter_add(a.t(0), a.integer("dim"), a.t(1), a.t(2))};
}

Outputs scatter_reduce(A a, D) {
  return {ops::scatter_reduce(a.t(0), a.integer("dim"), a.t(1), a.t(2), a.text("reduce_name"),
                              a.flag("include_self"))};
}

Outputs index_add(A a, D) {
  const Scalar alpha = a.has("alpha") ? a.scalar("alpha") : Scalar(1);
  return {ops::index_add(a.t(0), a.integer("dim"), a.t(1), a.t(2), alpha)};
}

Outputs index_copy(A a, D) {
  return {ops::index_copy(a.t(0), a.integer("dim"), a.t(1), a.t(2))};
}

Outputs index_fill(A a, D) {
  return {ops::index_fill(a.t(0), a.integer("dim"), a.t(1), a.scalar("value"))};
}

// Slot 0 self, slots 1 … n the indices (an absent one: the whole dim), slot n + 1 the values.
Outputs index_put(A a, D) {
  const std::size_t n = std::size_t(a.integer("n_indices"));
  std::vector<Tensor> indices;
  for (std::size_t k = 1; k <= n; ++k) indices.push_back(a.opt_t(k).value_or(Tensor()));
  return {ops::index_put(a.t(0), indices, a.t(n + 1), a.flag("accumulate"))};
}

Outputs searchsorted(A a, D) {
  std::string keep;
  const std::optional<std::string_view> side = opt_text(a, "side", keep);
  return {
      ops::searchsorted(a.t(0), a.t(1), a.flag("out_int32"), a.flag("right"), side, a.opt_t(2))};
}

}  // namespace

const std::map<std::string, OpCall>& index_write_op_table() {
  static const std::map<std::string, OpCall> table = {
      {"scatter", scatter},
      {"scatter_value", scatter},
      {"scatter_det", deterministic<scatter>},
      {"scatter_reduce_arg", scatter},
      {"scatter_multiply", scatter},
      {"scatter_value_reduce", scatter},
      {"scatter_reduce_arg_det", deterministic<scatter>},
      {"scatter_add", scatter_add},
      {"scatter_add_det", deterministic<scatter_add>},
      {"scatter_reduce_sum", scatter_reduce},
      {"scatter_reduce_prod", scatter_reduce},
      {"scatter_reduce_mean", scatter_reduce},
      {"scatter_reduce_amax", scatter_reduce},
      {"scatter_reduce_amin", scatter_reduce},
      {"scatter_reduce_sum_det", deterministic<scatter_reduce>},
      {"scatter_reduce_prod_det", deterministic<scatter_reduce>},
      {"scatter_reduce_mean_det", deterministic<scatter_reduce>},
      {"scatter_reduce_amax_det", deterministic<scatter_reduce>},
      {"scatter_reduce_amin_det", deterministic<scatter_reduce>},
      {"index_add", index_add},
      {"index_add_det", deterministic<index_add>},
      {"index_copy", index_copy},
      {"index_copy_det", deterministic<index_copy>},
      {"index_fill", index_fill},
      {"index_put", index_put},
      {"index_put_det", deterministic<index_put>},
      {"index_put_accumulate", index_put},
      {"index_put_accumulate_det", deterministic<index_put>},
      {"masked_scatter",
       [](A a, D) -> Outputs { return {ops::masked_scatter(a.t(0), a.t(1), a.t(2))}; }},
      {"masked_select", [](A a, D) -> Outputs { return {ops::masked_select(a.t(0), a.t(1))}; }},
      {"nonzero", [](A a, D) -> Outputs { return {ops::nonzero(a.t(0))}; }},
      {"nonzero_tuple", [](A a, D) -> Outputs { return ops::nonzero_tuple(a.t(0)); }},
      {"argwhere", [](A a, D) -> Outputs { return {ops::argwhere(a.t(0))}; }},
      {"one_hot",
       [](A a, D) -> Outputs { return {ops::one_hot(a.t(0), a.integer("num_classes"))}; }},
      {"bincount",
       [](A a, D) -> Outputs {
         return {ops::bincount(a.t(0), a.opt_t(1), a.integer("minlength"))};
       }},
      {"searchsorted", searchsorted},
      {"searchsorted_scalar",
       [](A a, D) -> Outputs {
         return {
             ops::searchsorted(a.t(0), a.scalar("value"), a.flag("out_int32"), a.flag("right"))};
       }},
      {"bucketize",
       [](A a, D) -> Outputs {
         return {ops::bucketize(a.t(0), a.t(1), a.flag("out_int32"), a.flag("right"))};
       }},
  };
  return table;
}

}  // namespace nbx::torch_diff
