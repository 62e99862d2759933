// scaled_dot_product_attention on every present device against a naive float64 reference
// written here (loops, no library op), PyTorch's conventions: bool masks (true takes part),
// additive masks, causal top-left and bottom-right, grouped-query attention, rows that see no
// key (zeros), strided [B, S, H, D] inputs, half types; its refusals; the plan's tile clamp;
// the fused paths (flash, split_kv) forced by NBX_ATTENTION or chosen by the plan, checked to
// be the path the plan names, on every device.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include "core/capability_resolver.hpp"
#include "core/ops/explain.hpp"
#include "nbx/nbx.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

// Values in ±(0.1 … 1.5), never zero, rounded to `t` so the reference sees what the device does.
std::vector<double> draw(std::size_t n, std::uint32_t seed, DType t) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> mag(0.1, 1.5);
  std::vector<double> v(n);
  for (double& x : v) x = (g() & 1 ? 1 : -1) * mag(g);
  const Tensor r = Tensor::from_host(v, {std::int64_t(n)}).to(t).to(DType::kFloat64);
  return r.to_host<double>();
}

// The allowed-key rule of one (batch, head, row, key); nullopt = takes part with bias 0.
using Bias = std::function<double(std::int64_t b, std::int64_t h, std::int64_t i,
                                  std::int64_t j)>;  // -inf excludes

struct Problem {
  std::int64_t B = 1, Hq = 1, Hk = 1, L = 1, S = 1, E = 1, Ev = 1;
  double scale = 0;  // 0: 1/sqrt(E)
};

// out[b][h][i][:] for q [B, Hq, L, E], k [B, Hk, S, E], v [B, Hk, S, Ev], row-major.
std::vector<double> reference(const Problem& p, const std::vector<double>& q,
                              const std::vector<double>& k, const std::vector<double>& v,
                              const Bias& bias) {
  const double scale = p.scale ? p.scale : 1 / std::sqrt(double(p.E));
  std::vector<double> out(std::size_t(p.B * p.Hq * p.L * p.Ev), 0.0);
  const std::int64_t group = p.Hq / p.Hk;
  for (std::int64_t b = 0; b < p.B; ++b)
    for (std::int64_t h = 0; h < p.Hq; ++h)
      for (std::int64_t i = 0; i < p.L; ++i) {
        const std::int64_t kh = h / group;
        std::vector<double> s(std::size_t(p.S));
        double mx = -INFINITY;
        for (std::int64_t j = 0; j < p.S; ++j) {
          double dot = 0;
          for (std::int64_t e = 0; e < p.E; ++e)
            dot += q[std::size_t(((b * p.Hq + h) * p.L + i) * p.E + e)] *
                   k[std::size_t(((b * p.Hk + kh) * p.S + j) * p.E + e)];
          s[std::size_t(j)] = dot * scale + (bias ? bias(b, h, i, j) : 0.0);
          mx = std::max(mx, s[std::size_t(j)]);
        }
        if (mx == -INFINITY) continue;  // sees no key: zeros
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (std::int64_t j = 0; j < p.S; ++j)
          for (std::int64_t e = 0; e < p.Ev; ++e)
            out[std::size_t(((b * p.Hq + h) * p.L + i) * p.Ev + e)] +=
                s[std::size_t(j)] / sum * v[std::size_t(((b * p.Hk + kh) * p.S + j) * p.Ev + e)];
      }
  return out;
}

struct Inputs {
  std::vector<double> q, k, v;
  Tensor tq, tk, tv;
};

Inputs inputs(const Problem& p, DType t, const Device& d, std::uint32_t seed) {
  Inputs in;
  in.q = draw(std::size_t(p.B * p.Hq * p.L * p.E), seed, t);
  in.k = draw(std::size_t(p.B * p.Hk * p.S * p.E), seed + 1, t);
  in.v = draw(std::size_t(p.B * p.Hk * p.S * p.Ev), seed + 2, t);
  in.tq = Tensor::from_host(in.q, {p.B, p.Hq, p.L, p.E}, d).to(t);
  in.tk = Tensor::from_host(in.k, {p.B, p.Hk, p.S, p.E}, d).to(t);
  in.tv = Tensor::from_host(in.v, {p.B, p.Hk, p.S, p.Ev}, d).to(t);
  return in;
}

void check_near(const Tensor& got, const std::vector<double>& want, double tol) {
  const std::vector<double> g = got.to(DType::kFloat64).to_host<double>();
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(g[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  }
}

double tolerance(DType t) {
  return t == DType::kBFloat16 ? 1e-2 : t == DType::kFloat16 ? 2e-3 : 2e-6;
}

bool holds(const Device& d, DType t) {
  const Capabilities& c = d.capabilities();
  if (t == DType::kFloat64) return c.fp64.value;
  if (t == DType::kFloat16) return c.fp16.value;
  if (t == DType::kBFloat16) return c.bf16.value != Bf16Support::kNone;
  return true;
}

}  // namespace

TEST_CASE("attention of one query over two keys, by hand") {
  // softmax([0, 1]) = [1, e] / (1 + e); out = (1·1 + e·3) / (1 + e).
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor q = Tensor::from_host(std::vector<float>{1}, {1, 1}, d);
    const Tensor k = Tensor::from_host(std::vector<float>{0, 1}, {2, 1}, d);
    const Tensor v = Tensor::from_host(std::vector<float>{1, 3}, {2, 1}, d);
    const double e = std::exp(1.0);
    const Tensor out = ops::scaled_dot_product_attention(q, k, v, {}, false, 1.0);
    CHECK(out.shape() == Shape{1, 1});
    CHECK(out.to_host<float>()[0] == doctest::Approx((1 + 3 * e) / (1 + e)).epsilon(1e-6));
  }
}

TEST_CASE("attention against the float64 reference: plain, scale, every float dtype") {
  const Problem p{2, 3, 3, 5, 7, 8, 6};
  for (const Device& d : testing::present_devices())
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
      CAPTURE(d.str());
      CAPTURE(dtype_name(t));
      if (!holds(d, t)) continue;
      const Inputs in = inputs(p, t, d, 11);
      const Tensor out = ops::scaled_dot_product_attention(in.tq, in.tk, in.tv);
      CHECK(out.dtype() == t);
      CHECK(out.shape() == Shape{2, 3, 5, 6});
      check_near(out, reference(p, in.q, in.k, in.v, {}), tolerance(t));
      Problem scaled = p;
      scaled.scale = 0.7;
      check_near(ops::scaled_dot_product_attention(in.tq, in.tk, in.tv, {}, false, 0.7),
                 reference(scaled, in.q, in.k, in.v, {}), tolerance(t));
    }
}

TEST_CASE("causal attention: top-left as PyTorch's is_causal, bottom-right as causal_lower_right") {
  for (const Device& d : testing::present_devices())
    for (auto lengths : {std::pair<std::int64_t, std::int64_t>{5, 7}, {7, 5}, {6, 6}, {1, 9}}) {
      // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
      const std::int64_t L = lengths.first, S = lengths.second;
      CAPTURE(d.str());
      CAPTURE(L);
      CAPTURE(S);
      const Problem p{1, 2, 2, L, S, 4, 3};
      const Inputs in = inputs(p, DType::kFloat32, d, 21);
      const Tensor top = ops::scaled_dot_product_attention(in.tq, in.tk, in.tv, {}, true);
      check_near(top,
                 reference(p, in.q, in.k, in.v,
                           [](auto, auto, auto i, auto j) { return j <= i ? 0.0 : -INFINITY; }),
                 2e-6);
      const Tensor bottom = ops::scaled_dot_product_attention(
          in.tq, in.tk, in.tv, {}, true, {}, false, ops::CausalAlignment::kBottomRight);
      const std::int64_t shift = S - L;
      check_near(bottom,
                 reference(p, in.q, in.k, in.v,
                           [shift](auto, auto, auto i, auto j) {
                             return j <= i + shift ? 0.0 : -INFINITY;
                           }),
                 2e-6);
      if (L > S) {  // the first L - S rows see no key: zeros, as PyTorch's math path
        const std::vector<float> got = bottom.to_host<float>();
        for (std::int64_t x = 0; x < (L - S) * 3; ++x) CHECK(got[std::size_t(x)] == 0.0f);
      }
    }
}

TEST_CASE("bool and additive masks broadcast; a row that sees no key gives zeros") {
  const Problem p{2, 2, 2, 4, 6, 5, 3};
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Inputs in = inputs(p, DType::kFloat32, d, 31);
    // [L, S] bool: row 2 fully excluded, others a pattern.
    std::vector<bool> allow(std::size_t(p.L * p.S));
    for (std::int64_t i = 0; i < p.L; ++i)
      for (std::int64_t j = 0; j < p.S; ++j)
        allow[std::size_t(i * p.S + j)] = i != 2 && (i + j) % 3 != 1;
    const Tensor m = Tensor::from_host(allow, {p.L, p.S}, d);
    const Tensor out = ops::scaled_dot_product_attention(in.tq, in.tk, in.tv, m);
    const auto rule = [&](auto, auto, auto i, auto j) {
      return allow[std::size_t(i * p.S + j)] ? 0.0 : -INFINITY;
    };
    check_near(out, reference(p, in.q, in.k, in.v, rule), 2e-6);
    const std::vector<float> got = out.to_host<float>();
    for (std::int64_t bh = 0; bh < p.B * p.Hq; ++bh)
      for (std::int64_t e = 0; e < p.Ev; ++e)
        CHECK(got[std::size_t((bh * p.L + 2) * p.Ev + e)] == 0.0f);
    // [B, 1, 1, S] bool: batch 1 sees only the last two keys.
    std::vector<bool> keys(std::size_t(p.B * p.S));
    for (std::int64_t b = 0; b < p.B; ++b)
      for (std::int64_t j = 0; j < p.S; ++j)
        keys[std::size_t(b * p.S + j)] = b == 0 || j >= p.S - 2;
    check_near(ops::scaled_dot_product_attention(in.tq, in.tk, in.tv,
                                                 Tensor::from_host(keys, {p.B, 1, 1, p.S}, d)),
               reference(p, in.q, in.k, in.v,
                         [&](auto b, auto, auto, auto j) {
                           return keys[std::size_t(b * p.S + j)] ? 0.0 : -INFINITY;
                         }),
               2e-6);
    // Additive [S] (one row for all), finite values and one -inf; then a row all -inf.
    std::vector<float> add(std::size_t(p.S));
    for (std::int64_t j = 0; j < p.S; ++j) add[std::size_t(j)] = 0.25f * float(j) - 0.5f;
    add[3] = -INFINITY;
    check_near(
        ops::scaled_dot_product_attention(in.tq, in.tk, in.tv, Tensor::from_host(add, {p.S}, d)),
        reference(p, in.q, in.k, in.v,
                  [&](auto, auto, auto, auto j) { return double(add[std::size_t(j)]); }),
        2e-6);
    std::vector<float> rows(std::size_t(p.L * p.S), 0.5f);
    for (std::int64_t j = 0; j < p.S; ++j) rows[std::size_t(1 * p.S + j)] = -INFINITY;
    check_near(ops::scaled_dot_product_attention(in.tq, in.tk, in.tv,
                                                 Tensor::from_host(rows, {p.L, p.S}, d)),
               reference(p, in.q, in.k, in.v,
                         [&](auto, auto, auto i, auto j) {
                           return double(rows[std::size_t(i * p.S + j)]);
                         }),
               2e-6);
  }
}

TEST_CASE("grouped-query attention reads kv head h / (Hq / Hk) without a copy") {
  const Problem p{2, 8, 2, 3, 5, 4, 4};
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Inputs in = inputs(p, DType::kFloat32, d, 41);
    const Tensor out = ops::scaled_dot_product_attention(in.tq, in.tk, in.tv, {}, false, {}, true);
    CHECK(out.shape() == Shape{2, 8, 3, 4});
    check_near(out, reference(p, in.q, in.k, in.v, {}), 2e-6);
    // With a per-head bool mask [Hq, L, S] and causal (separately).
    std::vector<bool> allow(std::size_t(p.Hq * p.L * p.S));
    for (std::size_t x = 0; x < allow.size(); ++x) allow[x] = (x * 7) % 5 != 0;
    check_near(
        ops::scaled_dot_product_attention(
            in.tq, in.tk, in.tv, Tensor::from_host(allow, {p.Hq, p.L, p.S}, d), false, {}, true),
        reference(p, in.q, in.k, in.v,
                  [&](auto, auto h, auto i, auto j) {
                    return allow[std::size_t((h * p.L + i) * p.S + j)] ? 0.0 : -INFINITY;
                  }),
        2e-6);
    check_near(ops::scaled_dot_product_attention(in.tq, in.tk, in.tv, {}, true, {}, true),
               reference(p, in.q, in.k, in.v,
                         [](auto, auto, auto i, auto j) { return j <= i ? 0.0 : -INFINITY; }),
               2e-6);
    // Without enable_gqa, 8 and 2 heads do not broadcast.
    CHECK_THROWS_AS(ops::scaled_dot_product_attention(in.tq, in.tk, in.tv), InvalidArgument);
  }
}

TEST_CASE("the [B, S, H, D] layout is read in place through transpose(1, 2)") {
  const Problem p{2, 4, 4, 6, 6, 8, 8};
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Inputs in = inputs(p, DType::kFloat32, d, 51);
    // The same values stored as [B, S, H, D]: permute to that layout, copy, view back.
    const auto bshd = [](const Tensor& t) {
      return t.transpose(1, 2).contiguous().transpose(1, 2);
    };
    const Tensor q = bshd(in.tq), k = bshd(in.tk), v = bshd(in.tv);
    CHECK_FALSE(q.is_contiguous());
    check_near(ops::scaled_dot_product_attention(q, k, v, {}, true),
               reference(p, in.q, in.k, in.v,
                         [](auto, auto, auto i, auto j) { return j <= i ? 0.0 : -INFINITY; }),
               2e-6);
  }
}

TEST_CASE("long key rows run in chunks of query rows and agree with the reference") {
  // 70000 keys: 280 KB of float32 scores a query row, so the 256 MiB budget takes 896 rows
  // (whole 128-row tiles on the host) of the 1000: two chunks.
  const Problem p{1, 1, 1, 1000, 70000, 2, 2};
  const Device d = nbx::open("host");
  const Inputs in = inputs(p, DType::kFloat32, d, 61);
  const ops::PlanTarget target{d.capabilities(), d.str(), d.display_name(),
                               &d.context().backend_device()};
  ops::AttentionDims dims;
  dims.q_len = p.L, dims.kv_len = p.S, dims.head_dim = p.E, dims.value_dim = p.Ev;
  const ops::AttentionPlan plan = ops::plan_attention("test", DType::kFloat32, dims, target);
  CHECK(plan.chunk_rows < p.L);
  CHECK(plan.chunk_rows % plan.tile == 0);
  const Tensor out = ops::scaled_dot_product_attention(in.tq, in.tk, in.tv, {}, true);
  check_near(out,
             reference(p, in.q, in.k, in.v,
                       [](auto, auto, auto i, auto j) { return j <= i ? 0.0 : -INFINITY; }),
             1e-5);
}

TEST_CASE("empty sequences: no queries, or no keys (zeros, as PyTorch)") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor q0 = Tensor::zeros({2, 0, 4}, DType::kFloat32, d);
    const Tensor k = Tensor::ones({2, 3, 4}, DType::kFloat32, d);
    CHECK(ops::scaled_dot_product_attention(q0, k, k).shape() == Shape{2, 0, 4});
    const Tensor q = Tensor::ones({2, 3, 4}, DType::kFloat32, d);
    const Tensor k0 = Tensor::ones({2, 0, 4}, DType::kFloat32, d);
    const Tensor v0 = Tensor::ones({2, 0, 5}, DType::kFloat32, d);
    const std::vector<float> out = ops::scaled_dot_product_attention(q, k0, v0).to_host<float>();
    CHECK(out.size() == 2 * 3 * 5);
    for (float x : out) CHECK(x == 0.0f);
  }
}

TEST_CASE("attention refuses what PyTorch refuses, by name") {
  const Device d = nbx::open("host");
  const Tensor q = Tensor::ones({2, 4, 3, 8}, DType::kFloat32, d);
  const Tensor k = Tensor::ones({2, 4, 5, 8}, DType::kFloat32, d);
  const Tensor m = Tensor::ones({3, 5}, DType::kBool, d);
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InvalidArgument& e) {
      CHECK(e.op() == "scaled_dot_product_attention");
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message([&] {
          ops::scaled_dot_product_attention(q, k, k, m, true);
        }).find("should not be set when is_causal") != std::string::npos);
  CHECK(message([&] {
          ops::scaled_dot_product_attention(q, k.to(DType::kFloat64), k);
        }).find("same dtype") != std::string::npos);
  CHECK(message([&] {
          ops::scaled_dot_product_attention(q, k.narrow(3, 0, 4), k);
        }).find("last dim") != std::string::npos);
  CHECK(message([&] {
          ops::scaled_dot_product_attention(q, k, k.narrow(2, 0, 4));
        }).find("sequence lengths") != std::string::npos);
  CHECK(message([&] {
          ops::scaled_dot_product_attention(q.to(DType::kInt32), k.to(DType::kInt32),
                                            k.to(DType::kInt32));
        }).find("floating") != std::string::npos);
  CHECK(message([&] {
          ops::scaled_dot_product_attention(q, k, k, m.to(DType::kInt32));
        }).find("attn_mask dtype") != std::string::npos);
  CHECK(message([&] {
          ops::scaled_dot_product_attention(q, k, k, Tensor::ones({4, 5}, DType::kBool, d));
        }).find("does not broadcast") != std::string::npos);
  CHECK(message([&] {
          ops::scaled_dot_product_attention(q, k.narrow(1, 0, 3), k.narrow(1, 0, 3), {}, false, {},
                                            true);
        }).find("must divide") != std::string::npos);
  CHECK(message([&] {
          ops::scaled_dot_product_attention(q, k, k, {}, false, -1.0);
        }).find("scale") != std::string::npos);
  // Key and value heads that differ under enable_gqa: refused by name, not computed wrong.
  CHECK_THROWS_AS(ops::scaled_dot_product_attention(q, k.narrow(1, 0, 2), k.narrow(1, 0, 1), {},
                                                    false, {}, true),
                  Unsupported);
}

TEST_CASE("a block_ceiling under attention.min_tile is clamped up to it and announced once") {
  // An overlay raises sm_90's floor (16) above its ceiling (128): the plan takes the floor and
  // says so once per process, whichever call asks — the op's plan or explain.
  const std::string path =
      (std::filesystem::temp_directory_path() / "nbx_attention_floor.yml").string();
  std::ofstream(path) << "overlay: 1\ndescription: floor over ceiling\ncapabilities:\n"
                         "  attention: {min_tile: 256}\n";
  const Capabilities caps = capabilities_for_arch("nvidia/sm_90", "", path);
  std::filesystem::remove(path);
  CHECK(caps.attention.min_tile.value == 256);
  CHECK(caps.attention.block_ceiling.value == 128);
  const ops::PlanTarget target{caps, "nvidia/sm_90", "arch nvidia/sm_90"};
  ops::AttentionDims dims;
  dims.batch = 128, dims.q_len = 4096, dims.kv_len = 4096, dims.head_dim = 128,
  dims.value_dim = 128;
  std::ostringstream err;
  std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
  const ops::AttentionPlan plan =
      ops::plan_attention("scaled_dot_product_attention", DType::kBFloat16, dims, target);
  const ops::OpExplanation e = ops::explain(
      "scaled_dot_product_attention", {DType::kBFloat16, DType::kBFloat16, DType::kBFloat16},
      {{4, 32, 4096, 128}, {4, 8, 4096, 128}, {4, 8, 4096, 128}}, target);
  std::cerr.rdbuf(old);
  CHECK(plan.tile == 256);
  CHECK(plan.tile_clamped);
  const std::string said = err.str();
  CHECK(said.find("attention.block_ceiling proposes 128") != std::string::npos);
  CHECK(said.find("using 256") != std::string::npos);
  CHECK(said.find("proposes") == said.rfind("proposes"));  // once
  CHECK_FALSE(e.refused);
  bool tile_shown = false;
  for (const ops::PlanChoice& c : e.choices)
    if (c.what == "tile") {
      tile_shown = true;
      CHECK(c.value == "256 rows");
      CHECK(c.source.find("sm_90.yml") != std::string::npos);
      CHECK(c.source.find("overlay") != std::string::npos);
    }
  CHECK(tile_shown);
  CHECK(e.output == "bfloat16 [4, 32, 4096, 128]");
}

TEST_CASE("flash_mma's tile: two K/V stages before 128 rows, by each device's shared memory") {
  // The plan sizes (rows + stages x 128 keys) x (padded dim + 8) half values against
  // shared_memory.per_block_optin: sm_90's 227 KB holds 128 rows in two stages up to head dim
  // 128; sm_86's 99 KB takes 64 rows in two stages at 128 and one stage at 256 (exactly
  // 99 KB); sm_80's 163 KB one stage at 256.
  setenv("NBX_ATTENTION", "flash_mma", 1);
  const auto tile = [](const char* arch, std::int64_t head_dim) {
    const Capabilities caps = capabilities_for_arch(arch);
    const ops::PlanTarget target{caps, arch, std::string("arch ") + arch};
    ops::AttentionDims dims;
    dims.batch = 8, dims.q_heads = 8, dims.kv_heads = 8, dims.q_len = 1024, dims.kv_len = 1024;
    dims.head_dim = dims.value_dim = head_dim;
    const ops::AttentionPlan plan =
        ops::plan_attention("scaled_dot_product_attention", DType::kBFloat16, dims, target);
    CHECK(plan.path == ops::AttentionPath::kFlashMma);
    std::string block;
    for (const ops::PlanChoice& c : plan.choices)
      if (c.what == "block") block = c.value;
    return std::to_string(plan.block_rows) + "x" + std::to_string(plan.key_stages) + " " + block;
  };
  CHECK(tile("nvidia/sm_90", 128) == "128x2 128 query rows x 64 keys, 2 K/V stages");
  CHECK(tile("nvidia/sm_90", 256) == "64x2 64 query rows x 64 keys, 2 K/V stages");
  CHECK(tile("nvidia/sm_86", 64) == "128x2 128 query rows x 64 keys, 2 K/V stages");
  CHECK(tile("nvidia/sm_86", 128) == "64x2 64 query rows x 64 keys, 2 K/V stages");
  CHECK(tile("nvidia/sm_86", 256) == "64x1 64 query rows x 64 keys, 1 K/V stage");
  CHECK(tile("nvidia/sm_80", 256) == "64x1 64 query rows x 64 keys, 1 K/V stage");
  unsetenv("NBX_ATTENTION");
}

namespace {

// NBX_ATTENTION for one scope (unset without a value), unset again after it.
struct AttentionEnv {
  explicit AttentionEnv(const char* value) {
    if (value)
      setenv("NBX_ATTENTION", value, 1);
    else
      unsetenv("NBX_ATTENTION");
  }
  ~AttentionEnv() { unsetenv("NBX_ATTENTION"); }
  AttentionEnv(const AttentionEnv&) = delete;
  AttentionEnv& operator=(const AttentionEnv&) = delete;
};

// The path the plan takes on `d` for contiguous q, k, v of `p` (what the op then runs).
std::string planned_path(const Device& d, DType t, const Problem& p, bool causal, bool gqa) {
  const ops::PlanTarget target{d.capabilities(), d.str(), d.display_name(),
                               &d.context().backend_device()};
  const ops::AttentionShapes s = ops::attention_shapes(
      {p.B, p.Hq, p.L, p.E}, {p.B, p.Hk, p.S, p.E}, {p.B, p.Hk, p.S, p.Ev}, std::nullopt,
      causal ? ops::AttentionDims::Mask::kCausal : ops::AttentionDims::Mask::kNone, gqa);
  return ops::attention_path_name(ops::plan_attention("test", t, s.dims, target).path);
}

Bias causal_bias(std::int64_t shift) {
  return [shift](auto, auto, auto i, auto j) { return j <= i + shift ? 0.0 : -INFINITY; };
}

// One problem on `d` down the path NBX_ATTENTION=`path` names (nullptr: the plan's own, which
// must be `want`), causal with the given alignment or not, against the reference.
void check_path(const Device& d, DType t, const Problem& p, const char* path, const char* want,
                std::optional<ops::CausalAlignment> causal, std::uint32_t seed, bool bshd = false) {
  CAPTURE(d.str());
  CAPTURE(dtype_name(t));
  const std::string dims = std::to_string(p.B) + "x" + std::to_string(p.Hq) + "/" +
                           std::to_string(p.Hk) + " L" + std::to_string(p.L) + " S" +
                           std::to_string(p.S) + " E" + std::to_string(p.E) + " Ev" +
                           std::to_string(p.Ev);
  CAPTURE(dims);
  CAPTURE(path ? path : "auto");
  CAPTURE(seed);
  const AttentionEnv env(path);
  const bool gqa = p.Hq != p.Hk;
  CHECK(planned_path(d, t, p, causal.has_value(), gqa) == want);
  Inputs in = inputs(p, t, d, seed);
  if (bshd) {  // the same values stored as [B, S, H, D], viewed back
    for (Tensor* x : {&in.tq, &in.tk, &in.tv}) *x = x->transpose(1, 2).contiguous().transpose(1, 2);
    CHECK_FALSE(in.tq.is_contiguous());
  }
  const std::int64_t shift = causal == ops::CausalAlignment::kBottomRight ? p.S - p.L : 0;
  const Tensor out =
      ops::scaled_dot_product_attention(in.tq, in.tk, in.tv, {}, causal.has_value(), {}, gqa,
                                        causal.value_or(ops::CausalAlignment::kTopLeft));
  check_near(out, reference(p, in.q, in.k, in.v, causal ? causal_bias(shift) : Bias{}),
             t == DType::kFloat32 ? 1e-5 : tolerance(t));
}

constexpr auto kTopLeft = ops::CausalAlignment::kTopLeft;
constexpr auto kBottomRight = ops::CausalAlignment::kBottomRight;

}  // namespace

TEST_CASE("flash: head dims 64 to 256, causal both ways with L != S, half types") {
  for (const Device& d : testing::present_devices())
    for (std::int64_t e : {64, 80, 96, 128}) {
      check_path(d, DType::kFloat32, {1, 2, 2, 17, 40, e, e}, "flash", "flash", kBottomRight,
                 100 + std::uint32_t(e));
      check_path(d, DType::kFloat32, {1, 2, 2, 40, 17, e, e}, "flash", "flash", kTopLeft,
                 200 + std::uint32_t(e));
      for (DType t : {DType::kBFloat16, DType::kFloat16})
        if (holds(d, t))
          check_path(d, t, {2, 2, 2, 33, 33, e, e}, "flash", "flash", kBottomRight,
                     300 + std::uint32_t(e));
    }
  // 256 on either side: llvmpipe's 32 KB of shared memory holds one 256-wide operand a tile.
  for (const Device& d : testing::present_devices()) {
    check_path(d, DType::kFloat32, {1, 2, 2, 17, 40, 256, 64}, "flash", "flash", kBottomRight, 401);
    check_path(d, DType::kBFloat16, {1, 2, 2, 40, 17, 64, 256}, "flash", "flash", kTopLeft, 402);
  }
}

TEST_CASE("flash: lengths 1, 17 and 1000 (no tile multiples), plain and causal") {
  for (const Device& d : testing::present_devices())
    for (auto [L, S] : {std::pair<std::int64_t, std::int64_t>{1, 1},
                        {1, 17},
                        {17, 1},
                        {17, 1000},
                        {1000, 17},
                        {1000, 1000}}) {
      const Problem p{1, 2, 2, L, S, 64, 48};
      check_path(d, DType::kFloat32, p, "flash", "flash", std::nullopt, 500);
      check_path(d, DType::kFloat32, p, "flash", "flash", kTopLeft, 501);
      check_path(d, DType::kFloat32, p, "flash", "flash", kBottomRight, 502);
    }
}

TEST_CASE("flash: grouped-query heads and the strided [B, S, H, D] layout") {
  for (const Device& d : testing::present_devices()) {
    check_path(d, DType::kFloat32, {2, 8, 2, 17, 33, 64, 64}, "flash", "flash", kTopLeft, 601);
    check_path(d, DType::kFloat32, {2, 8, 2, 40, 33, 80, 80}, "flash", "flash", kBottomRight, 602);
    check_path(d, DType::kFloat32, {2, 4, 4, 33, 40, 64, 64}, "flash", "flash", kBottomRight, 603,
               true);
    if (holds(d, DType::kBFloat16))
      check_path(d, DType::kBFloat16, {2, 4, 2, 33, 33, 128, 128}, "flash", "flash", kTopLeft, 604,
                 true);
  }
}

TEST_CASE("split_kv: decode shapes take it by themselves; chunks merged, causal, GQA, strided") {
  for (const Device& d : testing::present_devices()) {
    // One kv head: the key chunks spread over the blocks, so there are several to merge.
    check_path(d, DType::kFloat32, {1, 4, 1, 1, 1000, 128, 128}, nullptr, "split_kv", std::nullopt,
               701);
    check_path(d, DType::kFloat32, {2, 8, 2, 1, 1000, 64, 64}, nullptr, "split_kv", std::nullopt,
               702);
    // 4 query heads x 4 rows = 16 rows a kv head; top-left causal leaves most chunks unseen.
    check_path(d, DType::kFloat32, {1, 4, 1, 4, 1000, 96, 96}, "split_kv", "split_kv", kTopLeft,
               703);
    check_path(d, DType::kFloat32, {2, 4, 1, 3, 1000, 80, 80}, "split_kv", "split_kv", kBottomRight,
               704, true);
    check_path(d, DType::kFloat32, {1, 2, 2, 1, 17, 256, 64}, "split_kv", "split_kv", std::nullopt,
               705);
    // The half types under NBX_ATTENTION=own: left to the plan, CUDA gives them to cuDNN.
    for (DType t : {DType::kBFloat16, DType::kFloat16})
      if (holds(d, t))
        check_path(d, t, {2, 8, 2, 2, 1000, 128, 128}, "own", "split_kv", kBottomRight, 706);
  }
}

TEST_CASE("NBX_ATTENTION=math agrees; split_kv forced where it cannot serve is refused by name") {
  for (const Device& d : testing::present_devices()) {
    check_path(d, DType::kFloat32, {1, 4, 2, 17, 40, 64, 64}, "math", "math", kBottomRight, 801);
    const AttentionEnv env("split_kv");
    const Tensor q = Tensor::ones({1, 2, 17, 64}, DType::kFloat32, d);
    try {
      ops::scaled_dot_product_attention(q, q, q);
      FAIL("17 rows a kv head ran as split_kv");
    } catch (const Unsupported& e) {
      CHECK(e.capability() == "attention.split_kv");
      CHECK(std::string(e.what()).find("more than 16 query rows") != std::string::npos);
    }
  }
}

TEST_CASE("decode with one key/value head broadcast over the query heads (no enable_gqa)") {
  // k and v [B, 1, S, E] broadcast like any batch dim: the fused views read head 0 for all.
  for (const Device& d : testing::present_devices())
    for (std::int64_t L : {1, 8}) {
      const Problem p{2, 8, 1, L, 300, 64, 64};
      CAPTURE(d.str());
      CAPTURE(L);
      const Inputs in = inputs(p, DType::kFloat32, d, 901);
      check_near(ops::scaled_dot_product_attention(in.tq, in.tk, in.tv),
                 reference(p, in.q, in.k, in.v, {}), 1e-5);
      check_near(
          ops::scaled_dot_product_attention(in.tq, in.tk, in.tv, {}, true, {}, false, kBottomRight),
          reference(p, in.q, in.k, in.v, causal_bias(p.S - p.L)), 1e-5);
    }
}
