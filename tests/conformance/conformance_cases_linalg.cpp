// Matrix products and creation. Products (k terms per output): plain, transposed operands
// (read through their strides), stepped slices, broadcast batches (stride 0) and a batch
// against a shared matrix on either side, 1-d operands on either side, sizes 1, 17, 33, 65,
// 129 and 1000 in m, n and k, an empty inner dim (zeros), NaN/±inf planted in rows of A,
// alpha/beta variations (integral first, so integer dtypes run, negative too; fractional
// ones are InvalidArgument for integers on both sides), a column-major addend, beta 0 with a
// NaN addend, and a 129x257x65 product that crosses every tile edge (full mode only; a
// 37x67x21 one in --quick). Creation has no inputs (the call makes the
// tensor on the device it is given) except fill, triangles and contiguous copies.
#include <cmath>
#include <cstdint>

#include "core/ops/creation.hpp"
#include "core/ops/linalg.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;
using Binary = Outputs (*)(std::span<const Tensor> in);

struct Operand {
  Shape base;
  View view;
  bool specials = false;
};

FamilyCase product_case(std::string name, std::int64_t k, DType d, Rng& rng, const Device& dev,
                        std::initializer_list<Operand> operands, Binary op) {
  FamilyCase c{std::move(name), k, false, {}, {}, {}};
  for (const Operand& o : operands) {
    c.view = c.view || bool(o.view);
    add_operand(c, draw_tensor(rng, d, o.base, o.specials), dev, o.view);
  }
  c.call = [op](std::span<const Tensor> in, const Device&) { return op(in); };
  return c;
}

const View kT = [](const Tensor& t) { return t.transpose(-2, -1); };

// The tile-crossing product: 129x257x65 is one past 128 and 64 and 256 = 8 × 32, so every
// tile shape of plan_matmul has a partial tile in m, n and k. Full mode only; the quick
// stand-in (37x67x21) crosses the 16- and 32-wide tiles.
FamilyCase tile_edges(std::string name, DType d, Rng& r, const Device& dev, bool large, Binary op) {
  const std::int64_t m = large ? 129 : 37, k = large ? 257 : 67, n = large ? 65 : 21;
  FamilyCase c = product_case(std::move(name), k, d, r, dev, {{{m, k}}, {{k, n}}}, op);
  c.growth = Growth::kWideSigned;
  c.large = large;
  return c;
}

std::vector<FamilyCase> matmul_cases(DType d, Rng& r, const Device& dev) {
  const Binary op = [](std::span<const Tensor> in) -> Outputs {
    return {ops::matmul(in[0], in[1])};
  };
  std::vector<FamilyCase> v;
  v.push_back(product_case("mm", 17, d, r, dev, {{{5, 17}, {}, true}, {{17, 9}}}, op));
  v.push_back(product_case("transposed", 17, d, r, dev, {{{17, 5}, kT}, {{9, 17}, kT}}, op));
  v.push_back(product_case("batch-broadcast", 17, d, r, dev, {{{2, 1, 5, 17}}, {{3, 17, 9}}}, op));
  v.push_back(product_case("batch-broadcast-7", 7, d, r, dev, {{{2, 1, 5, 7}}, {{3, 7, 4}}}, op));
  v.push_back(product_case("vector-matrix", 17, d, r, dev, {{{17}}, {{17, 9}}}, op));
  v.push_back(product_case("matrix-vector", 17, d, r, dev, {{{5, 17}}, {{17}}}, op));
  v.push_back(product_case("vector-vector", 17, d, r, dev, {{{17}}, {{17}}}, op));
  v.push_back(product_case("vector-batched", 17, d, r, dev, {{{17}}, {{2, 17, 9}}}, op));
  v.push_back(product_case("batched-vector", 17, d, r, dev, {{{2, 3, 5, 17}}, {{17}}}, op));
  v.push_back(product_case("empty-k", 0, d, r, dev, {{{5, 0}}, {{0, 9}}}, op));
  v.push_back(tile_edges("tile-edges-small", d, r, dev, false, op));
  v.push_back(tile_edges("tile-edges-129x257x65", d, r, dev, true, op));
  // Odd sizes around the tiles (m x k x n), the inner dim 1 (an outer product) and 1000.
  const struct {
    std::int64_t m, k, n;
  } sizes[] = {{1, 1, 1},    {17, 17, 17},   {65, 33, 129}, {129, 65, 17},
               {65, 1, 129}, {1000, 17, 65}, {65, 1000, 17}};
  for (const auto& s : sizes) {
    v.push_back(
        product_case(std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n),
                     s.k, d, r, dev, {{{s.m, s.k}}, {{s.k, s.n}}}, op));
    if (s.k >= 1000) v.back().growth = Growth::kWideSigned;
  }
  // A batch against one matrix: B shared (one taller product), then A shared.
  v.push_back(product_case("shared-b", 17, d, r, dev, {{{5, 65, 17}}, {{17, 129}}}, op));
  v.push_back(product_case("shared-a", 129, d, r, dev, {{{17, 129}}, {{6, 129, 17}}}, op));
  v.push_back(
      product_case("batch-broadcast-3x1-4", 33, d, r, dev, {{{3, 1, 17, 33}}, {{4, 33, 9}}}, op));
  v.push_back(
      product_case("vector-transposed-matrix", 1000, d, r, dev, {{{1000}}, {{17, 1000}, kT}}, op));
  v.back().growth = Growth::kWideSigned;
  return v;
}

std::vector<FamilyCase> mm_cases(DType d, Rng& r, const Device& dev) {
  const Binary op = [](std::span<const Tensor> in) -> Outputs { return {ops::mm(in[0], in[1])}; };
  std::vector<FamilyCase> v;
  v.push_back(product_case("contiguous", 17, d, r, dev, {{{5, 17}, {}, true}, {{17, 9}}}, op));
  v.push_back(product_case("transposed", 17, d, r, dev, {{{17, 5}, kT}, {{9, 17}, kT}}, op));
  v.push_back(product_case("empty-k", 0, d, r, dev, {{{5, 0}}, {{0, 9}}}, op));
  v.push_back(tile_edges("tile-edges-small", d, r, dev, false, op));
  v.push_back(tile_edges("tile-edges-129x257x65", d, r, dev, true, op));
  // Every second row and column of a [66,130]: no unit stride in either dim (the vendor BLAS
  // takes a contiguous copy).
  v.push_back(product_case(
      "stepped", 65, d, r, dev,
      {{{66, 130}, [](const Tensor& t) { return t.slice(0, 0, 66, 2).slice(1, 0, 130, 2); }},
       {{65, 17}}},
      op));
  return v;
}

const View kStep2 = [](const Tensor& t) { return t.slice(0, 1, t.size(0), 2); };

// Sums of 1000 signed terms: the long rows' tolerance (float32 accumulation by contract).
FamilyCase long_k(FamilyCase c) {
  c.growth = Growth::kWideSigned;
  return c;
}

std::vector<FamilyCase> mv_cases(DType d, Rng& r, const Device& dev) {
  const Binary op = [](std::span<const Tensor> in) -> Outputs { return {ops::mv(in[0], in[1])}; };
  return {product_case("contiguous", 17, d, r, dev, {{{5, 17}, {}, true}, {{17}}}, op),
          product_case("transposed-matrix", 17, d, r, dev, {{{17, 5}, kT}, {{17}}}, op),
          // Elements 1, 3, …, 33 of 35: an offset and a stride of 2.
          product_case("strided-vector", 17, d, r, dev, {{{5, 17}}, {{35}, kStep2}}, op),
          product_case("0-rows", 17, d, r, dev, {{{0, 17}}, {{17}}}, op),
          long_k(product_case("k-1000", 1000, d, r, dev, {{{17, 1000}}, {{1000}}}, op))};
}

std::vector<FamilyCase> dot_cases(DType d, Rng& r, const Device& dev) {
  const Binary op = [](std::span<const Tensor> in) -> Outputs { return {ops::dot(in[0], in[1])}; };
  return {product_case("contiguous", 257, d, r, dev, {{{257}}, {{257}}}, op),
          product_case("strided", 257, d, r, dev, {{{515}, kStep2}, {{257}}}, op),
          product_case("empty", 0, d, r, dev, {{{0}}, {{0}}}, op),
          long_k(product_case("k-1000", 1000, d, r, dev, {{{1000}}, {{1000}}}, op))};
}

std::vector<FamilyCase> bmm_cases(DType d, Rng& r, const Device& dev) {
  const Binary op = [](std::span<const Tensor> in) -> Outputs { return {ops::bmm(in[0], in[1])}; };
  const View expand = [](const Tensor& t) { return t.expand({3, 17, 9}); };
  return {product_case("contiguous", 17, d, r, dev, {{{3, 5, 17}}, {{3, 17, 9}}}, op),
          product_case("transposed", 17, d, r, dev, {{{3, 17, 5}, kT}, {{3, 9, 17}, kT}}, op),
          product_case("broadcast-batch", 17, d, r, dev, {{{3, 5, 17}}, {{1, 17, 9}, expand}}, op),
          product_case("0-size", 17, d, r, dev, {{{0, 5, 17}}, {{0, 17, 9}}}, op)};
}

// The add* ops' alpha/beta sets: integral, fractional (InvalidArgument for integer tensors
// on both sides), and beta 0 with NaN/±inf in the addend, which must not be read.
#define NBX_ADD_OPS(fn)                                                 \
  const Binary op = [](std::span<const Tensor> in) -> Outputs {         \
    return {ops::fn(in[0], in[1], in[2], 2, 3)};                        \
  };                                                                    \
  const Binary fractional = [](std::span<const Tensor> in) -> Outputs { \
    return {ops::fn(in[0], in[1], in[2], -0.5, 1.5)};                   \
  };                                                                    \
  const Binary beta0 = [](std::span<const Tensor> in) -> Outputs {      \
    return {ops::fn(in[0], in[1], in[2], 0, 1)};                        \
  };                                                                    \
  const Binary defaults = [](std::span<const Tensor> in) -> Outputs {   \
    return {ops::fn(in[0], in[1], in[2])};                              \
  };                                                                    \
  const Binary negative = [](std::span<const Tensor> in) -> Outputs {   \
    return {ops::fn(in[0], in[1], in[2], -2, 3)};                       \
  }

std::vector<FamilyCase> addmm_cases(DType d, Rng& r, const Device& dev) {
  NBX_ADD_OPS(addmm);
  return {
      product_case("broadcast-addend", 17, d, r, dev, {{{9}}, {{5, 17}, {}, true}, {{17, 9}}}, op),
      product_case("transposed", 17, d, r, dev, {{{5, 9}}, {{17, 5}, kT}, {{9, 17}, kT}}, op),
      product_case("beta0-nan-addend", 17, d, r, dev, {{{5, 9}, {}, true}, {{5, 17}}, {{17, 9}}},
                   beta0),
      product_case("defaults", 17, d, r, dev, {{{5, 1}}, {{5, 17}}, {{17, 9}}}, defaults),
      product_case("fractional", 17, d, r, dev, {{{5, 9}}, {{5, 17}}, {{17, 9}}}, fractional),
      product_case("bias-65x129x17", 129, d, r, dev, {{{17}}, {{65, 129}}, {{129, 17}}}, negative),
      product_case("full-addend-65x129x17", 129, d, r, dev, {{{65, 17}}, {{65, 129}}, {{129, 17}}},
                   negative),
      // The addend stored column-major (a transposed [17,65]).
      product_case("column-major-addend", 129, d, r, dev,
                   {{{17, 65}, kT}, {{65, 129}}, {{129, 17}}}, defaults),
      // k = 0: the output is beta × the addend.
      product_case("empty-k", 0, d, r, dev, {{{4, 3}}, {{4, 0}}, {{0, 3}}}, negative)};
}

std::vector<FamilyCase> baddbmm_cases(DType d, Rng& r, const Device& dev) {
  NBX_ADD_OPS(baddbmm);
  return {
      product_case("broadcast-addend", 17, d, r, dev,
                   {{{5, 9}}, {{3, 5, 17}, {}, true}, {{3, 17, 9}}}, op),
      product_case("transposed", 17, d, r, dev, {{{3, 5, 9}}, {{3, 17, 5}, kT}, {{3, 9, 17}, kT}},
                   op),
      product_case("beta0-nan-addend", 17, d, r, dev,
                   {{{3, 5, 9}, {}, true}, {{3, 5, 17}}, {{3, 17, 9}}}, beta0),
      product_case("defaults", 17, d, r, dev, {{{1, 1, 9}}, {{2, 5, 17}}, {{2, 17, 9}}}, defaults),
      product_case("fractional", 17, d, r, dev, {{{3, 5, 9}}, {{3, 5, 17}}, {{3, 17, 9}}},
                   fractional),
      product_case("0-batch", 17, d, r, dev, {{{0, 5, 9}}, {{0, 5, 17}}, {{0, 17, 9}}}, op),
      product_case("row-addend-3x17x33x65", 33, d, r, dev,
                   {{{1, 65}}, {{3, 17, 33}}, {{3, 33, 65}}}, negative)};
}

std::vector<FamilyCase> addmv_cases(DType d, Rng& r, const Device& dev) {
  NBX_ADD_OPS(addmv);
  return {
      product_case("contiguous", 17, d, r, dev, {{{5}}, {{5, 17}, {}, true}, {{17}}}, op),
      product_case("transposed-strided", 17, d, r, dev, {{{5}}, {{17, 5}, kT}, {{35}, kStep2}}, op),
      // Rows 1-3 of a [4,7] with NaN, +inf and -inf planted, as one vector of 21.
      product_case("beta0-nan-addend", 17, d, r, dev,
                   {{{4, 7}, [](const Tensor& t) { return t.slice(0, 1, 4).flatten(); }, true},
                    {{21, 17}},
                    {{17}}},
                   beta0),
      product_case("broadcast-addend", 17, d, r, dev, {{{1}}, {{5, 17}}, {{17}}}, defaults),
      product_case("fractional", 17, d, r, dev, {{{5}}, {{5, 17}}, {{17}}}, fractional),
      product_case("65x129", 129, d, r, dev, {{{65}}, {{65, 129}}, {{129}}}, negative)};
}

std::vector<FamilyCase> addr_cases(DType d, Rng& r, const Device& dev) {
  NBX_ADD_OPS(addr);
  // One product and the addend per element.
  return {
      product_case("contiguous", 2, d, r, dev, {{{5, 9}}, {{5}}, {{9}}}, op),
      product_case("broadcast-addend", 2, d, r, dev, {{{9}}, {{5}}, {{9}}}, defaults),
      product_case("strided-vectors", 2, d, r, dev, {{{5, 9}}, {{11}, kStep2}, {{19}, kStep2}}, op),
      product_case("beta0-nan-addend", 2, d, r, dev, {{{7, 9}, {}, true}, {{7}}, {{9}}}, beta0),
      product_case("fractional", 2, d, r, dev, {{{5, 9}}, {{5}}, {{9}}}, fractional),
      product_case("65x17", 2, d, r, dev, {{{65, 17}}, {{65}}, {{17}}}, negative)};
}
#undef NBX_ADD_OPS

std::vector<FamilyCase> linear_cases(DType d, Rng& r, const Device& dev) {
  const Binary op = [](std::span<const Tensor> in) -> Outputs {
    return {ops::linear(in[0], in[1], in[2])};
  };
  const Binary no_bias = [](std::span<const Tensor> in) -> Outputs {
    return {ops::linear(in[0], in[1])};
  };
  return {product_case("bias", 17, d, r, dev, {{{2, 5, 17}}, {{9, 17}}, {{9}}}, op),
          product_case("transposed-weight", 17, d, r, dev, {{{5, 17}}, {{17, 9}, kT}, {{9}}}, op),
          product_case("no-bias", 17, d, r, dev, {{{4, 17}, {}, true}, {{9, 17}}}, no_bias),
          product_case("129-features", 129, d, r, dev, {{{2, 5, 129}}, {{17, 129}}, {{17}}}, op)};
}

FamilyCase creation_case(std::string name, FamilyCall call) {
  return FamilyCase{std::move(name), 1, false, {}, {}, std::move(call)};
}

std::vector<FamilyCase> arange_cases(DType d, Rng&, const Device&) {
  std::vector<FamilyCase> out = {
      creation_case("integer-bounds",
                    [d](std::span<const Tensor>, const Device& dev) -> Outputs {
                      return {ops::arange(2, 67, 3, d, dev)};
                    }),
      creation_case("float-bounds",
                    [d](std::span<const Tensor>, const Device& dev) -> Outputs {
                      return {ops::arange(-3.5, 7.25, 0.25, d, dev)};
                    }),
      creation_case("descending",
                    [d](std::span<const Tensor>, const Device& dev) -> Outputs {
                      return {ops::arange(40, 1, -3, d, dev)};
                    }),
      creation_case("empty",
                    [d](std::span<const Tensor>, const Device& dev) -> Outputs {
                      return {ops::arange(5, 5, 1, d, dev)};
                    }),
      // Integer dtypes truncate the step to 0: InvalidArgument on both sides.
      creation_case("negative-fractional",
                    [d](std::span<const Tensor>, const Device& dev) -> Outputs {
                      return {ops::arange(2.5, -3.75, -0.5, d, dev)};
                    }),
      creation_case("fractional-step-0.1",
                    [d](std::span<const Tensor>, const Device& dev) -> Outputs {
                      return {ops::arange(-1.0, 2.0, 0.1, d, dev)};
                    })};
  // Longer ranges, steps that are no power of two, and a large offset (float16: inf).
  const struct {
    const char* name;
    Scalar start, end, step;
  } rows[] = {{"0-to-1000", Scalar(0), Scalar(1000), Scalar(1)},
              {"minus7-to-300-by-3", Scalar(-7), Scalar(300), Scalar(3)},
              {"50-to-minus20-by-minus7", Scalar(50), Scalar(-20), Scalar(-7)},
              {"0-to-10-by-0.1", Scalar(0.0), Scalar(10.0), Scalar(0.1)},
              {"step-0.37", Scalar(-1.5), Scalar(2.25), Scalar(0.37)},
              {"from-1e6-by-1.5", Scalar(1e6), Scalar(1e6 + 3000.5), Scalar(1.5)},
              {"down-by-0.3", Scalar(0.5), Scalar(-100.0), Scalar(-0.3)}};
  for (const auto& row : rows)
    out.push_back(
        creation_case(row.name, [d, row](std::span<const Tensor>, const Device& dev) -> Outputs {
          return {ops::arange(row.start, row.end, row.step, d, dev)};
        }));
  // int64 values past 2^53, where a float64 index computation would round.
  if (d == DType::kInt64)
    out.push_back(creation_case("past-2^53", [](std::span<const Tensor>, const Device& dev) {
      const std::int64_t big = (std::int64_t(1) << 60) + 12345;
      return Outputs{ops::arange(Scalar(big), Scalar(big + 1000), Scalar(7), DType::kInt64, dev)};
    }));
  return out;
}

std::vector<FamilyCase> linspace_cases(DType d, Rng&, const Device&) {
  std::vector<FamilyCase> out;
  const struct {
    const char* name;
    double start, end;
    std::int64_t steps;
  } rows[] = {{"33-steps", -2, 5, 33},
              {"257-steps", 1.5, 96.25, 257},
              {"one", 3, 9, 1},
              {"two", 3, 9, 2},
              {"descending", 5, -2.5, 9},
              {"two-descending", 1, -1, 2},
              {"empty", 0, 1, 0},
              {"11-steps", 0, 1, 11},
              {"1000-steps", -3.5, 7.25, 1000},
              {"65-symmetric", 10, -10, 65},
              {"constant", 2, 2, 5},
              {"100001-steps", -1e4, 1e4, 100001},
              {"two-fractional", 0.1, 0.7, 2},
              {"356-integral", -100, 255, 356},
              {"4097-descending", 1, 0, 4097}};
  for (const auto& row : rows)
    out.push_back(
        creation_case(row.name, [d, row](std::span<const Tensor>, const Device& dev) -> Outputs {
          return {ops::linspace(row.start, row.end, row.steps, d, dev)};
        }));
  return out;
}

std::vector<FamilyCase> triangle_cases(DType d, Rng& r, const Device& dev, bool upper) {
  auto op = [upper](std::int64_t diagonal) {
    return [upper, diagonal](std::span<const Tensor> in, const Device&) -> Outputs {
      return {upper ? ops::triu(in[0], diagonal) : ops::tril(in[0], diagonal)};
    };
  };
  std::vector<FamilyCase> out;
  const struct {
    const char* name;
    Shape base;
    View view;
    std::int64_t diagonal;
  } rows[] = {{"matrix", {7, 9}, {}, 0},
              {"transposed", {9, 7}, kT, -2},
              {"batched", {2, 5, 5}, {}, 1},
              {"0-size", {0, 3, 3}, {}, 0},
              {"batched-wide-plus3", {2, 4, 7}, {}, 3},
              {"batched-tall-minus2", {3, 7, 4}, {}, -2},
              {"batched-transposed-minus1", {2, 3, 6, 5}, kT, -1},
              {"past-the-corner-plus9", {2, 4, 6}, {}, 9},
              {"past-the-corner-minus9", {2, 4, 6}, {}, -9},
              {"4-d-plus8", {2, 3, 7, 9}, {}, 8},
              {"4-d-minus100", {2, 3, 7, 9}, {}, -100},
              {"4-d-plus2^40", {2, 3, 7, 9}, {}, std::int64_t(1) << 40},
              {"4-d-sliced-steps-plus1",
               {2, 3, 7, 9},
               [](const Tensor& t) { return t.slice(3, 1, 9, 2); },
               1}};
  for (const auto& row : rows) {
    FamilyCase c{row.name, 1, bool(row.view), {}, {}, op(row.diagonal)};
    add_operand(c, draw_tensor(r, d, row.base, true), dev, row.view);
    out.push_back(std::move(c));
  }
  return out;
}

// Rows 1, 3, 5 and columns 2, 5, …, 35 of a [6,40]: an offset and steps in both dims.
const View kSliced = [](const Tensor& t) { return t.slice(0, 1, 6, 2).slice(1, 2, 38, 3); };
View expand_to(Shape shape) {
  return [shape](const Tensor& t) { return t.expand(shape); };
}

// full: no inputs; integral, fractional, bool, NaN and large values, converted to the
// dtype as the host converts them.
std::vector<FamilyCase> full_cases(DType d, Rng&, const Device&) {
  const struct {
    const char* name;
    Shape shape;
    Scalar value;
  } rows[] = {{"integral", {5, 7, 3}, Scalar(3)},
              {"fractional", {257}, Scalar(-2.75)},
              {"bool-value", {4, 6}, Scalar(true)},
              {"0-d", {}, Scalar(7)},
              {"0-size", {0, 3}, Scalar(1)},
              {"nan", {3, 5}, Scalar(double(NAN))},
              {"large-integer", {9}, Scalar(std::int64_t(100000))}};
  std::vector<FamilyCase> out;
  for (const auto& row : rows)
    out.push_back(
        creation_case(row.name, [d, row](std::span<const Tensor>, const Device& dev) -> Outputs {
          return {ops::full(row.shape, row.value, d, dev)};
        }));
  return out;
}

// fill (nbx's form of fill_, tensors being immutable): shaped, typed and placed like a
// strided view; the view's values must not leak into the result.
std::vector<FamilyCase> fill_cases(DType d, Rng& r, const Device& dev) {
  const struct {
    const char* name;
    Shape base;
    View view;
    Scalar value;
  } rows[] = {{"contiguous", {6, 7}, {}, Scalar(2)},
              {"transposed", {7, 6}, kT, Scalar(-1.5)},
              {"sliced", {6, 40}, kSliced, Scalar(5)},
              {"expanded", {1, 7}, expand_to({6, 7}), Scalar(true)},
              {"0-size", {3, 0}, {}, Scalar(4)}};
  std::vector<FamilyCase> out;
  for (const auto& row : rows) {
    const Scalar value = row.value;
    FamilyCase c{row.name,
                 1,
                 bool(row.view),
                 {},
                 {},
                 [value](std::span<const Tensor> in, const Device&) -> Outputs {
                   return {ops::fill(in[0], value)};
                 }};
    add_operand(c, draw_tensor(r, d, row.base, true), dev, row.view);
    out.push_back(std::move(c));
  }
  return out;
}

// zeros_like / ones_like / full_like (issue 11): like's shape (its strides where it is dense),
// the dtype and the device given or like's; the view's values must not leak into the result.
// eye: square, wide, tall, empty and 1x1 identities. empty_strided: its sizes, strides and
// storage bytes, the storage reaching the largest offset (overlapping strides included).
std::vector<FamilyCase> like_cases(DType d, Rng& r, const Device& dev, int which) {
  const struct {
    const char* name;
    Shape base;
    View view;
  } rows[] = {{"contiguous", {6, 7}, {}},
              {"transposed", {7, 6}, kT},
              {"sliced", {6, 40}, kSliced},
              {"expanded", {1, 7}, expand_to({6, 7})},
              {"0-size", {3, 0}, {}}};
  std::vector<FamilyCase> out;
  for (const auto& row : rows) {
    FamilyCase c{row.name,
                 1,
                 bool(row.view),
                 {},
                 {},
                 [which](std::span<const Tensor> in, const Device&) -> Outputs {
                   if (which == 0) return {ops::zeros_like(in[0])};
                   if (which == 1) return {ops::ones_like(in[0])};
                   return {ops::full_like(in[0], Scalar(3))};
                 }};
    add_operand(c, draw_tensor(r, d, row.base, true), dev, row.view);
    out.push_back(std::move(c));
  }
  // Into this dtype from a float32 tensor (a dtype override), and a fractional value.
  FamilyCase into{"dtype-override",
                  1,
                  false,
                  {},
                  {},
                  [which, d](std::span<const Tensor> in, const Device&) -> Outputs {
                    if (which == 0) return {ops::zeros_like(in[0], d)};
                    if (which == 1) return {ops::ones_like(in[0], d)};
                    return {ops::full_like(in[0], Scalar(2.5), d)};
                  }};
  add_operand(into, draw_tensor(r, DType::kFloat32, {5, 9}), dev);
  out.push_back(std::move(into));
  return out;
}

std::vector<FamilyCase> eye_cases(DType d, Rng&, const Device&) {
  const struct {
    const char* name;
    std::int64_t n, m;
  } rows[] = {{"square-65", 65, 65}, {"wide-3x70", 3, 70}, {"tall-70x3", 70, 3},
              {"1x1", 1, 1},         {"0x4", 0, 4},        {"4x0", 4, 0}};
  std::vector<FamilyCase> out;
  for (const auto& row : rows)
    out.push_back(
        creation_case(row.name, [d, row](std::span<const Tensor>, const Device& dev) -> Outputs {
          return {ops::eye(row.n, row.m, d, dev)};
        }));
  out.push_back(creation_case("n-only-9", [d](std::span<const Tensor>, const Device& dev) {
    return Outputs{ops::eye(9, d, dev)};
  }));
  return out;
}

std::vector<FamilyCase> empty_strided_cases(DType d, Rng&, const Device&) {
  const struct {
    const char* name;
    Shape sizes;
    Strides strides;
  } rows[] = {{"column-major", {2, 3}, {1, 2}}, {"overlapping", {4, 5}, {1, 1}},
              {"broadcast", {2, 3}, {0, 0}},    {"padded-rows", {3, 4}, {10, 1}},
              {"0-size", {2, 0}, {5, 1}},       {"0-d", {}, {}}};
  std::vector<FamilyCase> out;
  for (const auto& row : rows)
    out.push_back(
        creation_case(row.name, [d, row](std::span<const Tensor>, const Device& dev) -> Outputs {
          const Tensor t = ops::empty_strided(row.sizes, row.strides, d, dev);
          std::vector<std::int64_t> facts(t.shape().begin(), t.shape().end());
          facts.insert(facts.end(), t.strides().begin(), t.strides().end());
          facts.push_back(static_cast<std::int64_t>(t.storage()->bytes()));
          facts.push_back(t.device() == dev ? 1 : 0);
          return {Tensor::from_host(facts, {static_cast<std::int64_t>(facts.size())})};
        }));
  return out;
}

// Contiguous copies of strided views on the device (core/ops/copy.cpp): the reference
// side is already contiguous (the same values), the device side copies through strides.
std::vector<FamilyCase> contiguous_cases(DType d, Rng& r, const Device& dev) {
  const struct {
    const char* name;
    Shape base;
    View view;
  } rows[] = {{"transposed", {9, 13}, kT},
              {"sliced-offset-steps", {6, 40}, kSliced},
              {"permuted-3d",
               {4, 5, 6},
               [](const Tensor& t) {
                 return t.permute({2, 0, 1});
               }},
              {"expanded", {1, 7, 1}, expand_to({3, 7, 5})},
              {"0-size-transposed", {0, 5}, kT},
              {"long-transposed", {3, 1000}, kT}};
  std::vector<FamilyCase> out;
  for (const auto& row : rows) {
    // The first case is no --quick "view": every dtype copies at least one strided view.
    FamilyCase c{
        row.name,
        1,
        out.size() > 0,
        {},
        {},
        [](std::span<const Tensor> in, const Device&) -> Outputs { return {in[0].contiguous()}; }};
    add_operand(c, draw_tensor(r, d, row.base, true), dev, row.view);
    out.push_back(std::move(c));
  }
  return out;
}

const FamilySpec kSpecs[] = {
    {"matmul", "linalg", false, matmul_cases},
    {"bmm", "linalg", false, bmm_cases},
    {"mm", "linalg", false, mm_cases},
    {"mv", "linalg", false, mv_cases},
    {"dot", "linalg", false, dot_cases},
    {"addmm", "linalg", false, addmm_cases},
    {"baddbmm", "linalg", false, baddbmm_cases},
    {"addmv", "linalg", false, addmv_cases},
    {"addr", "linalg", false, addr_cases},
    {"linear", "linalg", false, linear_cases},
    {"full", "creation", true, full_cases},
    {"fill", "creation", true, fill_cases},
    {"contiguous", "creation", true, contiguous_cases},
    {"zeros_like", "creation", true,
     [](DType d, Rng& r, const Device& dev) { return like_cases(d, r, dev, 0); }},
    {"ones_like", "creation", true,
     [](DType d, Rng& r, const Device& dev) { return like_cases(d, r, dev, 1); }},
    {"full_like", "creation", true,
     [](DType d, Rng& r, const Device& dev) { return like_cases(d, r, dev, 2); }},
    {"eye", "creation", true, eye_cases},
    {"empty_strided", "creation", true, empty_strided_cases},
    // Each element from its index in float64 (int64), rounded once, on every backend
    // (kernels/gpu/fill_kernels.cu, the Vulkan fill shader): bit for bit.
    {"arange", "creation", true, arange_cases},
    {"linspace", "creation", true, linspace_cases},
    {"triu", "creation", true,
     [](DType d, Rng& r, const Device& dev) { return triangle_cases(d, r, dev, true); }},
    {"tril", "creation", true,
     [](DType d, Rng& r, const Device& dev) { return triangle_cases(d, r, dev, false); }},
};

}  // namespace

std::span<const FamilySpec> linalg_creation_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
