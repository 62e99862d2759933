// The "fill" family through the public creation ops (core/ops/creation.hpp) on vulkan:0
// against the host reference, bit for bit: arange and linspace for every dtype the device
// holds (integer, fractional and negative steps, linspace's two-sided formula, single
// steps), triu/tril over batches, diagonals and strided inputs.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "nbx/nbx.hpp"
#include "vk_test_util.hpp"

namespace nbx::vktest {
namespace {

// The raw bytes of a tensor (row-major): fills are exact, so they are compared as bits.
std::vector<std::uint8_t> bytes_of(const Tensor& t) {
  std::vector<std::uint8_t> b(static_cast<std::size_t>(t.numel()) * t.itemsize());
  t.copy_to_host(b.data());
  return b;
}

std::string first_difference(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype())
    return got.str() + " vs " + want.str();
  const auto a = bytes_of(got), b = bytes_of(want);
  const std::size_t es = want.itemsize();
  for (std::size_t i = 0; i < a.size(); i += es)
    if (std::memcmp(&a[i], &b[i], es) != 0) {
      const auto g = got.to(::nbx::host_device()).to(DType::kFloat64).to_host<double>();
      const auto w = want.to(DType::kFloat64).to_host<double>();
      return "element " + std::to_string(i / es) + ": " + std::to_string(g[i / es]) + " vs host " +
             std::to_string(w[i / es]);
    }
  return "";
}

TEST_CASE("arange matches the host bit for bit in every dtype") {
  struct Range {
    Scalar start, end, step;
  };
  const std::vector<Range> ranges = {
      {Scalar(0), Scalar(1000), Scalar(1)},       {Scalar(-7), Scalar(300), Scalar(3)},
      {Scalar(50), Scalar(-20), Scalar(-7)},      {Scalar(0.0), Scalar(10.0), Scalar(0.1)},
      {Scalar(-1.5), Scalar(2.25), Scalar(0.37)}, {Scalar(1e6), Scalar(1e6 + 3000.5), Scalar(1.5)},
      {Scalar(0.5), Scalar(-100.0), Scalar(-0.3)}};
  int cells = 0;
  for (DType t : kAllDTypes) {
    if (t == DType::kBool || !device_holds(t)) continue;
    for (const Range& r : ranges) {
      Tensor want;
      try {
        want = ops::arange(r.start, r.end, r.step, t);
      } catch (const InvalidArgument&) {
        CHECK_THROWS_AS(ops::arange(r.start, r.end, r.step, t, vk()), InvalidArgument);
        continue;
      }
      const Tensor got = ops::arange(r.start, r.end, r.step, t, vk());
      INFO("arange(" << r.start.str() << ", " << r.end.str() << ", " << r.step.str() << ") "
                     << dtype_name(t));
      const std::string p = first_difference(got, want);
      CHECK_MESSAGE(p.empty(), p);
      ++cells;
    }
  }
  MESSAGE(cells << " aranges compared");
}

TEST_CASE("int64 arange past 2^53 stays exact") {
  if (!device_holds(DType::kInt64)) return;
  const std::int64_t big = (std::int64_t(1) << 60) + 12345;
  const Tensor got = ops::arange(Scalar(big), Scalar(big + 1000), Scalar(7), DType::kInt64, vk());
  const Tensor want = ops::arange(Scalar(big), Scalar(big + 1000), Scalar(7), DType::kInt64);
  CHECK(first_difference(got, want).empty());
}

TEST_CASE("linspace matches the host bit for bit: both ends exact, every dtype") {
  struct Lin {
    double start, end;
    std::int64_t steps;
  };
  const std::vector<Lin> cases = {{0, 1, 11},    {-3.5, 7.25, 1000}, {10, -10, 65},
                                  {2, 2, 5},     {5, 100, 1},        {-1e4, 1e4, 100001},
                                  {0.1, 0.7, 2}, {-100, 255, 356},   {1, 0, 4097}};
  for (DType t : kAllDTypes) {
    if (t == DType::kBool || !device_holds(t)) continue;
    for (const Lin& l : cases) {
      const Tensor want = ops::linspace(Scalar(l.start), Scalar(l.end), l.steps, t);
      const Tensor got = ops::linspace(Scalar(l.start), Scalar(l.end), l.steps, t, vk());
      INFO("linspace(" << l.start << ", " << l.end << ", " << l.steps << ") " << dtype_name(t));
      const std::string p = first_difference(got, want);
      CHECK_MESSAGE(p.empty(), p);
    }
  }
}

TEST_CASE("triu and tril match the host over batches, diagonals and strided inputs") {
  std::mt19937_64 rng(21);
  for (DType t : kAllDTypes) {
    if (!device_holds(t)) continue;
    std::vector<double> v(2 * 3 * 7 * 9);
    for (double& x : v) x = std::normal_distribution<double>(0, 20)(rng);
    const Tensor hx = Tensor::from_host(v, {2, 3, 7, 9}).to(t);
    const Tensor dx = hx.to(vk());
    for (std::int64_t diag : {std::int64_t(0), std::int64_t(1), std::int64_t(-2), std::int64_t(8),
                              std::int64_t(-100), std::int64_t(1) << 40}) {
      INFO(dtype_name(t) << " diagonal " << diag);
      CHECK(first_difference(ops::triu(dx, diag), ops::triu(hx, diag)).empty());
      CHECK(first_difference(ops::tril(dx, diag), ops::tril(hx, diag)).empty());
      // A transposed (strided) input and a sliced one.
      CHECK(
          first_difference(ops::triu(dx.transpose(2, 3), diag), ops::triu(hx.transpose(2, 3), diag))
              .empty());
      CHECK(first_difference(ops::tril(dx.slice(3, 1, 9, 2), diag),
                             ops::tril(hx.slice(3, 1, 9, 2), diag))
                .empty());
    }
  }
}

}  // namespace
}  // namespace nbx::vktest
