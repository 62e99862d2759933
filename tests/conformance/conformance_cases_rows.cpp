// Reductions and scans. Reductions: over the last dim of a [7,65] tensor (NaN and ±inf
// planted in rows 1-3 for floats), over dim 0 of a transposed view, over everything (plain,
// keepdim, and a permuted 3-d view), zero-size, and over several dims of [4,5,6] at once
// ({0,2}; {-1,0} with keepdim; {0,2} of a transposed view). Ops that take one dim (max,
// min, argmax, argmin) get dim 1 of [4,5,6] instead of the dim sets. Scans: the same rows,
// a 0-d input, a long column of a transposed view, rows crossing tiles, and 10^5-element
// rows (full mode only).
#include <cmath>
#include <optional>

#include "core/ops/reduce.hpp"
#include "core/ops/scan.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;
// dims empty: every dim (max/min: the flattened tensor; argmax/argmin: no dim).
using RowOp = Outputs (*)(const Tensor& x, const ops::DimList& dims, bool keepdim);

// What a reduction accepts, so each gets every case it can express.
enum class Dims {
  kMany,        // a dim list and keepdim (sum, var, norm, …)
  kOne,         // one dim and keepdim; no dim at all (argmax, argmin: every element, keepdim)
  kOneNoFull,   // one dim and keepdim; "every dim" is the flattened tensor (max, min)
  kManyNoKeep,  // a dim list, no keepdim (count_nonzero)
};

struct RowOptions {
  Dims dims = Dims::kMany;
  bool zeros = false;      // a third of the values zero: counts of non-zeros depend on them
  bool short_dim = false;  // var/std: a dim of 2, where correction 2 leaves no degree of freedom
};

const View kTranspose01 = [](const Tensor& t) { return t.transpose(0, 1); };
const View kTranspose02 = [](const Tensor& t) { return t.transpose(0, 2); };

struct CaseAdder {
  std::vector<FamilyCase>& cases;
  DType dtype;
  Rng& rng;
  const Device& dev;
  RowOp op;
  bool zeros;

  FamilyCase& add(std::string name, std::int64_t k, bool view, const Shape& shape,
                  ops::DimList dims, bool keepdim = false, const View& v = {},
                  bool specials = false) {
    Tensor host = draw_tensor(rng, dtype, shape, specials);
    if (zeros) host = with_zeros(rng, host);
    FamilyCase c{std::move(name), k, view, {}, {}, {}};
    add_operand(c, host, dev, v);
    c.call = [op = op, dims = std::move(dims), keepdim](std::span<const Tensor> in,
                                                        const Device&) -> Outputs {
      return op(in[0], dims, keepdim);
    };
    cases.push_back(std::move(c));
    return cases.back();
  }
};

std::vector<FamilyCase> reduce_cases(DType dtype, Rng& rng, const Device& dev, RowOp op,
                                     RowOptions o) {
  std::vector<FamilyCase> cases;
  CaseAdder a{cases, dtype, rng, dev, op, o.zeros};
  const bool many = o.dims == Dims::kMany || o.dims == Dims::kManyNoKeep;
  const bool keep = o.dims != Dims::kManyNoKeep;
  a.add("last-dim", 65, false, {7, 65}, {-1}, false, {}, true);
  a.add("dim0-of-transposed", 7, true, {65, 7}, {0}, false, kTranspose01);
  a.add("full", 65, false, {5, 13}, {});
  a.add("0-size", 0, false, {3, 0}, {-1});
  if (many) {
    a.add("dims-0-2", 24, false, {4, 5, 6}, {0, 2});
    if (keep) a.add("dims-minus1-0-keepdim", 24, false, {4, 5, 6}, {-1, 0}, true);
    a.add("dims-0-2-of-transposed", 24, true, {6, 5, 4}, {0, 2}, false, kTranspose02);
  } else {
    a.add("dim1-of-3d", 5, false, {4, 5, 6}, {1});
    a.add("dim1-of-3d-keepdim", 5, false, {4, 5, 6}, {1}, true);
    a.add("dim2-of-transposed", 6, true, {6, 5, 4}, {2}, false, kTranspose02);
  }
  if (keep && o.dims != Dims::kOneNoFull) a.add("full-keepdim", 65, false, {5, 13}, {}, true);
  a.add("full-of-permuted", 120, true, {4, 5, 6}, {}, false, [](const Tensor& t) {
    return t.permute({2, 0, 1});
  });
  if (o.short_dim) a.add("dim-of-2", 2, false, {5, 2}, {-1});
  return cases;
}

std::vector<FamilyCase> scan_cases(DType dtype, Rng& rng, const Device& dev, RowOp op) {
  std::vector<FamilyCase> cases;
  CaseAdder a{cases, dtype, rng, dev, op, false};
  a.add("last-dim", 65, false, {7, 65}, {-1}, false, {}, true);
  a.add("dim0-of-transposed", 7, true, {65, 7}, {0}, false, kTranspose01);
  a.add("0-d", 1, false, {}, {0});
  a.add("0-size", 0, false, {3, 0}, {-1});
  a.add("dim1-of-3d", 5, false, {4, 5, 6}, {1});
  // Crosses reduce.tile_max (1024 on llvmpipe and the GPUs' files): the carry between tiles.
  // No NaN/±inf here: once a product has underflowed, inf × 0 (NaN) or inf × tiny (inf)
  // depends on the order of multiplication, which a tiled scan legitimately changes.
  a.add("long-dim0-of-transposed", 1500, true, {3, 1500}, {0}, false, kTranspose01).growth =
      Growth::kWideSigned;
  a.add("row-of-3000", 3000, false, {4, 3000}, {-1}).growth = Growth::kWideSigned;
  FamilyCase& row = a.add("row-of-100000", 100000, false, {2, 100000}, {-1});
  row.growth = Growth::kWideSigned;
  row.large = true;
  return cases;
}

// The body is variadic: braces in it may hold commas.
#define NBX_REDUCE_SPEC(op_name, exact, options, ...)                                          \
  FamilySpec {                                                                                 \
#op_name, "reduce", exact, [](DType d, Rng& rng, const Device& dev) {                        \
      return reduce_cases(                                                                     \
          d, rng, dev,                                                                         \
          [](const Tensor& x, const ops::DimList& dims, bool keepdim) -> Outputs {           \
            (void)keepdim;                                                                     \
            __VA_ARGS__                                                                        \
          },                                                                                   \
          options);                                                                            \
    } \
  }
#define NBX_REDUCE(op_name, exact, ...) NBX_REDUCE_SPEC(op_name, exact, RowOptions{}, __VA_ARGS__)
#define NBX_SCAN(op_name, exact, ...)                                                          \
  FamilySpec {                                                                                 \
#op_name, "scan", exact, [](DType d, Rng& rng, const Device& dev) {                          \
      return scan_cases(                                                                       \
          d, rng, dev,                                                                         \
          [](const Tensor& x, const ops::DimList& dims, bool) -> Outputs { __VA_ARGS__ });   \
    } \
  }

// Extrema with indices take one dim; "every dim" is the flattened tensor.
Outputs values_indices(ops::ValuesAndIndices (*f)(const Tensor&, std::int64_t, bool),
                       const Tensor& x, const ops::DimList& dims, bool keepdim) {
  ops::ValuesAndIndices r = dims.empty() ? f(x.flatten(), 0, false) : f(x, dims[0], keepdim);
  return {r.values, r.indices};
}

std::optional<std::int64_t> one_dim(const ops::DimList& dims) {
  return dims.empty() ? std::nullopt : std::optional<std::int64_t>(dims[0]);
}

constexpr RowOptions kOne{Dims::kOne};
constexpr RowOptions kOneNoFull{Dims::kOneNoFull};
constexpr RowOptions kCounts{Dims::kMany, true};
constexpr RowOptions kShort{Dims::kMany, false, true};

const FamilySpec kSpecs[] = {
    NBX_REDUCE(sum, false, return {ops::sum(x, dims, keepdim)};),
    NBX_REDUCE(prod, false, return {ops::prod(x, dims, keepdim)};),
    NBX_REDUCE(mean, false, return {ops::mean(x, dims, keepdim)};),
    NBX_REDUCE(amax, true, return {ops::amax(x, dims, keepdim)};),
    NBX_REDUCE(amin, true, return {ops::amin(x, dims, keepdim)};),
    NBX_REDUCE_SPEC(max, true, kOneNoFull,
                    return values_indices(
                        [](const Tensor& t, std::int64_t d, bool k) { return ops::max(t, d, k); },
                        x, dims, keepdim);),
    NBX_REDUCE_SPEC(min, true, kOneNoFull,
                    return values_indices(
                        [](const Tensor& t, std::int64_t d, bool k) { return ops::min(t, d, k); },
                        x, dims, keepdim);),
    NBX_REDUCE_SPEC(argmax, true, kOne, return {ops::argmax(x, one_dim(dims), keepdim)};),
    NBX_REDUCE_SPEC(argmin, true, kOne, return {ops::argmin(x, one_dim(dims), keepdim)};),
    NBX_REDUCE_SPEC(var, false, kShort, return {ops::var(x, dims, 1, keepdim)};),
    NBX_REDUCE_SPEC(var_c0, false, kShort, return {ops::var(x, dims, 0, keepdim)};),
    NBX_REDUCE_SPEC(var_c2, false, kShort, return {ops::var(x, dims, 2, keepdim)};),
    NBX_REDUCE_SPEC(std, false, kShort, return {ops::stddev(x, dims, 0, keepdim)};),
    NBX_REDUCE_SPEC(std_c2, false, kShort, return {ops::stddev(x, dims, 2, keepdim)};),
    // p = 0 counts non-zeros (exact), ±inf selects: exact.
    NBX_REDUCE_SPEC(norm_p0, true, kCounts, return {ops::norm(x, 0, dims, keepdim)};),
    NBX_REDUCE(norm_p1, false, return {ops::norm(x, 1, dims, keepdim)};),
    NBX_REDUCE(norm_p2, false, return {ops::norm(x, 2, dims, keepdim)};),
    NBX_REDUCE(norm_pinf, true, return {ops::norm(x, INFINITY, dims, keepdim)};),
    NBX_REDUCE(norm_pneginf, true, return {ops::norm(x, -INFINITY, dims, keepdim)};),
    NBX_REDUCE(norm_p3, false, return {ops::norm(x, 3, dims, keepdim)};),
    NBX_REDUCE(logsumexp, false, return {ops::logsumexp(x, dims, keepdim)};),
    NBX_REDUCE_SPEC(any, true, kCounts, return {ops::any(x, dims, keepdim)};),
    NBX_REDUCE_SPEC(all, true, kCounts, return {ops::all(x, dims, keepdim)};),
    NBX_REDUCE_SPEC(count_nonzero, true, (RowOptions{Dims::kManyNoKeep, true}),
                    return {ops::count_nonzero(x, dims)};),
    NBX_SCAN(cumsum, false, return {ops::cumsum(x, dims[0])};),
    NBX_SCAN(cumprod, false, return {ops::cumprod(x, dims[0])};),
    NBX_SCAN(cummax, true,
             {
               ops::ValuesAndIndices r = ops::cummax(x, dims[0]);
               return {r.values, r.indices};
             }),
    NBX_SCAN(cummin, true,
             {
               ops::ValuesAndIndices r = ops::cummin(x, dims[0]);
               return {r.values, r.indices};
             }),
};
#undef NBX_SCAN
#undef NBX_REDUCE
#undef NBX_REDUCE_SPEC

}  // namespace

std::span<const FamilySpec> reduce_scan_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
