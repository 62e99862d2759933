// Scans (cumsum, cumprod, cummax, cummin, logcumsumexp), with rows that take every kernel shape of
// the GPU and Vulkan scans: rows of 1 … 128 (groups of lanes, a row per invocation), rows side by
// side along dim 0 (a lane per row on CUDA/HIP once 40000 of them fill the GPU), 10000 rows of 129
// (a warp each), 300 rows of 8200 (a block each, past its 8192-element tile), and few long
// rows split into chunks (10^5, 3·10^5, a row starting one element in, dim 0 of [100000, 2]);
// views (transposed, dim 0 of contiguous, sliced with steps, a broadcast dim, 3-d); NaN, ±inf,
// ±0 and ties planted (PyTorch's cummax/cummin rules: NaN sticks, the later of tied elements
// wins); a requested dtype. Long products take factors near ±1 (draw_near_one): the suite's
// other values would underflow within 50 terms and compare zeros.
#include <cmath>
#include <optional>

#include "core/ops/elementwise.hpp"
#include "core/ops/scan.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;
using Draw = std::function<Tensor(Rng&, DType, const Shape&)>;
using ScanOp = Outputs (*)(const Tensor& x, std::int64_t dim, std::optional<DType> dtype);

enum class ScanKind { kSum, kProduct, kExtreme };

const View kTranspose01 = [](const Tensor& t) { return t.transpose(0, 1); };

Tensor plain(Rng& rng, DType dtype, const Shape& shape) {
  return draw_tensor(rng, dtype, shape);
}
Tensor with_specials(Rng& rng, DType dtype, const Shape& shape) {
  return draw_tensor(rng, dtype, shape, true);
}

// Rows of six from PyTorch's cummax_cummin_helper cases: NaN early and late, NaN first,
// ties, zeros of both signs, ±inf next to finite values.
Tensor planted_rows(DType dtype) {
  const double nan = NAN, inf = INFINITY;
  return tensor_of({1, nan, 3,    nan,  2,    5,   nan,  1,   2,   3,    4,   5, 2,    2,
                    1, 2,   2,    1,    -0.0, 0.0, -0.0, 0.0, 0.0, -0.0, inf, 1, -inf, 2,
                    3, 4,   -inf, -inf, 1,    inf, inf,  nan, 3,   1,    4,   1, 5,    9},
                   {7, 6}, dtype);
}

// Rows (at least four) of values in {0, 1, 2} (ties everywhere, products exact until a 0);
// floats also get NaN mid-row in row 0, twice in row 1, +inf in row 2, and -inf right before
// a NaN in row 3, at places that fall in different tiles and chunks of a long row.
Tensor long_ties(Rng& rng, DType dtype, const Shape& shape) {
  const std::int64_t len = shape[1];
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (double& x : v) x = double(rng.below(3));
  auto at = [&](std::int64_t row, std::int64_t k) -> double& {
    return v[static_cast<std::size_t>(row * len + k)];
  };
  if (is_floating(dtype)) {
    at(0, len / 2 + 1) = NAN;
    at(1, len / 5) = at(1, len * 7 / 10) = NAN;
    at(2, len * 9 / 100) = INFINITY;
    at(3, 8191 % len) = -INFINITY;
    at(3, 8192 % len) = NAN;
  }
  return tensor_of(v, shape, dtype);
}

// draw_ties' values with NaN, ±inf planted as in test rows of the Vulkan scans: row 0 a NaN
// mid-row, row 1 +inf and later -inf, row 2 a NaN every 7th element, row 3 -inf (floats).
Tensor ties_with_specials(Rng& rng, DType dtype, const Shape& shape) {
  const Tensor ties = draw_ties(rng, dtype, shape);
  if (!is_floating(dtype)) return ties;
  std::vector<double> v = ties.to(DType::kFloat64).to_host<double>();
  const std::int64_t len = shape[1];
  for (std::int64_t k = 0; k < len; ++k) {
    auto at = [&](std::int64_t row) -> double& { return v[std::size_t(row * len + k)]; };
    if (k == len / 2) at(0) = NAN;
    if (k == len / 3) at(1) = INFINITY;
    if (k == 2 * len / 3) at(1) = -INFINITY;
    if (k % 7 == 3) at(2) = NAN;
    if (k == len / 4) at(3) = -INFINITY;
  }
  return tensor_of(v, shape, dtype);
}

struct ScanCases {
  std::vector<FamilyCase>& cases;
  DType dtype;
  Rng& rng;
  Device dev;
  ScanOp op;
  ScanKind kind;

  // Values for rows of `len`: products of more than 65 terms take factors near ±1.
  Draw values_for(std::int64_t len) const {
    if (kind != ScanKind::kProduct || len <= 65) return plain;
    return [](Rng& r, DType d, const Shape& s) { return draw_near_one(r, d, s); };
  }

  // A scan along `dim` of `draw`'s values (viewed through `view`); k is the row length.
  // Rows of 1000 or more get the long rows' tolerance; large ones are drawn when they run.
  FamilyCase& add(std::string name, std::int64_t k, const Shape& shape, std::int64_t dim,
                  const Draw& draw, const View& view = {}, bool large = false) {
    FamilyCase c{std::move(name), k, bool(view), {}, {}, {}};
    if (k >= 1000) c.growth = Growth::kWideSigned;
    c.call = [op = op, dim](std::span<const Tensor> in, const Device&) {
      return op(in[0], dim, std::nullopt);
    };
    auto operands = [draw, shape, view, dtype = dtype, dev = dev](FamilyCase& self, Rng& r) {
      add_operand(self, draw(r, dtype, shape), dev, view);
    };
    if (large)
      defer_operands(c, rng, operands);
    else
      operands(c, rng);
    cases.push_back(std::move(c));
    return cases.back();
  }

  // Like add, with a third output: whether each value is positive or +0 (the sign of its
  // reciprocal), since the comparison holds -0 equal to +0.
  void add_signed(std::string name, std::int64_t k, const Tensor& host, std::int64_t dim,
                  const View& view = {}) {
    FamilyCase c{std::move(name), k, bool(view), {}, {}, {}};
    add_operand(c, host, dev, view);
    c.call = [op = op, dim](std::span<const Tensor> in, const Device&) {
      Outputs out = op(in[0], dim, std::nullopt);
      out.push_back(ops::gt(ops::reciprocal(out[0]), Scalar(0)));
      return out;
    };
    cases.push_back(std::move(c));
  }
};

std::vector<FamilyCase> scan_cases(DType dtype, Rng& rng, const Device& dev, ScanOp op,
                                   ScanKind kind) {
  std::vector<FamilyCase> cases;
  ScanCases a{cases, dtype, rng, dev, op, kind};
  const bool products = kind == ScanKind::kProduct;
  // Products take factors near ±1 here: random specials among random magnitudes let a
  // partial product underflow before it meets ±inf, and NaN or ±inf then depends on the
  // association a backend's scan uses (H200 vulkan:0, 2026-12-01); their specials are in
  // ties-with-specials, whose products stay exact.
  a.add("last-dim", 65, {7, 65}, -1, products ? a.values_for(66) : Draw(with_specials));
  a.add("dim0-of-transposed", 7, {65, 7}, 0, plain, kTranspose01);
  a.add("0-d", 1, {}, 0, plain);
  a.add("0-size", 0, {3, 0}, -1, plain);
  a.add("dim1-of-3d", 5, {4, 5, 6}, 1, plain);
  // Rows of 1 and 3 many times over, and rows around a 32-lane group's width.
  a.add("rows-of-1", 1, {7000, 1}, -1, plain);
  a.add("rows-of-3", 3, {7000, 3}, -1, plain);
  for (std::int64_t len : {31, 32, 33})
    a.add("rows-of-" + std::to_string(len), len, {5, len}, -1, plain);
  // Crosses reduce.tile_max (1024 on llvmpipe and the GPUs' files): the carry between tiles.
  // No NaN/±inf in long rows of random values: once a product has underflowed, inf × 0 (NaN)
  // or inf × tiny (inf) depends on the order of multiplication, which a tiled scan
  // legitimately changes (long_ties below plants them where no product underflows).
  a.add("rows-of-1024", 1024, {5, 1024}, -1, a.values_for(1024));
  a.add("rows-of-4096", 4096, {3, 4096}, -1, a.values_for(4096));
  a.add("long-dim0-of-transposed", 1500, {3, 1500}, 0, a.values_for(1500), kTranspose01);
  a.add("row-of-3000", 3000, {4, 3000}, -1, a.values_for(3000));
  // The scan dim strided: dim 0 of contiguous tensors (rows side by side in memory).
  a.add("dim0-of-65x3", 65, {65, 3}, 0, plain);
  a.add("dim0-of-300x2", 300, {300, 2}, 0, a.values_for(300));
  a.add("dim0-of-1000x65", 1000, {1000, 65}, 0, a.values_for(1000));
  a.add("dim1-of-4x70x3", 70, {4, 70, 3}, 1, a.values_for(70));
  // Every second row from row 1 and columns 3… of a [401, 70]: an offset and steps.
  const View sliced = [](const Tensor& t) { return t.slice(0, 1, 401, 2).slice(1, 3, 70); };
  a.add("dim0-of-sliced", 200, {401, 70}, 0, a.values_for(200), sliced);
  a.add("dim1-of-sliced", 67, {401, 70}, 1, a.values_for(67), sliced);
  a.add("dim0-of-broadcast", 40, {1, 33}, 0, plain, [](const Tensor& t) {
    return t.expand({40, 33});
  });
  a.add("dim2-of-transposed-3d", 4, {4, 70, 3}, 2, plain,
        [](const Tensor& t) { return t.transpose(0, 2); });
  a.add("dim1-of-sliced-3d", 34, {4, 70, 3}, 1, plain,
        [](const Tensor& t) { return t.slice(1, 3, 70, 2); });
  // Ties everywhere, and with NaN/±inf planted in rows 0-3 (products of at most 65 halves
  // and twos neither underflow nor overflow).
  a.add("ties", 65, {5, 65}, -1, draw_ties);
  a.add("ties-with-specials", 65, {5, 65}, -1, ties_with_specials);
  if (!products) a.add("ties-with-specials-4096", 4096, {5, 4096}, -1, ties_with_specials);
  // Integer extremes (int64 sums and every product wrap, exactly).
  if (!is_floating(dtype) && dtype != DType::kBool)
    a.add("integer-extremes", 65, {5, 65}, -1, [](Rng& r, DType d, const Shape& s) {
      const std::vector<std::byte> bytes = draw_values(r, d, ValueKind::kGeneral, numel(s));
      return Tensor::from_host(bytes.data(), s, d);
    });
  if (is_floating(dtype)) {
    a.add_signed("planted-rows", 6, planted_rows(dtype), 1);
    a.add_signed("planted-columns", 7, planted_rows(dtype), 0, kTranspose01);
  }
  // Rows of 10^5 with NaN/±inf at places in different tiles and chunks (full mode only).
  a.add("long-ties-with-specials", 100000, {4, 100000}, -1, long_ties, {}, true);
  // The kernel shapes of the GPU scans (full mode only; the H200's 132 SMs, up to 150):
  // 40000 rows side by side (a lane per row), 10000 rows (a warp each, over two 128-element
  // tiles), 300 rows (a block each, over two 8192-element tiles), and few long rows split
  // into chunks of whole tiles (a row of 300000: 37 chunks, more than a warp's lanes).
  a.add("row-of-100000", 100000, {2, 100000}, -1, a.values_for(100000), {}, true);
  a.add("dim0-of-4x40000", 4, {4, 40000}, 0, plain, {}, true);
  a.add("rows-of-129-x10000", 129, {10000, 129}, -1, a.values_for(129), {}, true);
  a.add("rows-of-8200-x300", 8200, {300, 8200}, -1, a.values_for(8200), {}, true);
  a.add("one-row-of-300000", 300000, {1, 300000}, -1, a.values_for(300000), {}, true);
  a.add(
      "row-from-element-1", 100000, {1, 100001}, -1, a.values_for(100000),
      [](const Tensor& t) { return t.slice(1, 1, 100001); }, true);
  a.add("dim0-of-100000x2", 100000, {100000, 2}, 0, a.values_for(100000), {}, true);
  return cases;
}

// cumsum and cumprod with a requested dtype (one every device has): the input is cast first.
void add_requested(std::vector<FamilyCase>& cases, DType dtype, Rng& rng, const Device& dev,
                   ScanOp op, std::int64_t len, DType requested) {
  FamilyCase c{
      std::string("requested-") + std::string(dtype_name(requested)), len, false, {}, {}, {}};
  add_operand(c, draw_tensor(rng, dtype, {5, len}), dev);
  c.call = [op, requested](std::span<const Tensor> in, const Device&) {
    return op(in[0], 1, requested);
  };
  cases.push_back(std::move(c));
}

Outputs cumsum(const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  return {ops::cumsum(x, dim, dtype)};
}
Outputs cumprod(const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  return {ops::cumprod(x, dim, dtype)};
}
Outputs cummax(const Tensor& x, std::int64_t dim, std::optional<DType>) {
  ops::ValuesAndIndices r = ops::cummax(x, dim);
  return {r.values, r.indices};
}
Outputs cummin(const Tensor& x, std::int64_t dim, std::optional<DType>) {
  ops::ValuesAndIndices r = ops::cummin(x, dim);
  return {r.values, r.indices};
}
Outputs logcumsumexp(const Tensor& x, std::int64_t dim, std::optional<DType>) {
  return {ops::logcumsumexp(x, dim)};
}

const FamilySpec kSpecs[] = {
    {"cumsum", "scan", false,
     [](DType d, Rng& r, const Device& dev) {
       std::vector<FamilyCase> cases = scan_cases(d, r, dev, cumsum, ScanKind::kSum);
       add_requested(cases, d, r, dev, cumsum, 300, DType::kFloat32);
       add_requested(cases, d, r, dev, cumsum, 300, DType::kInt32);
       return cases;
     }},
    {"cumprod", "scan", false,
     [](DType d, Rng& r, const Device& dev) {
       std::vector<FamilyCase> cases = scan_cases(d, r, dev, cumprod, ScanKind::kProduct);
       add_requested(cases, d, r, dev, cumprod, 9, DType::kFloat32);  // |5^9| fits float32
       return cases;
     }},
    {"cummax", "scan", true,
     [](DType d, Rng& r, const Device& dev) {
       return scan_cases(d, r, dev, cummax, ScanKind::kExtreme);
     }},
    {"cummin", "scan", true,
     [](DType d, Rng& r, const Device& dev) {
       return scan_cases(d, r, dev, cummin, ScanKind::kExtreme);
     }},
    // Integer and bool inputs are refused alike (n/a), as PyTorch's kernels have none. The
    // sums' cases; -inf, +inf and NaN planted (a row of -inf stays -inf, +inf and NaN stick).
    {"logcumsumexp", "scan", false,
     [](DType d, Rng& r, const Device& dev) {
       return scan_cases(d, r, dev, logcumsumexp, ScanKind::kSum);
     }},
};

}  // namespace

std::span<const FamilySpec> scan_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
