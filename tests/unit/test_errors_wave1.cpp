// Bad input to the op-wave-1 wrappers (reduce, softmax, norm, scan, linalg, creation) on the
// host: each refusal is the right nbx error type, names the op and the offending shapes or
// dtypes, and leaves the device working (a correct op after every refusal matches known
// values; allocator statistics return to where they were). Accepted edge cases (empty
// tensors, bool cumsum …) follow PyTorch and are checked to run. The out-of-memory cases
// need the cap meson sets (NBX_HOST_MEMORY_LIMIT=64M).
#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "nbx/nbx.hpp"

using namespace nbx;

namespace {

Tensor f32(std::vector<float> v, Shape s) {
  return Tensor::from_host(v, s);
}
Tensor rnd(Shape s, DType t = float32) {
  return ops::arange(Scalar(0), Scalar(numel(s)), Scalar(1), float32).reshape(s).to(t);
}

// A correct op after a refusal: softmax and a matmul with known answers.
void device_still_works() {
  const std::vector<float> sm = ops::softmax(f32({0, 0, 0, 0}, {2, 2}), 1).to_host<float>();
  for (float v : sm) CHECK(v == doctest::Approx(0.5));
  const std::vector<float> mm =
      ops::matmul(f32({1, 2, 3, 4}, {2, 2}), f32({1, 0, 0, 1}, {2, 2})).to_host<float>();
  CHECK(mm == std::vector<float>{1, 2, 3, 4});
}

// Runs `f`, which must throw E whose message contains every one of `words`.
template <class E>
void refused(const std::function<void()>& f, const std::vector<std::string>& words) {
  std::string msg;
  bool right_type = false, threw = false;
  try {
    f();
  } catch (const E& e) {
    threw = right_type = true;
    msg = e.what();
  } catch (const std::exception& e) {
    threw = true;
    msg = std::string("wrong type: ") + e.what();
  }
  CAPTURE(msg);
  CHECK_MESSAGE(threw, "no error for: " << words.front());
  CHECK_MESSAGE(right_type, msg);
  for (const std::string& w : words) CHECK_MESSAGE(msg.find(w) != std::string::npos, w);
  device_still_works();
}

}  // namespace

TEST_CASE("matmul family: shapes, dtypes, undefined operands") {
  const Tensor a = rnd({2, 3}), b = rnd({4, 5});
  refused<InvalidArgument>([&] { ops::matmul(a, b); }, {"matmul", "[2, 3]", "[4, 5]"});
  refused<InvalidArgument>([&] { ops::mm(a, b); }, {"mm", "[2, 3]", "[4, 5]"});
  refused<InvalidArgument>(
      [&] {
        ops::matmul(rnd({2, 2, 3}), rnd({3, 3, 4}));
      },
      {"matmul", "[2, 2, 3]", "[3, 3, 4]"});
  refused<InvalidArgument>([&] { ops::bmm(rnd({2, 2, 3}), rnd({3, 3, 4})); }, {"bmm"});
  refused<InvalidArgument>([&] { ops::mv(a, rnd({4})); }, {"mv", "[2, 3]", "[4]"});
  refused<InvalidArgument>([&] { ops::dot(rnd({3}), rnd({4})); }, {"dot", "[3]", "[4]"});
  refused<InvalidArgument>([&] { ops::mm(rnd({2, 3, 1}), a); }, {"mm"});
  refused<InvalidArgument>([&] { ops::matmul(rnd({}), a); }, {"matmul"});
  refused<InvalidArgument>([&] { ops::addmm(rnd({3, 3}), a, rnd({3, 4})); }, {"addmm", "[3, 3]"});
  refused<InvalidArgument>(
      [&] {
        ops::linear(rnd({2, 3}), rnd({4, 5}));
      },
      {"linear", "[2, 3]", "[4, 5]"});
  // dtypes: bool, mixed operands, a weight of another dtype.
  refused<InvalidArgument>(
      [&] {
        ops::matmul(a.to(DType::kBool), rnd({3, 2}, DType::kBool));
      },
      {"matmul", "bool"});
  refused<InvalidArgument>(
      [&] {
        ops::matmul(a, rnd({3, 2}, float64));
      },
      {"matmul", "float32", "float64"});
  refused<InvalidArgument>(
      [&] {
        ops::linear(a, rnd({4, 3}, float16));
      },
      {"linear", "float32", "float16"});
  refused<InvalidArgument>([&] { ops::addmm(rnd({2, 2}, int32), a, rnd({3, 2})); }, {"addmm"});
  refused<InvalidArgument>(
      [&] {
        ops::addmm(rnd({2, 2}, int32), a.to(int32), rnd({3, 2}, int32), 1, 0.5);
      },
      {"addmm", "int32"});
  refused<InvalidArgument>([&] { ops::matmul(Tensor(), a); }, {"matmul", "undefined"});
  refused<InvalidArgument>([&] { ops::mm(a, Tensor()); }, {"mm", "undefined"});
  refused<InvalidArgument>([&] { ops::linear(a, rnd({4, 3}), Tensor()); }, {"linear"});
}

TEST_CASE("matmul family: empty operands give PyTorch's results") {
  // k = 0: zeros; m = 0: an empty product.
  CHECK(ops::matmul(rnd({2, 0}), rnd({0, 3})).to_host<float>() == std::vector<float>(6, 0.0f));
  CHECK(ops::matmul(rnd({0, 3}), rnd({3, 2})).shape() == Shape{0, 2});
  CHECK(ops::bmm(rnd({0, 2, 3}), rnd({0, 3, 2})).shape() == Shape{0, 2, 2});
  CHECK(ops::dot(rnd({0}), rnd({0})).item().to_double() == 0.0);
}

TEST_CASE("softmax family: dims, dtypes, masks") {
  const Tensor x = rnd({2, 3});
  refused<InvalidArgument>([&] { ops::softmax(x, 2); }, {"softmax", "dimension 2", "out of range"});
  refused<InvalidArgument>([&] { ops::log_softmax(x, -3); }, {"log_softmax", "-3"});
  refused<InvalidArgument>([&] { ops::softmax(rnd({2, 3}, int32), 0); }, {"softmax", "int32"});
  refused<InvalidArgument>(
      [&] {
        ops::log_softmax(rnd({2, 3}, DType::kBool), 0);
      },
      {"log_softmax", "bool"});
  refused<InvalidArgument>([&] { ops::softmax(Tensor(), 0); }, {"softmax", "undefined"});
  const Tensor bad_mask = Tensor::zeros({4}, DType::kBool);
  refused<InvalidArgument>([&] { ops::scaled_masked_softmax(x, 1, 1.0, bad_mask); },
                           {"scaled_masked_softmax", "[4]", "[2, 3]"});
  refused<InvalidArgument>(
      [&] {
        ops::scaled_masked_softmax(x, 1, 1.0, Tensor::zeros({2, 3}, float32));
      },
      {"scaled_masked_softmax", "bool", "got float32"});
  refused<InvalidArgument>([&] { ops::scaled_masked_softmax(x, 1, 1.0, Tensor()); },
                           {"scaled_masked_softmax", "mask"});
  // Accepted: empty tensors, a broadcasting mask, int input with a floating dtype (PyTorch).
  CHECK(ops::softmax(rnd({0, 3}), 1).shape() == Shape{0, 3});
  CHECK(ops::softmax(rnd({3, 0}), 1).shape() == Shape{3, 0});
  CHECK(ops::scaled_masked_softmax(x, 1, 1.0, Tensor::zeros({3}, DType::kBool)).shape() ==
        Shape{2, 3});
  CHECK(ops::softmax(rnd({2}, int32), 0, float32).dtype() == float32);
}

TEST_CASE("normalizations: shapes, groups, statistics, dtypes") {
  const Tensor x = rnd({2, 4, 3});
  refused<InvalidArgument>([&] { ops::layer_norm(x, {4}); },
                           {"layer_norm", "normalized_shape [4]", "[2, 4, 3]"});
  refused<InvalidArgument>([&] { ops::layer_norm(x, {1, 2, 4, 3}); }, {"layer_norm", "[2, 4, 3]"});
  refused<InvalidArgument>([&] { ops::rms_norm(x, {2, 3}); }, {"rms_norm", "[2, 3]"});
  refused<InvalidArgument>([&] { ops::layer_norm(x, {3}, rnd({4})); },
                           {"layer_norm", "weight", "[4]", "[3]"});
  refused<InvalidArgument>([&] { ops::layer_norm(x, {3}, {}, rnd({2})); },
                           {"layer_norm", "bias", "[2]"});
  refused<InvalidArgument>([&] { ops::group_norm(x, 3); },
                           {"group_norm", "4 channels", "3 groups"});
  refused<InvalidArgument>([&] { ops::group_norm(x, 0); }, {"group_norm", "0 groups"});
  refused<InvalidArgument>([&] { ops::group_norm(x, -2); }, {"group_norm", "-2 groups"});
  refused<InvalidArgument>([&] { ops::group_norm(x, 2, rnd({3})); },
                           {"group_norm", "weight", "[3]", "[4]"});
  refused<InvalidArgument>([&] { ops::group_norm(rnd({4}), 2); }, {"group_norm", "[4]", "2 dims"});
  refused<InvalidArgument>([&] { ops::batch_norm(x, rnd({3}), rnd({4})); },
                           {"batch_norm", "running_mean", "[3]", "[4]"});
  refused<InvalidArgument>([&] { ops::batch_norm(x, rnd({4}), rnd({5})); },
                           {"batch_norm", "running_var", "[5]"});
  refused<InvalidArgument>([&] { ops::batch_norm(x, rnd({4}), Tensor()); },
                           {"batch_norm", "running_var", "undefined"});
  refused<InvalidArgument>(
      [&] {
        ops::layer_norm(rnd({2, 3}, int32), {3});
      },
      {"layer_norm", "int32"});
  refused<InvalidArgument>(
      [&] {
        ops::batch_norm(rnd({2, 3}, int64), rnd({3}), rnd({3}));
      },
      {"batch_norm", "int64"});
  refused<InvalidArgument>([&] { ops::layer_norm(Tensor(), {3}); }, {"layer_norm", "undefined"});
  // PyTorch refuses an empty normalized_shape (this normalized each element alone).
  refused<InvalidArgument>([&] { ops::layer_norm(x, {}); },
                           {"layer_norm", "normalized_shape", "[]"});
  refused<InvalidArgument>([&] { ops::rms_norm(x, {}); }, {"rms_norm", "normalized_shape"});
  // Accepted: an empty batch (PyTorch returns an empty tensor); the documented cast of a
  // weight of another dtype to the input's.
  CHECK(ops::layer_norm(rnd({0, 3}), {3}).shape() == Shape{0, 3});
  CHECK(ops::group_norm(rnd({0, 4, 2}), 2).shape() == Shape{0, 4, 2});
  CHECK(ops::layer_norm(x, {3}, rnd({3}, float64)).dtype() == float32);
}

TEST_CASE("scans: dims, undefined, accepted dtypes") {
  const Tensor x = rnd({2, 3});
  refused<InvalidArgument>([&] { ops::cumsum(x, 2); }, {"cumsum", "dimension 2", "out of range"});
  refused<InvalidArgument>([&] { ops::cumprod(x, -3); }, {"cumprod", "-3"});
  refused<InvalidArgument>([&] { ops::cummax(x, 5); }, {"cummax", "5"});
  refused<InvalidArgument>([&] { ops::cummin(Tensor(), 0); }, {"cummin", "undefined"});
  refused<InvalidArgument>([&] { ops::cumsum(rnd({}), 1); },
                           {"cumsum", "dimension 1", "0 dimensions"});
  // PyTorch takes bool and integers (sums in int64), 0-d and empty tensors.
  const Tensor b = Tensor::from_host(std::vector<bool>{true, false, true}, {3});
  CHECK(ops::cumsum(b, 0).to_host<std::int64_t>() == std::vector<std::int64_t>{1, 1, 2});
  CHECK(ops::cummax(b, 0).indices.to_host<std::int64_t>() == std::vector<std::int64_t>{0, 0, 2});
  CHECK(ops::cumsum(rnd({0, 3}), 1).shape() == Shape{0, 3});
  CHECK(ops::cumsum(rnd({}), -1).numel() == 1);
}

TEST_CASE("reductions: repeated and out-of-range dims, empty extrema, dtypes") {
  const Tensor x = rnd({2, 3, 4});
  refused<InvalidArgument>([&] { ops::sum(x, {1, 1}); }, {"sum", "dimension 1", "more than once"});
  refused<InvalidArgument>(
      [&] {
        ops::mean(x, {0, -3});
      },
      {"mean", "dimension 0", "more than once"});
  refused<InvalidArgument>([&] { ops::amax(x, {3}); }, {"amax", "dimension 3", "out of range"});
  refused<InvalidArgument>([&] { ops::var(x, {-4}); }, {"var", "-4"});
  refused<InvalidArgument>([&] { ops::max(x, 7); }, {"max", "7"});
  refused<InvalidArgument>([&] { ops::argmax(x, 3); }, {"argmax", "3"});
  refused<InvalidArgument>([&] { ops::amax(rnd({2, 0}), {1}); }, {"amax"});
  refused<InvalidArgument>([&] { ops::argmin(rnd({0})); }, {"argmin"});
  refused<InvalidArgument>([&] { ops::mean(rnd({3}, int32)); }, {"mean", "int32"});
  refused<InvalidArgument>([&] { ops::stddev(rnd({3}, DType::kBool)); }, {"std", "bool"});
  refused<InvalidArgument>([&] { ops::sum(Tensor()); }, {"sum", "undefined"});
  refused<InvalidArgument>([&] { ops::count_nonzero(x, {0, 0}); }, {"count_nonzero"});
  // Accepted as PyTorch: sums and means of empty tensors, amax over a non-empty dim of an
  // empty tensor, reductions of 0-d tensors over dim 0.
  CHECK(ops::sum(rnd({0, 3})).item().to_double() == 0.0);
  CHECK(ops::sum(rnd({0, 3}), {0}).to_host<float>() == std::vector<float>(3, 0.0f));
  CHECK(ops::amax(rnd({0, 3}), {1}).shape() == Shape{0});
  CHECK(ops::sum(rnd({}), {0}).item().to_double() == 0.0);
}

TEST_CASE("creation: triu/tril rank, negative sizes, bad ranges") {
  refused<InvalidArgument>([&] { ops::triu(rnd({3})); }, {"triu", "[3]"});
  refused<InvalidArgument>([&] { ops::tril(rnd({})); }, {"tril"});
  refused<InvalidArgument>([&] { ops::tril(Tensor()); }, {"tril", "undefined"});
  refused<InvalidArgument>(
      [&] {
        ops::full({2, -1}, Scalar(1.0), float32);
      },
      {"full", "non-negative", "[2, -1]"});
  refused<InvalidArgument>([&] { ops::arange(Scalar(0), Scalar(5), Scalar(0), float32); },
                           {"arange", "step"});
  refused<InvalidArgument>([&] { ops::arange(Scalar(0), Scalar(5), Scalar(-1), int64); },
                           {"arange", "away"});
  refused<InvalidArgument>([&] { ops::linspace(Scalar(0), Scalar(1), -2, float32); },
                           {"linspace", "-2"});
  refused<InvalidArgument>([&] { ops::fill(Tensor(), Scalar(1)); }, {"fill", "undefined"});
  // Lengths whose byte count wraps 64 bits: these allocated a few bytes (2^61 × 8 = 2^64
  // wraps to 0) and the fill kernel wrote past them (a segfault).
  const std::int64_t big = std::int64_t(1) << 61;
  refused<InvalidArgument>([&] { ops::arange(Scalar(0), Scalar(big), Scalar(1), int64); },
                           {"arange", "[2305843009213693952]", "int64", "2^63 bytes"});
  refused<InvalidArgument>([&] { ops::linspace(Scalar(0.0), Scalar(1.0), big, float64); },
                           {"linspace", "float64", "2^63 bytes"});
  refused<InvalidArgument>(
      [&] {
        ops::full({std::int64_t(1) << 32, std::int64_t(1) << 32}, Scalar(1.0), float32);
      },
      {"full", "[4294967296, 4294967296]", "2^63 bytes"});
  refused<InvalidArgument>(
      [&] {
        ops::arange(Scalar(std::int64_t(-9e18)), Scalar(std::int64_t(9e18)), Scalar(1), int64);
      },
      {"arange", "more than 2^63 elements"});
  // Not refused: a long range with a large step; an empty tensor with a huge other dim.
  CHECK(ops::arange(Scalar(std::int64_t(-9e18)), Scalar(std::int64_t(9e18)),
                    Scalar(std::int64_t(6e18)), int64)
            .numel() == 3);
  CHECK(ops::full({0, std::int64_t(1) << 62}, Scalar(1.0), float32).numel() == 0);
  // Accepted: empty matrices, empty ranges.
  CHECK(ops::triu(rnd({0, 3})).shape() == Shape{0, 3});
  CHECK(ops::arange(Scalar(3), Scalar(3), Scalar(1), int64).numel() == 0);
  CHECK(ops::linspace(Scalar(0), Scalar(1), 0, float32).numel() == 0);
}

TEST_CASE("out of memory: matmul and softmax outputs over the cap, nothing leaked") {
  REQUIRE_MESSAGE(std::getenv("NBX_HOST_MEMORY_LIMIT"), "run through meson: it sets the cap");
  Device host = host_device();
  host.empty_cache();
  const AllocatorStats before = host.memory_stats();
  {
    // [4096, 1] @ [1, 8192] float32: a 128 MiB output from 48 KiB of operands.
    const Tensor a = rnd({4096, 1}), b = rnd({1, 8192});
    const AllocatorStats with_inputs = host.memory_stats();
    try {
      ops::matmul(a, b);
      FAIL("a 128 MiB product under a 64 MiB cap ran");
    } catch (const OutOfMemory& e) {
      CHECK(e.device() == "host");
      CHECK(e.requested() >= (128u << 20));
      const std::string m = e.what();
      CHECK(m.find("requested") != std::string::npos);
    }
    CHECK(host.memory_stats().allocated == with_inputs.allocated);
    // softmax of a broadcast (stride-0) view: the input takes 4 bytes, the output 128 MiB.
    const Tensor big = Tensor::ones({1}, float32).expand({32 << 20});
    const AllocatorStats with_big = host.memory_stats();
    CHECK_THROWS_AS(ops::softmax(Tensor::ones({1, 1}, float32).expand({1 << 10, 32 << 10}), 1),
                    OutOfMemory);
    CHECK(host.memory_stats().allocated == with_big.allocated);
    CHECK_THROWS_AS(ops::cumsum(big, 0), OutOfMemory);
    // A reduction's row scratch on the host counts against the cap too (issue 15: the sum of
    // expand({6, 2^40}) threw std::bad_alloc).
    CHECK_THROWS_AS(ops::sum(Tensor::ones({6, 1}, float32).expand({6, std::int64_t(1) << 40})),
                    OutOfMemory);
    CHECK_THROWS_AS(ops::layer_norm(big, {32 << 20}), OutOfMemory);
    CHECK(host.memory_stats().allocated == with_big.allocated);
  }
  device_still_works();
  CHECK(host.memory_stats().allocated == before.allocated);
}

// Runs twice: here with fp64, and under NBX_DEVICE_OVERLAY=no_fp64.yml (meson), where a
// requested float64 is refused by the op's own name (it said "cast" or "empty" before).
TEST_CASE("overlay: a requested dtype the device lacks is refused under the op's name") {
  const Tensor xi = ops::arange(Scalar(0), Scalar(12), Scalar(1), int32).reshape({3, 4});
  const std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"softmax", [&] { ops::softmax(xi, 1, float64); }},
      {"log_softmax", [&] { ops::log_softmax(xi, 1, float64); }},
      {"cumsum", [&] { ops::cumsum(xi, 1, float64); }},
      {"cumprod", [&] { ops::cumprod(xi, 0, float64); }},
      {"sum", [&] { ops::sum(xi, {}, false, float64); }},
      {"full", [&] { ops::full({2}, Scalar(1), float64); }},
      {"arange", [&] { ops::arange(Scalar(0), Scalar(3), Scalar(1), float64); }},
      {"linspace", [&] { ops::linspace(Scalar(0), Scalar(1), 3, float64); }}};
  if (host_device().capabilities().fp64.value) {
    for (const auto& [op, call] : calls) CHECK_NOTHROW(call());
    return;
  }
  for (const auto& entry : calls) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const auto& op = entry.first;
    const auto& call = entry.second;
    CAPTURE(op);
    try {
      call();
      FAIL("expected Unsupported");
    } catch (const Unsupported& e) {
      CHECK(e.op() == op);
      CHECK(e.capability() == "fp64");
      CHECK(e.device() == "host");
      CHECK(std::string(e.what()).find(op + " on host") == 0);
    }
    device_still_works();
  }
}
