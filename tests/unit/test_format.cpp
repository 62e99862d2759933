// nbx::format against PyTorch's repr (the strings below are torch 1.13's, "torch." read
// "nbx."); python/tests/test_data.py compares many more with the installed PyTorch.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/format.hpp"
#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

TEST_CASE("format prints values as PyTorch's repr") {
  CHECK(format(Tensor::from_host(std::vector<float>{1.5f, -2.25f, 3.0f}, {3})) ==
        "tensor([ 1.5000, -2.2500,  3.0000])");
  CHECK(format(Tensor::from_host(std::vector<std::int64_t>{1, 2, 300, -4}, {2, 2})) ==
        "tensor([[  1,   2],\n        [300,  -4]])");
  CHECK(format(Tensor::from_host(std::vector<float>{1e-5f, 1.0f}, {2})) ==
        "tensor([1.0000e-05, 1.0000e+00])");
  CHECK(format(Tensor::from_host(std::vector<bool>{true, false}, {2})) == "tensor([ True, False])");
  CHECK(format(Tensor::ones({2}, float16)) == "tensor([1., 1.], dtype=nbx.float16)");
  CHECK(format(Tensor::empty({0, 3}, int32)) == "tensor([], size=(0, 3), dtype=nbx.int32)");
  CHECK(format(Tensor::full({}, 3.5, float32)) == "tensor(3.5000)");
  CHECK(format(Tensor::from_host(std::vector<float>{NAN, 1.0f, INFINITY}, {3})) ==
        "tensor([nan, 1., inf])");
  CHECK(format(Tensor::arange(0, 30, 1, int8)) ==
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29], dtype=nbx.int8)");
  CHECK(format(Tensor()) == "tensor(undefined)");
}

TEST_CASE("format summarises past 1000 elements: 3 items at each end of each long dim") {
  const std::string expected =
      "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n"
      "         4.9000e+01],\n"
      "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n"
      "         9.9000e+01],\n"
      "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n"
      "         1.4900e+02],\n"
      "        ...,\n"
      "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n"
      "         1.8990e+03],\n"
      "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n"
      "         1.9490e+03],\n"
      "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
      "         1.9990e+03]])";
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor t = Tensor::arange(0, 2000, 1, float32, d).reshape({40, 50});
    const std::string device = d.is_host() ? "" : ", device='" + d.str() + "'";
    CHECK(format(t) == expected.substr(0, expected.size() - 1) + device + ")");
  }
}
