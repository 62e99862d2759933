// The "scan" family (cumsum, cumprod, cummax, cummin) on vulkan:0 against the host
// reference through the public ops: every dtype the device has (floats, integers, bool),
// rows of 1 to 128256 elements (the row-per-invocation path and the chunked
// workgroup scan), the scan dim strided (dim 0, a transposed view, the middle dim of a
// 3-d tensor), ties and PyTorch's NaN rule for cummax/cummin indices, ±inf and NaN in
// sums, int64 wrap-around in integer products, and an accumulate dtype request. Integer
// results and indices are exact. Each case prints its seed.
#include <cmath>
#include <random>
#include <string>

#include "core/errors.hpp"
#include "nbx/nbx.hpp"
#include "vk_test_util.hpp"

namespace nbx::vktest {
namespace {

constexpr DType kAllTypes[] = {DType::kBool,    DType::kInt8,   DType::kUInt8,   DType::kInt16,
                               DType::kInt32,   DType::kInt64,  DType::kFloat16, DType::kBFloat16,
                               DType::kFloat32, DType::kFloat64};

enum class Fill {
  kPlain,     // floats in [-2, 2]; integers in [-5, 5] (uint8 [0, 5], bool 0/1)
  kTies,      // floats on a 0.5 grid in [-2, 2] (ties); integers as plain
  kSpecials,  // kTies with NaN, +inf, -inf planted in the first rows
  kNearOne,   // floats in [0.9, 1.1] (products that neither vanish nor overflow)
};

struct Pair {
  Tensor host, dev;
};

Pair make(DType t, const Shape& shape, Fill fill, std::uint64_t seed) {
  Raw r{t, std::vector<std::byte>(std::size_t(numel(shape)) * dtype_size(t))};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2), near(0.9, 1.1);
  std::uniform_int_distribution<int> small(t == DType::kUInt8 ? 0 : -5, 5), bit(0, 1);
  const std::int64_t last = shape.size() ? shape[shape.size() - 1] : 1;
  for (std::size_t i = 0; i < r.count(); ++i) {
    if (!is_floating(t)) {
      const std::int64_t v = t == DType::kBool ? bit(rng) : small(rng);
      set_element(r, i, double(v), v);
      continue;
    }
    double v = fill == Fill::kNearOne ? near(rng) : u(rng);
    if (fill == Fill::kTies || fill == Fill::kSpecials) v = std::round(v * 2) / 2;
    if (fill == Fill::kSpecials) {
      const std::int64_t row = std::int64_t(i) / last, k = std::int64_t(i) % last;
      if (row == 0 && k == last / 2) v = NAN;
      if (row == 1 && k == last / 3) v = INFINITY;
      if (row == 1 && k == (2 * last) / 3) v = -INFINITY;
      if (row == 2 && k % 7 == 3) v = NAN;
      if (row == 3 && k == last / 4) v = -INFINITY;
    }
    set_element(r, i, v, 0);
  }
  return {Tensor::from_host(r.bytes.data(), shape, t),
          Tensor::from_host(r.bytes.data(), shape, t, vk())};
}

Raw raw_of(const Tensor& x) {
  Raw r{x.dtype(), std::vector<std::byte>(std::size_t(x.numel()) * x.itemsize())};
  x.copy_to_host(r.bytes.data());
  return r;
}

// Integer results exactly; floats with vk_test_util's per-dtype tolerance, widened by
// `scale` (float32 products of k factors round k times: sqrt(k), as the conformance table).
void same(const Tensor& host, const Tensor& dev, const std::string& label, double scale = 1) {
  REQUIRE(host.dtype() == dev.dtype());
  REQUIRE(host.shape() == dev.shape());
  INFO(label << " " << dtype_name(host.dtype()));
  const Raw want = raw_of(host), got = raw_of(dev);
  if (scale == 1 || !is_floating(want.dtype)) {
    const std::string problem = compare(got, want);
    CHECK_MESSAGE(problem.empty(), problem);
    return;
  }
  for (std::size_t i = 0; i < want.count(); ++i) {
    const double g = element_as_double(got, i), w = element_as_double(want, i);
    const bool ok = (std::isnan(g) && std::isnan(w)) || g == w ||
                    std::fabs(g - w) <= scale * (1e-5 + 1.3e-6 * std::fabs(w));
    if (!ok) {
      CHECK_MESSAGE(ok, "element " << i << ": vulkan " << g << ", host " << w);
      return;
    }
  }
}

bool device_has(DType t) {
  try {
    (void)ops::cummax(Tensor::zeros({1}, t, vk()), 0);
    (void)ops::cumsum(Tensor::zeros({1}, t, vk()), 0);
    return true;
  } catch (const Unsupported& e) {
    MESSAGE("vulkan:0 refuses " << dtype_name(t) << " by name: " << e.what());
    CHECK(std::string(e.what()).find("refused") != std::string::npos);
    return false;
  }
}

// Every scan of `x` along `dim` on both sides.
void check_all(const Pair& x, std::int64_t dim, const std::string& label, bool products) {
  const std::string l = label + " dim " + std::to_string(dim);
  same(ops::cumsum(x.host, dim), ops::cumsum(x.dev, dim), "cumsum " + l);
  if (products) {
    const std::int64_t k = x.host.dim() ? x.host.shape()[dim < 0 ? dim + x.host.dim() : dim] : 1;
    const double scale = x.host.dtype() == DType::kFloat32 ? std::sqrt(double(k)) : 1;
    same(ops::cumprod(x.host, dim), ops::cumprod(x.dev, dim), "cumprod " + l, scale);
  }
  const auto hmax = ops::cummax(x.host, dim), dmax = ops::cummax(x.dev, dim);
  same(hmax.values, dmax.values, "cummax values " + l);
  same(hmax.indices, dmax.indices, "cummax indices " + l);
  const auto hmin = ops::cummin(x.host, dim), dmin = ops::cummin(x.dev, dim);
  same(hmin.values, dmin.values, "cummin values " + l);
  same(hmin.indices, dmin.indices, "cummin indices " + l);
}

TEST_CASE("scans on vulkan:0 match the host on rows of 1 to 128256, every dtype") {
  std::uint64_t seed = 31000;
  for (DType t : kAllTypes) {
    if (!device_has(t)) continue;
    for (std::int64_t len : {1, 65, 4096, 128256}) {
      const Shape shape = {len > 4096 ? 2 : 5, len};
      const std::uint64_t s = seed++;
      INFO("seed " << s << " len " << len);
      // Integer products wrap in int64 (|5|^65 does): exact on both sides.
      check_all(make(t, shape, Fill::kTies, s), 1, "ties len " + std::to_string(len),
                !is_floating(t));
      if (is_floating(t)) {
        const Pair p = make(t, shape, Fill::kNearOne, s + 500);
        const double scale = t == DType::kFloat32 ? std::sqrt(double(len)) : 1;
        same(ops::cumprod(p.host, 1), ops::cumprod(p.dev, 1), "cumprod near one", scale);
        check_all(make(t, shape, Fill::kPlain, s + 1000), 1, "plain", false);
      }
    }
  }
}

TEST_CASE("scans with NaN and ±inf follow PyTorch (sticky NaN, the later index on ties)") {
  std::uint64_t seed = 32000;
  for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    if (!device_has(t)) continue;
    for (std::int64_t len : {7, 65, 4096}) {
      const std::uint64_t s = seed++;
      INFO("seed " << s << " len " << len);
      check_all(make(t, {5, len}, Fill::kSpecials, s), 1, "specials", false);
    }
  }
}

TEST_CASE("scans along a strided dim, of views, and with a dtype request match the host") {
  std::uint64_t seed = 33000;
  for (DType t : kAllTypes) {
    if (!device_has(t)) continue;
    const std::uint64_t s = seed++;
    INFO("seed " << s);
    const bool products = !is_floating(t);
    check_all(make(t, {65, 3}, Fill::kTies, s), 0, "dim 0 of [65, 3]", products);
    check_all(make(t, {300, 2}, Fill::kTies, s + 1), 0, "dim 0 of [300, 2] (chunked)", products);
    const Pair x = make(t, {4, 70, 3}, Fill::kTies, s + 2);
    check_all(x, 1, "middle dim of [4, 70, 3]", products);
    check_all({x.host.transpose(0, 2), x.dev.transpose(0, 2)}, 2, "transposed view", products);
    check_all({x.host.slice(1, 3, 70, 2), x.dev.slice(1, 3, 70, 2)}, 1, "sliced view", products);
  }
  // A dtype request casts first (int32 summed as float64; float16 as float32).
  const Pair i = make(DType::kInt32, {3, 200}, Fill::kPlain, seed++);
  if (device_has(DType::kFloat64))
    same(ops::cumsum(i.host, 1, DType::kFloat64), ops::cumsum(i.dev, 1, DType::kFloat64),
         "cumsum int32 as float64");
  const Pair h = make(DType::kFloat16, {3, 200}, Fill::kPlain, seed++);
  same(ops::cumsum(h.host, 1, DType::kFloat32), ops::cumsum(h.dev, 1, DType::kFloat32),
       "cumsum float16 as float32");
  // A 0-d tensor scans as one element.
  const Pair z = make(DType::kFloat32, {}, Fill::kPlain, seed++);
  check_all(z, 0, "0-d", true);
}

// 70000 rows: many per invocation (len 2) and more than llvmpipe's 65535 workgroups on the
// chunked path (len 65), whose row loop then runs. ~12 s on llvmpipe under validation, so
// skipped by default (CI's budget); run with --no-skip.
TEST_CASE("scans of more rows than the device has workgroups match the host" * doctest::skip()) {
  std::uint64_t seed = 34000;
  for (std::int64_t len : {2, 65}) {
    const Pair many = make(DType::kInt32, {70000, len}, Fill::kPlain, seed++);
    same(ops::cumsum(many.host, 1), ops::cumsum(many.dev, 1), "cumsum of 70000 rows");
  }
}

}  // namespace
}  // namespace nbx::vktest
