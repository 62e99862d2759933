// Tensors on the host: round trips, creation, views sharing storage, invalid views.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core/ops/elementwise.hpp"
#include "core/tensor.hpp"

using namespace nbx;

namespace {
std::vector<float> iota_f(int n, float start = 1.5f) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = start + static_cast<float>(i);
  return v;
}
bool message_has(const Error& e, const std::string& s) {
  return std::string(e.what()).find(s) != std::string::npos;
}
}  // namespace

TEST_CASE("from_host / to_host round-trips every dtype byte for byte") {
  const std::vector<std::int64_t> i64 = {-9007199254740993LL, 0, 42, INT64_MAX, INT64_MIN};
  CHECK(Tensor::from_host(i64, {5}).to_host<std::int64_t>() == i64);
  const std::vector<std::uint8_t> u8 = {0, 1, 127, 128, 255};
  CHECK(Tensor::from_host(u8, {5}).to_host<std::uint8_t>() == u8);
  const std::vector<double> f64 = {-0.0, 1e-310, 3.141592653589793, -1e300, 2.5};
  const auto back = Tensor::from_host(f64, {5}).to_host<double>();
  for (std::size_t i = 0; i < f64.size(); ++i) {
    CHECK(back[i] == f64[i]);
    CHECK(std::signbit(back[i]) == std::signbit(f64[i]));
  }
  const std::vector<BFloat16> bf = {BFloat16::from(1.5), BFloat16::from(-3.0)};
  const auto bf_back = Tensor::from_host(bf, {2}).to_host<BFloat16>();
  CHECK(bf_back[0].bits == bf[0].bits);
  CHECK(bf_back[1].value() == -3.0);
  CHECK_THROWS_AS(Tensor::from_host(f64, {2, 2}), InvalidArgument);
  CHECK_THROWS_AS(Tensor::from_host(f64, {5}).to_host<float>(), InvalidArgument);
}

TEST_CASE("zero-size and 0-d tensors are first-class") {
  const Tensor empty = Tensor::empty({3, 0, 2}, float32);
  CHECK(empty.numel() == 0);
  CHECK(empty.to_host<float>().empty());
  CHECK(ops::add(empty, 1.0).shape() == Shape{3, 0, 2});
  const Tensor scalar = Tensor::full({}, 2.5, float64);
  CHECK(scalar.dim() == 0);
  CHECK(scalar.numel() == 1);
  CHECK(scalar.item().to_double() == 2.5);
  CHECK(ops::mul(scalar, scalar).item().to_double() == 6.25);
  CHECK_THROWS_AS(Tensor::ones({2}, float32).item(), InvalidArgument);
}

TEST_CASE("full, zeros, ones and arange") {
  CHECK(Tensor::full({2, 2}, 7, int16).to_host<std::int16_t>() == std::vector<std::int16_t>(4, 7));
  CHECK(Tensor::ones({3}, bool_).to_host<bool>() == std::vector<bool>{true, true, true});
  CHECK(Tensor::zeros({2}, float32).to_host<float>() == std::vector<float>{0.0f, 0.0f});
  CHECK(Tensor::arange(2, 11, 3, int32).to_host<std::int32_t>() ==
        std::vector<std::int32_t>{2, 5, 8});
  CHECK(Tensor::arange(5, 0, -2, int64).to_host<std::int64_t>() ==
        std::vector<std::int64_t>{5, 3, 1});
  CHECK(Tensor::arange(0.0, 1.0, 0.25, float32).to_host<float>() ==
        std::vector<float>{0.0f, 0.25f, 0.5f, 0.75f});
  CHECK_THROWS_AS(Tensor::arange(0, 5, 0, int32), InvalidArgument);
  CHECK_THROWS_AS(Tensor::arange(0, 5, -1, int32), InvalidArgument);
  CHECK_THROWS_AS(Tensor::empty({2, -1}, float32), InvalidArgument);
}

TEST_CASE("views share storage and read the right elements") {
  const Tensor x = Tensor::from_host(iota_f(24), {2, 3, 4});
  const Tensor t = x.transpose(0, 2);  // [4, 3, 2]
  CHECK(t.shape() == Shape{4, 3, 2});
  CHECK(t.storage() == x.storage());
  CHECK_FALSE(t.is_contiguous());
  // t[i][j][k] = x[k][j][i] = 1.5 + 12k + 4j + i
  const auto tv = t.contiguous().to_host<float>();
  CHECK(tv[0] == 1.5f);
  CHECK(tv[1] == 13.5f);                    // k = 1
  CHECK(tv[2 * 1 + 6 * 1] == 5.5f + 1.0f);  // i = 1, j = 1, k = 0 → 1.5 + 4 + 1

  const Tensor s = x.slice(2, 1, 4, 2);  // last dim: elements 1 and 3
  CHECK(s.shape() == Shape{2, 3, 2});
  CHECK(s.contiguous().to_host<float>()[0] == 2.5f);
  CHECK(s.contiguous().to_host<float>()[1] == 4.5f);
  CHECK(x.narrow(1, 1, 2).shape() == Shape{2, 2, 4});
  CHECK(x.narrow(1, 1, 2).offset() == 4);
  CHECK(x.unsqueeze(1).shape() == Shape{2, 1, 3, 4});
  CHECK(x.unsqueeze(-1).shape() == Shape{2, 3, 4, 1});
  CHECK(x.unsqueeze(1).squeeze().shape() == x.shape());
  CHECK(x.permute({2, 0, 1}).shape() == Shape{4, 2, 3});
  CHECK(x.view({6, -1}).shape() == Shape{6, 4});
  CHECK(x.view({6, -1}).storage() == x.storage());
  CHECK(x.expand({5, 2, 3, 4}).strides() == Strides{0, 12, 4, 1});
}

TEST_CASE("a view built by the constructor lies inside its storage or is refused") {
  // Found from outside (issue 15): a stride of 2^40 read host memory at random (segfault),
  // strides of 2^62 wrapped a bounds check into garbage results, an offset of 100 on 6 floats
  // read past the storage, a negative size threw std::length_error.
  const Tensor a = Tensor::from_host(iota_f(6), {6});
  const auto st = a.storage();
  const auto refused = [&](std::int64_t offset, const Shape& shape, const Strides& strides,
                           DType dtype, const std::string& why) {
    CAPTURE(to_string(shape));
    CAPTURE(to_string(strides));
    try {
      Tensor v(st, offset, shape, strides, dtype);
      FAIL("accepted");
    } catch (const InvalidArgument& e) {
      CHECK(message_has(e, why));
    }
  };
  refused(0, {2, 3}, {std::int64_t(1) << 40, 1}, DType::kFloat32, "past the storage");
  refused(0, {4, 3}, {std::numeric_limits<std::int64_t>::max() / 2, 1}, DType::kFloat32,
          "past 2^63");
  refused(100, {1}, {1}, DType::kFloat32, "past the storage");
  refused(0, {4}, {1}, DType::kFloat64, "past the storage");  // 32 bytes of 24
  refused(0, {2, -3}, {3, 1}, DType::kFloat32, "non-negative");
  refused(0, {2, 3}, {-3, 1}, DType::kFloat32, "negative strides");
  refused(-1, {1}, {1}, DType::kFloat32, "offset");
  refused(0, {2, 3}, {3}, DType::kFloat32, "as many strides");
  // What fits is a view: the last element exactly at the end, 8-byte elements of the same bytes,
  // zero-size views anywhere, a stride past the end on a size-1 dim.
  CHECK(Tensor(st, 5, {1}, {1}, DType::kFloat32).to_host<float>() == std::vector<float>{6.5f});
  CHECK(Tensor(st, 0, {3}, {1}, DType::kFloat64).numel() == 3);
  CHECK(Tensor(st, 1000, {0, 4}, {4, 1}, DType::kFloat32).numel() == 0);
  CHECK(Tensor(st, 0, {1, 2}, {std::int64_t(1) << 50, 3}, DType::kFloat32).to_host<float>() ==
        std::vector<float>{1.5f, 4.5f});
}

TEST_CASE("reshape copies only when a view is impossible") {
  const Tensor x = Tensor::from_host(iota_f(6), {2, 3});
  const Tensor t = x.transpose(0, 1);  // [3, 2], not contiguous
  CHECK_THROWS_AS(t.view({6}), InvalidArgument);
  const Tensor r = t.reshape({6});
  CHECK(r.storage() != x.storage());
  CHECK(r.to_host<float>() == std::vector<float>{1.5f, 4.5f, 2.5f, 5.5f, 3.5f, 6.5f});
  CHECK(x.reshape({3, 2}).storage() == x.storage());
  // A sliced-but-regular view can still be viewed without a copy.
  const Tensor rows = Tensor::from_host(iota_f(12), {4, 3}).slice(0, 0, 4, 2);  // rows 0 and 2
  CHECK(rows.view({2, 3, 1}).strides() == Strides{6, 1, 1});
}

TEST_CASE("invalid views throw with the shapes in the message") {
  const Tensor x = Tensor::ones({2, 3}, float32);
  try {
    (void)x.view({4, 2});
    FAIL("expected InvalidArgument");
  } catch (const InvalidArgument& e) {
    CHECK(message_has(e, "[4, 2]"));
  }
  try {
    (void)x.expand({4, 3});
    FAIL("expected InvalidArgument");
  } catch (const InvalidArgument& e) {
    CHECK(message_has(e, "[2, 3]"));
    CHECK(message_has(e, "[4, 3]"));
  }
  CHECK_THROWS_AS(x.permute({0, 0}), InvalidArgument);
  CHECK_THROWS_AS(x.transpose(0, 2), InvalidArgument);
  CHECK_THROWS_AS(x.narrow(1, 2, 2), InvalidArgument);
  CHECK_THROWS_AS(x.view({-1, -1}), InvalidArgument);
  CHECK_THROWS_AS(Tensor().to(float64), InvalidArgument);
}

TEST_CASE("operators follow the ops") {
  const Tensor a = Tensor::from_host(std::vector<std::int32_t>{7, -7, 9}, {3});
  const Tensor b = Tensor::from_host(std::vector<std::int32_t>{2, 2, 3}, {3});
  CHECK((a + b).to_host<std::int32_t>() == std::vector<std::int32_t>{9, -5, 12});
  CHECK((a - b).to_host<std::int32_t>() == std::vector<std::int32_t>{5, -9, 6});
  CHECK((a * 2).to_host<std::int32_t>() == std::vector<std::int32_t>{14, -14, 18});
  const Tensor q = a / b;  // true division of ints → float32
  CHECK(q.dtype() == float32);
  CHECK(q.to_host<float>() == std::vector<float>{3.5f, -3.5f, 3.0f});
  CHECK((1.5 - a).to_host<float>() == std::vector<float>{-5.5f, 8.5f, -7.5f});
  CHECK((-a).to_host<std::int32_t>() == std::vector<std::int32_t>{-7, 7, -9});
}

TEST_CASE("device identifiers parse and print") {
  CHECK(DeviceId::parse("cuda:1").str() == "cuda:1");
  CHECK(DeviceId::parse("vulkan").str() == "vulkan:0");
  CHECK(DeviceId::parse("cpu").str() == "host");
  CHECK_THROWS_AS(DeviceId::parse("tpu:0"), InvalidArgument);
  CHECK_THROWS_AS(DeviceId::parse("cuda:x"), InvalidArgument);
  CHECK_THROWS_AS(DeviceId::parse("host:1"), InvalidArgument);
  CHECK(open("host") == host_device());
  CHECK_THROWS_AS(open("cuda:7"), Error);  // unavailable here: not compiled in, or no device
}
