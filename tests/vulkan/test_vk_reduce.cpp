// Reductions on vulkan:0 that are not host comparisons of the public ops (those live in
// tests/conformance): a dtype the device lacks is refused by name, and on-device copies at
// odd sizes and offsets keep every byte (a strided view's contiguous copy is one launch).
#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include "core/errors.hpp"
#include "nbx/nbx.hpp"
#include "vk_test_util.hpp"

namespace nbx::vktest {
namespace {

// Seeded float32 values, normally distributed.
Tensor random_floats(const Shape& shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (double& x : v) x = std::normal_distribution<double>(0, 1.5)(rng);
  return Tensor::from_host(v, shape).to(DType::kFloat32);
}

TEST_CASE("a dtype the device lacks is refused by name") {
  for (DType t : {DType::kFloat64, DType::kInt64, DType::kFloat16}) {
    if (device_holds(t)) continue;
    const Tensor x = Tensor::zeros({4}, DType::kFloat32, vk());
    CHECK_THROWS_AS(ops::sum(x, {}, false, t), Unsupported);
  }
}

TEST_CASE("on-device copies at odd sizes and offsets match the source bytes") {
  BackendDevice& dev = vulkan_device();
  std::mt19937_64 rng(11);
  std::vector<std::uint8_t> src(70000);
  for (auto& b : src) b = static_cast<std::uint8_t>(rng());
  DeviceMemory s = dev.allocate(src.size()), d = dev.allocate(src.size());
  dev.copy_from_host(s, 0, src.data(), src.size());
  for (auto [so, dof, n] : {std::tuple<std::size_t, std::size_t, std::size_t>{0, 0, 65536},
                            {16, 48, 4097},
                            {3, 3, 1000},
                            {4, 8, 777},
                            {1, 2, 65001},
                            {5, 0, 1},
                            {0, 7, 15},
                            {13, 29, 60003},
                            {0, 0, 70000}}) {
    CAPTURE(so);
    CAPTURE(dof);
    CAPTURE(n);
    std::vector<std::uint8_t> before(src.size(), 0xa5), after(src.size());
    dev.copy_from_host(d, 0, before.data(), before.size());
    dev.copy_on_device(d, dof, s, so, n);
    dev.synchronize();
    dev.copy_to_host(after.data(), d, 0, after.size());
    std::vector<std::uint8_t> want = before;
    std::copy(src.begin() + long(so), src.begin() + long(so + n), want.begin() + long(dof));
    CHECK(after == want);
  }
  // Two ranges of one allocation.
  dev.copy_on_device(s, 39999, s, 1, 30001);
  dev.synchronize();
  std::vector<std::uint8_t> after(src.size());
  dev.copy_to_host(after.data(), s, 0, after.size());
  CHECK(std::equal(after.begin() + 39999, after.end(), src.begin() + 1));
  CHECK(std::equal(after.begin(), after.begin() + 39999, src.begin()));
  dev.free(s);
  dev.free(d);
  // Strided views become contiguous on the device (core/ops/copy.cpp: an elementwise copy).
  const Tensor x = random_floats({33, 17}, 5).to(vk());
  const std::uint64_t launches = x.device().context().backend_device().launches();
  const Tensor c = x.transpose(0, 1).contiguous();
  CHECK(x.device().context().backend_device().launches() == launches + 1);
  CHECK(c.to(::nbx::host_device()).to_host<float>() ==
        x.to(::nbx::host_device()).transpose(0, 1).contiguous().to_host<float>());
}

}  // namespace
}  // namespace nbx::vktest
