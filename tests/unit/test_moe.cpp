// grouped_matmul, moe_route, moe_permute, moe_combine and fused_moe on every present device:
// hand-computed values, a float64 reference written here (random non-zero data, sizes that are
// not tile multiples, experts without tokens, both weight layouts, int32 and int64 offsets,
// top_k 1 and 2), bad offsets raised as DeviceFault with their fields (the device usable
// afterwards), and the shape and dtype errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/capability_resolver.hpp"
#include "core/ops/explain.hpp"
#include "nbx/nbx.hpp"
#include "tests/unit/expect_fault.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;
using ops::GroupedWeights;

namespace {

using testing::present_devices;

std::vector<double> values_of(const Tensor& t) {
  return t.to(host_device()).to(DType::kFloat64).contiguous().to_host<double>();
}

std::vector<std::int64_t> ints_of(const Tensor& t) {
  return t.to(host_device()).to(DType::kInt64).contiguous().to_host<std::int64_t>();
}

// Seeded values in [lo, hi] away from zero (|x| >= 0.05), as `dtype` on `d`.
Tensor random(const Shape& shape, DType dtype, const Device& d, unsigned seed, float lo = -1,
              float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(std::size_t(numel(shape)));
  for (float& x : v) {
    x = u(rng);
    if (std::fabs(x) < 0.05f) x = x < 0 ? -0.05f : 0.05f;
  }
  return Tensor::from_host(v, shape).to(dtype).to(d);
}

// One rounding of the dtype relative to `scale` (the sum of the magnitudes that met in the
// result), times `roundings`: the results the ops round on the way.
double tolerance(DType t, double scale, int roundings) {
  const double eps = t == DType::kFloat16    ? std::ldexp(1.0, -10)
                     : t == DType::kBFloat16 ? std::ldexp(1.0, -7)
                                             : std::ldexp(1.0, -20);
  return eps * roundings * std::max(scale, 1e-3);
}

void check_close(const std::vector<double>& got, const std::vector<double>& want,
                 const std::vector<double>& scale, DType t, int roundings) {
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tolerance(t, scale[i], roundings)) && bad++ < 5)
      FAIL_CHECK("element " << i << ": got " << got[i] << ", want " << want[i] << " (scale "
                            << scale[i] << ")");
  CHECK(bad == 0);
}

// out[r] = a[r] @ b[e]^T (b [E, N, K] values) for the rows of each group; `scale` gets
// Σ |a·b| per element.
void grouped_reference(const std::vector<double>& a, const std::vector<double>& b,
                       const std::vector<std::int64_t>& offsets, std::int64_t n, std::int64_t k,
                       std::vector<double>& out, std::vector<double>& scale) {
  const std::int64_t rows = offsets.back();
  out.assign(std::size_t(rows * n), 0.0);
  scale.assign(std::size_t(rows * n), 0.0);
  for (std::size_t e = 0; e + 1 < offsets.size(); ++e)
    for (std::int64_t r = offsets[e]; r < offsets[e + 1]; ++r)
      for (std::int64_t c = 0; c < n; ++c)
        for (std::int64_t i = 0; i < k; ++i) {
          const double x =
              a[std::size_t(r * k + i)] * b[std::size_t((std::int64_t(e) * n + c) * k + i)];
          out[std::size_t(r * n + c)] += x;
          scale[std::size_t(r * n + c)] += std::fabs(x);
        }
}

bool holds(const Device& d, DType t) {
  return t != DType::kBFloat16 || d.capabilities().bf16.value != Bf16Support::kNone;
}

const DType kFloats[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32};

double silu(double x) {
  return x / (1 + std::exp(-x));
}

}  // namespace

TEST_CASE("grouped_matmul: hand-computed products, an expert without rows") {
  // Expert 0 takes rows 0-1, expert 1 none, expert 2 row 2.
  const std::vector<float> a{1, 2, 3, 4, 5, 6};                     // [3, 2]
  const std::vector<float> b{1, 0, 0, 1, 9, 9, 9, 9, 2, 1, -1, 3};  // [3, 2, 2]: [E, N, K]
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const Tensor out = ops::grouped_matmul(
        Tensor::from_host(a, {3, 2}).to(d), Tensor::from_host(b, {3, 2, 2}).to(d),
        Tensor::from_host(std::vector<std::int64_t>{0, 2, 2, 3}, {4}).to(d));
    // Rows 0, 1 times [[1, 0], [0, 1]]^T; row 2 [5, 6] times [[2, 1], [-1, 3]]^T = [16, 13].
    CHECK(values_of(out) == std::vector<double>{1, 2, 3, 4, 16, 13});
    CHECK(out.dtype() == DType::kFloat32);
  }
}

TEST_CASE("grouped_matmul reads expanded and transposed operands as their contiguous copies") {
  // An expanded weight has stride 0 in its last two dims, which no vendor GEMM reads: the
  // wrapper copies it where it takes cuBLASLt (a torch_diff case refused on the H100).
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const Tensor a = random({5, 3}, DType::kFloat32, d, 41);
    const Tensor column = random({2, 4, 1}, DType::kFloat32, d, 42);
    const Tensor b = column.expand({2, 4, 3});  // [E, N, K], stride 0 along K
    const Tensor offsets = Tensor::from_host(std::vector<std::int64_t>{0, 2, 5}, {3}).to(d);
    const Tensor want = ops::grouped_matmul(a.contiguous(), b.contiguous(), offsets);
    CHECK(values_of(ops::grouped_matmul(a, b, offsets)) == values_of(want));
    const Tensor at = random({3, 5}, DType::kFloat32, d, 43).transpose(0, 1);
    CHECK(values_of(ops::grouped_matmul(at, b, offsets)) ==
          values_of(ops::grouped_matmul(at.contiguous(), b.contiguous(), offsets)));
  }
}

TEST_CASE("grouped_matmul matches the float64 reference: every dtype, both layouts, both widths") {
  std::mt19937 rng(20261206);
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    for (DType t : kFloats) {
      if (!holds(d, t)) continue;
      CAPTURE(dtype_name(t));
      // Sizes that are no tile multiple; K a multiple of 8 in the first (the mma variant
      // where a device has it), not in the second (the tiled one everywhere).
      for (const auto& [rows_per, n, k] :
           {std::tuple<std::int64_t, std::int64_t, std::int64_t>{70, 136, 40}, {33, 21, 13}}) {
        const std::int64_t experts = 5;
        std::vector<std::int64_t> counts{rows_per, 0, 3, rows_per * 2 + 1, 1};
        std::vector<std::int64_t> offsets{0};
        for (std::int64_t c : counts) offsets.push_back(offsets.back() + c);
        const std::int64_t rows = offsets.back();
        const unsigned seed = unsigned(rng());
        CAPTURE(seed);
        const Tensor a = random({rows, k}, t, d, seed);
        const Tensor b = random({experts, n, k}, t, d, seed + 1);
        std::vector<double> want, scale;
        grouped_reference(values_of(a), values_of(b), offsets, n, k, want, scale);
        for (DType ot : {DType::kInt64, DType::kInt32}) {
          const Tensor off = Tensor::from_host(offsets, {experts + 1}).to(ot).to(d);
          check_close(values_of(ops::grouped_matmul(a, b, off)), want, scale, t, 2);
          // [E, K, N] weights: the same values transposed in memory.
          const Tensor b_kn = b.transpose(1, 2).contiguous();
          check_close(values_of(ops::grouped_matmul(a, b_kn, off, GroupedWeights::kKN)), want,
                      scale, t, 2);
        }
        // A strided a (every other column of a wider tensor) and a transposed-view b.
        const Tensor wide = random({rows, 2 * k}, t, d, seed + 2);
        const Tensor a_view = wide.slice(1, 0, 2 * k, 2);
        const Tensor b_view = b.transpose(1, 2).contiguous().transpose(1, 2);
        grouped_reference(values_of(a_view), values_of(b), offsets, n, k, want, scale);
        check_close(values_of(ops::grouped_matmul(a_view, b_view,
                                                  Tensor::from_host(offsets, {experts + 1}).to(d))),
                    want, scale, t, 2);
      }
    }
  }
}

TEST_CASE("grouped_matmul: offsets that do not partition the rows are a DeviceFault") {
  struct Bad {
    std::vector<std::int64_t> offsets;
    std::int64_t index, position;
    const char* words;
  };
  const Bad cases[] = {
      {{0, 5, 3, 12}, 3, 2, "must start at 0, never decrease and end at the row count 12"},
      {{1, 5, 8, 12}, 1, 0, "must start at 0"},
      {{0, 5, 8, 11}, 11, 3, "end at the row count 12"},
      {{0, 5, 13, 12}, 13, 2, "out of range [0, 12] (the rows)"},
      {{0, -4, 8, 12}, -4, 1, "out of range [0, 12] (the rows)"},
  };
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    for (const Bad& c : cases) {
      // int64 offsets with float32 operands (the tiled kernel), int32 with bfloat16 (CUDA's
      // mma kernel, which checks the offsets too).
      for (DType ot : {DType::kInt64, DType::kInt32}) {
        const DType t = ot == DType::kInt64 ? DType::kFloat32 : DType::kBFloat16;
        if (!holds(d, t)) continue;
        const Tensor a = random({12, 16}, t, d, 71);
        const Tensor b = random({3, 24, 16}, t, d, 72);
        const Tensor off = Tensor::from_host(c.offsets, {4}).to(ot).to(d);
        const testing::FaultOutcome o =
            testing::run_expecting_fault(d, [&] { return ops::grouped_matmul(a, b, off); });
        REQUIRE_MESSAGE(o.fault.has_value(), o.other);
        CHECK(o.fault->op() == "grouped_matmul");
        CHECK(o.fault->device() == d.str());
        CHECK(o.fault->index() == c.index);
        CHECK(o.fault->bound() == 12);
        CHECK(o.fault->position() == c.position);
        CHECK((d.is_host() ? o.stage == "op" : o.stage != "op"));
        const std::string m = o.fault->what();
        CHECK_MESSAGE(m.find("grouped_matmul on " + d.str()) == 0, m);
        CHECK_MESSAGE(m.find("group offset " + std::to_string(c.position) + " is " +
                             std::to_string(c.index)) != std::string::npos,
                      m);
        CHECK_MESSAGE(m.find(c.words) != std::string::npos, m);
        CHECK_NOTHROW(d.synchronize());
      }
    }
    // The device still multiplies right afterwards.
    const Tensor out =
        ops::grouped_matmul(Tensor::from_host(std::vector<float>{1, 2}, {1, 2}).to(d),
                            Tensor::from_host(std::vector<float>{3, 4}, {1, 1, 2}).to(d),
                            Tensor::from_host(std::vector<std::int32_t>{0, 1}, {2}).to(d));
    CHECK(values_of(out) == std::vector<double>{11});
  }
}

TEST_CASE("grouped_matmul refuses bad operands by name") {
  const Device d = host_device();
  const Tensor a = random({6, 4}, DType::kFloat32, d, 81);
  const Tensor b = random({2, 3, 4}, DType::kFloat32, d, 82);
  const Tensor off = Tensor::from_host(std::vector<std::int64_t>{0, 3, 6}, {3});
  const auto refused = [&](const char* what, const std::function<void()>& f, const char* words) {
    CAPTURE(what);
    try {
      f();
      FAIL("accepted");
    } catch (const InvalidArgument& e) {
      const std::string m = e.what();
      CHECK_MESSAGE(m.find("grouped_matmul: ") == 0, m);
      CHECK_MESSAGE(m.find(words) != std::string::npos, m);
    }
  };
  refused(
      "K",
      [&] {
        ops::grouped_matmul(random({6, 5}, DType::kFloat32, d, 1), b, off);
      },
      "a's K 5 differs from b's 4");
  refused(
      "offsets shape",
      [&] {
        ops::grouped_matmul(a, b, Tensor::from_host(std::vector<std::int64_t>{0, 6}, {2}));
      },
      "group_offsets must be [E + 1] = [3]");
  refused(
      "offsets dtype", [&] { ops::grouped_matmul(a, b, off.to(DType::kFloat32)); },
      "group_offsets must be int32 or int64, got float32");
  refused(
      "mixed dtypes", [&] { ops::grouped_matmul(a.to(DType::kBFloat16), b, off); },
      "one dtype, got bfloat16 and float32");
  refused(
      "float64", [&] { ops::grouped_matmul(a.to(DType::kFloat64), b.to(DType::kFloat64), off); },
      "float16, bfloat16 or float32, got float64");
  refused(
      "int32", [&] { ops::grouped_matmul(a.to(DType::kInt32), b.to(DType::kInt32), off); },
      "got int32");
  refused(
      "a 3-d",
      [&] {
        ops::grouped_matmul(a.view({2, 3, 4}), b, off);
      },
      "a must be [rows, K]");
  refused(
      "b 2-d",
      [&] {
        ops::grouped_matmul(a, b.view({6, 4}), off);
      },
      "b must be [E, N, K]");
}

TEST_CASE("moe_route: softmax, top-k, renormalised — hand-computed") {
  // Logits 0, ln 2, ln 4: probabilities 1/7, 2/7, 4/7.
  const std::vector<float> logits{
      0, float(std::log(2.0)), float(std::log(4.0)), float(std::log(4.0)), 0, float(std::log(2.0))};
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const Tensor x = Tensor::from_host(logits, {2, 3}).to(d);
    const ops::MoeRouting r = ops::moe_route(x, 2);
    CHECK(r.weights.dtype() == DType::kFloat32);
    CHECK(r.expert_ids.dtype() == DType::kInt32);
    CHECK(r.weights.shape() == Shape{2, 2});
    CHECK(ints_of(r.expert_ids) == std::vector<std::int64_t>{2, 1, 0, 2});
    const std::vector<double> w = values_of(r.weights);
    for (std::size_t i = 0; i < 4; ++i)
      CHECK(w[i] == doctest::Approx(i % 2 == 0 ? 2.0 / 3 : 1.0 / 3).epsilon(1e-6));
    const std::vector<double> raw = values_of(ops::moe_route(x, 1, false).weights);
    CHECK(raw[0] == doctest::Approx(4.0 / 7).epsilon(1e-6));
    CHECK(raw[1] == doctest::Approx(4.0 / 7).epsilon(1e-6));
    CHECK(values_of(ops::moe_route(x.to(DType::kBFloat16), 1).weights) ==
          std::vector<double>{1, 1});
  }
  CHECK_THROWS_AS(ops::moe_route(Tensor::zeros({2, 3}, DType::kFloat32), 4), InvalidArgument);
  CHECK_THROWS_AS(ops::moe_route(Tensor::zeros({2, 3}, DType::kFloat32), 0), InvalidArgument);
  CHECK_THROWS_AS(ops::moe_route(Tensor::zeros({2, 3}, DType::kInt32), 1), InvalidArgument);
  CHECK_THROWS_AS(ops::moe_route(Tensor::zeros({6}, DType::kFloat32), 1), InvalidArgument);
}

TEST_CASE("moe_permute: stable grouping, exclusive-scan offsets, the inverse; bad ids fault") {
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    for (DType t : {DType::kInt32, DType::kInt64}) {
      const Tensor ids =
          Tensor::from_host(std::vector<std::int64_t>{1, 0, 1, 2, 0, 1}, {3, 2}).to(t).to(d);
      const ops::MoePermutation p = ops::moe_permute(ids, 4);
      CHECK(ints_of(p.order) == std::vector<std::int64_t>{1, 4, 0, 2, 5, 3});
      CHECK(ints_of(p.group_offsets) == std::vector<std::int64_t>{0, 2, 5, 6, 6});
      CHECK(ints_of(p.inverse) == std::vector<std::int64_t>{2, 0, 3, 5, 1, 4});
    }
    const Tensor bad = Tensor::from_host(std::vector<std::int64_t>{1, 0, 4, 2}, {2, 2}).to(d);
    const testing::FaultOutcome o =
        testing::run_expecting_fault(d, [&] { return ops::moe_permute(bad, 4).order; });
    REQUIRE_MESSAGE(o.fault.has_value(), o.other);
    CHECK(o.fault->index() == 4);
    CHECK(o.fault->bound() == 4);
    CHECK_NOTHROW(d.synchronize());
  }
  CHECK_THROWS_AS(ops::moe_permute(Tensor::zeros({3, 2}, DType::kFloat32), 4), InvalidArgument);
  CHECK_THROWS_AS(ops::moe_permute(Tensor::zeros({6}, DType::kInt64), 4), InvalidArgument);
}

TEST_CASE("moe_combine: each token's rows weighted and summed — hand-computed") {
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    // Grouped rows [10, 1], [20, 2], [30, 3]; token 0 takes rows 2 and 0, token 1 row 1 twice.
    const Tensor rows = Tensor::from_host(std::vector<float>{10, 1, 20, 2, 30, 3}, {3, 2}).to(d);
    const Tensor w = Tensor::from_host(std::vector<float>{0.5f, 0.25f, 1, 2}, {2, 2}).to(d);
    const Tensor inv = Tensor::from_host(std::vector<std::int64_t>{2, 0, 1, 1}, {4}).to(d);
    // The rows count T·k = 4 ≠ 3: refused.
    CHECK_THROWS_AS(ops::moe_combine(rows, w, inv), InvalidArgument);
    const Tensor rows4 =
        Tensor::from_host(std::vector<float>{10, 1, 20, 2, 30, 3, 40, 4}, {4, 2}).to(d);
    CHECK(values_of(ops::moe_combine(rows4, w, inv)) ==
          std::vector<double>{0.5 * 30 + 0.25 * 10, 0.5 * 3 + 0.25 * 1, 60, 6});
  }
}

TEST_CASE("fused_moe matches a float64 loop over experts: every dtype, top_k 1 and 2") {
  const std::int64_t T = 37, D = 24, F = 20, E = 5;
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    for (DType t : kFloats) {
      if (!holds(d, t)) continue;
      for (std::int64_t top_k : {1, 2}) {
        CAPTURE(dtype_name(t));
        CAPTURE(top_k);
        const unsigned seed = unsigned(1000 * top_k + int(t));
        const Tensor h = random({T, D}, t, d, seed);
        // Logits that leave expert 3 without tokens: it is never among the top k.
        Tensor logits = random({T, E}, DType::kFloat32, d, seed + 1, -2, 2);
        std::vector<double> lv = values_of(logits);
        for (std::int64_t i = 0; i < T; ++i) lv[std::size_t(i * E + 3)] = -30;
        logits = Tensor::from_host(lv, {T, E}).to(DType::kFloat32).to(t).to(d);
        const Tensor w13 = random({E, 2 * F, D}, t, d, seed + 2, -0.5, 0.5);
        const Tensor w2 = random({E, D, F}, t, d, seed + 3, -0.5, 0.5);
        const Tensor out = ops::fused_moe(h, logits, w13, w2, top_k);
        CHECK(out.dtype() == t);
        CHECK(out.shape() == Shape{T, D});

        const std::vector<double> hv = values_of(h), lg = values_of(logits), a13 = values_of(w13),
                                  a2 = values_of(w2);
        std::vector<double> want(std::size_t(T * D), 0.0), scale(std::size_t(T * D), 0.0);
        for (std::int64_t tok = 0; tok < T; ++tok) {
          std::vector<double> p(static_cast<std::size_t>(E));
          const double mx = *std::max_element(lg.begin() + tok * E, lg.begin() + (tok + 1) * E);
          for (std::int64_t e = 0; e < E; ++e)
            p[std::size_t(e)] = std::exp(lg[std::size_t(tok * E + e)] - mx);
          std::vector<std::int64_t> idx(static_cast<std::size_t>(E));
          std::iota(idx.begin(), idx.end(), 0);
          std::stable_sort(idx.begin(), idx.end(),
                           [&](auto x, auto y) { return p[std::size_t(x)] > p[std::size_t(y)]; });
          double total = 0;
          for (std::int64_t j = 0; j < top_k; ++j) total += p[std::size_t(idx[std::size_t(j)])];
          for (std::int64_t j = 0; j < top_k; ++j) {
            const std::int64_t e = idx[std::size_t(j)];
            const double w = p[std::size_t(e)] / total;
            std::vector<double> act(static_cast<std::size_t>(F)),
                act_scale(static_cast<std::size_t>(F));
            for (std::int64_t f = 0; f < F; ++f) {
              double g = 0, u = 0, gs = 0, us = 0;
              for (std::int64_t i = 0; i < D; ++i) {
                const double x = hv[std::size_t(tok * D + i)];
                g += x * a13[std::size_t((e * 2 * F + f) * D + i)];
                u += x * a13[std::size_t((e * 2 * F + F + f) * D + i)];
                gs += std::fabs(x * a13[std::size_t((e * 2 * F + f) * D + i)]);
                us += std::fabs(x * a13[std::size_t((e * 2 * F + F + f) * D + i)]);
              }
              act[std::size_t(f)] = silu(g) * u;
              act_scale[std::size_t(f)] = (std::fabs(g) + gs) * (std::fabs(u) + us);
            }
            for (std::int64_t c = 0; c < D; ++c) {
              double y = 0, ys = 0;
              for (std::int64_t f = 0; f < F; ++f) {
                const double wv = a2[std::size_t((e * D + c) * F + f)];
                y += wv * act[std::size_t(f)];
                ys += std::fabs(wv) * act_scale[std::size_t(f)];
              }
              want[std::size_t(tok * D + c)] += w * y;
              scale[std::size_t(tok * D + c)] += w * ys;
            }
          }
        }
        // Rounded: each GEMM's result, the activation, the combine's result.
        check_close(values_of(out), want, scale, t, 4);
      }
    }
  }
}

TEST_CASE("fused_moe refuses bad operands by name") {
  const Device d = host_device();
  const Tensor h = random({4, 8}, DType::kFloat32, d, 91);
  const Tensor lg = random({4, 3}, DType::kFloat32, d, 92);
  const Tensor w13 = random({3, 10, 8}, DType::kFloat32, d, 93);
  const Tensor w2 = random({3, 8, 5}, DType::kFloat32, d, 94);
  CHECK_NOTHROW(ops::fused_moe(h, lg, w13, w2, 2));
  const auto refused = [&](const char* what, const std::function<void()>& f, const char* words) {
    CAPTURE(what);
    try {
      f();
      FAIL("accepted");
    } catch (const InvalidArgument& e) {
      const std::string m = e.what();
      CHECK_MESSAGE(m.find("fused_moe: ") == 0, m);
      CHECK_MESSAGE(m.find(words) != std::string::npos, m);
    }
  };
  refused(
      "odd 2F",
      [&] {
        ops::fused_moe(h, lg, random({3, 9, 8}, DType::kFloat32, d, 1), w2, 2);
      },
      "w13 [E, 2F, D]");
  refused(
      "w2 shape",
      [&] {
        ops::fused_moe(h, lg, w13, random({3, 8, 4}, DType::kFloat32, d, 2), 2);
      },
      "w2 [E, D, F]");
  refused(
      "logits",
      [&] {
        ops::fused_moe(h, random({4, 2}, DType::kFloat32, d, 3), w13, w2, 2);
      },
      "router_logits must be [T, E] = [4, 3]");
  refused(
      "top_k", [&] { ops::fused_moe(h, lg, w13, w2, 4); }, "top_k 4 must lie in [1, 3]");
  refused(
      "dtypes", [&] { ops::fused_moe(h.to(DType::kBFloat16), lg, w13, w2, 2); }, "share one dtype");
  refused(
      "float64",
      [&] {
        ops::fused_moe(h.to(DType::kFloat64), lg, w13.to(DType::kFloat64), w2.to(DType::kFloat64),
                       2);
      },
      "got float64");
}

TEST_CASE("explain: the mma variant where the matrix unit, the stages and shared memory allow") {
  const auto variant_on = [](const char* arch, DType t, std::string& stages) {
    const Capabilities caps = capabilities_for_arch(arch);
    const ops::OpExplanation e =
        ops::explain("grouped_matmul", {t, t, DType::kInt64}, {{8192, 4096}, {8, 28672, 4096}, {9}},
                     {caps, arch, std::string("arch ") + arch});
    REQUIRE_MESSAGE(!e.refused, e.kernel);
    std::string variant;
    for (const ops::PlanChoice& c : e.choices) {
      if (c.what == "variant") variant = c.value;
      if (c.what == "stages" || c.what == "mma") stages = c.value + ": " + c.reason;
    }
    return variant;
  };
  std::string why;
  // By default CUDA takes the vendor GEMM (where cuBLASLt loads); AMD and Vulkan their tiles.
  CHECK(variant_on("nvidia/sm_90", DType::kBFloat16, why) == "grouped_matmul.blas");
  CHECK(variant_on("amd/gfx90a", DType::kBFloat16, why) == "grouped_matmul.tiled");
  // NBX_GROUPED_MATMUL=own: the project's kernels, mma where it runs.
  const char* saved = std::getenv("NBX_GROUPED_MATMUL");
  setenv("NBX_GROUPED_MATMUL", "own", 1);
  CHECK(variant_on("nvidia/sm_90", DType::kBFloat16, why) == "grouped_matmul.mma");
  CHECK_MESSAGE(why.find("cp.async stages") != std::string::npos, why);
  CHECK(variant_on("nvidia/sm_80", DType::kFloat16, why) == "grouped_matmul.mma");
  // float32 has no mma path; sm_70's mma takes float16 but has no cp.async (2 stages).
  CHECK(variant_on("nvidia/sm_90", DType::kFloat32, why) == "grouped_matmul.tiled");
  CHECK(variant_on("nvidia/sm_70", DType::kFloat16, why) == "grouped_matmul.tiled");
  CHECK_MESSAGE(why.find("pipelining.max_num_stages is 2") != std::string::npos, why);
  CHECK(variant_on("amd/gfx90a", DType::kBFloat16, why) == "grouped_matmul.tiled");
  CHECK(variant_on("mesa/llvmpipe", DType::kFloat32, why) == "grouped_matmul.tiled");
  if (saved)
    setenv("NBX_GROUPED_MATMUL", saved, 1);
  else
    unsetenv("NBX_GROUPED_MATMUL");
}

TEST_CASE(
    "NBX_GROUPED_MATMUL=tiled runs the tiled kernel everywhere; =mma and =blas are refused by "
    "name where they cannot run") {
  const char* saved = std::getenv("NBX_GROUPED_MATMUL");
  const std::vector<std::int64_t> offsets{0, 70, 70, 203};
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const Tensor a = random({203, 40}, DType::kFloat16, d, 501);
    const Tensor b = random({3, 136, 40}, DType::kFloat16, d, 502);
    const Tensor off = Tensor::from_host(offsets, {4}).to(d);
    std::vector<double> want, scale;
    grouped_reference(values_of(a), values_of(b), offsets, 136, 40, want, scale);
    setenv("NBX_GROUPED_MATMUL", "tiled", 1);
    check_close(values_of(ops::grouped_matmul(a, b, off)), want, scale, DType::kFloat16, 2);
    CHECK(d.context().backend_device().last_launch().variant == abi::kGroupedMatmulTiled);
    setenv("NBX_GROUPED_MATMUL", "mma", 1);
    if (d.id().backend == "cuda" && d.properties().compute_capability_major >= 8) {
      check_close(values_of(ops::grouped_matmul(a, b, off)), want, scale, DType::kFloat16, 2);
      CHECK(d.context().backend_device().last_launch().variant == abi::kGroupedMatmulMma);
    } else {
      CHECK_THROWS_AS(ops::grouped_matmul(a, b, off), Unsupported);
    }
    setenv("NBX_GROUPED_MATMUL", "blas", 1);
    if (d.context().backend_device().offers(KernelFamily::kGroupedMatmul,
                                            abi::kGroupedMatmulBlas)) {
      check_close(values_of(ops::grouped_matmul(a, b, off)), want, scale, DType::kFloat16, 2);
      CHECK(d.context().backend_device().last_launch().variant == abi::kGroupedMatmulBlas);
    } else {
      CHECK_THROWS_AS(ops::grouped_matmul(a, b, off), Unsupported);
    }
    setenv("NBX_GROUPED_MATMUL", "sideways", 1);
    CHECK_THROWS_AS(ops::grouped_matmul(a, b, off), InvalidArgument);
  }
  if (saved)
    setenv("NBX_GROUPED_MATMUL", saved, 1);
  else
    unsetenv("NBX_GROUPED_MATMUL");
}
