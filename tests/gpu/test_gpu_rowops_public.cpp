// The softmax family and the normalizations through the public ops on the GPU under test
// against the same ops on the host: what users call, with the wrapper's own variant and
// row-tile choices for the device (rows of 1 to 128256, a strided softmax dim, a broadcast
// mask, every norm with and without weight and bias), in every float dtype.
#include <doctest/doctest.h>

#include <random>

#include "nbx/nbx.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

Device gpu() {
  return open(backend_under_test() + ":0");
}

// Seeded values in [lo, hi]: the same bytes go to the host and to the GPU.
std::vector<std::byte> random_bytes(DType t, std::int64_t n, double lo, double hi,
                                    std::uint64_t seed) {
  std::vector<std::byte> v(std::size_t(n) * dtype_size(t));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (std::int64_t i = 0; i < n; ++i) put_element(v, t, i, u(rng), 0);
  return v;
}

struct Pair {
  Tensor host, dev;
};
Pair make(DType t, const Shape& shape, double lo, double hi, std::uint64_t seed) {
  const auto bytes = random_bytes(t, numel(shape), lo, hi, seed);
  return {Tensor::from_host(bytes.data(), shape, t),
          Tensor::from_host(bytes.data(), shape, t, gpu())};
}

void compare(const Tensor& host, const Tensor& dev, const std::string& label) {
  REQUIRE(host.dtype() == dev.dtype());
  std::vector<std::byte> e(std::size_t(host.numel()) * dtype_size(host.dtype())), g(e.size());
  host.copy_to_host(e.data());
  dev.copy_to_host(g.data());
  Case c;
  c.out.dtype = host.dtype();
  INFO(label << " " << dtype_name(host.dtype()));
  const std::string problem = compare_outputs(c, e, g);
  CHECK_MESSAGE(problem.empty(), problem);
}

constexpr DType kFloatTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                 DType::kFloat64};

TEST_CASE("public softmax ops on the GPU match the host") {
  std::uint64_t seed = 21000;
  for (DType t : kFloatTypes) {
    for (std::int64_t len : {1, 7, 1000, 5000, 128256}) {
      const Pair x = make(t, {len > 5000 ? 2 : 4, len}, -4, 4, seed++);
      compare(ops::softmax(x.host, 1), ops::softmax(x.dev, 1),
              "softmax len " + std::to_string(len));
      compare(ops::log_softmax(x.host, -1), ops::log_softmax(x.dev, -1),
              "log_softmax len " + std::to_string(len));
    }
    const Pair x = make(t, {300, 5}, -4, 4, seed++);
    compare(ops::softmax(x.host, 0), ops::softmax(x.dev, 0), "softmax over dim 0");
    std::vector<bool> m(5);
    for (std::size_t k = 0; k < m.size(); ++k) m[k] = k % 2 == 1;
    const Tensor mask_h = Tensor::from_host(m, {5}), mask_d = Tensor::from_host(m, {5}, gpu());
    for (bool log : {false, true})
      compare(ops::scaled_masked_softmax(x.host, 1, 0.5, mask_h, log),
              ops::scaled_masked_softmax(x.dev, 1, 0.5, mask_d, log), "scaled masked softmax");
  }
}

TEST_CASE("public norm ops on the GPU match the host, with and without weight and bias") {
  std::uint64_t seed = 22000;
  for (DType t : kFloatTypes)
    for (int affine = 0; affine < 4; ++affine) {
      const bool has_w = affine & 1, has_b = affine & 2;
      const Pair x = make(t, {6, 8, 125}, -1.5, 2.5, seed++);
      const Pair w = make(t, {125}, 0.5, 2, seed++), b = make(t, {125}, -1, 1, seed++);
      auto opt = [](bool on, const Tensor& v) {
        return on ? std::optional<Tensor>(v) : std::nullopt;
      };
      compare(ops::layer_norm(x.host, {125}, opt(has_w, w.host), opt(has_b, b.host)),
              ops::layer_norm(x.dev, {125}, opt(has_w, w.dev), opt(has_b, b.dev)), "layer_norm");
      compare(ops::rms_norm(x.host, {125}, opt(has_w, w.host)),
              ops::rms_norm(x.dev, {125}, opt(has_w, w.dev)), "rms_norm");
      const Pair cw = make(t, {8}, 0.5, 2, seed++), cb = make(t, {8}, -1, 1, seed++);
      compare(ops::group_norm(x.host, 4, opt(has_w, cw.host), opt(has_b, cb.host)),
              ops::group_norm(x.dev, 4, opt(has_w, cw.dev), opt(has_b, cb.dev)), "group_norm");
      const Pair rm = make(t, {8}, -0.5, 0.5, seed++), rv = make(t, {8}, 0.5, 3, seed++);
      compare(ops::batch_norm(x.host, rm.host, rv.host, opt(has_w, cw.host), opt(has_b, cb.host)),
              ops::batch_norm(x.dev, rm.dev, rv.dev, opt(has_w, cw.dev), opt(has_b, cb.dev)),
              "batch_norm");
    }
}

}  // namespace
}  // namespace nbx::gputest
