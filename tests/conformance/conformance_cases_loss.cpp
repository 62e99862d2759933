// The losses (core/ops/loss.hpp) × every dtype against the host: compositions of the reduce,
// gather and elementwise families, so each cell checks that their pieces agree on the device.
// Floating cells run; integer and bool inputs are refused alike (n/a). Cases: every reduction,
// class weights, ignored targets (the default -100 and another ignore_index), label smoothing
// with and without weights, int32 targets, class-probability targets, [C], [N, C] and
// [N, C, d] inputs, transposed and broadcast operands, 0-size batches, and in full mode a
// vocabulary-sized row (logsumexp across tiles). Inputs are the bounded draws (|x| <= 2; the
// binary cross entropy's logits scaled to ±40), so sums cannot overflow in one order only.
#include <cstdint>
#include <optional>
#include <string>

#include "core/ops/elementwise.hpp"
#include "core/ops/loss.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;
const View kTranspose01 = [](const Tensor& t) { return t.transpose(0, 1); };

// Class indices in [0, classes), about one in five set to `ignored`.
Tensor class_targets(Rng& rng, const Shape& shape, std::int64_t classes, std::int64_t ignored,
                     DType dtype = DType::kInt64) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(numel(shape)));
  for (auto& e : v) e = rng.below(5) == 0 ? ignored : rng.below(classes);
  return Tensor::from_host(v, shape).to(dtype);
}

struct Cases {
  DType dtype;
  Rng& rng;
  Device dev;
  std::vector<FamilyCase> cases;

  // Operands (host tensors, each with an optional view), the call on the case's tensors.
  FamilyCase& add(std::string name, std::int64_t k,
                  const std::vector<std::pair<Tensor, View>>& operands,
                  std::function<Tensor(std::span<const Tensor>)> op) {
    FamilyCase c{std::move(name), k, false, {}, {}, {}};
    for (const auto& [host, view] : operands) {
      c.view = c.view || bool(view);
      add_operand(c, host, dev, view);
    }
    c.call = [op = std::move(op)](std::span<const Tensor> in, const Device&) -> Outputs {
      return {op(in)};
    };
    cases.push_back(std::move(c));
    return cases.back();
  }
  Tensor draw(const Shape& s) { return draw_tensor(rng, dtype, s); }
  Tensor positive(const Shape& s) { return draw_positive(rng, dtype, s); }
};

std::optional<Tensor> maybe(std::span<const Tensor> in, std::size_t k) {
  return in.size() > k ? std::optional<Tensor>(in[k]) : std::nullopt;
}

// cross_entropy (logits = true) or nll_loss: class-index targets; cross_entropy also
// class probabilities and label smoothing.
template <bool kLogits>
std::vector<FamilyCase> class_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  const auto loss = [](std::int64_t ignore, const char* reduction, double smoothing = 0.0) {
    return [=](std::span<const Tensor> in) {
      if constexpr (kLogits)
        return ops::cross_entropy(in[0], in[1], maybe(in, 2), ignore, reduction, smoothing);
      else
        return ops::nll_loss(in[0], in[1], maybe(in, 2), ignore, reduction);
    };
  };
  const Shape x2{8, 5};
  for (const char* r : {"mean", "none", "sum"})
    a.add(std::string("2-d-") + r, 40, {{a.draw(x2), {}}, {class_targets(rng, {8}, 5, -100), {}}},
          loss(-100, r));
  for (const char* r : {"mean", "none"})
    a.add(std::string("weight-") + r, 40,
          {{a.draw(x2), {}}, {class_targets(rng, {8}, 5, -100), {}}, {a.positive({5}), {}}},
          loss(-100, r));
  a.add("ignore-index-2", 40,
        {{a.draw(x2), {}}, {class_targets(rng, {8}, 5, 2), {}}, {a.positive({5}), {}}},
        loss(2, "mean"));
  a.add("int32-target", 40,
        {{a.draw(x2), {}}, {class_targets(rng, {8}, 5, -100, DType::kInt32), {}}},
        loss(-100, "sum"));
  a.add("all-ignored", 40, {{a.draw(x2), {}}, {Tensor::full({8}, -100, DType::kInt64), {}}},
        loss(-100, "mean"));  // NaN on both sides
  a.add("1-d", 5, {{a.draw({5}), {}}, {Tensor::full({}, 3, DType::kInt64), {}}},
        loss(-100, "none"));
  a.add("3-d", 60, {{a.draw({4, 5, 3}), {}}, {class_targets(rng, {4, 3}, 5, -100), {}}},
        loss(-100, "none"));
  a.add("transposed-input", 40,
        {{a.draw({5, 8}), kTranspose01}, {class_targets(rng, {8}, 5, -100), {}}},
        loss(-100, "mean"));
  a.add("3-d-transposed-weighted", 60,
        {{a.draw({3, 5, 4}),
          [](const Tensor& x) {
            return x.permute({2, 1, 0});
          }},
         {class_targets(rng, {4, 3}, 5, -100), {}},
         {a.positive({5}), {}}},
        loss(-100, "sum"));
  a.add("0-size-batch", 1, {{a.draw({0, 5}), {}}, {Tensor::zeros({0}, DType::kInt64), {}}},
        loss(-100, "mean"));
  a.add("0-size-batch-none", 1, {{a.draw({0, 5}), {}}, {Tensor::zeros({0}, DType::kInt64), {}}},
        loss(-100, "none"));
  if constexpr (kLogits) {
    for (const char* r : {"none", "mean"}) {
      a.add(std::string("smoothing-") + r, 40,
            {{a.draw(x2), {}}, {class_targets(rng, {8}, 5, -100), {}}}, loss(-100, r, 0.1));
      a.add(std::string("smoothing-weight-") + r, 40,
            {{a.draw(x2), {}}, {class_targets(rng, {8}, 5, -100), {}}, {a.positive({5}), {}}},
            loss(-100, r, 0.25));
    }
    for (const char* r : {"none", "mean", "sum"})
      a.add(std::string("probabilities-") + r, 40, {{a.draw(x2), {}}, {a.positive(x2), {}}},
            loss(-1, r));
    a.add("probabilities-weight-smoothing", 40,
          {{a.draw(x2), {}}, {a.positive(x2), {}}, {a.positive({5}), {}}}, loss(-100, "mean", 0.3));
    a.add("probabilities-3-d-transposed", 60,
          {{a.draw({4, 5, 3}), {}},
           {a.positive({3, 5, 4}),
            [](const Tensor& y) {
              return y.permute({2, 1, 0});
            }}},
          loss(-100, "none"));
    a.add("probabilities-0-size", 1, {{a.draw({0, 5}), {}}, {a.positive({0, 5}), {}}},
          loss(-100, "mean"));
  }
  // A vocabulary-sized row: logsumexp and the row sum across the reduce family's tiles.
  FamilyCase& big = a.add("vocabulary-row", 3 * 50000, {}, loss(-100, "mean", 0.1));
  defer_operands(big, rng, [t, dev](FamilyCase& c, Rng& r) {
    add_operand(c, draw_tensor(r, t, {3, 50000}), dev);
    add_operand(c, class_targets(r, {3}, 50000, -100), dev);
  });
  return a.cases;
}

enum class Pointwise { kMse, kL1, kSmoothL1, kSmoothL1Beta0 };

template <Pointwise kOp>
std::vector<FamilyCase> pointwise_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  const auto loss = [](const char* reduction) {
    return [=](std::span<const Tensor> in) {
      switch (kOp) {
        case Pointwise::kMse:
          return ops::mse_loss(in[0], in[1], reduction);
        case Pointwise::kL1:
          return ops::l1_loss(in[0], in[1], reduction);
        case Pointwise::kSmoothL1:
          return ops::smooth_l1_loss(in[0], in[1], reduction, 0.5);
        case Pointwise::kSmoothL1Beta0:
          break;
      }
      return ops::smooth_l1_loss(in[0], in[1], reduction, 0.0);
    };
  };
  // sum first: l1_loss of integers runs (none and sum), its mean is refused alike.
  for (const char* r : {"sum", "none", "mean"})
    a.add(std::string("2-d-") + r, 144, {{a.draw({16, 9}), {}}, {a.draw({16, 9}), {}}}, loss(r));
  a.add("broadcast", 144, {{a.draw({16, 9}), {}}, {a.draw({9}), {}}}, loss("mean"));
  a.add("transposed", 144, {{a.draw({9, 16}), kTranspose01}, {a.draw({16, 9}), {}}}, loss("sum"));
  a.add("expanded", 144,
        {{a.draw({16, 9}), {}},
         {a.draw({1, 9}),
          [](const Tensor& y) {
            return y.expand({16, 9});
          }}},
        loss("none"));
  a.add("0-d", 1, {{a.draw({}), {}}, {a.draw({}), {}}}, loss("mean"));
  a.add("0-size", 1, {{a.draw({0, 9}), {}}, {a.draw({0, 9}), {}}}, loss("mean"));
  return a.cases;
}

std::vector<FamilyCase> bce_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  // Logits up to ±40: e^40 overflows nothing in the stable form, in any dtype. Scaled on the
  // host and cast back, so integer and bool cells stay refused (n/a).
  const auto logits = [&](const Shape& s) { return ops::mul(a.draw(s), 20.0).to(t); };
  const auto probs = [&](const Shape& s) { return ops::mul(a.positive(s), 0.5).to(t); };
  const auto loss = [](const char* reduction) {
    return [=](std::span<const Tensor> in) {
      return ops::binary_cross_entropy_with_logits(in[0], in[1], maybe(in, 2), reduction,
                                                   maybe(in, 3));
    };
  };
  for (const char* r : {"mean", "none", "sum"})
    a.add(std::string("2-d-") + r, 48, {{logits({8, 6}), {}}, {probs({8, 6}), {}}}, loss(r));
  a.add(
      "weight-pos-weight", 48,
      {{logits({8, 6}), {}}, {probs({8, 6}), {}}, {a.positive({8, 1}), {}}, {a.positive({6}), {}}},
      loss("none"));
  a.add("transposed", 48, {{logits({6, 8}), kTranspose01}, {probs({8, 6}), {}}}, loss("mean"));
  a.add("0-size", 1, {{logits({0, 6}), {}}, {probs({0, 6}), {}}}, loss("mean"));
  return a.cases;
}

std::vector<FamilyCase> kl_div_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  const auto loss = [](const char* reduction, bool log_target) {
    return [=](std::span<const Tensor> in) {
      return ops::kl_div(in[0], in[1], reduction, log_target);
    };
  };
  const Shape s{8, 6};
  for (const char* r : {"mean", "none", "sum", "batchmean"})
    a.add(std::string("2-d-") + r, 48, {{a.draw(s), {}}, {with_zeros(rng, a.positive(s)), {}}},
          loss(r, false));
  a.add("log-target", 48, {{a.draw(s), {}}, {a.draw(s), {}}}, loss("batchmean", true));
  a.add("broadcast-transposed", 48, {{a.draw({6, 8}), kTranspose01}, {a.positive({6}), {}}},
        loss("sum", false));
  a.add("0-size", 1, {{a.draw({0, 6}), {}}, {a.positive({0, 6}), {}}}, loss("batchmean", false));
  return a.cases;
}

const FamilySpec kSpecs[] = {
    {"cross_entropy", "loss", false, class_cases<true>},
    {"nll_loss", "loss", false, class_cases<false>},
    {"mse_loss", "loss", false, pointwise_cases<Pointwise::kMse>},
    {"l1_loss", "loss", false, pointwise_cases<Pointwise::kL1>},
    {"smooth_l1_loss", "loss", false, pointwise_cases<Pointwise::kSmoothL1>},
    {"smooth_l1_loss_beta0", "loss", false, pointwise_cases<Pointwise::kSmoothL1Beta0>},
    {"binary_cross_entropy_with_logits", "loss", false, bce_cases},
    {"kl_div", "loss", false, kl_div_cases},
};

}  // namespace

std::span<const FamilySpec> loss_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
