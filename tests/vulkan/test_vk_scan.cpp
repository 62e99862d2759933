// The "scan" family on vulkan:0 past a device limit: more rows than llvmpipe's 65535
// workgroups, so the shaders' row loops run (skipped by default: ~12 s on llvmpipe under
// validation; run with --no-skip). Every other public scan is compared with the host in
// tests/conformance.
#include <random>
#include <string>

#include "nbx/nbx.hpp"
#include "vk_test_util.hpp"

namespace nbx::vktest {
namespace {

struct Pair {
  Tensor host, dev;
};

// Seeded integers in [-5, 5] on both sides.
Pair make(DType t, const Shape& shape, std::uint64_t seed) {
  Raw r{t, std::vector<std::byte>(std::size_t(numel(shape)) * dtype_size(t))};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> small(-5, 5);
  for (std::size_t i = 0; i < r.count(); ++i) {
    const std::int64_t v = small(rng);
    set_element(r, i, double(v), v);
  }
  return {Tensor::from_host(r.bytes.data(), shape, t),
          Tensor::from_host(r.bytes.data(), shape, t, vk())};
}

Raw raw_of(const Tensor& x) {
  Raw r{x.dtype(), std::vector<std::byte>(std::size_t(x.numel()) * x.itemsize())};
  x.copy_to_host(r.bytes.data());
  return r;
}

// Exactly (integer results).
void same(const Tensor& host, const Tensor& dev, const std::string& label) {
  REQUIRE(host.dtype() == dev.dtype());
  REQUIRE(host.shape() == dev.shape());
  INFO(label << " " << dtype_name(host.dtype()));
  const std::string problem = compare(raw_of(dev), raw_of(host));
  CHECK_MESSAGE(problem.empty(), problem);
}

// 70000 rows: many per invocation (len 2) and more than llvmpipe's 65535 workgroups on the
// chunked path (len 65), whose row loop then runs. ~12 s on llvmpipe under validation, so
// skipped by default (CI's budget); run with --no-skip.
TEST_CASE("scans of more rows than the device has workgroups match the host" * doctest::skip()) {
  std::uint64_t seed = 34000;
  for (std::int64_t len : {2, 65}) {
    const Pair many = make(DType::kInt32, {70000, len}, seed++);
    same(ops::cumsum(many.host, 1), ops::cumsum(many.dev, 1), "cumsum of 70000 rows");
  }
}

}  // namespace
}  // namespace nbx::vktest
