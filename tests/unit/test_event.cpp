// nbx::Event (core/event.hpp) on every present device: the elapsed time brackets the work
// between two records, waits for it, and refuses unrecorded events and two devices' events.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "core/event.hpp"
#include "core/ops/linalg.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

TEST_CASE("Event: elapsed_ms brackets the work recorded between two events") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    Event start(d), end(d);
    CHECK_FALSE(start.recorded());
    CHECK_THROWS_AS(start.elapsed_ms(end), InvalidArgument);
    CHECK_THROWS_AS(start.synchronize(), InvalidArgument);
    const Tensor a = Tensor::ones({256, 256}, float32, d);
    try {
      start.record();
    } catch (const Unsupported& e) {  // a Vulkan queue without timestamps
      CHECK(e.capability() == "timestamps");
      continue;
    }
    Tensor c = a;
    for (int i = 0; i < 4; ++i) c = ops::matmul(c, a);
    end.record();
    const double ms = start.elapsed_ms(end);
    CHECK(std::isfinite(ms));
    CHECK(ms > 0.0);
    CHECK(ms < 60000.0);
    // Empty intervals: about nothing, never negative.
    Event again(d);
    again.record();
    again.synchronize();
    CHECK(end.elapsed_ms(again) >= 0.0);
  }
}

TEST_CASE("Event on the host: the clock between two records") {
  Event start(host_device()), end(host_device());
  start.record();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  end.record();
  CHECK(start.elapsed_ms(end) >= 20.0);
  CHECK(end.elapsed_ms(start) < 0.0);  // as CUDA's: a later start gives a negative time
}

TEST_CASE("Event: events of two devices are refused") {
  const auto devices = testing::present_devices();
  if (devices.size() < 2) return;
  Event a(devices[0]), b(devices[1]);
  try {
    a.record();
    b.record();
  } catch (const Unsupported&) {
    return;
  }
  CHECK_THROWS_AS(a.elapsed_ms(b), InvalidArgument);
}
