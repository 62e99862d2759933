// The scatter family's partitioned variant (abi::kScatterPartitioned: count, partition and
// apply passes over a workspace of (offset, value) pairs bucketed by destination), forced
// through NBX_SCATTER=partitioned (small destinations get about 32 buckets, so that several
// take part): the same results as the host's sequential pass on every device and dtype it
// serves, strided operands, bad indices as device faults, the plan (not taken unless asked
// for: on the H200 it did not beat the plain atomics) and malformed launches.
#include <doctest/doctest.h>

#include "core/capability_resolver.hpp"
#include "core/ops/explain.hpp"
#include "tests/unit/index_write_test_util.hpp"

using namespace nbx;
using namespace nbx::testing::index_write;

namespace {

// n indices in [0, bound), uniform, seeded.
I64 random_ids(std::size_t n, std::int64_t bound, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> pick(0, bound - 1);
  I64 v(n);
  for (auto& x : v) x = pick(rng);
  return v;
}

// n small integers in [lo, hi], seeded (sums of them stay exact in every dtype below).
D random_values(std::size_t n, int lo, int hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(lo, hi);
  D v(n);
  for (auto& x : v) x = pick(rng);
  return v;
}

const ops::PlanChoice* choice(const ops::OpExplanation& e, const std::string& what) {
  for (const auto& c : e.choices)
    if (c.what == what) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("partitioned scatters give the host's results on every device and dtype it takes") {
  ModeGuard guard;
  setenv("NBX_SCATTER", "partitioned", 1);
  const std::size_t n = 30000;
  const std::int64_t m = 5000;
  const I64 idx = random_ids(n, m, 1);
  const D self = random_values(std::size_t(m), -3, 3, 2), src = random_values(n, -4, 4, 3);
  const Device host = host_device();
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    // Integer and float sums of small integers: exact in any order, so equal to the host's.
    for (const DType t :
         {i32, DType::kInt16, DType::kInt8, f32, DType::kFloat16, DType::kBFloat16}) {
      CAPTURE(dtype_name(t));
      const D small_self = t == DType::kInt8 ? random_values(std::size_t(m), -1, 1, 4) : self;
      const D small_src = t == DType::kInt8 ? random_values(n, -1, 1, 5) : src;
      const auto run = [&](const Device& on_device) {
        return vals(ops::scatter_add(on(small_self, {m}, on_device, t), 0,
                                     ids(idx, {std::int64_t(n)}, on_device),
                                     on(small_src, {std::int64_t(n)}, on_device, t)));
      };
      CHECK(run(d) == run(host));
    }
    // max / min / prod (int32 products wrap, exactly as the host's) and bool's or.
    const Tensor x32 = on(src, {std::int64_t(n)}, d, i32);
    const Tensor i = ids(idx, {std::int64_t(n)}, d, i32);
    for (const char* how : {"amax", "amin", "prod"}) {
      CAPTURE(how);
      const auto run = [&](const Device& on_device) {
        return ints(ops::scatter_reduce(on(self, {m}, on_device, i32), 0, i.to(on_device),
                                        x32.to(on_device), how));
      };
      CHECK(run(d) == run(host));
    }
    const auto bools = [&](const Device& on_device) {
      return ints(ops::scatter_add(on(D(std::size_t(m), 0), {m}, on_device, b8), 0, i.to(on_device),
                                   ops::gt(x32.to(on_device), Scalar(2))));
    };
    CHECK(bools(d) == bools(host));
    // Assignment to distinct destinations (a permutation): exact.
    I64 perm(static_cast<std::size_t>(m));
    for (std::size_t k = 0; k < perm.size(); ++k) perm[k] = std::int64_t((k * 7919) % m);
    const D want_perm = vals(ops::scatter(on(self, {m}, host), 0, ids(perm, {m}, host),
                                          on(src, {std::int64_t(n)}, host).narrow(0, 0, m)));
    CHECK(vals(ops::scatter(on(self, {m}, d), 0, ids(perm, {m}, d),
                            on(src, {std::int64_t(n)}, d).narrow(0, 0, m))) == want_perm);
  }
}

TEST_CASE("partitioned scatters read strided operands and write along any dim") {
  ModeGuard guard;
  setenv("NBX_SCATTER", "partitioned", 1);
  const Device host = host_device();
  // scatter_add along dim 1 of [40, 300] with a [40, 250] index read through a transpose, and
  // a source with a step of 2.
  const I64 idx = random_ids(250 * 40, 300, 7);
  const D src = random_values(40 * 500, -9, 9, 8), self = random_values(40 * 300, -2, 2, 9);
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const auto run = [&](const Device& on_device) {
      const Tensor index = ids(idx, {250, 40}, on_device).transpose(0, 1);
      const Tensor source = on(src, {40, 500}, on_device, i32).slice(1, 0, 500, 2);
      return ints(ops::scatter_add(on(self, {40, 300}, on_device, i32), 1, index, source));
    };
    CHECK(run(d) == run(host));
    // index_put with accumulate, one index tensor over a 1-d destination, int32 indices.
    const auto put = [&](const Device& on_device) {
      return ints(ops::index_put(on(self, {12000}, on_device, i32),
                                 {ids(random_ids(20000, 12000, 10), {20000}, on_device, i32)},
                                 on(random_values(20000, -5, 5, 11), {20000}, on_device, i32),
                                 true));
    };
    CHECK(put(d) == put(host));
  }
}

TEST_CASE("partitioned scatters report a bad index as a fault and leave the device usable") {
  ModeGuard guard;
  setenv("NBX_SCATTER", "partitioned", 1);
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    I64 idx = random_ids(5000, 100, 12);
    idx[1234] = 100;  // the one index outside [0, 100)
    try {
      ops::scatter_add(on(D(100, 0), {100}, d, i32), 0, ids(idx, {5000}, d),
                       on(D(5000, 1), {5000}, d, i32));
      d.synchronize();
      FAIL("no fault");
    } catch (const DeviceFault& f) {
      const std::string what = f.what();
      CHECK(what.find("scatter_add") != std::string::npos);
      CHECK(what.find("index 100 is out of range [0, 100) at position 1234") != std::string::npos);
    }
    // The device goes on: the next scatters are right.
    idx[1234] = 7;
    for (int k = 0; k < 20; ++k) {
      const I64 got = ints(ops::scatter_add(on(D(100, 0), {100}, d, i32), 0, ids(idx, {5000}, d),
                                            on(D(5000, 1), {5000}, d, i32)));
      std::int64_t total = 0;
      for (const auto v : got) total += v;
      CHECK(total == 5000);
    }
  }
}

TEST_CASE("the plan keeps the plain atomics unless NBX_SCATTER asks for partitioned") {
  ModeGuard guard;
  unsetenv("NBX_SCATTER");
  set_deterministic_algorithms(false);
  static const Capabilities vulkan = capabilities_for_arch("mesa/llvmpipe");
  static const Capabilities cuda = capabilities_for_arch("nvidia/sm_90");
  const ops::PlanTarget on_vulkan{vulkan, "mesa/llvmpipe", "arch mesa/llvmpipe"};
  const ops::PlanTarget on_cuda{cuda, "nvidia/sm_90", "arch nvidia/sm_90"};
  // 2^26 uniform writes into 2^26 float32 (256 MiB): not partitioned by default on either
  // backend (measured no faster on the H200), and explain says so.
  for (const ops::PlanTarget* target : {&on_vulkan, &on_cuda}) {
    CAPTURE(target->device_id);
    const auto e = ops::explain("scatter_add", {f32, i64}, {{1 << 26}, {1 << 26}}, *target);
    CHECK(e.kernel.find("variant atomic") != std::string::npos);
    REQUIRE(choice(e, "destinations") != nullptr);
    CHECK(choice(e, "destinations")->value == "as indexed");
    CHECK(choice(e, "destinations")->reason.find("not planned") != std::string::npos);
  }
  // Asked for: 64 buckets of 2^20 float32 (4 MiB), 1024 runs of 65536 elements.
  setenv("NBX_SCATTER", "partitioned", 1);
  for (const ops::PlanTarget* target : {&on_vulkan, &on_cuda}) {
    CAPTURE(target->device_id);
    const auto e = ops::explain("scatter_add", {f32, i64}, {{1 << 26}, {1 << 26}}, *target);
    CHECK(e.kernel.find("partitioned") != std::string::npos);
    REQUIRE(choice(e, "destinations") != nullptr);
    CHECK(choice(e, "destinations")->value == "partitioned");
    CHECK(choice(e, "destinations")->reason.find("64 buckets of 2^20") != std::string::npos);
    CHECK(choice(e, "destinations")->reason.find("run of 65536 elements") != std::string::npos);
    // Not served: 8-byte elements (the plain pass, and the reason).
    const auto wide =
        ops::explain("scatter_add", {DType::kInt64, i64}, {{1 << 26}, {1 << 26}}, *target);
    CHECK(wide.kernel.find("variant atomic") != std::string::npos);
    REQUIRE(choice(wide, "accumulation") != nullptr);
    CHECK(choice(wide, "accumulation")->reason.find("8-byte elements") != std::string::npos);
  }
  // NBX_SCATTER=sorted and deterministic algorithms take the sorted pass.
  setenv("NBX_SCATTER", "sorted", 1);
  CHECK(ops::explain("scatter_add", {f32, i64}, {{1 << 26}, {1 << 26}}, on_cuda)
            .kernel.find("sorted") != std::string::npos);
  unsetenv("NBX_SCATTER");
  set_deterministic_algorithms(true);
  CHECK(ops::explain("scatter_add", {f32, i64}, {{1 << 26}, {1 << 26}}, on_vulkan)
            .kernel.find("sorted") != std::string::npos);
  set_deterministic_algorithms(false);
}

TEST_CASE("malformed partitioned launches are refused before any backend sees them") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor out = on(D(64, 1), {64}, d, i32), src = on(D(100, 2), {100}, d, i32);
    const Tensor index = ids(random_ids(100, 64, 13), {100}, d);
    abi::ScatterParams good{};
    good.op = abi::kScatter_scatter_add;
    good.variant = abi::kScatterPartitioned;
    good.reduce = abi::kScatterAdd;
    good.dtype = std::int32_t(i32);
    good.index_dtype = std::int32_t(i64);
    good.ndim = 1;
    good.numel = 100;
    good.bound = 64;
    good.index_scale = 1;
    good.sizes[0] = 100;
    good.src_strides[0] = 1;
    good.index_strides[0] = 1;
    good.index_positions[0] = 1;
    good.bucket_shift = 4;  // 4 buckets of 16
    good.buckets = 4;
    good.parts = 3;  // runs of 34, 34 and 32 elements
    const auto launch = [&](const abi::ScatterParams& p, const Tensor& first, const Tensor& third,
                            const Tensor& fourth) {
      const KernelBuffer buffers[4] = {{first.storage()->memory(), true},
                                       {src.storage()->memory(), false},
                                       {third.storage()->memory(), false},
                                       {fourth.storage()->memory(), false}};
      std::lock_guard lock(d.context().launch_mutex());
      d.context().backend_device().launch(kernel_launch(p, buffers));
      d.context().backend_device().synchronize();
    };
    // The three passes of a well-formed block run and give the host's sum; the counts are
    // each part's per bucket.
    const Tensor counts = Tensor::empty({(4 + 1) * 3}, i32, d);
    const Tensor pairs = Tensor::empty({2 * 100}, i32, d);
    abi::ScatterParams p = good;
    p.pass = abi::kPassCount;
    launch(p, counts, index, index);
    const I64 got_counts = ints(counts);
    const I64 idx = ints(index);
    for (std::int64_t b = 0; b <= 4; ++b)
      for (std::int64_t part = 0; part < 3; ++part) {
        std::int64_t want = 0;
        for (std::int64_t e = part * 34; e < std::min<std::int64_t>(100, part * 34 + 34); ++e)
          want += (idx[std::size_t(e)] >> 4) == b ? 1 : 0;
        CHECK(got_counts[std::size_t(b * 3 + part)] == want);
      }
    const Tensor starts = ops::sub(ops::cumsum(counts, 0, i32), counts);
    p.pass = abi::kPassPartition;
    launch(p, pairs, index, starts);
    p.pass = abi::kPassApply;
    launch(p, out, pairs, index);
    std::int64_t total = 0;
    for (const auto v : ints(out)) total += v;
    CHECK(total == 64 + 2 * 100);
    // Broken ones: each is InvalidArgument naming what is wrong.
    const auto refused_with = [&](abi::ScatterParams q, const Tensor& first, const char* words) {
      std::string message;
      try {
        launch(q, first, index, starts);
      } catch (const InvalidArgument& e) {
        message = e.what();
      }
      CHECK_MESSAGE(message.find(words) != std::string::npos, message);
    };
    p = good;
    p.buckets = 0;
    refused_with(p, counts, "buckets 0 outside");
    p = good;
    p.parts = 0;
    refused_with(p, counts, "parts 0 outside");
    p = good;
    p.bucket_shift = 3;  // offsets up to 63 need 8 buckets of 8
    refused_with(p, counts, "do not fit the buckets");
    p = good;
    p.pass = 3;
    refused_with(p, counts, "unknown pass 3");
    p = good;
    p.pass = abi::kPassPartition;
    refused_with(p, Tensor::zeros({10}, i32, d), "the pairs");  // no room for 100 pairs
    p = good;
    p.pass = abi::kPassCount;
    p.parts = 400;  // a table of 2000 counts
    refused_with(p, counts, "the counts");
    p = good;
    p.dtype = std::int32_t(DType::kInt64);
    refused_with(p, counts, "at most 4 bytes");
  }
}
