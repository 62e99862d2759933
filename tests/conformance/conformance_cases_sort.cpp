// The sort family and the ops composed on it × every dtype against the host: sort (ascending
// and descending), argsort, msort, topk (largest and smallest), kthvalue, median and
// nanmedian (along a dim and whole), mode, unique (values, inverse, counts), quantile and
// nanquantile (every interpolation, scalar and 1-d q). Values and indices are exact: the family is
// stable with position as the second key on every backend, so ties (a grid of halves, ±0 among
// them) give the same indices everywhere; sorted values are compared as bits too (a -0 must stay
// -0, a NaN's payload must survive). NaN and ±inf are planted in float inputs. Sizes reach both
// variants on every device: short rows that share a tile, rows at the largest tile (4096, and 2048
// for 8-byte keys in llvmpipe's 32 KB), rows past it (the radix variant, several of its
// 2048-element tiles, a partial last tile), and one long row in full mode.
#include <cstdint>
#include <string>

#include "core/ops/sort.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;
using Op = std::function<Outputs(const Tensor&)>;

const View kNone = {};
const View kTranspose01 = [](const Tensor& t) { return t.transpose(0, 1); };
const View kSliced = [](const Tensor& t) { return t.slice(0, 1, t.size(0), 2); };

// Values with many ties (halves in -2 … 2, ±0) and, for floats, NaN and ±inf in rows 1–3.
Tensor tied_values(Rng& rng, DType t, const Shape& shape) {
  Tensor x = draw_ties(rng, t, shape);
  if (!is_floating(t) || shape.size() < 2 || shape[0] < 4) return x;
  const Tensor specials = draw_tensor(rng, t, shape, /*specials=*/true);
  // Rows 1…3 from the specials draw (NaN, +inf, -inf next to +inf), the rest tied.
  x.narrow(0, 1, 3).copy_(specials.narrow(0, 1, 3));
  return x;
}

struct Cases {
  DType dtype;
  Rng& rng;
  Device dev;
  std::vector<FamilyCase> cases;

  void add(std::string name, const Shape& shape, const View& view, Op op, bool ties = true) {
    FamilyCase c{std::move(name), 1, bool(view), {}, {}, {}};
    c.call = [op = std::move(op)](std::span<const Tensor> in, const Device&) { return op(in[0]); };
    add_operand(c, ties ? tied_values(rng, dtype, shape) : general_values(rng, dtype, shape), dev,
                view);
    cases.push_back(std::move(c));
  }
  void add_large(std::string name, const Shape& shape, Op op) {
    FamilyCase c{std::move(name), 1, false, {}, {}, {}};
    c.call = [op = std::move(op)](std::span<const Tensor> in, const Device&) { return op(in[0]); };
    defer_operands(c, rng, [shape, t = dtype, d = dev](FamilyCase& self, Rng& r) {
      add_operand(self, general_values(r, t, shape), d);
    });
    cases.push_back(std::move(c));
  }
};

Outputs with_bits(const ops::ValuesAndIndices& r) {
  return {r.values, bits_of(r.values), r.indices};
}

// The shapes every selection op runs on: `dim` is the dim sorted.
void common_cases(Cases& a, const std::function<Op(std::int64_t dim)>& op) {
  a.add("short-rows", {37, 5}, kNone, op(-1));
  a.add("rows-of-100", {6, 100}, kNone, op(1));
  a.add("dim0", {33, 4}, kNone, op(0));
  a.add("3-d-dim1", {3, 17, 4}, kNone, op(1));
  a.add("transposed", {9, 12}, kTranspose01, op(-1));
  a.add("sliced-rows", {11, 20}, kSliced, op(-1));
  a.add("general-values", {5, 64}, kNone, op(-1), /*ties=*/false);
  a.add("tile-2048", {4, 2048}, kNone, op(-1));
  a.add("tile-4096", {4, 4096}, kNone, op(-1));
  a.add("radix-4097", {4, 4097}, kNone, op(-1));
  a.add("radix-tiles", {5, 6000}, kNone, op(-1), /*ties=*/false);
  a.add("radix-dim0", {5000, 3}, kNone, op(0));
  a.add_large("long-row", {1, 300000}, op(-1));
}

std::vector<FamilyCase> sort_cases(DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, rng, dev, {}};
  common_cases(a, [](std::int64_t dim) -> Op {
    return [dim](const Tensor& x) { return with_bits(ops::sort(x, dim)); };
  });
  a.add("0-d", {}, kNone, [](const Tensor& x) { return with_bits(ops::sort(x)); });
  a.add("0-size-row", {3, 0}, kNone, [](const Tensor& x) { return with_bits(ops::sort(x)); });
  a.add("0-rows", {0, 5}, kNone, [](const Tensor& x) { return with_bits(ops::sort(x)); });
  a.add("one-element-rows", {70, 1}, kNone,
        [](const Tensor& x) { return with_bits(ops::sort(x)); });
  return std::move(a.cases);
}

std::vector<FamilyCase> sort_descending_cases(DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, rng, dev, {}};
  common_cases(a, [](std::int64_t dim) -> Op {
    return [dim](const Tensor& x) { return with_bits(ops::sort(x, dim, true)); };
  });
  return std::move(a.cases);
}

std::vector<FamilyCase> argsort_cases(DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, rng, dev, {}};
  a.add("rows", {12, 30}, kNone, [](const Tensor& x) { return Outputs{ops::argsort(x)}; });
  a.add("descending-dim0", {40, 3}, kNone,
        [](const Tensor& x) { return Outputs{ops::argsort(x, 0, true)}; });
  a.add("radix", {2, 5000}, kNone, [](const Tensor& x) { return Outputs{ops::argsort(x)}; });
  a.add("msort", {25, 6}, kNone, [](const Tensor& x) {
    const Tensor v = ops::msort(x);
    return Outputs{v, bits_of(v)};
  });
  return std::move(a.cases);
}

std::vector<FamilyCase> topk_cases(DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, rng, dev, {}};
  const auto topk = [](std::int64_t k, std::int64_t dim, bool largest) -> Op {
    return [=](const Tensor& x) { return with_bits(ops::topk(x, k, dim, largest)); };
  };
  a.add("k3", {20, 9}, kNone, topk(3, -1, true));
  a.add("smallest", {20, 9}, kNone, topk(4, -1, false));
  a.add("dim0", {30, 5}, kNone, topk(7, 0, true));
  a.add("k-all", {6, 8}, kNone, topk(8, 1, true));
  a.add("k0", {6, 8}, kNone, topk(0, 1, true));
  a.add("transposed", {10, 7}, kTranspose01, topk(5, -1, true));
  a.add("radix-k50", {3, 9000}, kNone, topk(50, -1, true), /*ties=*/false);
  a.add("0-d", {}, kNone, topk(1, 0, true));
  a.add("k-too-large", {4, 3}, kNone, topk(4, -1, true));  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> kthvalue_cases(DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, rng, dev, {}};
  const auto kth = [](std::int64_t k, std::int64_t dim, bool keepdim) -> Op {
    return [=](const Tensor& x) { return with_bits(ops::kthvalue(x, k, dim, keepdim)); };
  };
  a.add("k1", {15, 6}, kNone, kth(1, -1, false));
  a.add("k-mid-keepdim", {15, 6}, kNone, kth(3, -1, true));
  a.add("dim0", {21, 4}, kNone, kth(11, 0, false));
  a.add("radix", {2, 4500}, kNone, kth(2000, 1, false));
  a.add("0-d", {}, kNone, kth(1, 0, false));
  a.add("k0", {4, 3}, kNone, kth(0, -1, false));  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> median_cases(DType dtype, Rng& rng, const Device& dev, bool nan) {
  Cases a{dtype, rng, dev, {}};
  const auto along = [nan](std::int64_t dim, bool keepdim) -> Op {
    return [=](const Tensor& x) {
      return with_bits(nan ? ops::nanmedian(x, dim, keepdim) : ops::median(x, dim, keepdim));
    };
  };
  const Op whole = [nan](const Tensor& x) {
    const Tensor v = nan ? ops::nanmedian(x) : ops::median(x);
    return Outputs{v, bits_of(v)};
  };
  a.add("even-rows", {16, 8}, kNone, along(-1, false));
  a.add("odd-rows-keepdim", {16, 9}, kNone, along(1, true));
  a.add("dim0", {25, 4}, kNone, along(0, false));
  a.add("transposed", {8, 11}, kTranspose01, along(-1, false));
  a.add("radix", {5, 4200}, kNone, along(-1, false));
  a.add("0-d", {}, kNone, along(0, false));
  a.add("whole", {9, 7}, kNone, whole);
  a.add("whole-1-d", {40}, kNone, whole);
  a.add("whole-empty", {0}, kNone, whole);             // NaN for floats, rejected for integers
  a.add("empty-dim", {0, 3}, kNone, along(0, false));  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> median_only(DType d, Rng& r, const Device& dev) {
  return median_cases(d, r, dev, false);
}
std::vector<FamilyCase> nanmedian_only(DType d, Rng& r, const Device& dev) {
  return median_cases(d, r, dev, true);
}

std::vector<FamilyCase> mode_cases(DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, rng, dev, {}};
  const auto mode_of = [](std::int64_t dim, bool keepdim) -> Op {
    return [=](const Tensor& x) { return with_bits(ops::mode(x, dim, keepdim)); };
  };
  a.add("rows", {14, 9}, kNone, mode_of(-1, false));
  a.add("dim0-keepdim", {30, 4}, kNone, mode_of(0, true));
  a.add("transposed", {8, 11}, kTranspose01, mode_of(-1, false));
  a.add("radix", {3, 5000}, kNone, mode_of(-1, false));
  a.add("0-d", {}, kNone, mode_of(0, false));
  a.add("empty-dim", {0, 3}, kNone, mode_of(0, false));  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> unique_cases(DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, rng, dev, {}};
  const Op all = [](const Tensor& x) {
    const ops::UniqueResult u = ops::unique(x, true, true, true);
    return Outputs{u.values, bits_of(u.values), u.inverse, u.counts};
  };
  a.add("2-d", {12, 10}, kNone, all);
  a.add("transposed", {9, 7}, kTranspose01, all);
  a.add("general-values", {200}, kNone, all, /*ties=*/false);
  a.add("radix", {6000}, kNone, all);
  a.add("0-d", {}, kNone, all);
  a.add("empty", {0, 4}, kNone, all);
  a.add("values-only", {40}, kNone, [](const Tensor& x) { return Outputs{ops::unique(x).values}; });
  return std::move(a.cases);
}

std::vector<FamilyCase> quantile_cases(DType dtype, Rng& rng, const Device& dev, bool nan) {
  Cases a{dtype, rng, dev, {}};
  const auto q_of = [nan](double q, std::optional<std::int64_t> dim, bool keepdim,
                          const char* mode) -> Op {
    return [=](const Tensor& x) {
      return Outputs{nan ? ops::nanquantile(x, q, dim, keepdim, mode)
                         : ops::quantile(x, q, dim, keepdim, mode)};
    };
  };
  const auto qs_of = [nan](std::vector<double> q, std::optional<std::int64_t> dim, bool keepdim,
                           const char* mode) -> Op {
    return [=](const Tensor& x) {
      const Tensor qt = Tensor::from_host(q, {std::int64_t(q.size())}).to(x.dtype()).to(x.device());
      return Outputs{nan ? ops::nanquantile(x, qt, dim, keepdim, mode)
                         : ops::quantile(x, qt, dim, keepdim, mode)};
    };
  };
  for (const char* mode : {"linear", "lower", "higher", "midpoint", "nearest"})
    a.add(std::string("rows-") + mode, {12, 10}, kNone, q_of(0.3, 1, false, mode));
  a.add("q-tensor", {8, 13}, kNone, qs_of({0.0, 0.25, 0.5, 0.9, 1.0}, -1, false, "linear"));
  a.add("q-tensor-keepdim-dim0", {21, 5}, kNone, qs_of({0.1, 0.75}, 0, true, "linear"));
  a.add("whole", {9, 7}, kNone, q_of(0.6, {}, false, "linear"));
  a.add("whole-keepdim-q-tensor", {4, 6}, kNone, qs_of({0.5, 0.2}, {}, true, "nearest"));
  a.add("transposed", {7, 9}, kTranspose01, q_of(0.45, -1, false, "linear"));
  a.add("radix", {3, 5000}, kNone, q_of(0.77, -1, false, "linear"), /*ties=*/false);
  a.add("0-d", {}, kNone, q_of(0.5, 0, false, "linear"));
  a.add("empty", {0, 3}, kNone, q_of(0.5, 0, false, "linear"));            // rejected
  a.add("q-out-of-range", {4, 3}, kNone, q_of(1.5, -1, false, "linear"));  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> quantile_only(DType d, Rng& r, const Device& dev) {
  return quantile_cases(d, r, dev, false);
}
std::vector<FamilyCase> nanquantile_only(DType d, Rng& r, const Device& dev) {
  return quantile_cases(d, r, dev, true);
}

}  // namespace

std::span<const FamilySpec> sort_specs() {
  static const FamilySpec specs[] = {
      {"sort", "sort", true, sort_cases},
      {"sort_descending", "sort", true, sort_descending_cases},
      {"argsort", "sort", true, argsort_cases},
      {"topk", "sort", true, topk_cases},
      {"kthvalue", "sort", true, kthvalue_cases},
      {"median", "sort", true, median_only},
      {"nanmedian", "sort", true, nanmedian_only},
      {"mode", "sort", true, mode_cases},
      {"unique", "sort", true, unique_cases},
      // Interpolated: lerp rounds in the dtype on each device.
      {"quantile", "sort", false, quantile_only},
      {"nanquantile", "sort", false, nanquantile_only},
  };
  return specs;
}

}  // namespace nbx::conformance
