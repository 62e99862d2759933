// The index writes' modes and refusals (core/ops/index_write.hpp): argument errors
// (InvalidArgument) on every device; the deterministic mode (float32 sums with many
// duplicates bit for bit the host's on every device, assignments the last write); NBX_SCATTER
// forcing a variant; the "overlay:" cases, run again without int64 / fp64.
#include <doctest/doctest.h>

#include "tests/unit/index_write_test_util.hpp"

using namespace nbx;
using namespace nbx::testing::index_write;

TEST_CASE("argument errors are InvalidArgument on every device") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor self = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    const Tensor src = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    const Tensor idx = ids({0, 1, 1, 0}, {2, 2}, d);
    // scatter: ranks, dtypes, sizes, dims, reduce names.
    CHECK_THROWS_AS(ops::scatter(self, 1, ids({0, 1}, {2}, d), src), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter(self, 1, on({0, 1, 1, 0}, {2, 2}, d), src), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter(self, 1, idx, src.to(f64)), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter(self, 1, ids({0, 0, 0, 0, 0, 0}, {3, 2}, d), src),
                    InvalidArgument);  // index.size(0) > self.size(0)
    CHECK_THROWS_AS(ops::scatter(self, 1, ids({0, 0, 0, 0}, {1, 4}, d), src),
                    InvalidArgument);  // index.size(1) > src.size(1)
    CHECK_THROWS_AS(ops::scatter(self, 2, idx, src), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter(self, -3, idx, src), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter(self, 1, idx, src, "divide"), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter(self, 1, idx, Scalar(1), "sum"), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter(self, 1, ids({0, 1, 1, 0}, {2, 2}, d, DType::kInt16), src),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::scatter_add(self, 1, idx, src.to(i32)), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter_reduce(self, 1, idx, src, "max"), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter_reduce(self, 1, idx, src, "add"), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter_reduce(self, 1, ids({0, 1}, {2}, d), src, "sum"), InvalidArgument);
    // Undefined tensors and devices that differ.
    CHECK_THROWS_AS(ops::scatter(Tensor(), 1, idx, src), InvalidArgument);
    CHECK_THROWS_AS(ops::scatter(self, 1, Tensor(), src), InvalidArgument);
    CHECK_THROWS_AS(ops::index_add(self, 0, Tensor(), src), InvalidArgument);
    if (!d.is_host()) {
      CHECK_THROWS_AS(ops::scatter(self, 1, idx.to(host_device()), src), InvalidArgument);
      CHECK_THROWS_AS(ops::index_add(self, 0, ids({0, 1}, {2}, host_device()), src),
                      InvalidArgument);
      CHECK_THROWS_AS(ops::searchsorted(on({1, 2}, {2}, d), on({1}, {1}, host_device())),
                      InvalidArgument);
      CHECK_THROWS_AS(ops::masked_select(self, mask({true, true, true}, {3}, host_device())),
                      InvalidArgument);
    }
    // index_add / index_copy / index_fill: a 2-d index, a source of the wrong shape or dtype,
    // an index count that is not the source's size along dim, a float index.
    CHECK_THROWS_AS(ops::index_add(self, 0, ids({0, 1}, {1, 2}, d), src), InvalidArgument);
    CHECK_THROWS_AS(ops::index_add(self, 0, ids({0, 1}, {2}, d), on({1, 2}, {1, 2}, d)),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::index_add(self, 0, ids({0}, {1}, d), src), InvalidArgument);
    CHECK_THROWS_AS(ops::index_add(self, 0, ids({0, 1}, {2}, d), src.to(f64)), InvalidArgument);
    CHECK_THROWS_AS(ops::index_add(self, 0, on({0, 1}, {2}, d), src), InvalidArgument);
    CHECK_THROWS_AS(ops::index_add(self, 2, ids({0, 1}, {2}, d), src), InvalidArgument);
    CHECK_THROWS_AS(ops::index_copy(self, 0, ids({0}, {1}, d), src), InvalidArgument);
    CHECK_THROWS_AS(ops::index_copy(self, 0, ids({0, 1}, {2}, d), src.to(i64)), InvalidArgument);
    CHECK_THROWS_AS(ops::index_fill(self, 0, ids({0, 1}, {1, 2}, d), 1), InvalidArgument);
    CHECK_THROWS_AS(ops::index_fill(self, 3, ids({0}, {1}, d), 1), InvalidArgument);
    // index_put: too many indices, values that do not broadcast, float indices, index
    // tensors that do not broadcast together, a mask of the wrong shape.
    CHECK_THROWS_AS(ops::index_put(self, {ids({0}, {1}, d), ids({0}, {1}, d), ids({0}, {1}, d)},
                                   on({1}, {}, d)),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::index_put(self, {ids({0, 1}, {2}, d)}, on({1, 2}, {2}, d)),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::index_put(self, {on({0, 1}, {2}, d)}, on({1}, {}, d)), InvalidArgument);
    CHECK_THROWS_AS(
        ops::index_put(self, {ids({0, 1}, {2}, d), ids({0, 1, 2}, {3}, d)}, on({1}, {}, d)),
        InvalidArgument);
    CHECK_THROWS_AS(ops::index_put(self, {mask({true, false, true}, {3}, d)}, on({1}, {}, d)),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::index_put(self, {ids({0}, {1}, d)}, on({1, 2, 3}, {3}, d, i32)),
                    InvalidArgument);
    // one_hot of a float; nonzero of an undefined tensor.
    CHECK_THROWS_AS(ops::one_hot(on({1}, {1}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::nonzero(Tensor()), InvalidArgument);
    CHECK_THROWS_AS(ops::searchsorted(Tensor(), on({1}, {1}, d)), InvalidArgument);
    // Expanded in-place destinations are refused (several elements share memory).
    CHECK_THROWS_AS(ops::scatter_(on({1, 2}, {1, 2}, d).expand({3, 2}), 1, ids({0, 1}, {1, 2}, d),
                                  on({5, 6}, {1, 2}, d)),
                    InvalidArgument);
  }
}

TEST_CASE("deterministic mode: float sums with many duplicates are the host's, bit for bit") {
  ModeGuard guard;
  deterministic(true);
  CHECK(deterministic_algorithms());
  // 6000 sources of mixed magnitudes (1e-4 … 1e4, both signs) into 7 destinations: the sum's
  // rounding depends on its order, which the deterministic pass fixes to index order.
  std::mt19937_64 gen(1234);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<std::int64_t> pick(0, 6), mag(-4, 4);
  const std::int64_t n = 6000;
  D src(static_cast<std::size_t>(n) * 3);
  I64 idx(static_cast<std::size_t>(n)), idx2(static_cast<std::size_t>(n) * 3);
  for (double& x : src) x = u(gen) * std::pow(10.0, double(mag(gen)));
  for (std::int64_t& i : idx) i = pick(gen);
  for (std::int64_t& i : idx2) i = pick(gen);
  const Device host = host_device();
  const D init{0.25, -1, 3, 1e3, -7, 0.5, 2};
  // The host's answers.
  const auto index_add_on = [&](const Device& d, DType it) {
    return ops::index_add(on(init, {7}, d), 0, ids(idx, {n}, d, it),
                          on(D(src.begin(), src.begin() + n), {n}, d));
  };
  const auto index_add_rows_on = [&](const Device& d) {  // [7, 3] rows, 6000 of them
    D init3;
    for (double v : init) init3.insert(init3.end(), {v, -v, 2 * v});
    return ops::index_add(on(init3, {7, 3}, d), 0, ids(idx, {n}, d), on(src, {n, 3}, d), 0.5);
  };
  const auto scatter_add_on = [&](const Device& d, DType it) {
    D init3;
    for (double v : init) init3.insert(init3.end(), {v, 1 - v, v / 4});
    // [3, 6000] along dim 1 into [3, 7]: a transposed source.
    return ops::scatter_add(on(init3, {7, 3}, d).transpose(0, 1), 1, ids(idx2, {3, n}, d, it),
                            on(src, {n, 3}, d).transpose(0, 1));
  };
  const auto scatter_reduce_on = [&](const Device& d, const char* reduce) {
    return ops::scatter_reduce(on(init, {7}, d), 0, ids(idx, {n}, d),
                               on(D(src.begin(), src.begin() + n), {n}, d), reduce, false);
  };
  const auto index_put_on = [&](const Device& d, DType it) {
    return ops::index_put(on(init, {7}, d), {ids(idx, {n}, d, it)},
                          on(D(src.begin(), src.begin() + n), {n}, d), true);
  };
  const auto index_put_2d_on = [&](const Device& d) {  // (row, column) pairs into [7, 3]
    I64 cols(static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < cols.size(); ++k) cols[k] = idx2[k] % 3;
    return ops::index_put(on(D(21, 1.0), {7, 3}, d), {ids(idx, {n}, d), ids(cols, {n}, d)},
                          on(D(src.begin(), src.begin() + n), {n}, d), true);
  };
  const std::vector<std::byte> want_ia = bytes_of(index_add_on(host, i64)),
                               want_iar = bytes_of(index_add_rows_on(host)),
                               want_sa = bytes_of(scatter_add_on(host, i64)),
                               want_ss = bytes_of(scatter_reduce_on(host, "sum")),
                               want_sm = bytes_of(scatter_reduce_on(host, "mean")),
                               want_ip = bytes_of(index_put_on(host, i64)),
                               want_ip2 = bytes_of(index_put_2d_on(host));
  // The host's sum is the one in index order: a float32 left fold of the sources.
  {
    F acc(init.begin(), init.end());
    for (std::int64_t k = 0; k < n; ++k)
      acc[std::size_t(idx[std::size_t(k)])] += float(src[std::size_t(k)]);
    std::vector<std::byte> fold(acc.size() * 4);
    std::memcpy(fold.data(), acc.data(), fold.size());
    CHECK(want_ia == fold);
    CHECK(want_ip == fold);
  }
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (DType it : {i32, i64}) {
      CAPTURE(dtype_name(it));
      CHECK(bytes_of(index_add_on(d, it)) == want_ia);
      CHECK(bytes_of(scatter_add_on(d, it)) == want_sa);
      CHECK(bytes_of(index_put_on(d, it)) == want_ip);
    }
    CHECK(bytes_of(index_add_rows_on(d)) == want_iar);
    CHECK(bytes_of(scatter_reduce_on(d, "sum")) == want_ss);
    {
      // The sums are bit for bit; mean divides them by the counts with the device's own
      // division (Vulkan's OpFDiv may be 2.5 ulp off: NVIDIA's driver is 1 ulp off here).
      const std::vector<float> got = scatter_reduce_on(d, "mean").to_host<float>();
      std::vector<float> want(want_sm.size() / 4);
      std::memcpy(want.data(), want_sm.data(), want_sm.size());
      REQUIRE(got.size() == want.size());
      for (std::size_t k = 0; k < got.size(); ++k)
        CHECK(std::fabs(got[k] - want[k]) <=
              3 * std::fabs(std::nextafter(want[k], 2 * want[k]) - want[k]));
    }
    CHECK(bytes_of(index_put_2d_on(d)) == want_ip2);
    // Twice the same.
    CHECK(bytes_of(index_add_on(d, i64)) == bytes_of(index_add_on(d, i64)));

    // Assignments with duplicates: the last write wins.
    CHECK(vals(ops::scatter(on({0.5, 0.5, 0.5}, {3}, d), 0, ids({1, 0, 1, 1, 0}, {5}, d),
                            on({1, 2, 3, 4, 5}, {5}, d))) == D{5, 4, 0.5});
    CHECK(vals(ops::scatter(on({9, 9, 9, 9}, {2, 2}, d), 1, ids({0, 0, 1, 1}, {2, 2}, d),
                            on({1, 2, 3, 4}, {2, 2}, d))) == D{2, 9, 9, 4});
    CHECK(vals(ops::index_copy(on({0, 0, 0}, {3}, d), 0, ids({2, 2, 0, 2}, {4}, d),
                               on({1, 2, 3, 4}, {4}, d))) == D{3, 0, 4});
    CHECK(vals(ops::index_put(on({0, 0, 0}, {3}, d), {ids({2, 1, 2, -1}, {4}, d)},
                              on({1, 2, 3, 4}, {4}, d))) == D{0, 2, 4});
    CHECK(vals(ops::index_put(on({-1, -1, -1, -1}, {2, 2}, d),
                              {ids({0, 0, 0}, {3}, d), ids({1, 1, 1}, {3}, d)},
                              on({7, 8, 9}, {3}, d))) == D{-1, 9, -1, -1});
    // Many duplicates: 5000 writes into 3 destinations, the last of each wins.
    I64 many(5000);
    D srcs(5000);
    for (std::size_t k = 0; k < many.size(); ++k)
      many[k] = std::int64_t((k * 7) % 3), srcs[k] = double(k);
    D last(3, -1);
    for (std::size_t k = 0; k < many.size(); ++k) last[std::size_t(many[k])] = double(k);
    CHECK(vals(ops::scatter(on({-1, -1, -1}, {3}, d), 0, ids(many, {5000}, d),
                            on(srcs, {5000}, d))) == last);
    CHECK(vals(ops::index_put(on({-1, -1, -1}, {3}, d), {ids(many, {5000}, d, i32)},
                              on(srcs, {5000}, d))) == last);
    CHECK(vals(ops::index_copy(on({-1, -1, -1}, {3}, d), 0, ids(many, {5000}, d),
                               on(srcs, {5000}, d))) == last);
  }
  // Off again: the atomic variant gives a sum within rounding of the deterministic one.
  deterministic(false);
  CHECK_FALSE(deterministic_algorithms());
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const D got = vals(index_add_on(d, i64));
    F want(7);
    std::memcpy(want.data(), want_ia.data(), want_ia.size());
    for (std::size_t k = 0; k < 7; ++k) CHECK(std::abs(got[k] - double(want[k])) < 1.0);
  }
}

TEST_CASE("NBX_SCATTER forces the variant: atomic and sorted give the same exact results") {
  ModeGuard guard;
  for (const char* mode : {"atomic", "sorted"}) {
    CAPTURE(mode);
    setenv("NBX_SCATTER", mode, 1);
    for (const Device& d : testing::present_devices()) {
      CAPTURE(d.str());
      // Integer sums are exact in any order.
      I64 idx(4000);
      for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = std::int64_t((k * 13) % 5);
      CHECK(ints(ops::scatter_add(on({0, 1, 2, 3, 4}, {5}, d, i64), 0, ids(idx, {4000}, d),
                                  on(D(4000, 1), {4000}, d, i64))) == I64{800, 801, 802, 803, 804});
      CHECK(ints(ops::index_add(on({0, 1, 2, 3, 4}, {5}, d, i32), 0, ids(idx, {4000}, d, i32),
                                on(D(4000, 2), {4000}, d, i32))) ==
            I64{1600, 1601, 1602, 1603, 1604});
      CHECK(ints(ops::index_put(on({0, 0, 0, 0, 0}, {5}, d, DType::kInt16), {ids(idx, {4000}, d)},
                                on({3}, {}, d, DType::kInt16), true)) ==
            I64{2400, 2400, 2400, 2400, 2400});
      // amax / amin / prod of integers, exact.
      CHECK(ints(ops::scatter_reduce(on({0, 0}, {2}, d, i32), 0, ids({0, 1, 0, 1, 0}, {5}, d),
                                     on({4, -3, 9, 2, -1}, {5}, d, i32), "amax", false)) ==
            I64{9, 2});
      CHECK(ints(ops::scatter_reduce(on({0, 0}, {2}, d, i64), 0, ids({0, 1, 0, 1, 0}, {5}, d),
                                     on({4, -3, 9, 2, -1}, {5}, d, i64), "prod")) == I64{0, 0});
      CHECK(ints(ops::scatter_reduce(on({1, 1}, {2}, d, i64), 0, ids({0, 1, 0, 1, 0}, {5}, d),
                                     on({4, -3, 9, 2, -1}, {5}, d, i64), "prod")) == I64{-36, -6});
      CHECK(vals(ops::scatter_reduce(
                on({1, 1}, {2}, d, DType::kFloat16), 0, ids({0, 1, 0, 1, 0}, {5}, d),
                on({4, -3, 9, 2, -1}, {5}, d, DType::kFloat16), "amin")) == D{-1, -3});
      // Small types that share a 32-bit word: int8, uint8, bool, float16, bfloat16 neighbours.
      CHECK(ints(ops::scatter_add(on({0, 0, 0, 0, 0}, {5}, d, DType::kInt8), 0,
                                  ids({0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 4}, {11}, d),
                                  on({1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 100}, {11}, d,
                                     DType::kInt8))) == I64{2, 4, 6, 8, 110});
      CHECK(ints(ops::scatter_add(on({250, 0, 0, 0}, {4}, d, DType::kUInt8), 0,
                                  ids({0, 1, 0, 3}, {4}, d),
                                  on({3, 1, 4, 2}, {4}, d, DType::kUInt8))) == I64{1, 1, 0, 2});
      CHECK(vals(ops::index_add(
                on({0, 0, 0, 0}, {4}, d, DType::kBFloat16), 0, ids({1, 2, 1, 2, 3}, {5}, d),
                on({0.5, 1, 0.5, 1, 2}, {5}, d, DType::kBFloat16))) == D{0, 1, 2, 2});
      CHECK(vals(ops::index_add(on({0, 0, 0}, {3}, d, DType::kFloat16), 0, ids({0, 1, 0}, {3}, d),
                                on({0.25, 8, 0.25}, {3}, d, DType::kFloat16))) == D{0.5, 8, 0});
      CHECK(ints(ops::index_put(on({0, 0, 0, 0}, {4}, d, b8), {ids({1, 1, 2}, {3}, d)},
                                on({1, 0, 1}, {3}, d, b8), true)) == I64{0, 1, 1, 0});
      // float64 with duplicates of exactly representable sums.
      CHECK(vals(ops::scatter_add(on({0.5, 0.5}, {2}, d, f64), 0, ids({1, 1, 1, 0}, {4}, d),
                                  on({0.25, 0.125, 1, 2}, {4}, d, f64))) == D{2.5, 1.875});
    }
  }
}

TEST_CASE("float32 atomic sums keep subnormals unless the device says its atomic adds flush") {
  // 1e-40 is subnormal in float32. The host keeps it; a device whose extra
  // "float32_atomic_add_subnormals" says "flushed" (cuda:0, whose atomicAdd on global memory
  // flushes, as PyTorch's scatter_add there) gives 0, one that says "preserved" (vulkan:0 with
  // DenormPreserve, the H200's included) keeps it.
  ModeGuard guard;
  setenv("NBX_SCATTER", "atomic", 1);
  const float tiny = 1e-40f;
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const D got = vals(ops::scatter_add(on({0, 0}, {2}, d), 0, ids({0, 0, 1}, {3}, d),
                                        on({tiny, tiny, tiny}, {3}, d)));
    const D kept{double(tiny + tiny), double(tiny)};
    const auto& extra = d.properties().extra;
    const auto it = extra.find("float32_atomic_add_subnormals");
    const std::string says = it == extra.end() ? "" : it->second;
    CAPTURE(says);
    if (d.is_host() || says.rfind("preserved", 0) == 0)
      CHECK(got == kept);
    else if (says.rfind("flushed", 0) == 0)
      CHECK(got == D{0, 0});
    else
      CHECK((got == kept || got == D{0, 0}));
  }
}

TEST_CASE("overlay: index writes without int64 or fp64 are refused by the op's name") {
  // Typed host vectors only: under the overlays the host itself lacks int64 or fp64, so no
  // operand goes through a float64 or int64 host tensor here.
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const bool has_int64 = d.capabilities().int64.value, has_fp64 = d.capabilities().fp64.value;
    const auto fl = [&](const F& v) { return Tensor::from_host(v, {std::int64_t(v.size())}, d); };
    const auto in32 = [&](const I32& v) {
      return Tensor::from_host(v, {std::int64_t(v.size())}, d);
    };
    // int32 indices, float32 data: nothing 64-bit is needed.
    const Tensor self = fl({1, 2, 3});
    CHECK(ops::scatter_add(self, 0, in32({2, 2}), fl({1, 1})).to_host<float>() == F{1, 2, 5});
    CHECK(ops::index_fill(self, 0, in32({0}), 0).to_host<float>() == F{0, 2, 3});
    CHECK(ops::searchsorted(self, fl({2.5f}), true).to_host<std::int32_t>() == I32{2});
    if (!has_int64) {
      for (const char* op : {"nonzero", "bincount", "searchsorted"}) {
        const std::string name(op);
        CAPTURE(name);
        try {
          if (name == "nonzero")
            (void)ops::nonzero(self);
          else if (name == "bincount")
            (void)ops::bincount(in32({1, 2}));
          else
            (void)ops::searchsorted(self, fl({2.5f}));
          FAIL("expected Unsupported");
        } catch (const Unsupported& e) {
          CHECK(e.op() == op);
          CHECK(e.capability() == "int64");
        }
      }
    } else {
      CHECK(ops::nonzero(self).to_host<std::int64_t>() == I64{0, 1, 2});
    }
    if (!has_fp64) {
      try {
        (void)ops::bincount(in32({1, 2}), in32({1, 2}));
        FAIL("expected Unsupported");
      } catch (const Unsupported& e) {
        CHECK(e.op() == "bincount");
        CHECK(e.capability() == "fp64");
      }
      // float32 weights stay float32: no fp64 needed.
      if (has_int64)
        CHECK(ops::bincount(in32({1, 2}), fl({0.5f, 2})).to_host<float>() == F{0, 0.5f, 2});
    } else if (has_int64) {
      CHECK(ops::bincount(in32({1, 2}), in32({1, 2})).to_host<double>() ==
            std::vector<double>{0, 1, 2});
    }
  }
}
