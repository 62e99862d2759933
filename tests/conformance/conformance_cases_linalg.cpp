// Matrix products (small shapes, k = 17 terms per output) and creation. Products: plain,
// transposed operands (read through their strides), broadcast batches (stride 0), a
// vector operand, an empty inner dim (zeros), NaN/±inf planted in rows of A. Creation has
// no inputs: the call makes the tensor on the device it is given.
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

std::vector<FamilyCase> matmul_cases(DType d, Rng& r, const Device& dev) {
  const Binary op = [](std::span<const Tensor> in) -> Outputs {
    return {ops::matmul(in[0], in[1])};
  };
  return {product_case("mm", 17, d, r, dev, {{{5, 17}, {}, true}, {{17, 9}}}, op),
          product_case("transposed", 17, d, r, dev, {{{17, 5}, kT}, {{9, 17}, kT}}, op),
          product_case("batch-broadcast", 17, d, r, dev, {{{2, 1, 5, 17}}, {{3, 17, 9}}}, op),
          product_case("vector-matrix", 17, d, r, dev, {{{17}}, {{17, 9}}}, op),
          product_case("empty-k", 0, d, r, dev, {{{5, 0}}, {{0, 9}}}, op)};
}

std::vector<FamilyCase> bmm_cases(DType d, Rng& r, const Device& dev) {
  const Binary op = [](std::span<const Tensor> in) -> Outputs { return {ops::bmm(in[0], in[1])}; };
  const View expand = [](const Tensor& t) { return t.expand({3, 17, 9}); };
  return {product_case("contiguous", 17, d, r, dev, {{{3, 5, 17}}, {{3, 17, 9}}}, op),
          product_case("transposed", 17, d, r, dev, {{{3, 17, 5}, kT}, {{3, 9, 17}, kT}}, op),
          product_case("broadcast-batch", 17, d, r, dev, {{{3, 5, 17}}, {{1, 17, 9}, expand}}, op),
          product_case("0-size", 17, d, r, dev, {{{0, 5, 17}}, {{0, 17, 9}}}, op)};
}

std::vector<FamilyCase> addmm_cases(DType d, Rng& r, const Device& dev) {
  const Binary op = [](std::span<const Tensor> in) -> Outputs {
    return {ops::addmm(in[0], in[1], in[2], 2, 3)};
  };
  // beta = 0: the addend is not read, so its NaN and ±inf must not reach the result.
  const Binary beta0 = [](std::span<const Tensor> in) -> Outputs {
    return {ops::addmm(in[0], in[1], in[2], 0, 1)};
  };
  return {
      product_case("broadcast-addend", 17, d, r, dev, {{{9}}, {{5, 17}, {}, true}, {{17, 9}}}, op),
      product_case("transposed", 17, d, r, dev, {{{5, 9}}, {{17, 5}, kT}, {{9, 17}, kT}}, op),
      product_case("beta0-nan-addend", 17, d, r, dev, {{{5, 9}, {}, true}, {{5, 17}}, {{17, 9}}},
                   beta0)};
}

std::vector<FamilyCase> linear_cases(DType d, Rng& r, const Device& dev) {
  const Binary op = [](std::span<const Tensor> in) -> Outputs {
    return {ops::linear(in[0], in[1], in[2])};
  };
  const Binary no_bias = [](std::span<const Tensor> in) -> Outputs {
    return {ops::linear(in[0], in[1])};
  };
  return {product_case("bias", 17, d, r, dev, {{{2, 5, 17}}, {{9, 17}}, {{9}}}, op),
          product_case("transposed-weight", 17, d, r, dev, {{{5, 17}}, {{17, 9}, kT}, {{9}}}, op),
          product_case("no-bias", 17, d, r, dev, {{{4, 17}, {}, true}, {{9, 17}}}, no_bias)};
}

FamilyCase creation_case(std::string name, FamilyCall call) {
  return FamilyCase{std::move(name), 1, false, {}, {}, std::move(call)};
}

std::vector<FamilyCase> arange_cases(DType d, Rng&, const Device&) {
  return {creation_case("integer-bounds",
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
          creation_case("empty", [d](std::span<const Tensor>, const Device& dev) -> Outputs {
            return {ops::arange(5, 5, 1, d, dev)};
          })};
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
              {"empty", 0, 1, 0}};
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
              {"0-size", {0, 3, 3}, {}, 0}};
  for (const auto& row : rows) {
    FamilyCase c{row.name, 1, bool(row.view), {}, {}, op(row.diagonal)};
    add_operand(c, draw_tensor(r, d, row.base, true), dev, row.view);
    out.push_back(std::move(c));
  }
  return out;
}

const FamilySpec kSpecs[] = {
    {"matmul", "linalg", false, matmul_cases},
    {"bmm", "linalg", false, bmm_cases},
    {"addmm", "linalg", false, addmm_cases},
    {"linear", "linalg", false, linear_cases},
    {"arange", "creation", false, arange_cases},
    {"linspace", "creation", false, linspace_cases},
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
