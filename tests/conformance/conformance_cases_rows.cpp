// Reductions and scans: over the last dim of a [7,65] tensor (NaN and ±inf planted in rows
// 1-3 for floats), over dim 0 of a transposed view, over everything, and zero-size. Every
// op gets the same four cases (scans: a 0-d input instead of the full reduction).
#include <cmath>
#include <optional>

#include "core/ops/reduce.hpp"
#include "core/ops/scan.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using Dim = std::optional<std::int64_t>;  // nullopt: every dim
using RowOp = Outputs (*)(const Tensor& x, Dim dim);

ops::DimList dims_of(Dim d) {
  return d ? ops::DimList{*d} : ops::DimList{};
}

// The four cases of a row op; `full` false (scans) swaps the full case for a 0-d input.
std::vector<FamilyCase> row_cases(DType dtype, Rng& rng, const Device& dev, RowOp op, bool full) {
  std::vector<FamilyCase> cases;
  auto add = [&](std::string name, std::int64_t k, bool view, const Tensor& host, Dim dim,
                 std::function<Tensor(const Tensor&)> v = {}) {
    FamilyCase c{std::move(name), k, view, {}, {}, {}};
    add_operand(c, host, dev, v);
    c.call = [op, dim](std::span<const Tensor> in, const Device&) { return op(in[0], dim); };
    cases.push_back(std::move(c));
  };
  add("last-dim", 65, false, draw_tensor(rng, dtype, {7, 65}, true), -1);
  add("dim0-of-transposed", 7, true, draw_tensor(rng, dtype, {65, 7}), 0,
      [](const Tensor& t) { return t.transpose(0, 1); });
  if (full)
    add("full", 65, false, draw_tensor(rng, dtype, {5, 13}), std::nullopt);
  else
    add("0-d", 1, false, draw_tensor(rng, dtype, {}), 0);
  add("0-size", 0, false, draw_tensor(rng, dtype, {3, 0}), -1);
  return cases;
}

// The body is variadic: braces in it may hold commas.
#define NBX_ROW_SPEC(op_name, family, exact, full, ...)                        \
  FamilySpec {                                                                 \
#op_name, family, exact, [](DType d, Rng& rng, const Device& dev) {          \
      return row_cases(                                                          \
          d, rng, dev, [](const Tensor& x, Dim dim) -> Outputs { __VA_ARGS__ }, full); \
    } \
  }
#define NBX_REDUCE(op_name, exact, ...) NBX_ROW_SPEC(op_name, "reduce", exact, true, __VA_ARGS__)

// Full extrema with indices (max/min take a dim): over the flattened tensor.
Outputs values_indices(ops::ValuesAndIndices (*f)(const Tensor&, std::int64_t, bool),
                       const Tensor& x, Dim dim) {
  ops::ValuesAndIndices r = dim ? f(x, *dim, false) : f(x.flatten(), 0, false);
  return {r.values, r.indices};
}

const FamilySpec kSpecs[] = {
    NBX_REDUCE(sum, false, return {ops::sum(x, dims_of(dim))};),
    NBX_REDUCE(prod, false, return {ops::prod(x, dims_of(dim))};),
    NBX_REDUCE(mean, false, return {ops::mean(x, dims_of(dim))};),
    NBX_REDUCE(amax, true, return {ops::amax(x, dims_of(dim))};),
    NBX_REDUCE(amin, true, return {ops::amin(x, dims_of(dim))};),
    NBX_REDUCE(
        max, true,
        return values_indices(
            [](const Tensor& t, std::int64_t d, bool k) { return ops::max(t, d, k); }, x, dim);),
    NBX_REDUCE(
        min, true,
        return values_indices(
            [](const Tensor& t, std::int64_t d, bool k) { return ops::min(t, d, k); }, x, dim);),
    NBX_REDUCE(argmax, true, return {ops::argmax(x, dim)};),
    NBX_REDUCE(argmin, true, return {ops::argmin(x, dim)};),
    NBX_REDUCE(var, false, return {ops::var(x, dims_of(dim))};),
    NBX_REDUCE(std, false, return {ops::stddev(x, dims_of(dim), 0)};),
    NBX_REDUCE(norm_p1, false, return {ops::norm(x, 1, dims_of(dim))};),
    NBX_REDUCE(norm_p2, false, return {ops::norm(x, 2, dims_of(dim))};),
    NBX_REDUCE(norm_pinf, true, return {ops::norm(x, INFINITY, dims_of(dim))};),
    NBX_REDUCE(norm_p3, false, return {ops::norm(x, 3, dims_of(dim))};),
    NBX_REDUCE(logsumexp, false, return {ops::logsumexp(x, dims_of(dim))};),
    NBX_REDUCE(any, true, return {ops::any(x, dims_of(dim))};),
    NBX_REDUCE(all, true, return {ops::all(x, dims_of(dim))};),
    NBX_REDUCE(count_nonzero, true, return {ops::count_nonzero(x, dims_of(dim))};),
    NBX_ROW_SPEC(cumsum, "scan", false, false, return {ops::cumsum(x, *dim)};),
    NBX_ROW_SPEC(cumprod, "scan", false, false, return {ops::cumprod(x, *dim)};),
    NBX_ROW_SPEC(cummax, "scan", true, false,
                 {
                   ops::ValuesAndIndices r = ops::cummax(x, *dim);
                   return {r.values, r.indices};
                 }),
    NBX_ROW_SPEC(cummin, "scan", true, false,
                 {
                   ops::ValuesAndIndices r = ops::cummin(x, *dim);
                   return {r.values, r.indices};
                 }),
};
#undef NBX_REDUCE
#undef NBX_ROW_SPEC

}  // namespace

std::span<const FamilySpec> reduce_scan_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
