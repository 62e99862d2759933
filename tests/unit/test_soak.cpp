// Bounded soaks on every present device (issue 15): out of memory and back, eight threads on
// one device and threads on two devices at once, and a fault in every kernel family that can
// fault followed by correct work on the same device. Each compares against a run it cannot
// share a mistake with (the same seeded op stream run alone, before), and each is small
// enough for CI on llvmpipe under the sanitizers. meson runs it with NBX_HOST_MEMORY_LIMIT=64M.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nbx/nbx.hpp"
#include "tests/unit/expect_fault.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

// FNV-1a over a result's bytes (contiguous, in its dtype).
std::uint64_t digest(const Tensor& t) {
  std::vector<unsigned char> bytes(std::size_t(t.numel()) * t.itemsize());
  if (!bytes.empty()) t.contiguous().copy_to_host(bytes.data());
  std::uint64_t h = 0xcbf29ce484222325ull ^ std::uint64_t(t.dtype());
  for (unsigned char b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

// Quarter steps in [-2, 2): sums and products of a few stay exact in float32.
std::vector<float> values(std::mt19937_64& g, std::int64_t n) {
  std::vector<float> v(std::size_t(n), 0.0f);
  for (float& x : v) x = float(std::int64_t(g() % 16) - 8) / 4.0f;
  return v;
}

// `n` seeded small ops on `d`, each result read back and reduced to its digest: the same seed
// gives the same digests on one device whatever else runs there (every op here is
// deterministic: no atomics).
std::vector<std::uint64_t> op_stream(const Device& d, std::uint64_t seed, int n) {
  std::mt19937_64 g(seed);
  std::vector<std::uint64_t> out;
  out.reserve(std::size_t(n));
  for (int i = 0; i < n; ++i) {
    const std::int64_t rows = 1 + std::int64_t(g() % 6), cols = 1 + std::int64_t(g() % 12);
    const Tensor x = Tensor::from_host(values(g, rows * cols), {rows, cols}, d);
    const Tensor y = Tensor::from_host(values(g, rows * cols), {rows, cols}, d);
    Tensor r;
    switch (g() % 8) {
      case 0:
        r = ops::add(x, y);
        break;
      case 1:
        r = ops::mul(ops::exp(x), y);
        break;
      case 2:
        r = ops::sum(x, {1});
        break;
      case 3:
        r = ops::softmax(x, 1);
        break;
      case 4:
        r = ops::matmul(x, y.transpose(0, 1));
        break;
      case 5:
        r = ops::cumsum(x, 1);
        break;
      case 6: {
        std::vector<std::int64_t> idx(std::size_t(1 + g() % 5));
        for (auto& v : idx) v = std::int64_t(g() % std::uint64_t(cols));
        r = ops::index_select(x, 1, Tensor::from_host(idx, {std::int64_t(idx.size())}, d));
        break;
      }
      default:
        r = ops::floor_divide(x.to(DType::kInt32), 3);
        break;
    }
    out.push_back(digest(r));
  }
  return out;
}

// Runs `streams` op streams (device, seed) on one thread each; a thread's error is kept.
struct StreamResult {
  std::vector<std::uint64_t> digests;
  std::string error;
};
std::vector<StreamResult> run_threads(const std::vector<std::pair<Device, std::uint64_t>>& streams,
                                      int n) {
  std::vector<StreamResult> out(streams.size());
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < streams.size(); ++t) {
    threads.emplace_back([&, t] {
      try {
        out[t].digests = op_stream(streams[t].first, streams[t].second, n);
      } catch (const std::exception& e) {
        out[t].error = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

}  // namespace

TEST_CASE("out of memory and back: the error's fields, then 100 rounds at 90% of the peak, flat") {
  constexpr std::int64_t kChunk = 1 << 20;  // float32: 4 MiB, a size class of its own
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    d.empty_cache();
    const std::uint64_t base = d.memory_stats().allocated;
    // 16 chunks (64 MiB: the whole host cap), then a request for the device's whole memory.
    std::vector<Tensor> held;
    std::optional<OutOfMemory> oom;
    const std::uint64_t total = d.context().backend_device().memory_info().total;
    const std::int64_t too_many = std::int64_t(total / 4) + 1;
    try {
      for (int i = 0; i < 16; ++i) held.push_back(Tensor::empty({kChunk}, DType::kFloat32, d));
      held.push_back(Tensor::empty({too_many}, DType::kFloat32, d));
    } catch (const OutOfMemory& e) {
      oom = e;
    }
    REQUIRE_MESSAGE(oom.has_value(), "no OutOfMemory for " << too_many * 4 << " bytes");
    CHECK(held.size() == 16);
    CHECK(oom->device() == d.str());
    CHECK(oom->requested() == std::uint64_t(too_many) * 4);
    CHECK(oom->allocated() >= base + 16 * kChunk * 4);
    CHECK(oom->reserved() >= oom->allocated());
    CHECK(oom->free_bytes() < oom->requested());
    CHECK_MESSAGE(std::string(oom->what()).find("requested") != std::string::npos, oom->what());
    const std::uint64_t peak = d.memory_stats().allocated - base;

    held.clear();
    CHECK(d.memory_stats().allocated == base);
    // 90% of the peak, allocated and freed 100 times: the pool serves every round after the
    // first, so neither what tensors hold nor what the allocator reserves moves.
    const std::int64_t chunks = std::int64_t(peak * 9 / 10 / (kChunk * 4));
    REQUIRE(chunks >= 14);
    std::uint64_t reserved_after_first = 0;
    for (int round = 0; round < 100; ++round) {
      std::vector<Tensor> round_held;
      for (std::int64_t i = 0; i < chunks; ++i)
        round_held.push_back(Tensor::full({kChunk}, round, DType::kFloat32, d));
      CHECK(round_held.back().to_host<float>()[std::size_t(kChunk - 1)] == float(round));
      round_held.clear();
      const AllocatorStats s = d.memory_stats();
      if (round == 0) reserved_after_first = s.reserved;
      CHECK(s.allocated == base);
      CHECK(s.reserved == reserved_after_first);
    }
  }
}

TEST_CASE("8 threads x 500 mixed ops on one device equal a single-threaded run") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    std::vector<std::pair<Device, std::uint64_t>> streams;
    for (std::uint64_t t = 0; t < 8; ++t) streams.emplace_back(d, 0x50a4 + t);
    std::vector<std::vector<std::uint64_t>> alone;
    for (const auto& [dev, seed] : streams) alone.push_back(op_stream(dev, seed, 500));
    const std::vector<StreamResult> together = run_threads(streams, 500);
    for (std::size_t t = 0; t < streams.size(); ++t) {
      CAPTURE(t);
      CHECK(together[t].error == "");
      CHECK(together[t].digests == alone[t]);
    }
  }
}

TEST_CASE("threads on the host and a GPU at once equal single-threaded runs") {
  const std::vector<Device> devices = testing::present_devices();
  if (devices.size() < 2) return;  // the host alone ran above
  std::vector<std::pair<Device, std::uint64_t>> streams;
  for (std::uint64_t t = 0; t < 8; ++t) streams.emplace_back(devices[t % 2], 0x7e57 + t);
  std::vector<std::vector<std::uint64_t>> alone;
  for (const auto& [dev, seed] : streams) alone.push_back(op_stream(dev, seed, 250));
  const std::vector<StreamResult> together = run_threads(streams, 250);
  for (std::size_t t = 0; t < streams.size(); ++t) {
    CAPTURE(streams[t].first.str());
    CHECK(together[t].error == "");
    CHECK(together[t].digests == alone[t]);
  }
}

TEST_CASE("a fault in every family that can fault, then 100 correct ops on the same device") {
  struct Faulting {
    std::string family;  // strings, so that CAPTURE prints them
    std::string op;
    std::function<Tensor(const Device&)> run;
  };
  const auto i64 = [](std::vector<std::int64_t> v, const Shape& s, const Device& d) {
    return Tensor::from_host(v, s, d);
  };
  const std::vector<Faulting> cases = {
      {"elementwise", "floor_divide",
       [&](const Device& d) {
         return ops::floor_divide(i64({7, 8, 9}, {3}, d).to(DType::kInt32),
                                  i64({2, 0, 3}, {3}, d).to(DType::kInt32));
       }},
      {"gather", "index_select",
       [&](const Device& d) {
         return ops::index_select(Tensor::ones({3, 4}, DType::kFloat32, d), 1, i64({0, 4}, {2}, d));
       }},
      {"scatter", "index_add",
       [&](const Device& d) {
         const Tensor self = Tensor::zeros({3, 4}, DType::kFloat32, d);
         return ops::index_add_(self, 0, i64({1, 3}, {2}, d),
                                Tensor::ones({2, 4}, DType::kFloat32, d));
       }},
      {"grouped_matmul", "grouped_matmul",
       [&](const Device& d) {
         return ops::grouped_matmul(Tensor::ones({4, 8}, DType::kFloat32, d),
                                    Tensor::ones({2, 4, 8}, DType::kFloat32, d),
                                    i64({0, 5, 4}, {3}, d));
       }},
      {"rotary", "rotary_embedding",
       [&](const Device& d) {
         const Tensor q = Tensor::ones({3, 2, 8}, DType::kFloat32, d);
         ops::rotary_embedding_(q, std::nullopt, i64({0, 9, 1}, {3}, d),
                                Tensor::ones({4, 8}, DType::kFloat32, d), 8);
         return q;
       }},
  };
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const std::vector<std::uint64_t> before = op_stream(d, 0xfa17, 100);
    for (const Faulting& c : cases) {
      CAPTURE(c.family);
      const testing::FaultOutcome o = testing::run_expecting_fault(d, [&] { return c.run(d); });
      REQUIRE_MESSAGE(o.fault.has_value(), "no DeviceFault: " << o.other);
      CHECK(o.fault->op() == c.op);
      CHECK(o.fault->device() == d.str());
      CHECK_NOTHROW(d.synchronize());
    }
    CHECK(op_stream(d, 0xfa17, 100) == before);
  }
}
