// The sort family and its ops on every present device against hand-computed values and an
// independent std::stable_sort: NaN last (first descending), -0 equal to +0 and kept as -0,
// ties in input order, every dtype's key transform, both variants (a row of 10,000 takes the
// radix passes), and the order statistics (topk, kthvalue, median, nanmedian, quantile).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "core/capability_resolver.hpp"
#include "core/kernel_abi_sort_select.hpp"
#include "core/ops/explain.hpp"
#include "core/ops/variant_plan.hpp"
#include "nbx/nbx.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {
using F = std::vector<float>;
using I64 = std::vector<std::int64_t>;
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// Whether device d computes in dtype t (float64 and int64 are refused by name without fp64 or
// int64; the refusals have their own tests).
bool holds(const Device& d, DType t) {
  const Capabilities& caps = d.capabilities();
  return !(t == DType::kFloat64 && !caps.fp64.value) && !(t == DType::kInt64 && !caps.int64.value);
}

// Calls f(d, t) for every present device but the host and every dtype of `dtypes` it holds.
template <class F>
void on_devices_and_dtypes(std::span<const DType> dtypes, F f) {
  for (const Device& d : testing::present_devices()) {
    if (d.str() == host_device().str()) continue;
    CAPTURE(d.str());
    for (const DType t : dtypes) {
      CAPTURE(dtype_name(t));
      if (holds(d, t)) f(d, t);
    }
  }
}

// A tensor's elements as bytes, row-major (values compared bit for bit, NaN payloads too).
std::vector<std::uint8_t> bytes_of(const Tensor& t) {
  std::vector<std::uint8_t> b(std::size_t(t.numel()) * dtype_size(t.dtype()));
  t.copy_to_host(b.data());
  return b;
}

bool same_bits(const F& a, const F& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}
}  // namespace

TEST_CASE("sort orders floats as PyTorch: NaN last, -0 equal to +0, ties stable") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = Tensor::from_host(F{3, kNaN, -0.0f, 1, 0.0f, -kInf, 1, kNaN}, {8}, d);
    const ops::ValuesAndIndices up = ops::sort(x);
    CHECK(same_bits(up.values.to_host<float>(), F{-kInf, -0.0f, 0.0f, 1, 1, 3, kNaN, kNaN}));
    CHECK(up.indices.dtype() == DType::kInt64);
    CHECK(up.indices.to_host<std::int64_t>() == I64{5, 2, 4, 3, 6, 0, 1, 7});
    const ops::ValuesAndIndices down = ops::sort(x, 0, /*descending=*/true);
    CHECK(same_bits(down.values.to_host<float>(), F{kNaN, kNaN, 3, 1, 1, -0.0f, 0.0f, -kInf}));
    CHECK(down.indices.to_host<std::int64_t>() == I64{1, 7, 0, 3, 6, 2, 4, 5});
    CHECK(ops::argsort(x).to_host<std::int64_t>() == I64{5, 2, 4, 3, 6, 0, 1, 7});
  }
}

TEST_CASE("sort orders every integer dtype and bool by value, along any dim of a view") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const std::vector<std::int64_t> v{5, -128, 127, 0, -1, 3};
    for (DType t : {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64}) {
      CAPTURE(dtype_name(t));
      const ops::ValuesAndIndices r = ops::sort(Tensor::from_host(v, {6}, d).to(t));
      CHECK(r.values.to(DType::kInt64).to_host<std::int64_t>() == I64{-128, -1, 0, 3, 5, 127});
      CHECK(r.indices.to_host<std::int64_t>() == I64{1, 4, 3, 5, 0, 2});
    }
    const Tensor u8 = Tensor::from_host(I64{200, 7, 255, 0}, {4}, d).to(DType::kUInt8);
    CHECK(ops::sort(u8).indices.to_host<std::int64_t>() == I64{3, 1, 0, 2});
    const Tensor b = Tensor::from_host(I64{1, 0, 1, 0}, {4}, d).to(DType::kBool);
    CHECK(ops::sort(b, 0, true).indices.to_host<std::int64_t>() == I64{0, 2, 1, 3});
    // Along dim 0 of a transposed view: [[4, 1], [2, 3], [0, 5]] viewed from [2, 3].
    const Tensor m = Tensor::from_host(I64{4, 2, 0, 1, 3, 5}, {2, 3}, d).transpose(0, 1);
    const ops::ValuesAndIndices c = ops::sort(m, 0);
    CHECK(c.values.shape() == Shape{3, 2});
    CHECK(c.values.to_host<std::int64_t>() == I64{0, 1, 2, 3, 4, 5});
    CHECK(c.indices.to_host<std::int64_t>() == I64{2, 0, 1, 1, 0, 2});
    // float64, float16, bfloat16 keys, with an infinity and a negative zero.
    for (DType t : {DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
      CAPTURE(dtype_name(t));
      const Tensor h = Tensor::from_host(F{0.5f, -kInf, -0.0f, -2, kNaN, 0.25f}, {6}, d).to(t);
      CHECK(ops::sort(h).indices.to_host<std::int64_t>() == I64{1, 3, 2, 5, 0, 4});
    }
    const ops::ValuesAndIndices z = ops::sort(Tensor::from_host(F{2.5f}, {}, d));
    CHECK(z.values.shape() == Shape{});
    CHECK(z.indices.to_host<std::int64_t>() == I64{0});
    CHECK(ops::sort(Tensor::empty({3, 0}, DType::kFloat32, d)).values.shape() == Shape{3, 0});
  }
}

TEST_CASE("a long row takes the radix passes and matches std::stable_sort") {
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<int> u(-300, 300);
  F v(10000);
  for (float& x : v) x = float(u(rng)) / 4;  // many ties
  v[17] = kNaN, v[4242] = -0.0f, v[9999] = kInf;
  std::vector<std::int64_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  const auto key = [&](std::int64_t i) { return std::isnan(v[i]) ? kInf * 2 : v[i]; };
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    if (std::isnan(v[a]) || std::isnan(v[b])) return !std::isnan(v[a]) && std::isnan(v[b]);
    return key(a) < key(b);
  });
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const ops::ValuesAndIndices r = ops::sort(Tensor::from_host(v, {1, 10000}, d), 1);
    CHECK(r.indices.to_host<std::int64_t>() == order);
    // Descending is the reverse order of values with ties still in input order: check by
    // value (non-increasing, NaN first) and that the indices are a permutation.
    const ops::ValuesAndIndices s = ops::sort(Tensor::from_host(v, {10000}, d), 0, true);
    const F sv = s.values.to_host<float>();
    CHECK(std::isnan(sv[0]));
    CHECK(std::is_sorted(sv.begin() + 1, sv.end(), std::greater<float>()));
    I64 si = s.indices.to_host<std::int64_t>();
    std::sort(si.begin(), si.end());
    CHECK(si.front() == 0);
    CHECK(std::adjacent_find(si.begin(), si.end()) == si.end());
  }
}

TEST_CASE("topk, kthvalue, median and nanmedian pick from the sorted rows") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = Tensor::from_host(F{4, 1, kNaN, 3, 1, 9, 2, 8}, {2, 4}, d);
    const ops::ValuesAndIndices t = ops::topk(x, 2);
    CHECK(same_bits(t.values.to_host<float>(), F{kNaN, 4, 9, 8}));
    CHECK(t.indices.to_host<std::int64_t>() == I64{2, 0, 1, 3});
    CHECK(ops::topk(x, 2, -1, /*largest=*/false).indices.to_host<std::int64_t>() ==
          I64{1, 3, 0, 2});
    const ops::ValuesAndIndices k = ops::kthvalue(x, 2, 1, /*keepdim=*/true);
    CHECK(k.values.shape() == Shape{2, 1});
    CHECK(k.values.to_host<float>() == F{3, 2});
    CHECK(k.indices.to_host<std::int64_t>() == I64{3, 2});
    // median: row 0 holds a NaN (its median is that NaN, index 2); row 1 [1, 9, 2, 8] → 2.
    const ops::ValuesAndIndices m = ops::median(x, 1);
    CHECK(same_bits(m.values.to_host<float>(), F{kNaN, 2}));
    CHECK(m.indices.to_host<std::int64_t>() == I64{2, 2});
    // nanmedian: row 0's non-NaN [4, 1, 3] → 3 (index 3).
    const ops::ValuesAndIndices n = ops::nanmedian(x, 1);
    CHECK(n.values.to_host<float>() == F{3, 2});
    CHECK(n.indices.to_host<std::int64_t>() == I64{3, 2});
    CHECK(std::isnan(ops::median(x).item().to_double()));
    CHECK(ops::nanmedian(x).item().to_double() == 3.0);  // [1, 1, 2, 3, 4, 8, 9]: 3
    CHECK(std::isnan(ops::median(Tensor::empty({0}, DType::kFloat32, d)).item().to_double()));
    const Tensor all_nan = Tensor::from_host(F{kNaN, kNaN}, {2}, d);
    CHECK(ops::nanmedian(all_nan, 0).indices.item().to_int() == 0);
    CHECK_THROWS_AS(ops::topk(x, 5), InvalidArgument);
    CHECK_THROWS_AS(ops::kthvalue(x, 0), InvalidArgument);
    CHECK_THROWS_AS(ops::median(Tensor::empty({0, 3}, DType::kFloat32, d), 0), InvalidArgument);
    CHECK_THROWS_AS(ops::median(Tensor::empty({0}, DType::kInt32, d)), InvalidArgument);
  }
}

TEST_CASE("quantile and nanquantile interpolate as PyTorch") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = Tensor::from_host(F{3, 1, 4, 2}, {4}, d);  // sorted 1 2 3 4
    CHECK(ops::quantile(x, 0.5).item().to_double() == 2.5);
    CHECK(ops::quantile(x, 0.5, {}, false, "lower").item().to_double() == 2);
    CHECK(ops::quantile(x, 0.5, {}, false, "higher").item().to_double() == 3);
    CHECK(ops::quantile(x, 0.4, {}, false, "midpoint").item().to_double() == 2.5);
    CHECK(ops::quantile(x, 0.5, {}, false, "nearest").item().to_double() == 3);  // rank 1.5 to 2
    const Tensor q = Tensor::from_host(F{0, 1, 0.25f}, {3}, d);
    const Tensor r = ops::quantile(x, q);
    CHECK(r.shape() == Shape{3});
    CHECK(r.to_host<float>() == F{1, 4, 1.75f});
    // Along a dim with keepdim and a 1-d q: [q, rows, 1].
    const Tensor m = Tensor::from_host(F{1, 2, 3, 10, kNaN, 30}, {2, 3}, d);
    const Tensor mq = ops::quantile(m, Tensor::from_host(F{0.5f, 1}, {2}, d), 1, true);
    CHECK(mq.shape() == Shape{2, 2, 1});
    const F mv = mq.to_host<float>();
    CHECK(mv[0] == 2);
    CHECK(std::isnan(mv[1]));  // a row with a NaN
    CHECK(mv[2] == 3);
    CHECK(ops::nanquantile(m, 0.5, 1).to_host<float>() == F{2, 20});
    CHECK(std::isnan(ops::nanquantile(Tensor::from_host(F{kNaN}, {1}, d), 0.5).item().to_double()));
    CHECK_THROWS_AS(ops::quantile(x, 1.5), InvalidArgument);
    CHECK_THROWS_AS(ops::quantile(x, Tensor::from_host(F{0.5f, 2}, {2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::quantile(x, 0.5, {}, false, "cubic"), InvalidArgument);
    CHECK_THROWS_AS(ops::quantile(x.to(DType::kInt32), 0.5), InvalidArgument);
    CHECK_THROWS_AS(ops::quantile(x, Tensor::from_host(std::vector<double>{0.5}, {1}, d)),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::quantile(Tensor::empty({0}, DType::kFloat32, d), 0.5), InvalidArgument);
  }
}

TEST_CASE("rows beyond the radix workspace budget are sorted in groups, with the same result") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> u(-50, 50);
  F v(6 * 5 * 4500);
  for (float& x : v) x = float(u(rng)) / 2;
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    // [6, 5, 4500] sorted along dim 2 (30 rows of the radix variant), and the same rows as a
    // transposed view sorted along dim 0.
    const Tensor x = Tensor::from_host(v, {6, 5, 4500}, d);
    const ops::ValuesAndIndices whole = ops::sort(x, 2);
    const ops::ValuesAndIndices whole_t = ops::sort(x.permute({2, 0, 1}), 0);
    // Room for 4 rows a launch: 8 launches along dim 0 of 6 … then within each slice.
    setenv("NBX_SORT_WORKSPACE_BYTES", std::to_string(4 * 4 * 4 * 4600).c_str(), 1);
    const ops::OpExplanation plan =
        ops::explain("sort", {DType::kFloat32}, {{30, 4500}},
                     {d.capabilities(), d.str(), d.display_name(), &d.context().backend_device()});
    const ops::ValuesAndIndices parts = ops::sort(x, 2);
    const ops::ValuesAndIndices parts_t = ops::sort(x.permute({2, 0, 1}), 0);
    unsetenv("NBX_SORT_WORKSPACE_BYTES");
    CHECK(parts.indices.to_host<std::int64_t>() == whole.indices.to_host<std::int64_t>());
    CHECK(parts.values.to_host<float>() == whole.values.to_host<float>());
    CHECK(parts_t.indices.to_host<std::int64_t>() == whole_t.indices.to_host<std::int64_t>());
    // CUDA, HIP and Vulkan run the onesweep variant for long rows, the host the radix variant.
    const bool host = d.str() == host_device().str();
    CHECK(plan.kernel.find(host ? "sort.radix" : "sort.onesweep") != std::string::npos);
    bool chunked = false;
    for (const ops::PlanChoice& c : plan.choices) chunked |= c.what == "chunks";
    CHECK(chunked);
  }
}

TEST_CASE("mode and unique find the runs of equal values as PyTorch") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    // 1 and 3 both three times: the smaller wins, at its last occurrence (index 5).
    const ops::ValuesAndIndices m = ops::mode(Tensor::from_host(I64{3, 1, 3, 2, 1, 1, 3}, {7}, d));
    CHECK(m.values.item().to_int() == 1);
    CHECK(m.indices.item().to_int() == 5);
    const ops::ValuesAndIndices r =
        ops::mode(Tensor::from_host(F{1, 2, 2, 1, 5, 5, 7, 7}, {2, 4}, d), 1, /*keepdim=*/true);
    CHECK(r.values.shape() == Shape{2, 1});
    CHECK(r.values.to_host<float>() == F{1, 5});
    CHECK(r.indices.to_host<std::int64_t>() == I64{3, 1});
    // Each NaN counts alone: [1, NaN, NaN, 2] has four runs of one; the smallest value wins.
    const ops::ValuesAndIndices n = ops::mode(Tensor::from_host(F{1, kNaN, kNaN, 2}, {4}, d));
    CHECK(n.values.item().to_double() == 1.0);
    CHECK(n.indices.item().to_int() == 0);
    CHECK_THROWS_AS(ops::mode(Tensor::empty({0, 3}, DType::kFloat32, d), 0), InvalidArgument);

    const ops::UniqueResult u =
        ops::unique(Tensor::from_host(I64{3, 1, 3, 2, 1}, {5}, d), true, true, true);
    CHECK(u.values.to_host<std::int64_t>() == I64{1, 2, 3});
    CHECK(u.inverse.to_host<std::int64_t>() == I64{2, 0, 2, 1, 0});
    CHECK(u.counts.to_host<std::int64_t>() == I64{2, 1, 2});
    // -0 and +0 are one value (the first, -0, kept); a 2-d input's inverse keeps its shape.
    const ops::UniqueResult z =
        ops::unique(Tensor::from_host(F{-0.0f, 1, 0.0f, 1}, {2, 2}, d), true, true, true);
    CHECK(same_bits(z.values.to_host<float>(), F{-0.0f, 1}));
    CHECK(z.inverse.shape() == Shape{2, 2});
    CHECK(z.inverse.to_host<std::int64_t>() == I64{0, 1, 0, 1});
    CHECK(z.counts.to_host<std::int64_t>() == I64{2, 2});
    const ops::UniqueResult e = ops::unique(Tensor::empty({0}, DType::kInt32, d), true, true, true);
    CHECK(e.values.shape() == Shape{0});
    CHECK(e.counts.shape() == Shape{0});
    const ops::UniqueResult one = ops::unique(Tensor::from_host(I64{5}, {}, d), true, true, true);
    CHECK(one.values.shape() == Shape{1});
    CHECK(one.inverse.shape() == Shape{});
    CHECK(one.counts.to_host<std::int64_t>() == I64{1});
  }
}

// topk of a small k over rows longer than one tile takes the tournament (topk_chunks.cpp) on
// the host, the select variant on CUDA/HIP and Vulkan: the result must be the full stable
// order's first k, ties by index and NaN as the largest value, checked against
// std::stable_sort. Few distinct values make ties across chunks.
TEST_CASE("topk and kthvalue over long rows match std::stable_sort, ties by index") {
  std::mt19937 gen(1234);
  const std::int64_t rows = 2, n = 9000;  // two full chunks of 4096 and a tail of 808
  F v(std::size_t(rows * n));
  for (float& e : v) {
    const int r = int(gen() % 41);
    e = r == 40 ? std::numeric_limits<float>::quiet_NaN() : float(r % 7) - 3.0f;
  }
  // (is NaN, value): NaN above every number, equal to another NaN.
  const auto key = [&](std::int64_t i) {
    const float e = v[std::size_t(i)];
    return std::pair<int, float>(std::isnan(e) ? 1 : 0, std::isnan(e) ? 0.0f : e);
  };
  const auto bits = [](float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    return std::isnan(f) ? 0x7fc00000u : b;
  };
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = Tensor::from_host(v, {rows, n}, d);
    for (bool largest : {true, false})
      for (std::int64_t k : {1, 50, 1024}) {
        CAPTURE(largest);
        CAPTURE(k);
        // Along the last dim, and along dim 0 of the transposed view.
        for (int along : {1, 0}) {
          CAPTURE(along);
          const Tensor in = along == 1 ? x : x.transpose(0, 1);
          const ops::ValuesAndIndices r = ops::topk(in, k, along, largest);
          const F got = r.values.contiguous().to_host<float>();
          const I64 at = r.indices.contiguous().to_host<std::int64_t>();
          for (std::int64_t row = 0; row < rows; ++row) {
            std::vector<std::int64_t> order(static_cast<std::size_t>(n));
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
              const auto ka = key(row * n + a), kb = key(row * n + b);
              return largest ? kb < ka : ka < kb;
            });
            for (std::int64_t j = 0; j < k; ++j) {
              // [rows, k] along the last dim, [k, rows] along dim 0.
              const std::size_t g = std::size_t(along == 1 ? row * k + j : j * rows + row);
              CHECK(at[g] == order[std::size_t(j)]);
              CHECK(bits(got[g]) == bits(v[std::size_t(row * n + order[std::size_t(j)])]));
            }
          }
        }
      }
    const ops::ValuesAndIndices kth = ops::kthvalue(x, 7, 1, false);
    const I64 kat = kth.indices.to_host<std::int64_t>();
    for (std::int64_t row = 0; row < rows; ++row) {
      std::vector<std::int64_t> order(static_cast<std::size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        return key(row * n + a) < key(row * n + b);
      });
      CHECK(kat[std::size_t(row)] == order[6]);
    }
  }
}

TEST_CASE("long rows of every key width sort as on the host, values bit for bit") {
  // Rows of tens of thousands take the long-row variant (onesweep on CUDA/HIP and Vulkan,
  // radix on the host): many tiles a row, a partial last tile, several rows a launch, a strided
  // view, both directions, and for float32 NaNs with payloads and signs and -0 beside +0 (values
  // are rebuilt from keys there, except for NaN and zero keys).
  std::mt19937 rng(20261203);
  std::uniform_int_distribution<int> u(-100, 100);
  F base(3 * 70001);
  for (float& x : base) x = float(u(rng));
  F f32 = base;
  const std::uint32_t nan_bits[] = {0x7fc01234u, 0xffc00001u, 0x7f800001u};
  for (std::size_t i = 0; i < f32.size(); i += 997) {
    std::memcpy(&f32[i], &nan_bits[(i / 997) % 3], 4);
    if (i + 5 < f32.size()) f32[i + 5] = (i / 997) % 2 ? -0.0f : 0.0f;
  }
  const Device host = host_device();
  const DType dtypes[] = {DType::kInt8,    DType::kUInt8,    DType::kInt16,
                          DType::kFloat16, DType::kBFloat16, DType::kInt32,
                          DType::kFloat32, DType::kFloat64,  DType::kInt64};
  on_devices_and_dtypes(dtypes, [&](const Device& d, DType dt) {
    F src = dt == DType::kFloat32 ? f32 : base;
    if (dt == DType::kUInt8)
      for (float& x : src) x = std::abs(x);
    const Tensor on_host = Tensor::from_host(src, {3, 70001}, host).to(dt);
    const Tensor on_device = on_host.to(d);
    for (const bool descending : {false, true}) {
      CAPTURE(descending);
      const ops::ValuesAndIndices want = ops::sort(on_host, 1, descending);
      const ops::ValuesAndIndices got = ops::sort(on_device, 1, descending);
      CHECK(got.indices.to_host<std::int64_t>() == want.indices.to_host<std::int64_t>());
      if (dt == DType::kFloat32)
        CHECK(same_bits(got.values.to_host<float>(), want.values.to_host<float>()));
      else if (dt == DType::kInt64)
        CHECK(got.values.to_host<std::int64_t>() == want.values.to_host<std::int64_t>());
      else
        CHECK(got.values.to(host).to(DType::kFloat64).to_host<double>() ==
              want.values.to(DType::kFloat64).to_host<double>());
    }
    // The rows as a strided view: [70001, 3] sorted along dim 0.
    const ops::ValuesAndIndices want_t = ops::sort(on_host.transpose(0, 1), 0);
    const ops::ValuesAndIndices got_t = ops::sort(on_device.transpose(0, 1), 0);
    CHECK(got_t.indices.to_host<std::int64_t>() == want_t.indices.to_host<std::int64_t>());
  });
}

TEST_CASE("rows up to the tile sort as on the host for every key width, values bit for bit") {
  // The rows variant (a block radix sort on CUDA/HIP and Vulkan): rows sharing a tile (1 to
  // 1000 elements: the row's number as extra digits, pads past each row and past the tile's
  // rows), a row a tile of 1024, 2048 and 4096 (4, 8 and 16 items an invocation), several tiles
  // a launch, few distinct values (ties), NaNs of both signs and -0 beside +0, both directions
  // and a strided view. The plan must take the rows variant wherever the row fits its tile.
  std::mt19937 rng(20261204);
  const Device host = host_device();
  const DType dtypes[] = {DType::kBool,    DType::kInt8,     DType::kUInt8, DType::kInt16,
                          DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kFloat32,
                          DType::kFloat64, DType::kInt64};
  const std::int64_t shapes[][2] = {{5, 1},    {300, 3},  {37, 100}, {9, 1000},
                                    {5, 1024}, {3, 2000}, {3, 4096}};
  for (const auto& shape : shapes) {
    const std::int64_t rows = shape[0], n = shape[1];
    CAPTURE(rows);
    CAPTURE(n);
    F base(std::size_t(rows * n));
    for (float& x : base) x = float(int(rng() % 61) - 30);
    F f32 = base;  // NaNs with payloads and signs, and zeros of both signs
    const std::uint32_t nan_bits[] = {0x7fc01234u, 0xffc00001u, 0x7f800001u};
    for (std::size_t i = 0; i < f32.size(); i += 13) {
      std::memcpy(&f32[i], &nan_bits[(i / 13) % 3], 4);
      if (i + 3 < f32.size()) f32[i + 3] = (i / 13) % 2 ? -0.0f : 0.0f;
    }
    on_devices_and_dtypes(dtypes, [&](const Device& d, DType dt) {
      F src = dt == DType::kFloat32 ? f32 : base;
      if (dt == DType::kUInt8)
        for (float& x : src) x = std::abs(x) * 8;  // all of 0 … 240
      if (dt == DType::kFloat16 || dt == DType::kBFloat16)
        for (std::size_t i = 5; i < src.size(); i += 17) src[i] = kNaN;
      const Tensor on_host = Tensor::from_host(src, {rows, n}, host).to(dt);
      const Tensor on_device = on_host.to(d);
      const ops::PlanTarget target{d.capabilities(), d.str(), d.display_name(),
                                   &d.context().backend_device()};
      if (n <= ops::sort_rows_tile_cap(dt, target)) {
        const ops::OpExplanation plan = ops::explain("sort", {dt}, {{rows, n}}, target);
        CHECK(plan.kernel.find("sort.rows") != std::string::npos);
      }
      for (const bool descending : {false, true}) {
        CAPTURE(descending);
        const ops::ValuesAndIndices want = ops::sort(on_host, 1, descending);
        const ops::ValuesAndIndices got = ops::sort(on_device, 1, descending);
        CHECK(got.indices.to_host<std::int64_t>() == want.indices.to_host<std::int64_t>());
        CHECK(bytes_of(got.values) == bytes_of(want.values));
      }
      // The rows as a strided view: [n, rows] sorted along dim 0.
      const ops::ValuesAndIndices want_t = ops::sort(on_host.transpose(0, 1), 0, true);
      const ops::ValuesAndIndices got_t = ops::sort(on_device.transpose(0, 1), 0, true);
      CHECK(got_t.indices.to_host<std::int64_t>() == want_t.indices.to_host<std::int64_t>());
    });
  }
}

namespace {

// topk along dim 1 on a device against the host's: the same indices, and the same values —
// float32 bit for bit, other dtypes as float64 with NaN equal to NaN.
void check_topk_as_host(const Tensor& on_host, const Tensor& on_device, std::int64_t k,
                        bool largest) {
  const ops::ValuesAndIndices want = ops::topk(on_host, k, 1, largest);
  const ops::ValuesAndIndices got = ops::topk(on_device, k, 1, largest);
  CHECK(got.indices.to_host<std::int64_t>() == want.indices.to_host<std::int64_t>());
  if (on_host.dtype() == DType::kFloat32) {
    CHECK(same_bits(got.values.to_host<float>(), want.values.to_host<float>()));
    return;
  }
  const std::vector<double> a = got.values.to(host_device()).to(DType::kFloat64).to_host<double>(),
                            b = want.values.to(DType::kFloat64).to_host<double>();
  CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end(),
                   [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }));
}

}  // namespace

TEST_CASE("topk and kthvalue of long rows agree with the host, ties past any candidate cap") {
  // Rows longer than a tile take the select variant on CUDA/HIP and Vulkan (the tournament on
  // the host): a long run of one value (more equal keys than its candidates hold, so the
  // first by index are kept), NaNs (the largest), -0 and +0, for every key width.
  std::mt19937 rng(31);
  std::uniform_int_distribution<int> u(-50, 50);
  F base(3 * 20000);
  for (float& x : base) x = float(u(rng));
  for (int r = 0; r < 3; ++r)
    for (int j = 1000 + r; j < 15000; ++j) base[std::size_t(r * 20000 + j)] = 99;
  F f32 = base;
  f32[7] = kNaN, f32[20007] = -0.0f, f32[20008] = 0.0f, f32[40000] = kNaN, f32[59999] = kNaN;
  const Device host = host_device();
  const DType dtypes[] = {DType::kInt8,  DType::kUInt8,   DType::kBFloat16, DType::kFloat16,
                          DType::kInt32, DType::kFloat32, DType::kFloat64,  DType::kInt64};
  on_devices_and_dtypes(dtypes, [&](const Device& d, DType dt) {
    const Tensor on_host =
        Tensor::from_host(dt == DType::kFloat32 ? f32 : base, {3, 20000}, host).to(dt);
    const Tensor on_device = on_host.to(d);
    for (const std::int64_t k : {1, 50, 1024}) {
      for (const bool largest : {true, false}) {
        CAPTURE(k);
        CAPTURE(largest);
        check_topk_as_host(on_host, on_device, k, largest);
      }
      const ops::ValuesAndIndices kth_want = ops::kthvalue(on_host, k, 1);
      const ops::ValuesAndIndices kth_got = ops::kthvalue(on_device, k, 1);
      CHECK(kth_got.indices.to_host<std::int64_t>() == kth_want.indices.to_host<std::int64_t>());
    }
    // Along dim 0 of the transposed view (strided rows).
    const ops::ValuesAndIndices want_t = ops::topk(on_host.transpose(0, 1), 50, 0);
    const ops::ValuesAndIndices got_t = ops::topk(on_device.transpose(0, 1), 50, 0);
    CHECK(got_t.indices.to_host<std::int64_t>() == want_t.indices.to_host<std::int64_t>());
  });
}

TEST_CASE("topk's one read of a long row holds the k smallest through its compactions") {
  // The select variant's filter appends the elements that can still be among the k smallest
  // and compacts its buffer to k when the next chunk might not fit. Rows that make it compact
  // at every chunk (ascending keys for largest, descending for smallest), rows whose every key
  // ties (the first k by index are kept, later equal keys refused), random keys, and a row of
  // NaNs after numbers, for 16-, 32- and 64-bit keys (Vulkan's pretest of raw values, floats
  // and integers, and its exact key test).
  const std::int64_t n = 30000;
  std::mt19937 rng(77);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  F v(std::size_t(5 * n));
  for (std::int64_t j = 0; j < n; ++j) {
    v[std::size_t(j)] = float(j) * 0.25f - 1000.0f;  // ascending
    v[std::size_t(n + j)] = 5000.0f - float(j);      // descending
    v[std::size_t(2 * n + j)] = 7.0f;                // every key ties
    v[std::size_t(3 * n + j)] = normal(rng);
    v[std::size_t(4 * n + j)] = j % 3 == 0 ? kNaN : float(j % 101);
  }
  const Device host = host_device();
  const DType dtypes[] = {DType::kFloat32, DType::kBFloat16, DType::kInt32, DType::kFloat64,
                          DType::kInt64};
  on_devices_and_dtypes(dtypes, [&](const Device& d, DType dt) {
    const Tensor on_host = Tensor::from_host(v, {5, n}, host).to(dt);
    const Tensor on_device = on_host.to(d);
    for (const std::int64_t k : {1, 20, 50, 1024})
      for (const bool largest : {true, false}) {
        CAPTURE(k);
        CAPTURE(largest);
        check_topk_as_host(on_host, on_device, k, largest);
      }
  });
}

TEST_CASE("a row tile the device's shared memory cannot take is clamped and announced once") {
  // 8-byte keys in llvmpipe's 32 KB: the rows variant's tile is clamped to 2048, so rows of
  // 2049…4096 take a workspace variant — said once on stderr, not per call, and sorted right.
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    if (!holds(d, DType::kFloat64)) continue;
    const ops::PlanTarget target{d.capabilities(), d.str(), d.display_name(),
                                 &d.context().backend_device()};
    const std::int64_t cap = ops::sort_rows_tile_cap(DType::kFloat64, target);
    if (cap >= abi::kSortRowsTileMax) continue;  // this device takes the full tile
    std::vector<double> v(std::size_t(2 * (cap + 1)));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = double((i * 7919) % 1000) - 500.0;
    const Tensor x = Tensor::from_host(v, {2, cap + 1}, d);
    std::ostringstream err;
    std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
    const ops::ValuesAndIndices first = ops::sort(x, 1);
    const ops::ValuesAndIndices again = ops::sort(x, 1);
    std::cerr.rdbuf(old);
    const std::string said = err.str();
    CHECK(said.find("tile is clamped to " + std::to_string(cap)) != std::string::npos);
    CHECK(said.find("tile is clamped") == said.rfind("tile is clamped"));  // once
    const std::vector<double> got = first.values.to_host<double>();
    for (int r = 0; r < 2; ++r)
      CHECK(std::is_sorted(got.begin() + r * (cap + 1), got.begin() + (r + 1) * (cap + 1)));
    CHECK(again.indices.to_host<std::int64_t>() == first.indices.to_host<std::int64_t>());
  }
}

TEST_CASE("topk's select keeps at most the device file's candidates: 2048 on sm_90's Vulkan") {
  // sm_90.yml caps Vulkan's select at 2048 candidates (NVIDIA's driver keeps one workgroup of
  // 4096 a multiprocessor); CUDA keeps the 4096 its 48 KB take. The plan and explain say which.
  static const Capabilities vk = capabilities_for_arch("nvidia/sm_90", "vulkan");
  static const Capabilities cuda = capabilities_for_arch("nvidia/sm_90", "cuda");
  CHECK(vk.sort.select_candidates_max.value == 2048);
  CHECK(vk.sort.select_candidates_max.source.find("(backends.vulkan.sort.select_candidates_max)") !=
        std::string::npos);
  CHECK(cuda.sort.select_candidates_max.value == 0);
  for (const Capabilities* caps : {&vk, &cuda}) {
    const bool capped = caps == &vk;
    CAPTURE(capped);
    const ops::PlanTarget target{*caps, "nvidia/sm_90", "arch nvidia/sm_90"};
    abi::SortParams p{};
    p.dtype = std::int32_t(DType::kFloat32);
    p.rows = 4096, p.row_len = 128256, p.k = 50;
    std::vector<ops::PlanChoice> choices;
    REQUIRE(ops::plan_topk_select(p, target, choices));
    CHECK(p.tile == (capped ? 2048 : 4096));
    REQUIRE_FALSE(choices.empty());
    CHECK(choices.back().capability ==
          (capped ? "sort.select_candidates_max" : "shared_memory.per_block"));
  }
  // The cap holds for k up to an eighth of it: k = 256 keeps 2048 candidates, k = 1024 the 4096
  // shared memory takes (2048 would compact after every chunk), both by the filter.
  const ops::PlanTarget target{vk, "nvidia/sm_90", "arch nvidia/sm_90"};
  for (const std::int64_t k : {256, 257, 1024}) {
    CAPTURE(k);
    abi::SortParams p{};
    p.dtype = std::int32_t(DType::kFloat32);
    p.rows = 8, p.row_len = 128256, p.k = k;
    std::vector<ops::PlanChoice> choices;
    REQUIRE(ops::plan_topk_select(p, target, choices));
    CHECK(p.tile == (k <= 256 ? 2048 : 4096));
    CHECK(abi::sort_select_filters(p.k, p.tile));
    CHECK(choices.back().capability ==
          (k <= 256 ? "sort.select_candidates_max" : "shared_memory.per_block"));
  }
}
