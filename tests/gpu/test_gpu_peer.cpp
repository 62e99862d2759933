// Copies between two devices of the backend under test (BackendDevice::copy_from_peer, what
// Tensor::to(cuda:1) takes from cuda:0). One GPU is enough for the staged route: device 0
// opened twice is two devices with two streams, so the copy's events are what orders it —
// the source's pending writes before it, the source's next writes after it.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = static_cast<unsigned char>(rng() | 1);  // never all zeros
  return v;
}

TEST_CASE("two devices of one GPU: the staged route, named, keeps every byte at any offset") {
  BackendDevice& dst = *devices().gpu[0].device;
  BackendDevice& src = *devices().gpu[1].device;
  std::string why;
  CHECK(dst.peer_route(src, &why) == PeerRoute::kStaged);
  CHECK(why.find("one GPU") != std::string::npos);
  CHECK(dst.peer_route(dst) == PeerRoute::kNone);              // the same device: copy_on_device
  CHECK(dst.peer_route(*devices().host) == PeerRoute::kNone);  // another backend: host staging
  // 20 MiB + 123 bytes: three chunks through the two 8 MiB slots, the last one partial.
  for (std::size_t n : {std::size_t(5), (std::size_t(20) << 20) + 123}) {
    CAPTURE(n);
    const std::vector<unsigned char> bytes = random_bytes(n, unsigned(n));
    DeviceMemory a = src.allocate(n + 16), b = dst.allocate(n + 16);
    src.copy_from_host(a, 9, bytes.data(), n);  // still in flight on src's stream
    dst.copy_from_peer(b, 5, src, a, 9, n);
    // src's next write must wait for the copy to have read the old bytes.
    const std::vector<unsigned char> other = random_bytes(n, 99);
    src.copy_from_host(a, 9, other.data(), n);
    std::vector<unsigned char> back(n, 0);
    dst.copy_to_host(back.data(), b, 5, n);
    CHECK(back == bytes);
    src.copy_to_host(back.data(), a, 9, n);
    CHECK(back == other);
    src.free(a);
    dst.free(b);
  }
}

TEST_CASE("copy_from_peer refuses memory of the wrong device and ranges past the end") {
  BackendDevice& dst = *devices().gpu[0].device;
  BackendDevice& src = *devices().gpu[1].device;
  DeviceMemory a = src.allocate(256), b = dst.allocate(256);
  CHECK_THROWS_AS(dst.copy_from_peer(a, 0, src, b, 0, 16), InvalidArgument);  // swapped
  CHECK_THROWS_AS(dst.copy_from_peer(b, 200, src, a, 0, 100), InvalidArgument);
  CHECK_THROWS_AS(dst.copy_from_peer(b, 0, dst, b, 0, 16), InvalidArgument);  // no route
  CHECK_THROWS_AS(dst.copy_from_peer(b, 0, *devices().host, a, 0, 16), InvalidArgument);
  src.free(a);
  dst.free(b);
}

}  // namespace
}  // namespace nbx::gputest
