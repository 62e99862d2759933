// rotary_embedding_ / rotary_embedding / rotary_cos_sin_cache on every present device against
// a float64 reference written here: both styles, partial rotary, a [B, S, H, D] strided view,
// int32 and int64 positions, a fused qkv tensor, in place really in place; the errors; and a
// bad position raised as DeviceFault with its fields, the device usable afterwards.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "nbx/nbx.hpp"
#include "tests/unit/expect_fault.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;
using ops::RotaryStyle;

namespace {

using testing::present_devices;

std::vector<double> values_of(const Tensor& t) {
  return t.to(host_device()).to(DType::kFloat64).contiguous().to_host<double>();
}

std::vector<float> uniform(std::size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// A host tensor of `dtype` with seeded values in [-2, 2], then moved to `d`.
Tensor random(const Shape& shape, DType dtype, const Device& d, unsigned seed) {
  return Tensor::from_host(uniform(std::size_t(numel(shape)), seed, -2.0f, 2.0f), shape)
      .to(dtype)
      .to(d);
}

// A cache of values in [-1, 1] (not a real cos/sin table: any value must be read right).
Tensor random_cache(std::int64_t rows, std::int64_t dim, DType dtype, const Device& d,
                    unsigned seed) {
  return Tensor::from_host(uniform(std::size_t(rows * dim), seed, -1.0f, 1.0f), {rows, dim})
      .to(dtype)
      .to(d);
}

// The reference: x as [tokens, heads, D] float64 values (read after rounding to the dtype),
// rotated by the rows `pos` picks of `cache` ([max_position, rotary_dim]).
std::vector<double> reference(std::vector<double> x, std::int64_t heads, std::int64_t head_size,
                              const std::vector<std::int64_t>& pos,
                              const std::vector<double>& cache, std::int64_t rotary_dim,
                              RotaryStyle style) {
  const std::int64_t half = rotary_dim / 2;
  for (std::size_t t = 0; t < pos.size(); ++t)
    for (std::int64_t h = 0; h < heads; ++h)
      for (std::int64_t i = 0; i < half; ++i) {
        const double c = cache[std::size_t(pos[t] * rotary_dim + i)];
        const double s = cache[std::size_t(pos[t] * rotary_dim + half + i)];
        const std::int64_t base = (std::int64_t(t) * heads + h) * head_size;
        const bool neox = style == RotaryStyle::kRotateHalf;
        const auto a = std::size_t(base + (neox ? i : 2 * i));
        const auto b = std::size_t(base + (neox ? i + half : 2 * i + 1));
        const double x1 = x[a], x2 = x[b];
        x[a] = x1 * c - x2 * s;
        x[b] = x2 * c + x1 * s;
      }
  return x;
}

// Machine epsilon of each dtype: results are rounded once, so one epsilon relative to the
// value (or to 1 below it) bounds the rounding; float32 and float64 arithmetic adds the
// rounding of two products of magnitude up to 2, hence 4.
double tolerance(DType t, double want) {
  const double scale = std::max(1.0, std::fabs(want));
  switch (t) {
    case DType::kFloat16:
      return std::ldexp(1.0, -10) * scale;
    case DType::kBFloat16:
      return std::ldexp(1.0, -7) * scale;
    case DType::kFloat32:
      return 4 * std::ldexp(1.0, -23) * scale;
    default:
      return 4 * std::ldexp(1.0, -52) * scale;
  }
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, DType t) {
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tolerance(t, want[i])) && bad++ < 5)
      FAIL_CHECK("element " << i << ": got " << got[i] << ", want " << want[i]);
  CHECK(bad == 0);
}

std::vector<std::int64_t> positions_of(const Tensor& p) {
  return p.to(host_device()).to(DType::kInt64).contiguous().to_host<std::int64_t>();
}

bool holds(const Device& d, DType t) {
  return t != DType::kFloat64 || d.capabilities().fp64.value;
}

const DType kFloats[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

}  // namespace

TEST_CASE("rotary_embedding_ matches the float64 reference: every dtype, both styles") {
  for (const Device& d : present_devices()) {
    for (DType t : kFloats) {
      for (RotaryStyle style : {RotaryStyle::kRotateHalf, RotaryStyle::kInterleaved}) {
        const std::string what = d.str() + " " + std::string(dtype_name(t)) +
                                 (style == RotaryStyle::kRotateHalf ? " neox" : " gptj");
        CAPTURE(what);
        const std::vector<std::int64_t> pos = {3, 0, 15, 7, 7};
        const Tensor positions = Tensor::from_host(pos, {5}, d);
        const Tensor cache = random_cache(16, 8, DType::kFloat32, host_device(), 11);
        if (!holds(d, t)) {  // float64 cannot even be placed there
          CHECK_THROWS_AS(random({5, 3, 8}, t, host_device(), 1).to(d), Unsupported);
          continue;
        }
        const Tensor q = random({5, 3, 8}, t, d, 1), k = random({5, 2, 8}, t, d, 2);
        const std::vector<double> q0 = values_of(q), k0 = values_of(k);
        ops::rotary_embedding_(q, k, positions, cache.to(d), 8, style);
        const std::vector<double> c = values_of(cache);
        check_close(values_of(q), reference(q0, 3, 8, pos, c, 8, style), t);
        check_close(values_of(k), reference(k0, 2, 8, pos, c, 8, style), t);
      }
    }
  }
}

TEST_CASE("float64 q is refused by name (fp64) on a device without it") {
  for (const Device& d : present_devices()) {
    if (d.capabilities().fp64.value) continue;
    CAPTURE(d.str());
    try {
      ops::rotary_cos_sin_cache(8, 4, 10000, DType::kFloat64, d);
      FAIL("accepted");
    } catch (const Unsupported& e) {
      CHECK(e.capability() == "fp64");
    }
  }
}

TEST_CASE("partial rotary leaves the rest of each head untouched, bit for bit") {
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const DType t = DType::kBFloat16;
    const Tensor q = random({4, 2, 10}, t, d, 5), k = random({4, 3, 10}, t, d, 6);
    const Tensor q0 = q.clone(), k0 = k.clone();
    const std::vector<std::int64_t> pos = {1, 2, 0, 5};
    const Tensor cache = random_cache(6, 4, t, d, 7);  // the cache in q's dtype
    ops::rotary_embedding_(q, k, Tensor::from_host(pos, {4}, d).to(DType::kInt32), cache, 4,
                           RotaryStyle::kInterleaved);
    const std::vector<double> c = values_of(cache);
    // The reference over whole heads of D = 10 with rotary_dim 4: it too touches only 0..3.
    check_close(values_of(q), reference(values_of(q0), 2, 10, pos, c, 4, RotaryStyle::kInterleaved),
                t);
    check_close(values_of(k), reference(values_of(k0), 3, 10, pos, c, 4, RotaryStyle::kInterleaved),
                t);
    const auto tail = [](const Tensor& x) { return values_of(x.narrow(2, 4, 6)); };
    CHECK(tail(q) == tail(q0));
    CHECK(tail(k) == tail(k0));
    CHECK(values_of(q.narrow(2, 0, 4)) != values_of(q0.narrow(2, 0, 4)));
  }
}

TEST_CASE("a [B, S, H, D] strided view with strided int32 positions, in place in its storage") {
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const DType t = DType::kFloat32;
    // [B, H, S, D + 2] storage; q is its [B, S, H, D] view (transposed, the last 2 columns
    // left out), so q is neither contiguous nor dense.
    const std::int64_t B = 2, S = 5, H = 3, D = 6;
    const Tensor q_store = random({B, H, S, D + 2}, t, d, 21);
    const Tensor q = q_store.narrow(3, 0, D).transpose(1, 2);
    const Tensor k_store = random({B, S, 1, D}, t, d, 22);
    const Tensor k = k_store;
    // Positions [B, S] as the transpose of an [S, B] tensor.
    std::vector<std::int32_t> sb(std::size_t(S * B));
    for (std::size_t i = 0; i < sb.size(); ++i) sb[i] = std::int32_t((i * 7 + 3) % 9);
    const Tensor positions = Tensor::from_host(sb, {S, B}, d).transpose(0, 1);
    const Tensor cache = random_cache(9, 6, DType::kFloat32, d, 23);
    const std::vector<double> before = values_of(q_store), q0 = values_of(q), k0 = values_of(k);
    const auto* storage = q.storage().get();
    ops::rotary_embedding_(q, k, positions, cache, 6, RotaryStyle::kRotateHalf);
    CHECK(q.storage().get() == storage);  // no copy was made and swapped in
    const std::vector<std::int64_t> pos = positions_of(positions);
    const std::vector<double> c = values_of(cache);
    check_close(values_of(q), reference(q0, H, D, pos, c, 6, RotaryStyle::kRotateHalf), t);
    check_close(values_of(k), reference(k0, 1, D, pos, c, 6, RotaryStyle::kRotateHalf), t);
    // The storage really changed where q lives and nowhere else.
    const std::vector<double> after = values_of(q_store);
    int changed = 0, outside = 0;
    for (std::size_t i = 0; i < after.size(); ++i) {
      const bool in_q = std::int64_t(i % std::size_t(D + 2)) < D;
      changed += in_q && after[i] != before[i];
      outside += !in_q && after[i] != before[i];
    }
    CHECK(changed > int(after.size()) / 2);
    CHECK(outside == 0);
  }
}

TEST_CASE("q and k as head slices of one fused qkv tensor; v untouched") {
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const DType t = DType::kFloat16;
    const Tensor qkv = random({3, 4 + 2 + 2, 8}, t, d, 31);  // [tokens, Hq + Hk + Hv, D]
    const Tensor q = qkv.narrow(1, 0, 4), k = qkv.narrow(1, 4, 2), v = qkv.narrow(1, 6, 2);
    const std::vector<double> q0 = values_of(q), k0 = values_of(k), v0 = values_of(v);
    const std::vector<std::int64_t> pos = {2, 9, 4};
    const Tensor cache = random_cache(10, 8, DType::kFloat32, d, 32);
    ops::rotary_embedding_(q, k, Tensor::from_host(pos, {3}, d), cache, 8,
                           RotaryStyle::kRotateHalf);
    const std::vector<double> c = values_of(cache);
    check_close(values_of(q), reference(q0, 4, 8, pos, c, 8, RotaryStyle::kRotateHalf), t);
    check_close(values_of(k), reference(k0, 2, 8, pos, c, 8, RotaryStyle::kRotateHalf), t);
    CHECK(values_of(v) == v0);
  }
}

TEST_CASE("rotary_embedding returns fresh tensors and leaves its inputs alone") {
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const Tensor q = random({2, 3, 2, 4}, DType::kFloat32, d, 41);
    const std::vector<double> q0 = values_of(q);
    const Tensor positions =
        Tensor::from_host(std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}, {2, 3}, d);
    const Tensor cache = random_cache(6, 4, DType::kFloat32, d, 42);
    const ops::RotaryResult r = ops::rotary_embedding(q, std::nullopt, positions, cache, 4);
    CHECK_FALSE(r.k.has_value());
    CHECK(r.q.storage() != q.storage());
    CHECK(values_of(q) == q0);
    check_close(
        values_of(r.q),
        reference(q0, 2, 4, positions_of(positions), values_of(cache), 4, RotaryStyle::kRotateHalf),
        DType::kFloat32);
    // No tokens: nothing to do, no error.
    const Tensor empty = Tensor::empty({0, 2, 4}, DType::kFloat32, d);
    CHECK_NOTHROW(ops::rotary_embedding_(empty, empty.clone(), Tensor::empty({0}, DType::kInt64, d),
                                         cache, 4));
  }
}

TEST_CASE("rotary_cos_sin_cache: [cos | sin] of t · base^(-2i / rotary_dim), made on the device") {
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const std::int64_t P = 64, R = 16;
    const Tensor cache = ops::rotary_cos_sin_cache(P, R, 10000, DType::kFloat32, d);
    CHECK(cache.device() == d);
    REQUIRE(cache.shape() == Shape{P, R});
    const std::vector<double> got = values_of(cache);
    // float64 arithmetic, then one rounding to float32: half an ulp of values up to 1, and
    // a little more for the device's own cos and sin; float32 arithmetic (no fp64) loses
    // ~ t · 2^-24 in the angle.
    const double tol = d.capabilities().fp64.value ? std::ldexp(1.0, -23) : 2e-5;
    int bad = 0;
    for (std::int64_t t = 0; t < P; ++t)
      for (std::int64_t i = 0; i < R / 2; ++i) {
        const double angle = double(t) * std::pow(10000.0, -2.0 * double(i) / double(R));
        const double c = got[std::size_t(t * R + i)], s = got[std::size_t(t * R + R / 2 + i)];
        if ((std::fabs(c - std::cos(angle)) > tol || std::fabs(s - std::sin(angle)) > tol) &&
            bad++ < 5)
          FAIL_CHECK("t " << t << " i " << i << ": " << c << ", " << s);
      }
    CHECK(bad == 0);
    CHECK_THROWS_AS(ops::rotary_cos_sin_cache(8, 3, 10000, DType::kFloat32, d), InvalidArgument);
    CHECK_THROWS_AS(ops::rotary_cos_sin_cache(-1, 4, 10000, DType::kFloat32, d), InvalidArgument);
    CHECK_THROWS_AS(ops::rotary_cos_sin_cache(8, 4, 0, DType::kFloat32, d), InvalidArgument);
    CHECK_THROWS_AS(ops::rotary_cos_sin_cache(8, 4, 10000, DType::kInt32, d), InvalidArgument);
  }
}

TEST_CASE("rotary_embedding_ refuses bad operands with InvalidArgument naming the op and shapes") {
  const Device d = host_device();
  const Tensor q = random({4, 2, 8}, DType::kFloat32, d, 51),
               k = random({4, 1, 8}, DType::kFloat32, d, 52);
  const Tensor pos = Tensor::from_host(std::vector<std::int64_t>{0, 1, 2, 3}, {4}, d);
  const Tensor cache = random_cache(4, 8, DType::kFloat32, d, 53);
  const auto refused = [&](const char* what, const std::function<void()>& f, const char* words) {
    CAPTURE(what);
    try {
      f();
      FAIL("accepted");
    } catch (const InvalidArgument& e) {
      const std::string m = e.what();
      CHECK_MESSAGE(m.find("rotary_embedding: ") == 0, m);
      CHECK_MESSAGE(m.find(words) != std::string::npos, m);
      CHECK_MESSAGE(m.find("q [4, 2, 8]") != std::string::npos, m);
    }
  };
  refused(
      "odd rotary_dim", [&] { ops::rotary_embedding_(q, k, pos, cache, 7); },
      "rotary_dim 7 must be even");
  refused(
      "rotary_dim above the head",
      [&] { ops::rotary_embedding_(q, k, pos, random_cache(4, 10, DType::kFloat32, d, 1), 10); },
      "larger than a head");
  refused(
      "k with other token dims",
      [&] {
        ops::rotary_embedding_(q, random({3, 1, 8}, DType::kFloat32, d, 2), pos, cache, 8);
      },
      "token dims [4]");
  refused(
      "positions of another shape",
      [&] {
        ops::rotary_embedding_(q, k, Tensor::from_host(std::vector<std::int64_t>{0, 1}, {2}, d),
                               cache, 8);
      },
      "positions must have the token dims' shape [4]");
  refused(
      "a narrower cache",
      [&] { ops::rotary_embedding_(q, k, pos, random_cache(4, 6, DType::kFloat32, d, 3), 8); },
      "the cache must be [max_position, rotary_dim 8]");
  refused(
      "q and k of two dtypes",
      [&] { ops::rotary_embedding_(q, k.to(DType::kFloat64), pos, cache, 8); }, "one dtype");
  refused(
      "float positions", [&] { ops::rotary_embedding_(q, k, pos.to(DType::kFloat32), cache, 8); },
      "positions must be int32 or int64");
  refused(
      "a float16 cache for float32 q",
      [&] { ops::rotary_embedding_(q, k, pos, cache.to(DType::kFloat16), 8); },
      "float32 or q's dtype");
  refused(
      "q and k the same tensor", [&] { ops::rotary_embedding_(q, q, pos, cache, 8); },
      "may share elements");
  CHECK_THROWS_AS(ops::rotary_embedding_(q.to(DType::kInt32), std::nullopt, pos, cache, 8),
                  InvalidArgument);
}

TEST_CASE(
    "a bad position is a DeviceFault naming op, position, bound and token; the device stays "
    "usable") {
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    for (DType pt : {DType::kInt64, DType::kInt32}) {
      std::vector<std::int64_t> pos(20);
      for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = std::int64_t(i * 97 % 4096);
      const std::int64_t bad_value = pt == DType::kInt64 ? 4096 : -1;
      pos[17] = bad_value;
      const Tensor cache = random_cache(4096, 8, DType::kFloat32, d, 61);
      const Tensor q = random({20, 2, 8}, DType::kFloat32, d, 62);
      const Tensor positions = Tensor::from_host(pos, {20}, d).to(pt);
      const testing::FaultOutcome o = testing::run_expecting_fault(d, [&] {
        ops::rotary_embedding_(q, std::nullopt, positions, cache, 8);
        return q;
      });
      REQUIRE_MESSAGE(o.fault.has_value(), o.other);
      CHECK(o.fault->op() == "rotary_embedding");
      CHECK(o.fault->device() == d.str());
      CHECK(o.fault->index() == bad_value);
      CHECK(o.fault->bound() == 4096);
      CHECK(o.fault->position() == 17);
      CHECK((d.is_host() ? o.stage == "op" : o.stage != "op"));
      const std::string words = "rotary_embedding on " + d.str();
      CHECK_MESSAGE(std::string(o.fault->what())
                            .find("position " + std::to_string(bad_value) +
                                  " is out of range [0, 4096) at token 17") != std::string::npos,
                    o.fault->what());
      CHECK_MESSAGE(std::string(o.fault->what()).find(words) == 0, o.fault->what());
      CHECK_NOTHROW(d.synchronize());
    }
    // 20 more rotary launches on the same device agree with the host.
    const Device h = host_device();
    std::mt19937 rng(20261203);
    for (int n = 0; n < 20; ++n) {
      const std::int64_t tokens = 1 + rng() % 9, heads = 1 + rng() % 4, half = 1 + rng() % 4;
      const std::int64_t D = 2 * half + std::int64_t(rng() % 3), P = 3 + rng() % 20;
      const DType t = n % 3 == 0   ? DType::kBFloat16
                      : n % 3 == 1 ? DType::kFloat16
                                   : DType::kFloat32;
      const RotaryStyle style = n % 2 ? RotaryStyle::kInterleaved : RotaryStyle::kRotateHalf;
      std::vector<std::int64_t> pos(static_cast<std::size_t>(tokens));
      for (std::int64_t& p : pos) p = std::int64_t(rng() % std::uint64_t(P));
      const Tensor q = random({tokens, heads, D}, t, h, 100 + unsigned(n));
      const Tensor k = random({tokens, 1, D}, t, h, 200 + unsigned(n));
      const Tensor cache = random_cache(P, 2 * half, DType::kFloat32, h, 300 + unsigned(n));
      const Tensor positions = Tensor::from_host(pos, {tokens}, h);
      const ops::RotaryResult want = ops::rotary_embedding(q, k, positions, cache, 2 * half, style);
      const ops::RotaryResult got =
          ops::rotary_embedding(q.to(d), k.to(d), positions.to(d), cache.to(d), 2 * half, style);
      CAPTURE(n);
      check_close(values_of(got.q), values_of(want.q), t);
      check_close(values_of(*got.k), values_of(*want.k), t);
    }
  }
}
