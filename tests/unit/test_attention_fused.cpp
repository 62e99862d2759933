// scaled_dot_product_attention's fused paths (the attention family: flash, flash_mma,
// split_kv, cudnn) on every present device that offers them, each forced with NBX_ATTENTION,
// against a float64 reference written here: head dims 64, 80, 96, 128, 256, lengths that are not
// tile multiples (1, 17, 77, 200, 1000), causal top-left and bottom-right with q_len != kv_len
// (rows that see no key: zeros), grouped-query heads, the [B, S, H, D] layout read in place,
// a value dim unlike the head dim (split_kv), and the default choice.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/families/kernel_family.hpp"
#include "core/kernel_abi.hpp"
#include "nbx/nbx.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

struct Case {
  std::int64_t B, Hq, Hk, L, S, E, Ev;
  bool causal = false, bottom_right = false;
  bool bshd = false;  // q, k, v stored [B, S, H, D] and read through transpose(1, 2)
};

// Values in ±(0.1 … 1.5), never zero, rounded to `t` (the reference sees the device's values).
std::vector<double> draw(std::int64_t n, std::uint32_t seed, DType t) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> mag(0.1, 1.5);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = (g() & 1 ? 1 : -1) * mag(g);
  return Tensor::from_host(v, {n}).to(t).to(DType::kFloat64).to_host<double>();
}

// out [B, Hq, L, Ev] from q [B, Hq, L, E], k [B, Hk, S, E], v [B, Hk, S, Ev] (row-major).
std::vector<double> reference(const Case& c, const std::vector<double>& q,
                              const std::vector<double>& k, const std::vector<double>& v) {
  const double scale = 1 / std::sqrt(double(c.E));
  const std::int64_t shift = c.bottom_right ? c.S - c.L : 0;
  std::vector<double> out(std::size_t(c.B * c.Hq * c.L * c.Ev), 0.0), s(std::size_t(c.S));
  for (std::int64_t b = 0; b < c.B; ++b)
    for (std::int64_t h = 0; h < c.Hq; ++h)
      for (std::int64_t i = 0; i < c.L; ++i) {
        const std::int64_t kh = h / (c.Hq / c.Hk);
        const std::int64_t seen = c.causal ? std::clamp<std::int64_t>(i + shift + 1, 0, c.S) : c.S;
        if (seen == 0) continue;  // zeros
        double mx = -INFINITY, sum = 0;
        for (std::int64_t j = 0; j < seen; ++j) {
          double dot = 0;
          for (std::int64_t e = 0; e < c.E; ++e)
            dot += q[std::size_t(((b * c.Hq + h) * c.L + i) * c.E + e)] *
                   k[std::size_t(((b * c.Hk + kh) * c.S + j) * c.E + e)];
          mx = std::max(mx, s[std::size_t(j)] = dot * scale);
        }
        for (std::int64_t j = 0; j < seen; ++j)
          sum += (s[std::size_t(j)] = std::exp(s[std::size_t(j)] - mx));
        for (std::int64_t j = 0; j < seen; ++j)
          for (std::int64_t e = 0; e < c.Ev; ++e)
            out[std::size_t(((b * c.Hq + h) * c.L + i) * c.Ev + e)] +=
                s[std::size_t(j)] / sum * v[std::size_t(((b * c.Hk + kh) * c.S + j) * c.Ev + e)];
      }
  return out;
}

// [B, H, N, D] values as a tensor of dtype t on d, stored [B, N, H, D] when `bshd`.
Tensor place(const std::vector<double>& x, std::int64_t B, std::int64_t H, std::int64_t N,
             std::int64_t D, DType t, const Device& d, bool bshd) {
  const Tensor bhnd = Tensor::from_host(x, {B, H, N, D}, d).to(t);
  return bshd ? bhnd.transpose(1, 2).contiguous().transpose(1, 2) : bhnd;
}

double tolerance(DType t) {
  return t == DType::kBFloat16 ? 1.6e-2 : t == DType::kFloat16 ? 3e-3 : 1e-5;
}

bool holds(const Device& d, DType t) {
  if (t == DType::kFloat16) return d.capabilities().fp16.value;
  if (t == DType::kBFloat16) return d.capabilities().bf16.value != Bf16Support::kNone;
  return true;
}

// Sets NBX_ATTENTION for the scope of one call (the plan reads it each call).
struct ForcedPath {
  explicit ForcedPath(const char* path) {
    if (path)
      setenv("NBX_ATTENTION", path, 1);
    else
      unsetenv("NBX_ATTENTION");
  }
  ~ForcedPath() { unsetenv("NBX_ATTENTION"); }
};

// Whether the path's smallest tile fits the device's shared memory (an overlay may lower it:
// NBX_DEVICE_OVERLAY), by the plan's formulas (attention_path.cpp): flash_mma 64 rows and one
// K/V stage of 64 keys in half values on rows padded to 64/96/128/256 + 8; flash 8 rows and
// split_kv q_len x group rows in float32, 16 keys. A forced path that does not fit is refused
// by name (checked below), not run.
bool fits(const Device& d, const char* path, const Case& c) {
  if (std::string(path) == "cudnn") return true;
  const auto& caps = d.capabilities();
  const std::int64_t budget = caps.shared_memory_per_block_optin.value > 0
                                  ? caps.shared_memory_per_block_optin.value
                                  : caps.shared_memory_per_block.value;
  if (std::string(path) == "flash_mma") {
    const std::int64_t padded = c.E <= 64 ? 64 : c.E <= 96 ? 96 : c.E <= 128 ? 128 : 256;
    return (64 + 2 * 64) * (padded + 8) * 2 <= budget;
  }
  const std::int64_t rows = std::string(path) == "split_kv" ? c.L * (c.Hq / c.Hk) : 8;
  return 4 * (rows * c.E + 16 * (c.E + 1) + 16 * c.Ev) <= budget;
}

// Keys scaled by 1 + ramp x (their index), rounded to `t`: with ramp > 0 the scores grow along
// the keys, so a row's max moves late and often (the rescaling paths of the online softmax).
std::vector<double> grow_keys(std::vector<double> k, const Case& c, DType t, double ramp) {
  for (std::size_t i = 0; i < k.size(); ++i)
    k[i] *= 1 + ramp * double((std::int64_t(i) / c.E) % c.S);
  return Tensor::from_host(k, {std::int64_t(k.size())}).to(t).to(DType::kFloat64).to_host<double>();
}

void check_case(const Device& d, const char* path, const Case& c, DType t, std::uint32_t seed,
                double ramp = 0) {
  if (path && !fits(d, path, c)) {
    const auto full = [&](Shape shape) {
      return Tensor::from_host(std::vector<float>(std::size_t(numel(shape)), 0.5f), shape, d);
    };
    const ForcedPath forced(path);
    CHECK_THROWS_AS(
        ops::scaled_dot_product_attention(full({1, c.Hq, c.L, c.E}), full({1, c.Hk, 17, c.E}),
                                          full({1, c.Hk, 17, c.Ev}), {}, false, {}, c.Hq != c.Hk),
        Unsupported);
    return;
  }
  CAPTURE(d.str());
  CAPTURE(path ? path : "default");
  CAPTURE(dtype_name(t));
  const std::string shape = "B" + std::to_string(c.B) + " Hq" + std::to_string(c.Hq) + " Hk" +
                            std::to_string(c.Hk) + " L" + std::to_string(c.L) + " S" +
                            std::to_string(c.S) + " E" + std::to_string(c.E) + " Ev" +
                            std::to_string(c.Ev) + (c.causal ? " causal" : "") +
                            (c.bottom_right ? " bottom-right" : "") + (c.bshd ? " bshd" : "");
  CAPTURE(shape);
  const auto q = draw(c.B * c.Hq * c.L * c.E, seed, t),
             k = grow_keys(draw(c.B * c.Hk * c.S * c.E, seed + 1, t), c, t, ramp),
             v = draw(c.B * c.Hk * c.S * c.Ev, seed + 2, t);
  const Tensor tq = place(q, c.B, c.Hq, c.L, c.E, t, d, c.bshd);
  const Tensor tk = place(k, c.B, c.Hk, c.S, c.E, t, d, c.bshd);
  const Tensor tv = place(v, c.B, c.Hk, c.S, c.Ev, t, d, c.bshd);
  Tensor out;
  {
    const ForcedPath forced(path);
    out = ops::scaled_dot_product_attention(
        tq, tk, tv, {}, c.causal, {}, c.Hq != c.Hk,
        c.bottom_right ? ops::CausalAlignment::kBottomRight : ops::CausalAlignment::kTopLeft);
  }
  REQUIRE(out.shape() == Shape{c.B, c.Hq, c.L, c.Ev});
  CHECK(out.dtype() == t);
  const std::vector<double> got = out.to(DType::kFloat64).to_host<double>();
  const std::vector<double> want = reference(c, q, k, v);
  const double tol = tolerance(t);
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]))) && bad++ == 0) first = i;
  CAPTURE(first);
  CAPTURE(got[first]);
  CAPTURE(want[first]);
  CHECK(bad == 0);
}

bool offers(const Device& d, abi::AttentionVariant v) {
  return d.context().backend_device().offers(KernelFamily::kAttention, v);
}

}  // namespace

TEST_CASE("flash_mma: head dims 64 to 256, causal both ways, GQA, [B, S, H, D], ragged lengths") {
  for (const Device& d : testing::present_devices()) {
    if (!offers(d, abi::kAttentionFlashMma)) continue;
    std::uint32_t seed = 100;
    for (DType t : {DType::kBFloat16, DType::kFloat16})
      for (std::int64_t E : {64, 80, 96, 128, 256}) {
        check_case(d, "flash_mma", {2, 4, 2, 77, 200, E, E, true, false, false}, t, seed++);
        check_case(d, "flash_mma", {1, 2, 2, 200, 77, E, E, true, true, true}, t, seed++);
        check_case(d, "flash_mma", {1, 3, 1, 17, 17, E, E, false, false, false}, t, seed++);
      }
    check_case(d, "flash_mma", {1, 2, 1, 1000, 1000, 128, 128, true, false, true}, DType::kBFloat16,
               seed++);
    check_case(d, "flash_mma", {1, 2, 2, 1, 1000, 128, 128, false, false, false}, DType::kFloat16,
               seed++);
  }
}

TEST_CASE("flash (FMA): every float dtype, head dims 64, 80, 256, value dim unlike head dim") {
  for (const Device& d : testing::present_devices()) {
    if (!offers(d, abi::kAttentionFlash)) continue;
    std::uint32_t seed = 200;
    for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kFloat16}) {
      if (!holds(d, t)) continue;
      for (std::int64_t E : {64, 80, 256}) {
        check_case(d, "flash", {1, 4, 2, 77, 40, E, E, true, true, false}, t, seed++);
        check_case(d, "flash", {2, 2, 2, 33, 65, E, E, false, false, true}, t, seed++);
      }
      check_case(d, "flash", {1, 2, 1, 17, 200, 64, 96, true, false, false}, t, seed++);
    }
  }
}

TEST_CASE(
    "flash, float16: scores growing along the keys move the row max late (head dims 64-128)") {
  // The online softmax's rescaling of O and l when a row's max moves late (on Vulkan devices
  // with cooperative matrices attention_coopmat.comp's rescale through a factor matrix):
  // random scores of the other cases seldom get there.
  for (const Device& d : testing::present_devices()) {
    if (!offers(d, abi::kAttentionFlash) || !holds(d, DType::kFloat16)) continue;
    std::uint32_t seed = 600;
    for (std::int64_t E : {64, 96, 128}) {
      check_case(d, "flash", {1, 2, 1, 77, 300, E, E, true, true, false}, DType::kFloat16, seed++,
                 1.0 / 16);
      check_case(d, "flash", {1, 2, 2, 70, 257, E, E, false, false, true}, DType::kFloat16, seed++,
                 1.0 / 16);
    }
  }
}

TEST_CASE("split_kv: decode rows against long keys, GQA groups, causal bottom-right") {
  for (const Device& d : testing::present_devices()) {
    if (!offers(d, abi::kAttentionSplitKv)) continue;
    std::uint32_t seed = 300;
    for (DType t : {DType::kBFloat16, DType::kFloat32, DType::kFloat16}) {
      if (!holds(d, t)) continue;
      for (std::int64_t S : {1, 17, 1000, 5000}) {
        check_case(d, "split_kv", {2, 8, 2, 1, S, 128, 128, false, false, false}, t, seed++);
        check_case(d, "split_kv", {1, 4, 4, 3, S, 64, 64, true, true, true}, t, seed++);
      }
      check_case(d, "split_kv", {1, 16, 1, 1, 300, 256, 256, false, false, false}, t, seed++);
      check_case(d, "split_kv", {1, 2, 1, 2, 100, 64, 128, true, true, false}, t, seed++);
    }
  }
}

TEST_CASE("cudnn (CUDA, where cuDNN loads): head dims 64 to 128, causal both ways, GQA, layouts") {
  for (const Device& d : testing::present_devices()) {
    if (!offers(d, abi::kAttentionCudnn)) continue;
    std::uint32_t seed = 500;
    for (DType t : {DType::kBFloat16, DType::kFloat16})
      for (std::int64_t E : {64, 80, 96, 128}) {
        check_case(d, "cudnn", {2, 4, 2, 77, 200, E, E, true, false, false}, t, seed++);
        check_case(d, "cudnn", {1, 2, 2, 77, 200, E, E, true, true, true}, t, seed++);
        check_case(d, "cudnn", {1, 3, 1, 17, 17, E, E, false, false, false}, t, seed++);
      }
    check_case(d, "cudnn", {1, 8, 2, 1000, 1000, 128, 128, true, false, true}, DType::kBFloat16,
               seed++);
    check_case(d, "cudnn", {2, 4, 1, 1, 1000, 128, 128, false, false, false}, DType::kFloat16,
               seed++);
    // Outside its contract it is refused by name, never run: float32, head dim 256, and
    // bottom-right causal with more query rows than keys (rows that see no key).
    const auto values = [&](Shape shape, DType t) {
      return Tensor::from_host(std::vector<float>(std::size_t(numel(shape)), 0.5f), shape, d).to(t);
    };
    const ForcedPath forced("cudnn");
    CHECK_THROWS_AS(ops::scaled_dot_product_attention(values({1, 2, 16, 64}, DType::kFloat32),
                                                      values({1, 2, 16, 64}, DType::kFloat32),
                                                      values({1, 2, 16, 64}, DType::kFloat32)),
                    Unsupported);
    CHECK_THROWS_AS(ops::scaled_dot_product_attention(values({1, 2, 16, 256}, DType::kBFloat16),
                                                      values({1, 2, 16, 256}, DType::kBFloat16),
                                                      values({1, 2, 16, 256}, DType::kBFloat16)),
                    Unsupported);
    CHECK_THROWS_AS(
        ops::scaled_dot_product_attention(values({1, 2, 32, 64}, DType::kBFloat16),
                                          values({1, 2, 16, 64}, DType::kBFloat16),
                                          values({1, 2, 16, 64}, DType::kBFloat16), {}, true, {},
                                          false, ops::CausalAlignment::kBottomRight),
        Unsupported);
  }
}

TEST_CASE("the default path agrees with the reference on prefill and decode shapes") {
  for (const Device& d : testing::present_devices()) {
    check_case(d, nullptr, {1, 4, 2, 130, 130, 128, 128, true, false, false}, DType::kFloat32, 400);
    if (holds(d, DType::kBFloat16))
      check_case(d, nullptr, {2, 8, 2, 1, 700, 128, 128, false, false, true}, DType::kBFloat16,
                 401);
  }
}

TEST_CASE("a forced path the device cannot run is refused by name") {
  const Device host = nbx::open("host");
  const Tensor q = Tensor::from_host(std::vector<float>(2 * 4 * 8, 0.5f), {2, 4, 8});
  const ForcedPath forced("flash_mma");
  CHECK_THROWS_AS(ops::scaled_dot_product_attention(q, q, q), Unsupported);
  {
    const ForcedPath vendor("cudnn");  // the host has no vendor attention
    CHECK_THROWS_AS(ops::scaled_dot_product_attention(q, q, q), Unsupported);
  }
  setenv("NBX_ATTENTION", "warp_speed", 1);
  CHECK_THROWS_AS(ops::scaled_dot_product_attention(q, q, q), InvalidArgument);
}
