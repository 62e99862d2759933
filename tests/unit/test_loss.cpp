// The losses (core/ops/loss.hpp) against hand-computed values on every present device:
// logits built as log(k) so the softmax probabilities are exact tenths, PyTorch's
// weighted-mean, ignore_index and label-smoothing rules written out term by term, the
// stable binary cross entropy at ±100, the result dtypes, 0-size batches, bad targets
// faulting through the gather family, and the argument errors (with their words).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ops/explain.hpp"
#include "nbx/nbx.hpp"
#include "tests/unit/expect_fault.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

using F = std::vector<float>;
using D = std::vector<double>;
using I64 = std::vector<std::int64_t>;

// Rows of logits log(k) + shift: softmax gives k / Σk, exactly tenths here.
// Row 0: p = [0.1, 0.2, 0.3, 0.4]; row 1: p = [0.4, 0.3, 0.2, 0.1]; row 2: [0.25 × 4].
const double kP[3][4] = {{0.1, 0.2, 0.3, 0.4}, {0.4, 0.3, 0.2, 0.1}, {0.25, 0.25, 0.25, 0.25}};

Tensor logits(const Device& d, DType t = DType::kFloat32) {
  D v;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) v.push_back(std::log(kP[r][c]) + 0.75 * r - 1.0);
  return Tensor::from_host(v, {3, 4}, d).to(t);
}
Tensor targets(const I64& t, const Device& d, DType dtype = DType::kInt64) {
  return Tensor::from_host(t, {std::int64_t(t.size())}, d).to(dtype);
}
double value(const Tensor& t) {
  REQUIRE(t.numel() == 1);
  return t.to(DType::kFloat64).to_host<double>()[0];
}
D values(const Tensor& t) {
  return t.to(DType::kFloat64).contiguous().to_host<double>();
}
// -log p[r][t] in float32's precision.
doctest::Approx nll(int r, int t) {
  return doctest::Approx(-std::log(kP[r][t])).epsilon(2e-6);
}
doctest::Approx near(double v, double eps = 2e-6) {
  return doctest::Approx(v).epsilon(eps);
}

template <class Fn>
void on_every_device(Fn fn) {
  for (const Device& d : nbx::testing::present_devices()) {
    CAPTURE(d.str());
    fn(d);
  }
}

}  // namespace

TEST_CASE("cross_entropy: class indices, reductions, weights and ignore_index") {
  on_every_device([](const Device& d) {
    const Tensor x = logits(d);
    const Tensor t = targets({2, 0, 3}, d);
    const Tensor none = ops::cross_entropy(x, t, {}, -100, "none");
    CHECK(none.dtype() == DType::kFloat32);
    CHECK(none.shape() == Shape{3});
    const D v = values(none);
    CHECK(v[0] == nll(0, 2));
    CHECK(v[1] == nll(1, 0));
    CHECK(v[2] == nll(2, 3));
    const double total = -std::log(0.3) - std::log(0.4) - std::log(0.25);
    CHECK(value(ops::cross_entropy(x, t, {}, -100, "sum")) == near(total));
    CHECK(value(ops::cross_entropy(x, t)) == near(total / 3));
    CHECK(ops::cross_entropy(x, t).shape() == Shape{});

    // Weighted mean: Σ w[t]·l / Σ w[t].
    const Tensor w = Tensor::from_host(F{0.5f, 2.0f, 1.0f, 4.0f}, {4}, d);
    const double wl = 1.0 * -std::log(0.3) + 0.5 * -std::log(0.4) + 4.0 * -std::log(0.25);
    const D wv = values(ops::cross_entropy(x, t, w, -100, "none"));
    CHECK(wv[0] == near(1.0 * -std::log(0.3)));
    CHECK(wv[2] == near(4.0 * -std::log(0.25)));
    CHECK(value(ops::cross_entropy(x, t, w, -100, "sum")) == near(wl));
    CHECK(value(ops::cross_entropy(x, t, w)) == near(wl / 5.5));

    // ignore_index: the element loses 0 and weighs 0; a target equal to it never faults,
    // even far outside [0, C).
    const Tensor ti = targets({2, 7, 3}, d);
    const D iv = values(ops::cross_entropy(x, ti, w, 7, "none"));
    CHECK(iv[1] == 0.0);
    CHECK(iv[0] == near(1.0 * -std::log(0.3)));
    const double kept = 1.0 * -std::log(0.3) + 4.0 * -std::log(0.25);
    CHECK(value(ops::cross_entropy(x, ti, w, 7)) == near(kept / 5.0));
    CHECK(value(ops::cross_entropy(x, ti, {}, 7)) == near((-std::log(0.3) - std::log(0.25)) / 2));
    // Every target ignored: mean is 0/0 = NaN, sum 0 (PyTorch).
    const Tensor all = targets({-100, -100, -100}, d);
    CHECK(std::isnan(value(ops::cross_entropy(x, all))));
    CHECK(std::isnan(value(ops::cross_entropy(x, all, w, -100, "mean", 0.3))));
    CHECK(value(ops::cross_entropy(x, all, {}, -100, "sum")) == 0.0);
  });
}

TEST_CASE("cross_entropy: label smoothing with and without weight and ignore_index") {
  // PyTorch: (1 − ε)·w[t]·(−log p[t]) + (ε/C)·Σ_c w[c]·(−log p[c]) per kept element; mean
  // divides both parts by Σ w[t] over the kept targets.
  on_every_device([](const Device& d) {
    const Tensor x = logits(d);
    const Tensor t = targets({1, -100, 0}, d);
    const double eps = 0.2, w[4] = {0.5, 2.0, 1.0, 4.0};
    const Tensor wt = Tensor::from_host(F{0.5f, 2.0f, 1.0f, 4.0f}, {4}, d);
    auto smooth = [&](int r, bool weighted) {
      double s = 0;
      for (int c = 0; c < 4; ++c) s += (weighted ? w[c] : 1.0) * -std::log(kP[r][c]);
      return s;
    };
    for (const bool weighted : {false, true}) {
      CAPTURE(weighted);
      const std::optional<Tensor> weight = weighted ? std::optional<Tensor>(wt) : std::nullopt;
      const double w0 = weighted ? w[1] : 1.0, w2 = weighted ? w[0] : 1.0;
      const double l0 = (1 - eps) * w0 * -std::log(0.2) + eps / 4 * smooth(0, weighted);
      const double l2 = (1 - eps) * w2 * -std::log(0.25) + eps / 4 * smooth(2, weighted);
      const D v = values(ops::cross_entropy(x, t, weight, -100, "none", eps));
      CHECK(v[0] == near(l0));
      CHECK(v[1] == 0.0);
      CHECK(v[2] == near(l2));
      CHECK(value(ops::cross_entropy(x, t, weight, -100, "sum", eps)) == near(l0 + l2));
      CHECK(value(ops::cross_entropy(x, t, weight, -100, "mean", eps)) ==
            near((l0 + l2) / (w0 + w2)));
    }
    // ε = 1: the uniform target alone.
    CHECK(value(ops::cross_entropy(x, targets({3, 3, 3}, d), {}, -100, "sum", 1.0)) ==
          near((smooth(0, false) + smooth(1, false) + smooth(2, false)) / 4));
  });
}

TEST_CASE("cross_entropy: class probabilities, [C] and [N, C, d] inputs, strided views") {
  on_every_device([](const Device& d) {
    const Tensor x = logits(d);
    // y row 0 = [0.5, 0.5, 0, 0], row 1 = [0, 0, 0, 1], row 2 = [0.25 × 4].
    const Tensor y =
        Tensor::from_host(F{0.5f, 0.5f, 0, 0, 0, 0, 0, 1, 0.25f, 0.25f, 0.25f, 0.25f}, {3, 4}, d);
    const double l0 = -0.5 * (std::log(0.1) + std::log(0.2)), l1 = -std::log(0.1),
                 l2 = -std::log(0.25);
    const D v = values(ops::cross_entropy(x, y, {}, -100, "none"));
    CHECK(v[0] == near(l0));
    CHECK(v[1] == near(l1));
    CHECK(v[2] == near(l2));
    CHECK(value(ops::cross_entropy(x, y)) == near((l0 + l1 + l2) / 3));
    // A weight scales each class's term; mean still divides by N (not by the weights).
    const Tensor w = Tensor::from_host(F{2.0f, 1.0f, 1.0f, 3.0f}, {4}, d);
    const double lw0 = -(0.5 * 2 * std::log(0.1) + 0.5 * std::log(0.2)), lw1 = -3 * std::log(0.1);
    const D vw = values(ops::cross_entropy(x, y, w, -100, "none"));
    CHECK(vw[0] == near(lw0));
    CHECK(vw[1] == near(lw1));
    // Smoothing mixes in ε/C: row 1 with ε = 0.4 is 0.6·(−log 0.1) + 0.1·Σ_c(−log p[c]).
    const D vs = values(ops::cross_entropy(x, y, {}, -100, "none", 0.4));
    double all1 = 0;
    for (int c = 0; c < 4; ++c) all1 += -std::log(kP[1][c]);
    CHECK(vs[1] == near(0.6 * -std::log(0.1) + 0.1 * all1));
    // A target dtype wider than the input promotes the result (PyTorch).
    CHECK(ops::cross_entropy(x, y.to(DType::kFloat64)).dtype() == DType::kFloat64);
    CHECK_THROWS_AS(ops::cross_entropy(x, y, {}, 0), InvalidArgument);  // ignore_index >= 0

    // [C] with a 0-d target.
    const Tensor row = x.slice(0, 1, 2).reshape({4});
    const Tensor r0 = ops::cross_entropy(row, Tensor::from_host(I64{2}, {}, d), {}, -100, "none");
    CHECK(r0.shape() == Shape{});
    CHECK(value(r0) == nll(1, 2));

    // [N, C, d]: the class dim is 1, here a transposed view (classes strided by 2 rows).
    const Tensor x3 = x.transpose(0, 1).unsqueeze(0);  // [1, 4, 3]: position k is row k
    CHECK_FALSE(x3.is_contiguous());
    const Tensor t3 = Tensor::from_host(I64{3, 1, 0}, {1, 3}, d);
    const Tensor l3 = ops::cross_entropy(x3, t3, {}, -100, "none");
    CHECK(l3.shape() == Shape{1, 3});
    const D v3 = values(l3);
    CHECK(v3[0] == nll(0, 3));
    CHECK(v3[1] == nll(1, 1));
    CHECK(v3[2] == nll(2, 0));
    // Probabilities of [N, C, d] too: the target's class dim is 1.
    const Tensor y3 = y.transpose(0, 1).unsqueeze(0);
    const D p3 = values(ops::cross_entropy(x3, y3, {}, -100, "none"));
    CHECK(p3[0] == near(l0));
    CHECK(p3[1] == near(l1));
  });
}

TEST_CASE("cross_entropy and nll_loss: target dtypes, half inputs, 0-size batches") {
  on_every_device([](const Device& d) {
    const Tensor x = logits(d);
    const D ref = values(ops::cross_entropy(x, targets({2, 0, 3}, d), {}, -100, "none"));
    for (DType td : {DType::kInt32, DType::kUInt8}) {
      CAPTURE(dtype_name(td));
      CHECK(values(ops::cross_entropy(x, targets({2, 0, 3}, d, td), {}, -100, "none")) == ref);
    }
    // float16/bfloat16: computed in float32, rounded once to the input's dtype.
    for (DType h : {DType::kFloat16, DType::kBFloat16}) {
      CAPTURE(dtype_name(h));
      const Tensor xh = logits(d, h);
      const Tensor t = targets({2, 0, 3}, d);
      const Tensor r = ops::cross_entropy(xh, t, {}, -100, "none");
      CHECK(r.dtype() == h);
      const Tensor f = ops::cross_entropy(xh.to(DType::kFloat32), t, {}, -100, "none");
      CHECK(values(r) == values(f.to(h)));
      const Tensor m = ops::cross_entropy(xh, t, {}, -100, "mean", 0.1);
      CHECK(m.dtype() == h);
      CHECK(value(m) ==
            value(ops::cross_entropy(xh.to(DType::kFloat32), t, {}, -100, "mean", 0.1).to(h)));
    }
    // 0-size batch: none is empty, sum 0, mean NaN.
    const Tensor e = Tensor::zeros({0, 4}, DType::kFloat32, d);
    const Tensor et = Tensor::zeros({0}, DType::kInt64, d);
    CHECK(ops::cross_entropy(e, et, {}, -100, "none").shape() == Shape{0});
    CHECK(value(ops::cross_entropy(e, et, {}, -100, "sum")) == 0.0);
    CHECK(std::isnan(value(ops::cross_entropy(e, et))));
    CHECK(std::isnan(value(ops::nll_loss(e, et))));

    // nll_loss: −w[t]·x[t] of log-probabilities.
    const Tensor lp = Tensor::from_host(F{-1.5f, -0.25f, -3.0f, -0.5f, -2.0f, -0.125f}, {2, 3}, d);
    const Tensor w = Tensor::from_host(F{1.0f, 3.0f, 0.5f}, {3}, d);
    const D nv = values(ops::nll_loss(lp, targets({1, 2}, d), w, -100, "none"));
    CHECK(nv == D{0.75, 0.0625});
    CHECK(value(ops::nll_loss(lp, targets({1, 2}, d), w)) == near(0.8125 / 3.5));
    CHECK(value(ops::nll_loss(lp, targets({1, -100}, d), {}, -100, "sum")) == 0.25);
  });
}

TEST_CASE("cross_entropy and nll_loss: a bad target faults in gather, ignored ones do not") {
  on_every_device([](const Device& d) {
    for (DType td : {DType::kInt64, DType::kInt32}) {
      CAPTURE(dtype_name(td));
      nbx::testing::expect_fault(d, {"gather", 4, 4, 2, "0"}, [&] {
        return ops::cross_entropy(logits(d), targets({1, -100, 4}, d, td));
      });
      nbx::testing::expect_fault(d, {"gather", -1, 4, 0, "0"}, [&] {
        return ops::nll_loss(logits(d), targets({-1, 0, 2}, d, td), {}, -100, "none");
      });
      // [N, C, d]: the position is the target element's, row-major.
      nbx::testing::expect_fault(d, {"gather", 9, 4, 2, "0"}, [&] {
        return ops::cross_entropy(logits(d).transpose(0, 1).unsqueeze(0),
                                  Tensor::from_host(I64{0, 1, 9}, {1, 3}, d).to(td));
      });
    }
    // C = 0: nothing to read; all ignored is PyTorch's zeros / NaN, a kept target faults.
    const Tensor none = Tensor::zeros({2, 0}, DType::kFloat32, d);
    const D z = values(ops::cross_entropy(none, targets({-100, -100}, d), {}, -100, "none"));
    CHECK(z == D{0.0, 0.0});
    CHECK(std::isnan(value(ops::cross_entropy(none, targets({-100, -100}, d)))));
    CHECK_THROWS_AS(ops::cross_entropy(none, targets({-100, 0}, d)), DeviceFault);
  });
}

TEST_CASE("cross_entropy and nll_loss: argument errors name the op") {
  const Device h = host_device();
  const Tensor x = logits(h);
  const Tensor t = targets({0, 1, 2}, h);
  auto message = [](auto&& fn) {
    try {
      fn();
    } catch (const InvalidArgument& e) {
      CHECK(e.op() != "");
      return std::string(e.what());
    }
    FAIL("no InvalidArgument");
    return std::string();
  };
  auto has = [](const std::string& m, const char* words) {
    CHECK_MESSAGE(m.find(words) != std::string::npos, m);
  };
  has(message([&] {
        ops::cross_entropy(x, targets({0, 1}, h));
      }),
      "Expected input batch_size (3) to match target batch_size (2)");
  has(message([&] { ops::cross_entropy(x, t, Tensor::ones({3}, DType::kFloat32)); }),
      "weight tensor should be defined either for all 4 classes");
  has(message([&] { ops::nll_loss(x, t, Tensor::ones({4}, DType::kFloat64)); }),
      "expected scalar type float32 but found float64");
  has(message([&] { ops::cross_entropy(x.to(DType::kInt64), t); }),
      "cross_entropy is not defined for int64");
  has(message([&] { ops::nll_loss(x, t.to(DType::kFloat32)); }), "class indices");
  has(message([&] { ops::cross_entropy(x, t, {}, -100, "mean", 1.5); }),
      "label_smoothing must be between 0.0 and 1.0");
  has(message([&] { ops::cross_entropy(x, t, {}, -100, "mean", -0.1); }),
      "label_smoothing must be between 0.0 and 1.0");
  has(message([&] { ops::cross_entropy(x, t, {}, -100, "batchmean"); }),
      "batchmean is not a valid value for reduction");
  has(message([&] { ops::cross_entropy(x, x.to(DType::kInt64)); }),
      "Expected floating point type for target with class probabilities");
  has(message([&] {
        ops::nll_loss(Tensor::ones({2, 3, 4}, DType::kFloat32), targets({0, 1}, h));
      }),
      "Expected target size [2, 4], got [2]");
  has(message([&] {
        ops::nll_loss(x, Tensor::zeros({3, 1}, DType::kInt64));
      }),
      "0D or 1D target tensor expected");
  has(message([&] { ops::nll_loss(Tensor::ones({}, DType::kFloat32), targets({0}, h)); }),
      "Expected 1 or more dimensions (got 0)");
  has(message([&] { ops::nll_loss(x.slice(0, 0, 1).reshape({4}), targets({0}, h)); }),
      "size mismatch (got input: [4], target: [1])");
  has(message([&] { ops::cross_entropy(x, Tensor()); }), "the target is undefined");
  has(message([&] {
        ops::nll_loss(Tensor::ones({2, 3, 4}, DType::kFloat32),
                      Tensor::zeros({2, 4}, DType::kUInt8));
      }),
      "expected scalar type Long but found Byte");
}

TEST_CASE("mse_loss, l1_loss, smooth_l1_loss: values, broadcasting, dtypes") {
  on_every_device([](const Device& d) {
    const Tensor a = Tensor::from_host(F{1.0f, 2.5f, -3.0f, 0.5f, 4.0f, -1.0f}, {2, 3}, d);
    const Tensor b = Tensor::from_host(F{0.5f, 3.0f, -1.0f}, {3}, d);  // broadcast over rows
    // d = [0.5, -0.5, -2, 0, 1, 0]
    CHECK(values(ops::mse_loss(a, b, "none")) == D{0.25, 0.25, 4.0, 0.0, 1.0, 0.0});
    CHECK(value(ops::mse_loss(a, b)) == near(5.5 / 6));
    CHECK(value(ops::mse_loss(a, b, "sum")) == 5.5);
    CHECK(values(ops::l1_loss(a, b, "none")) == D{0.5, 0.5, 2.0, 0.0, 1.0, 0.0});
    CHECK(value(ops::l1_loss(a, b)) == near(4.0 / 6));
    // smooth_l1, beta 1: 0.5·d² below 1, |d| − 0.5 from 1 on; beta 4: 0.5·d²/4.
    CHECK(values(ops::smooth_l1_loss(a, b, "none")) == D{0.125, 0.125, 1.5, 0.0, 0.5, 0.0});
    CHECK(values(ops::smooth_l1_loss(a, b, "none", 4.0)) ==
          D{0.03125, 0.03125, 0.5, 0.0, 0.125, 0.0});
    CHECK(values(ops::smooth_l1_loss(a, b, "none", 0.0)) == values(ops::l1_loss(a, b, "none")));
    // Promotion: float32 with float64 is float64; half types round once.
    CHECK(ops::mse_loss(a, b.to(DType::kFloat64)).dtype() == DType::kFloat64);
    CHECK(ops::l1_loss(a.to(DType::kBFloat16), b.to(DType::kBFloat16)).dtype() == DType::kBFloat16);
    CHECK(value(ops::mse_loss(a.to(DType::kFloat16), b.to(DType::kFloat16), "sum")) == 5.5);
    // A transposed input.
    CHECK(value(ops::l1_loss(a.transpose(0, 1), b.reshape({3, 1}), "sum")) == 4.0);
    // l1 of integers: none keeps the dtype, sum is int64; mean is refused (PyTorch).
    const Tensor ia = a.to(DType::kInt32),
                 ib = b.to(DType::kInt32);  // [1, 2, -3, 0, 4, -1], [0, 3, -1]
    CHECK(ops::l1_loss(ia, ib, "none").dtype() == DType::kInt32);
    const Tensor s = ops::l1_loss(ia, ib, "sum");
    CHECK(s.dtype() == DType::kInt64);
    CHECK(s.to_host<std::int64_t>()[0] == 1 + 1 + 2 + 0 + 1 + 0);
    CHECK_THROWS_AS(ops::l1_loss(ia, ib), InvalidArgument);
    CHECK_THROWS_AS(ops::mse_loss(ia, ib, "sum"), InvalidArgument);
    CHECK_THROWS_AS(ops::smooth_l1_loss(ia, ib), InvalidArgument);
    CHECK(ops::mse_loss(ia, b).dtype() == DType::kFloat32);  // promoted to float: fine
    CHECK_THROWS_AS(ops::smooth_l1_loss(a, b, "mean", -1.0), InvalidArgument);
    CHECK_THROWS_AS(ops::smooth_l1_loss(a, b, "mean", NAN), InvalidArgument);
    CHECK_THROWS_AS(ops::mse_loss(a, Tensor::ones({4}, DType::kFloat32, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::mse_loss(a, b, "batchmean"), InvalidArgument);
    // Empty: mean is NaN, sum 0.
    const Tensor e = Tensor::zeros({0, 3}, DType::kFloat32, d);
    CHECK(std::isnan(value(ops::mse_loss(e, e))));
    CHECK(value(ops::smooth_l1_loss(e, e, "sum")) == 0.0);
  });
}

TEST_CASE("binary_cross_entropy_with_logits: stable at ±100, weight, pos_weight, dtypes") {
  on_every_device([](const Device& d) {
    const Tensor x = Tensor::from_host(F{100.0f, -100.0f, 0.0f, 2.0f, -1.0f, 30.0f}, {2, 3}, d);
    const Tensor y = Tensor::from_host(F{0.0f, 1.0f, 0.5f, 1.0f, 0.25f, 0.0f}, {2, 3}, d);
    // (1 − y)·x + log(1 + e^−x): 100 at x = 100, y = 0 (no inf from e^100), and x = −100, y = 1.
    auto l = [](double x, double y, double p = 1.0) {
      const double sp = std::max(-x, 0.0) + std::log1p(std::exp(-std::abs(x)));
      return (1 - y) * x + (1 + (p - 1) * y) * sp;
    };
    const double xs[6] = {100, -100, 0, 2, -1, 30}, ys[6] = {0, 1, 0.5, 1, 0.25, 0};
    const D v = values(ops::binary_cross_entropy_with_logits(x, y, {}, "none"));
    for (int i = 0; i < 6; ++i) CHECK(v[std::size_t(i)] == near(l(xs[i], ys[i])));
    CHECK(v[0] == 100.0);
    CHECK(v[1] == 100.0);
    // pos_weight [3] along the last dim, weight [2, 1] along the rows.
    const Tensor pw = Tensor::from_host(F{2.0f, 0.5f, 3.0f}, {3}, d);
    const Tensor w = Tensor::from_host(F{1.0f, 0.25f}, {2, 1}, d);
    const D vp = values(ops::binary_cross_entropy_with_logits(x, y, w, "none", pw));
    const double ps[3] = {2.0, 0.5, 3.0}, ws[2] = {1.0, 0.25};
    for (int i = 0; i < 6; ++i)
      CHECK(vp[std::size_t(i)] == near(ws[i / 3] * l(xs[i], ys[i], ps[i % 3])));
    double total = 0;
    for (int i = 0; i < 6; ++i) total += l(xs[i], ys[i]);
    CHECK(value(ops::binary_cross_entropy_with_logits(x, y)) == near(total / 6));
    // The result takes the target's dtype (PyTorch's in-place formula).
    CHECK(ops::binary_cross_entropy_with_logits(x, y.to(DType::kFloat64)).dtype() ==
          DType::kFloat64);
    CHECK(ops::binary_cross_entropy_with_logits(x.to(DType::kFloat64), y).dtype() ==
          DType::kFloat32);
    CHECK(ops::binary_cross_entropy_with_logits(x.to(DType::kBFloat16), y.to(DType::kBFloat16))
              .dtype() == DType::kBFloat16);
    CHECK_THROWS_AS(ops::binary_cross_entropy_with_logits(x, y.to(DType::kInt64)), InvalidArgument);
    CHECK_THROWS_AS(ops::binary_cross_entropy_with_logits(x.to(DType::kInt64), y), InvalidArgument);
    CHECK_THROWS_AS(ops::binary_cross_entropy_with_logits(x, y.slice(0, 0, 1)), InvalidArgument);
    CHECK_THROWS_AS(ops::binary_cross_entropy_with_logits(x, y, {}, "mean",
                                                          Tensor::ones({2}, DType::kFloat32, d)),
                    InvalidArgument);
    CHECK_THROWS_AS(
        ops::binary_cross_entropy_with_logits(x, y, Tensor::ones({3, 2, 3}, DType::kFloat32, d)),
        InvalidArgument);
  });
}

TEST_CASE("kl_div: xlogy, log targets, batchmean") {
  on_every_device([](const Device& d) {
    const Tensor x = Tensor::from_host(F{-1.0f, -2.0f, -0.5f, -3.0f}, {2, 2}, d);
    const Tensor t = Tensor::from_host(F{0.25f, 0.75f, 0.0f, 1.0f}, {2, 2}, d);
    auto kl = [](double x, double t) { return t == 0 ? 0.0 : t * (std::log(t) - x); };
    const double xs[4] = {-1, -2, -0.5, -3}, ts[4] = {0.25, 0.75, 0, 1};
    const D v = values(ops::kl_div(x, t, "none"));
    double total = 0;
    for (int i = 0; i < 4; ++i) {
      CHECK(v[std::size_t(i)] == near(kl(xs[i], ts[i])));
      total += kl(xs[i], ts[i]);
    }
    CHECK(v[2] == 0.0);  // t = 0: xlogy's 0
    CHECK(value(ops::kl_div(x, t, "sum")) == near(total));
    CHECK(value(ops::kl_div(x, t, "mean")) == near(total / 4));
    CHECK(value(ops::kl_div(x, t, "batchmean")) == near(total / 2));
    // log_target: exp(t)·(t − x).
    const D lv = values(ops::kl_div(x, t, "none", true));
    for (int i = 0; i < 4; ++i)
      CHECK(lv[std::size_t(i)] == near(std::exp(ts[i]) * (ts[i] - xs[i])));
    // batchmean of a 0-d input is the sum; of an empty batch NaN.
    CHECK(value(ops::kl_div(Tensor::full({}, -1.0, DType::kFloat32, d),
                            Tensor::full({}, 0.5, DType::kFloat32, d), "batchmean")) ==
          near(kl(-1.0, 0.5)));
    const Tensor e = Tensor::zeros({0, 3}, DType::kFloat32, d);
    CHECK(std::isnan(value(ops::kl_div(e, e, "batchmean"))));
    CHECK(ops::kl_div(x, t.to(DType::kFloat64)).dtype() == DType::kFloat64);
    // A 0-d operand yields to a dimensioned one in kl_div (torch.result_type); F.mse_loss
    // broadcasts first, so there it promotes as a tensor.
    const Tensor scalar = Tensor::full({}, -1.0, DType::kFloat32, d);
    CHECK(ops::kl_div(scalar, t.to(DType::kBFloat16)).dtype() == DType::kBFloat16);
    CHECK(ops::mse_loss(scalar, t.to(DType::kBFloat16)).dtype() == DType::kFloat32);
    CHECK_THROWS_AS(ops::kl_div(x, t.to(DType::kInt32)), InvalidArgument);
    CHECK_THROWS_AS(ops::kl_div(x.to(DType::kBool), t), InvalidArgument);
  });
}

TEST_CASE("explain names the loss family and the dtype and shape each loss returns") {
  const Device h = host_device();
  const ops::PlanTarget target{h.capabilities(), h.str(), h.display_name()};
  const Tensor x = logits(h, DType::kBFloat16);
  const Tensor t = targets({2, 0, 3}, h);
  auto said = [&](const char* op, std::vector<DType> dt, std::vector<Shape> s) {
    const ops::OpExplanation e = ops::explain(op, dt, s, target);
    CAPTURE(e.refusal);
    CHECK_FALSE(e.refused);
    CHECK(e.family == "loss");
    return e.output;
  };
  auto described = [](const Tensor& r) {
    return std::string(dtype_name(r.dtype())) + " " + to_string(r.shape());
  };
  CHECK(said("cross_entropy", {DType::kBFloat16, DType::kInt64}, {{3, 4}, {3}}) ==
        described(ops::cross_entropy(x, t)));
  CHECK(said("cross_entropy", {DType::kBFloat16, DType::kFloat64}, {{3, 4}, {3, 4}}) ==
        described(ops::cross_entropy(x, x.to(DType::kFloat64))));
  CHECK(said("nll_loss", {DType::kBFloat16, DType::kInt32, DType::kBFloat16}, {{3, 4}, {3}, {4}}) ==
        described(ops::nll_loss(x, t.to(DType::kInt32), Tensor::ones({4}, DType::kBFloat16))));
  CHECK(said("binary_cross_entropy_with_logits", {DType::kFloat64, DType::kFloat32},
             {{3, 4}, {3, 4}}) ==
        described(
            ops::binary_cross_entropy_with_logits(x.to(DType::kFloat64), x.to(DType::kFloat32))));
  CHECK(said("mse_loss", {DType::kFloat16, DType::kFloat32}, {{3, 4}, {4}}) ==
        described(ops::mse_loss(x.to(DType::kFloat16), x.to(DType::kFloat32))));
  const ops::OpExplanation bad =
      ops::explain("cross_entropy", {DType::kFloat32, DType::kInt64}, {{3, 4}, {2}}, target);
  CHECK(bad.refused);
  CHECK(bad.refusal.find("batch_size") != std::string::npos);
}
