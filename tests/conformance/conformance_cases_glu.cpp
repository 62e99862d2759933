// The gated products (core/ops/glu.hpp: glu, silu_and_mul, gelu_and_mul and its tanh form):
// one fused input whose halves the kernel reads as two views, so their cases are shapes of
// that input rather than the elementwise table's operand layouts. Odd half sizes, rows of
// one pair, a 1-d input, halves wide enough for the GPUs' vectorised rows path, transposed
// and sliced inputs (the halves then have steps and an offset), glu along dim 0, the middle
// dim of a 3-d input and a negative dim, zero-size inputs (a zero-size split dim, and a
// zero-size other dim), and an odd split size, which host and device must both refuse.
// Values: bounded ones with NaN and ±inf planted, and wide magnitudes (2^-30 … 2^31) that
// saturate the sigmoid and the erf and reach exp's overflow.
#include "core/ops/glu.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;
using GatedOp = Tensor (*)(const Tensor& x, std::int64_t dim);

Tensor wide_values(Rng& rng, DType d, const Shape& shape) {
  if (numel(shape) == 0) return Tensor::empty(shape, d);
  const std::vector<std::byte> b = draw_values(rng, d, ValueKind::kWideMagnitude, numel(shape));
  return Tensor::from_host(b.data(), shape, d);
}

std::vector<FamilyCase> gated_cases(DType d, Rng& rng, const Device& dev, GatedOp op,
                                    bool any_dim) {
  std::vector<FamilyCase> cases;
  auto add = [&](std::string name, bool view, const Tensor& host, std::int64_t dim,
                 const View& v = {}) {
    FamilyCase c{std::move(name), 1, view, {}, {}, {}};
    add_operand(c, host, dev, v);
    c.call = [op, dim](std::span<const Tensor> in, const Device&) -> Outputs {
      return {op(in[0], dim)};
    };
    cases.push_back(std::move(c));
  };
  // First a case every floating dtype takes (an integer one is refused alike: n/a).
  add("last-dim-odd-halves", false, draw_tensor(rng, d, {7, 66}, true), -1);
  add("wide-magnitudes", false, wide_values(rng, d, {5, 2 * 129}), -1);
  add("pairs", false, draw_tensor(rng, d, {9, 2}), -1);
  add("1-d", false, wide_values(rng, d, {34}), -1);
  add("rows-of-1024-halves", false, draw_tensor(rng, d, {6, 2048}), -1);
  add("transposed", true, wide_values(rng, d, {46, 5}), -1,
      [](const Tensor& t) { return t.transpose(0, 1); });
  add("sliced", true, draw_tensor(rng, d, {6, 40}), -1,
      [](const Tensor& t) { return t.slice(0, 1, 6, 2).slice(1, 2, 38, 3); });
  add("0-size-split", false, draw_tensor(rng, d, {3, 0}), -1);
  add("0-size-rows", false, draw_tensor(rng, d, {0, 8}), -1);
  add("odd-split-refused", false, draw_tensor(rng, d, {4, 7}), -1);
  if (!any_dim) return cases;
  add("dim0", false, wide_values(rng, d, {10, 9}), 0);
  add("dim1-of-3d", false, draw_tensor(rng, d, {3, 10, 5}, true), 1);
  add("dim-2-of-transposed-3d", true, wide_values(rng, d, {5, 12, 3}), -2,
      [](const Tensor& t) { return t.transpose(0, 2); });
  add("0-size-dim0", false, draw_tensor(rng, d, {0, 3}), 0);
  return cases;
}

const FamilySpec kSpecs[] = {
    {"glu", "elementwise", false,
     [](DType d, Rng& r, const Device& dev) {
       return gated_cases(
           d, r, dev, [](const Tensor& x, std::int64_t dim) { return ops::glu(x, dim); }, true);
     }},
    {"silu_and_mul", "elementwise", false,
     [](DType d, Rng& r, const Device& dev) {
       return gated_cases(
           d, r, dev, [](const Tensor& x, std::int64_t) { return ops::silu_and_mul(x); }, false);
     }},
    {"gelu_and_mul", "elementwise", false,
     [](DType d, Rng& r, const Device& dev) {
       return gated_cases(
           d, r, dev, [](const Tensor& x, std::int64_t) { return ops::gelu_and_mul(x); }, false);
     }},
    {"gelu_tanh_and_mul", "elementwise", false,
     [](DType d, Rng& r, const Device& dev) {
       return gated_cases(
           d, r, dev,
           [](const Tensor& x, std::int64_t) {
             return ops::gelu_and_mul(x, ops::GeluApproximation::kTanh);
           },
           false);
     }},
};

}  // namespace

std::span<const FamilySpec> glu_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
