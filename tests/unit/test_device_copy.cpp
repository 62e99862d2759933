// Tensor::to(device) between every pair of present devices (host, vulkan:0, cuda:0, hip:0):
// every byte kept — bool to float64, a size past the GPUs' 8 MiB staging slots, a strided
// source — and the route each pair takes as ops::copy_route and `nbx explain to --to` name it
// (upload, download, host staging between two backends; peer or staged between two GPUs of
// one backend, which tests/gpu/test_gpu_peer.cpp runs on one GPU).
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/ops/copy_route.hpp"
#include "core/tensor.hpp"
#include "tests/unit/present_devices.hpp"

namespace nbx {
namespace {

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = static_cast<unsigned char>(rng() | 1);
  return v;
}

std::vector<unsigned char> bytes_of(const Tensor& t) {
  std::vector<unsigned char> out(static_cast<std::size_t>(t.numel()) * t.itemsize());
  t.copy_to_host(out.data());
  return out;
}

// Whether the device file says the device has the dtype (float16/bfloat16 and the 8-bit
// types every backend here holds; float64 and int64 only where the file says so).
bool holds(const Device& d, DType dtype) {
  const Capabilities& caps = d.capabilities();
  if (dtype == DType::kFloat64) return caps.fp64.value;
  if (dtype == DType::kFloat16) return caps.fp16.value;
  return true;
}

TEST_CASE("to() keeps every byte between every pair of devices, and names its route") {
  const std::vector<Device> devices = testing::present_devices();
  REQUIRE(devices.size() >= 1);
  for (const Device& from : devices) {
    for (const Device& to : devices) {
      CAPTURE(from.str());
      CAPTURE(to.str());
      const ops::CopyRoute route = ops::copy_route(from, to);
      if (from == to)
        CHECK(route.name == "none");
      else if (from.is_host())
        CHECK(route.name == "upload");
      else if (to.is_host())
        CHECK(route.name == "download");
      else if (from.id().backend != to.id().backend)
        CHECK(route.name == "host");
      else
        CHECK((route.name == "peer" || route.name == "staged"));
      CHECK_FALSE(route.reason.empty());
      for (DType dtype :
           {DType::kBool, DType::kUInt8, DType::kFloat16, DType::kInt32, DType::kFloat64}) {
        if (!holds(from, dtype) || !holds(to, dtype)) continue;
        CAPTURE(dtype_name(dtype));
        // 3 × 1,398,107 four-byte values: 16 MiB + 12 bytes, three staging chunks.
        const std::int64_t cols = dtype == DType::kInt32 ? 1398107 : 1001;
        std::vector<unsigned char> raw = random_bytes(3 * cols * dtype_size(dtype), cols);
        if (dtype == DType::kBool)
          for (auto& b : raw) b &= 1;
        const Tensor x = Tensor::from_host(raw.data(), {3, cols}, dtype, from);
        const Tensor y = x.to(to);
        CHECK(y.device() == to);
        CHECK(y.shape() == x.shape());
        CHECK(y.dtype() == dtype);
        CHECK(bytes_of(y) == raw);
        // A strided source (a transposed view) arrives contiguous, in its logical order.
        const Tensor xt = x.transpose(0, 1);
        CHECK(bytes_of(xt.to(to)) == bytes_of(xt));
      }
    }
  }
}

TEST_CASE("explain_copy_route says the route and both devices") {
  for (const Device& d : testing::present_devices()) {
    const ops::OpExplanation e = ops::explain_copy_route(DType::kFloat32, {4, 5}, open("host"), d);
    CHECK(e.op == "to");
    CHECK(e.output == "float32 [4, 5] on " + d.str());
    REQUIRE(e.choices.size() == 1);
    CHECK(e.choices[0].value == (d.is_host() ? "none" : "upload"));
  }
}

}  // namespace
}  // namespace nbx
