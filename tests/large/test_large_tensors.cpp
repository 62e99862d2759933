// Tensors of more than 2^31 elements (64-bit indexing) on the devices NBX_LARGE_DEVICES names
// ("cuda:0", "cuda:0,vulkan:0" …): elementwise, reductions, scans, softmax and the index
// family, each checked on sampled positions — either side of 2^31 and at random — against
// values known in closed form (what the host computes for them, without a 17 GB host run).
// Without NBX_LARGE_DEVICES the program exits 77 (meson's SKIP): CI machines lack the memory
// (about 30 GB a device at the peak). Run on the H200: bench/run_h200_issue15.sh.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "nbx/nbx.hpp"

namespace {

using nbx::DType;
using nbx::Tensor;

constexpr std::int64_t kPeriod = 251;  // x[i] = i mod 251: no power-of-two alias
// Past int32's range; NBX_LARGE_ELEMENTS sets a smaller size for a check of this program.
std::int64_t kBig = (std::int64_t(1) << 31) + 77;
std::vector<std::string> g_devices;

// The sum of i mod 251 for i < n.
std::int64_t pattern_sum(std::int64_t n) {
  const std::int64_t q = n / kPeriod, r = n % kPeriod;
  return q * (kPeriod * (kPeriod - 1) / 2) + r * (r - 1) / 2;
}

// Positions either side of 2^31 (and of 2^31 / 251's row), both ends, and 24 at random.
std::vector<std::int64_t> sample_positions(std::int64_t n) {
  const std::int64_t two31 = std::int64_t(1) << 31;
  std::vector<std::int64_t> out;
  for (std::int64_t i : {std::int64_t(0), std::int64_t(1), kPeriod - 1, kPeriod, two31 - 2,
                         two31 - 1, two31, two31 + 1, n - 2, n - 1})
    if (i < n) out.push_back(i);  // a smaller NBX_LARGE_ELEMENTS
  std::mt19937_64 rng(0x1a76e5u);
  for (int k = 0; k < 24; ++k) out.push_back(std::int64_t(rng() % std::uint64_t(n)));
  return out;
}

// x[i] = i mod 251 as uint8 over n elements, built on the device: a row of 251 expanded and
// made contiguous (no host array of 2 GB).
Tensor pattern_u8(std::int64_t n, const nbx::Device& device) {
  const std::int64_t rows = (n + kPeriod - 1) / kPeriod;
  Tensor row = Tensor::arange(0, kPeriod, 1, DType::kUInt8, device);
  return row.reshape({1, kPeriod}).expand({rows, kPeriod}).contiguous().flatten().slice(0, 0, n);
}

// One element of a 1-d tensor, read through a one-element view (a copy of 1 element).
template <class T>
T at(const Tensor& t, std::int64_t i) {
  return t.slice(0, i, i + 1).to_host<T>().at(0);
}

std::string where(const nbx::Device& d, std::int64_t i) {
  std::ostringstream s;
  s << d.str() << " at " << i;
  return s.str();
}

}  // namespace

TEST_CASE("elementwise, reductions and scans over 2^31 + 77 uint8 elements") {
  for (const std::string& name : g_devices) {
    const nbx::Device d = nbx::open(name);
    const Tensor x = pattern_u8(kBig, d);
    REQUIRE(x.numel() == kBig);
    // add wraps in uint8, as PyTorch's does.
    const Tensor y = nbx::ops::add(x, x);
    const Tensor c = nbx::ops::cumsum(x, 0);  // uint8 → int64, PyTorch's rule
    CHECK(c.dtype() == DType::kInt64);
    for (std::int64_t i : sample_positions(kBig)) {
      CAPTURE(where(d, i));
      CHECK(at<std::uint8_t>(x, i) == i % kPeriod);
      CHECK(at<std::uint8_t>(y, i) == (2 * (i % kPeriod)) % 256);
      CHECK(at<std::int64_t>(c, i) == pattern_sum(i + 1));
    }
    CAPTURE(d.str());
    CHECK(nbx::ops::sum(x).item().to_int() == pattern_sum(kBig));
    CHECK(nbx::ops::amax(x).item().to_int() == kPeriod - 1);
    // The same reduction along a dimension of 2^31 + 77 (one row), and across rows of 251.
    CHECK(nbx::ops::sum(x.reshape({1, kBig}), {1}).to_host<std::int64_t>().at(0) ==
          pattern_sum(kBig));
  }
}

TEST_CASE("the index family reads and writes past element 2^31") {
  for (const std::string& name : g_devices) {
    const nbx::Device d = nbx::open(name);
    const Tensor x = pattern_u8(kBig, d);
    const std::vector<std::int64_t> pos = sample_positions(kBig);
    const Tensor index = Tensor::from_host(pos, {std::int64_t(pos.size())}, d);
    const std::vector<std::uint8_t> got =
        nbx::ops::index_select(x, 0, index).to_host<std::uint8_t>();
    const std::vector<std::uint8_t> gathered =
        nbx::ops::gather(x, 0, index).to_host<std::uint8_t>();
    for (std::size_t k = 0; k < pos.size(); ++k) {
      CAPTURE(where(d, pos[k]));
      CHECK(got[k] == pos[k] % kPeriod);
      CHECK(gathered[k] == pos[k] % kPeriod);
    }
    // index_put_ writes 255 (never a pattern value) at the positions, nothing else.
    Tensor w = x.clone();
    nbx::ops::index_put_(w, {index}, Tensor::full({1}, 255, DType::kUInt8, d));
    for (std::int64_t i : pos) {
      CAPTURE(where(d, i));
      CHECK(at<std::uint8_t>(w, i) == 255);
      if (i + 1 < kBig && std::find(pos.begin(), pos.end(), i + 1) == pos.end())
        CHECK(at<std::uint8_t>(w, i + 1) == (i + 1) % kPeriod);
    }
  }
}

TEST_CASE("softmax over 2^21 + 1 rows of 1024 bfloat16 (2^31 + 1024 elements)") {
  const std::int64_t cols = 1024, rows = kBig / cols + 1;  // 2^21 + 1 rows at the full size
  for (const std::string& name : g_devices) {
    const nbx::Device d = nbx::open(name);
    // v[r, j] = ((r·1024 + j) mod 251) / 64: exact in bfloat16 (8 significant bits).
    const Tensor v = nbx::ops::mul(pattern_u8(rows * cols, d).to(DType::kBFloat16), 1.0 / 64)
                         .reshape({rows, cols});
    const Tensor s = nbx::ops::softmax(v, 1);
    for (std::int64_t r : {std::int64_t(0), rows / 3, rows - 2, rows - 1}) {
      CAPTURE(where(d, r));
      std::vector<double> want(cols);
      double mx = 0, total = 0;
      for (std::int64_t j = 0; j < cols; ++j) {
        want[j] = double((r * cols + j) % kPeriod) / 64;
        mx = std::max(mx, want[j]);
      }
      for (double& w : want) total += (w = std::exp(w - mx));
      const std::vector<float> in = v.slice(0, r, r + 1).to(DType::kFloat32).to_host<float>();
      const std::vector<float> got = s.slice(0, r, r + 1).to(DType::kFloat32).to_host<float>();
      for (std::int64_t j = 0; j < cols; ++j) {
        CHECK(in[j] == float(double((r * cols + j) % kPeriod) / 64));
        // bfloat16's rounding of the result: half an ulp, 2^-9 relative.
        CHECK(std::abs(got[j] - want[j] / total) <= want[j] / total * 0x1p-8 + 1e-30);
      }
    }
  }
}

int main(int argc, char** argv) {
  const char* names = std::getenv("NBX_LARGE_DEVICES");
  if (!names || !*names) {
    std::puts("test_large_tensors: set NBX_LARGE_DEVICES (e.g. cuda:0) to run; skipped.");
    return 77;
  }
  if (const char* n = std::getenv("NBX_LARGE_ELEMENTS")) kBig = std::atoll(n);
  std::stringstream list(names);
  for (std::string name; std::getline(list, name, ',');)
    if (!name.empty()) g_devices.push_back(name);
  doctest::Context context(argc, argv);
  return context.run();
}
