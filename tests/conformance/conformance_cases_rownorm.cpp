// The softmax family and the normalizations. Softmax rows of 65 with NaN and ±inf planted
// (a row with +inf gives NaN, as PyTorch), a transposed view, zero-size; the masked form
// with a broadcast mask that excludes one whole row. Norms with weight and bias, on
// contiguous inputs and on transposed views.
#include "core/ops/norm.hpp"
#include "core/ops/softmax.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;
const View kTranspose01 = [](const Tensor& t) { return t.transpose(0, 1); };
const View kTranspose12 = [](const Tensor& t) { return t.transpose(1, 2); };

FamilyCase one_input(std::string name, std::int64_t k, bool view, const Tensor& host,
                     const Device& dev, const View& v = {}) {
  FamilyCase c{std::move(name), k, view, {}, {}, {}};
  add_operand(c, host, dev, v);
  return c;
}

using SoftmaxOp = Tensor (*)(const Tensor& x, std::int64_t dim);

std::vector<FamilyCase> softmax_cases(DType d, Rng& rng, const Device& dev, SoftmaxOp op) {
  std::vector<FamilyCase> cases;
  auto add = [&](FamilyCase c, std::int64_t dim) {
    c.call = [op, dim](std::span<const Tensor> in, const Device&) -> Outputs {
      return {op(in[0], dim)};
    };
    cases.push_back(std::move(c));
  };
  add(one_input("last-dim", 65, false, draw_tensor(rng, d, {7, 65}, true), dev), -1);
  add(one_input("dim0-of-transposed", 7, true, draw_tensor(rng, d, {65, 7}), dev, kTranspose01), 0);
  add(one_input("0-size", 0, false, draw_tensor(rng, d, {3, 0}), dev), -1);
  return cases;
}

std::vector<FamilyCase> masked_cases(DType d, Rng& rng, const Device& dev, bool log) {
  std::vector<FamilyCase> cases;
  for (bool transposed : {false, true}) {
    FamilyCase c = transposed ? one_input("masked-transposed", 65, true,
                                          draw_tensor(rng, d, {65, 7}), dev, kTranspose01)
                              : one_input("masked-last-dim", 65, false,
                                          draw_tensor(rng, d, {7, 65}, true), dev);
    // Row 5 fully excluded (zeros, log: -inf); the transposed case's mask broadcasts [7,1].
    const std::int64_t cols = transposed ? 1 : 65;
    std::vector<std::uint8_t> m(static_cast<std::size_t>(7 * cols));
    for (std::size_t i = 0; i < m.size(); ++i)
      m[i] = rng.below(4) == 0 || i / std::size_t(cols) == 5;
    add_operand(c, Tensor::from_host(m.data(), {7, cols}, DType::kBool), dev);
    c.call = [log](std::span<const Tensor> in, const Device&) -> Outputs {
      return {ops::scaled_masked_softmax(in[0], -1, 0.5, in[1], log)};
    };
    cases.push_back(std::move(c));
  }
  return cases;
}

// layer_norm / rms_norm over the last 65, group_norm / batch_norm over [4, 6, 9].
std::vector<FamilyCase> norm_cases(DType d, Rng& rng, const Device& dev, int which) {
  std::vector<FamilyCase> cases;
  const bool rows = which < 2;
  for (int v = 0; v < 3; ++v) {
    FamilyCase c;
    if (rows) {
      c = v == 0 ? one_input("last-dim", 65, false, draw_tensor(rng, d, {7, 65}, true), dev)
          : v == 1
              ? one_input("transposed", 65, true, draw_tensor(rng, d, {65, 7}), dev, kTranspose01)
              : one_input("0-size", 65, false, draw_tensor(rng, d, {0, 65}), dev);
      add_operand(c, draw_tensor(rng, d, {65}), dev);
      add_operand(c, draw_tensor(rng, d, {65}), dev);
    } else {
      const std::int64_t k = which == 2 ? 18 : 1;
      // group_norm: an empty spatial dim; the host reference divides by N, so N = 0 is
      // avoided there (reported to the lead: SIGFPE in core/ops/norm.cpp).
      const Shape zero_size = which == 2 ? Shape{2, 6, 0} : Shape{0, 6, 9};
      c = v == 0 ? one_input("contiguous", k, false, draw_tensor(rng, d, {4, 6, 9}, true), dev)
          : v == 1
              ? one_input("transposed", k, true, draw_tensor(rng, d, {4, 9, 6}), dev, kTranspose12)
              : one_input("0-size", k, false, draw_tensor(rng, d, zero_size), dev);
      add_operand(c, draw_tensor(rng, d, {6}), dev);
      add_operand(c, draw_tensor(rng, d, {6}), dev);
      add_operand(c, draw_tensor(rng, d, {6}), dev);
      add_operand(c, draw_positive(rng, d, {6}), dev);
    }
    c.call = [which](std::span<const Tensor> in, const Device&) -> Outputs {
      switch (which) {
        case 0:
          return {ops::layer_norm(in[0], {65}, in[1], in[2])};
        case 1:
          return {ops::rms_norm(in[0], {65}, in[1])};
        case 2:
          return {ops::group_norm(in[0], 3, in[1], in[2])};
        default:
          return {ops::batch_norm(in[0], in[3], in[4], in[1], in[2])};
      }
    };
    cases.push_back(std::move(c));
  }
  return cases;
}

const FamilySpec kSpecs[] = {
    {"softmax", "softmax", false,
     [](DType d, Rng& r, const Device& dev) {
       return softmax_cases(d, r, dev,
                            [](const Tensor& x, std::int64_t dim) { return ops::softmax(x, dim); });
     }},
    {"log_softmax", "softmax", false,
     [](DType d, Rng& r, const Device& dev) {
       return softmax_cases(
           d, r, dev, [](const Tensor& x, std::int64_t dim) { return ops::log_softmax(x, dim); });
     }},
    {"scaled_masked_softmax", "softmax", false,
     [](DType d, Rng& r, const Device& dev) { return masked_cases(d, r, dev, false); }},
    {"scaled_masked_log_softmax", "softmax", false,
     [](DType d, Rng& r, const Device& dev) { return masked_cases(d, r, dev, true); }},
    {"layer_norm", "norm", false,
     [](DType d, Rng& r, const Device& dev) { return norm_cases(d, r, dev, 0); }},
    {"rms_norm", "norm", false,
     [](DType d, Rng& r, const Device& dev) { return norm_cases(d, r, dev, 1); }},
    {"group_norm", "norm", false,
     [](DType d, Rng& r, const Device& dev) { return norm_cases(d, r, dev, 2); }},
    {"batch_norm", "norm", false,
     [](DType d, Rng& r, const Device& dev) { return norm_cases(d, r, dev, 3); }},
};

}  // namespace

std::span<const FamilySpec> softmax_norm_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
