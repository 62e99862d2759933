// Reductions: over the last dim of a [7,65] tensor (NaN and ±inf planted in rows 1-3 for
// floats), over dim 0 of a transposed view, over everything (plain, keepdim, and a permuted
// 3-d view), zero-size, and over several dims of [4,5,6] at once ({0,2}; {-1,0} with
// keepdim; {0,2} of a transposed view). Ops that take one dim (max, min, argmax, argmin) get
// dim 1 of [4,5,6] instead of the dim sets. Then the shapes that pick the GPU and Vulkan
// kernels' variants: inner, middle and outer dims of 3-d tensors, 3000 rows of 1, 700 rows of
// 65, sliced and narrowed views, ties (the first index wins), PyTorch's rows of NaN and ±inf,
// and (full mode only) rows of 10^5 split over workgroups, plain and with specials, and a
// whole 10^5-element tensor. Issue 11's reductions: max/min of a whole tensor (max_all,
// min_all: every case reduced over every dim), aminmax (one dim), nansum and nanmean (a
// third of the float values NaN, and rows all NaN), var_mean and std_mean (both outputs).
#include <cmath>
#include <optional>

#include "core/ops/reduce.hpp"
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
  bool product = false;    // prod: over 16 terms, factors near ±1 (else they vanish to 0)
  bool nans = false;       // nansum/nanmean: a third of the float values NaN, rows of NaN
};

// `x` (floats) with about a third of its elements NaN: what nansum and nanmean skip.
Tensor with_nans(Rng& rng, const Tensor& x) {
  if (!is_floating(x.dtype())) return x;
  std::vector<double> v = x.to(DType::kFloat64).to_host<double>();
  for (double& e : v)
    if (rng.below(3) == 0) e = NAN;
  return tensor_of(v, x.shape(), x.dtype());
}

// Rows of 5: all NaN (nanmean: NaN, nansum: 0), one value among NaNs, no NaN, NaN with ±inf,
// NaN with a lone +inf.
Tensor nan_rows(DType dtype) {
  const double nan = NAN, inf = INFINITY;
  return tensor_of({nan, nan, nan,  nan, nan, nan, 1.5, nan, nan, nan, 1,   -2,  0.5,
                    4,   -3,  -inf, nan, inf, 2,   nan, nan, nan, inf, nan, 0.25},
                   {5, 5}, dtype);
}

const View kTranspose01 = [](const Tensor& t) { return t.transpose(0, 1); };
const View kTranspose02 = [](const Tensor& t) { return t.transpose(0, 2); };
using Draw = std::function<Tensor(Rng&, DType, const Shape&)>;

// PyTorch's special rows: NaN twice (the first one's index), +inf and -inf, only +inf ties,
// -inf and a finite maximum, two equal maxima (the first index), zeros of both signs.
Tensor planted_rows(DType dtype) {
  const double nan = NAN, inf = INFINITY;
  return tensor_of({1,    nan, 3,    nan, -2, inf, 1, -inf, 2,  0, inf, inf, 5, inf,  inf,
                    -inf, 7,   -inf, 7,   -1, 4,   9, 9,    -3, 9, 0,   0,   0, -0.0, 0},
                   {6, 5}, dtype);
}

// Rows of 10^5 in -2 … 2: row 0 plain, row 1 one +inf, row 2 a late NaN and a tie for the
// maximum, row 3 all -inf but one element, row 4 +inf and -inf. The chunks of a split row
// meet in a second pass.
Tensor long_planted_rows(Rng& rng, DType dtype, const Shape& shape) {
  const std::int64_t n = shape[1];
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (double& x : v) x = 4 * rng.uniform() - 2;
  auto at = [&](std::int64_t row, std::int64_t k) -> double& {
    return v[static_cast<std::size_t>(row * n + k)];
  };
  at(1, n * 7 / 9) = INFINITY;
  at(2, n - 10) = NAN;
  at(2, n / 81) = at(2, n * 4 / 5) = 9;
  for (std::int64_t k = 0; k < n; ++k) at(3, k) = -INFINITY;
  at(3, n / 2 + 1) = -5;
  at(4, 10) = INFINITY;
  at(4, n * 9 / 10) = -INFINITY;
  return tensor_of(v, shape, dtype);
}

struct CaseAdder {
  std::vector<FamilyCase>& cases;
  DType dtype;
  Rng& rng;
  Device dev;
  RowOp op;
  RowOptions o;

  FamilyCase& push(std::string name, std::int64_t k, bool view, ops::DimList dims, bool keepdim) {
    FamilyCase c{std::move(name), k, view, {}, {}, {}};
    if (k >= 1000) c.growth = Growth::kWideSigned;
    c.call = [op = op, dims = std::move(dims), keepdim](std::span<const Tensor> in,
                                                        const Device&) -> Outputs {
      return op(in[0], dims, keepdim);
    };
    cases.push_back(std::move(c));
    return cases.back();
  }

  // Seeded values (counts: a third of them zero) of `shape`, reduced through `v`.
  FamilyCase& add(std::string name, std::int64_t k, bool view, const Shape& shape,
                  ops::DimList dims, bool keepdim = false, const View& v = {},
                  bool specials = false) {
    Tensor host = o.product && k > 16 ? draw_near_one(rng, dtype, shape, specials)
                                      : draw_tensor(rng, dtype, shape, specials);
    if (o.zeros) host = with_zeros(rng, host);
    if (o.nans) host = with_nans(rng, host);
    FamilyCase& c = push(std::move(name), k, view, std::move(dims), keepdim);
    add_operand(c, host, dev, v);
    return c;
  }

  // A given tensor, reduced through `v`.
  void add_tensor(std::string name, std::int64_t k, const Tensor& host, ops::DimList dims,
                  bool keepdim = false, const View& v = {}) {
    add_operand(push(std::move(name), k, bool(v), std::move(dims), keepdim), host, dev, v);
  }

  // A large case (full mode only), drawn when it runs.
  void add_large(std::string name, std::int64_t k, const Shape& shape, ops::DimList dims,
                 Draw draw) {
    if (o.product) draw = [](Rng& r, DType d, const Shape& s) { return draw_near_one(r, d, s); };
    FamilyCase& c = push(std::move(name), k, false, std::move(dims), false);
    defer_operands(c, rng,
                   [draw, shape, dtype = dtype, dev = dev, zeros = o.zeros, nans = o.nans](
                       FamilyCase& self, Rng& r) {
                     Tensor host = draw(r, dtype, shape);
                     if (zeros) host = with_zeros(r, host);
                     if (nans) host = with_nans(r, host);
                     add_operand(self, host, dev);
                   });
  }
};

std::vector<FamilyCase> reduce_cases(DType dtype, Rng& rng, const Device& dev, RowOp op,
                                     RowOptions o) {
  std::vector<FamilyCase> cases;
  CaseAdder a{cases, dtype, rng, dev, op, o};
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
  // Inner (kept), middle and outer dims of 3-d tensors; many rows of 1 and of 65.
  a.add("last-dim-of-3d-keepdim", 65, false, {4, 3, 65}, {-1}, keep);
  a.add("middle-dim", 65, false, {4, 65, 3}, {1});
  a.add("outer-dim", 65, false, {65, 4, 3}, {0});
  a.add("rows-of-1", 1, false, {3000, 1}, {-1});
  a.add("rows-of-65-x700", 65, false, {700, 65}, {-1});
  // Every third of the middle dim from 3, and the last dim narrowed at an offset.
  a.add("dim1-of-sliced", 12, true, {6, 40, 12}, {1}, false,
        [](const Tensor& t) { return t.slice(1, 3, 37, 3); });
  a.add("full-of-narrowed", 1440, true, {6, 40, 12}, {}, false,
        [](const Tensor& t) { return t.narrow(2, 5, 6); });
  add_operand(a.push("ties", 33, false, {-1}, false), draw_ties(rng, dtype, {9, 33}), dev);
  if (is_floating(dtype) && o.nans) {
    a.add_tensor("nan-rows", 5, nan_rows(dtype), {1});
    a.add_tensor("nan-columns-keepdim", 5, nan_rows(dtype), {0}, keep, kTranspose01);
  }
  if (is_floating(dtype)) {
    a.add_tensor("planted-rows", 5, planted_rows(dtype), {1});
    a.add_tensor("planted-rows-transposed-keepdim", 5, planted_rows(dtype), {0}, keep,
                 kTranspose01);
  }
  // Full mode only: rows split over workgroups (or blocks of warps).
  const Draw plain = [](Rng& r, DType d, const Shape& s) { return draw_tensor(r, d, s); };
  a.add_large("rows-of-100000", 100000, {2, 100000}, {-1}, plain);
  a.add_large("full-of-100000", 100000, {100000}, {}, plain);
  if (is_floating(dtype) && !o.product && !o.zeros)
    a.add_large("planted-rows-of-100000", 100000, {5, 100000}, {-1}, long_planted_rows);
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
constexpr RowOptions kProduct{Dims::kMany, false, false, true};
constexpr RowOptions kNans{Dims::kMany, false, false, false, true};

Outputs min_max(const Tensor& x, const ops::DimList& dims, bool keepdim) {
  ops::MinMax r = ops::aminmax(x, one_dim(dims), keepdim);
  return {r.min, r.max};
}
Outputs statistic_mean(ops::StatisticAndMean r) {
  return {r.statistic, r.mean};
}

const FamilySpec kSpecs[] = {
    NBX_REDUCE(sum, false, return {ops::sum(x, dims, keepdim)};),
    NBX_REDUCE_SPEC(prod, false, kProduct, return {ops::prod(x, dims, keepdim)};),
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
    NBX_REDUCE_SPEC(std, false, kShort, return {ops::std(x, dims, 0, keepdim)};),
    NBX_REDUCE_SPEC(std_c1, false, kShort, return {ops::std(x, dims, 1, keepdim)};),
    NBX_REDUCE_SPEC(std_c2, false, kShort, return {ops::std(x, dims, 2, keepdim)};),
    // p = 0 counts non-zeros (exact), ±inf selects: exact.
    NBX_REDUCE_SPEC(norm_p0, true, kCounts, return {ops::norm(x, 0, dims, keepdim)};),
    NBX_REDUCE(norm_p1, false, return {ops::norm(x, 1, dims, keepdim)};),
    NBX_REDUCE(norm_p2, false, return {ops::norm(x, 2, dims, keepdim)};),
    NBX_REDUCE(norm_pinf, true, return {ops::norm(x, INFINITY, dims, keepdim)};),
    NBX_REDUCE(norm_pneginf, true, return {ops::norm(x, -INFINITY, dims, keepdim)};),
    NBX_REDUCE(norm_p3, false, return {ops::norm(x, 3, dims, keepdim)};),
    NBX_REDUCE(norm_p0_5, false, return {ops::norm(x, 0.5, dims, keepdim)};),
    NBX_REDUCE(logsumexp, false, return {ops::logsumexp(x, dims, keepdim)};),
    NBX_REDUCE_SPEC(any, true, kCounts, return {ops::any(x, dims, keepdim)};),
    NBX_REDUCE_SPEC(all, true, kCounts, return {ops::all(x, dims, keepdim)};),
    NBX_REDUCE_SPEC(count_nonzero, true, (RowOptions{Dims::kManyNoKeep, true}),
                    return {ops::count_nonzero(x, dims)};),
    // Issue 11. max(x)/min(x) take no dim: each case reduces its tensor over every dim.
    NBX_REDUCE(max_all, true, (void)dims; return {ops::max(x)};),
    NBX_REDUCE(min_all, true, (void)dims; return {ops::min(x)};),
    NBX_REDUCE_SPEC(aminmax, true, kOne, return min_max(x, dims, keepdim);),
    NBX_REDUCE_SPEC(nansum, false, kNans, return {ops::nansum(x, dims, keepdim)};),
    NBX_REDUCE_SPEC(nanmean, false, kNans, return {ops::nanmean(x, dims, keepdim)};),
    NBX_REDUCE_SPEC(var_mean, false, kShort,
                    return statistic_mean(ops::var_mean(x, dims, 1, keepdim));),
    NBX_REDUCE_SPEC(var_mean_c0, false, kShort,
                    return statistic_mean(ops::var_mean(x, dims, 0, keepdim));),
    NBX_REDUCE_SPEC(std_mean, false, kShort,
                    return statistic_mean(ops::std_mean(x, dims, 1, keepdim));),
    NBX_REDUCE_SPEC(std_mean_c2, false, kShort,
                    return statistic_mean(ops::std_mean(x, dims, 2, keepdim));),
};
#undef NBX_REDUCE
#undef NBX_REDUCE_SPEC

}  // namespace

std::span<const FamilySpec> reduce_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
