// The index reads (index_select, gather, take_along_dim, embedding, take) on every present
// device against hand-computed values: shapes, strided and broadcast operands, int32 and
// int64 indices, bit-exact copies, and bad indices raised as DeviceFault with the device
// still usable afterwards; seeded gathers along a contiguous last dim (in aligned quads and
// off them) against the host's bytes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/backend.hpp"
#include "core/device.hpp"
#include "nbx/nbx.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {
using F = std::vector<float>;
using I64 = std::vector<std::int64_t>;

// [[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]] on `d`.
Tensor grid(const Device& d) {
  return Tensor::from_host(F{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f}, {2, 3}, d);
}
Tensor ids(const I64& v, const Shape& s, const Device& d, DType t = DType::kInt64) {
  return Tensor::from_host(v, s, d).to(t);
}
std::vector<std::byte> bytes_of(const Tensor& t) {
  std::vector<std::byte> b(std::size_t(t.numel()) * t.itemsize());
  if (!b.empty()) t.copy_to_host(b.data());
  return b;
}
}  // namespace

TEST_CASE("index_select picks along a dim, from views, with int32 and int64 indices") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = grid(d);
    for (DType t : {DType::kInt32, DType::kInt64}) {
      const Tensor r = ops::index_select(x, 1, ids({2, 0, 2}, {3}, d, t));
      CHECK(r.shape() == Shape{2, 3});
      CHECK(r.to_host<float>() == F{2.5f, 0.5f, 2.5f, 5.5f, 3.5f, 5.5f});
    }
    // The transposed view [[0.5, 3.5], [1.5, 4.5], [2.5, 5.5]], rows 2 and 1.
    CHECK(ops::index_select(x.transpose(0, 1), 0, ids({2, 1}, {2}, d)).to_host<float>() ==
          F{2.5f, 5.5f, 1.5f, 4.5f});
    // A strided index (every other element of [1, 9, 0, 9]).
    const Tensor strided = ids({1, 9, 0, 9}, {4}, d).slice(0, 0, 4, 2);
    CHECK(ops::index_select(x, 0, strided).to_host<float>() ==
          F{3.5f, 4.5f, 5.5f, 0.5f, 1.5f, 2.5f});
    CHECK(ops::index_select(x, 0, ids({}, {0}, d)).shape() == Shape{0, 3});
    CHECK_THROWS_AS(ops::index_select(x, 0, ids({0, 1}, {1, 2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::index_select(x, 2, ids({0}, {1}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::index_select(x, 0, x), InvalidArgument);
  }
}

TEST_CASE("gather and take_along_dim follow PyTorch's shapes and broadcasting") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = grid(d);
    const Tensor g = ops::gather(x, 1, ids({2, 2, 0, 1}, {2, 2}, d));
    CHECK(g.shape() == Shape{2, 2});
    CHECK(g.to_host<float>() == F{2.5f, 2.5f, 3.5f, 4.5f});
    // An index smaller than the input in the other dim reads only its own rows.
    CHECK(ops::gather(x, 0, ids({1, 0}, {1, 2}, d)).to_host<float>() == F{3.5f, 1.5f});
    CHECK_THROWS_AS(ops::gather(x, 1, ids({0, 0, 0}, {3, 1}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::gather(x, 1, ids({0}, {1}, d)), InvalidArgument);
    // take_along_dim broadcasts a [1, 2] index over both rows.
    const Tensor t = ops::take_along_dim(x, ids({2, 0}, {1, 2}, d), 1);
    CHECK(t.shape() == Shape{2, 2});
    CHECK(t.to_host<float>() == F{2.5f, 0.5f, 5.5f, 3.5f});
    // Without a dim both are flattened.
    CHECK(ops::take_along_dim(x, ids({5, 0}, {2}, d)).to_host<float>() == F{5.5f, 0.5f});
  }
}

TEST_CASE("embedding and take copy bits exactly in every dtype") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor w = Tensor::from_host(F{1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}, d);
    for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt8, DType::kInt64,
                    DType::kBool, DType::kFloat64}) {
      CAPTURE(dtype_name(t));
      Tensor wt;
      try {
        wt = w.to(t);
      } catch (const Unsupported&) {  // a dtype this device does not hold
        continue;
      }
      const Tensor e = ops::embedding(ids({3, 0, 3, 1}, {2, 2}, d, DType::kInt32), wt);
      CHECK(e.shape() == Shape{2, 2, 2});
      CHECK(e.dtype() == t);
      const Tensor expected = Tensor::from_host(F{7, 8, 1, 2, 7, 8, 3, 4}, {2, 2, 2}).to(t);
      CHECK(e.to(DType::kFloat32).to_host<float>() ==
            expected.to(DType::kFloat32).to_host<float>());
    }
    // A NaN payload and -0 survive the copy.
    const Tensor special = Tensor::from_host(F{std::nanf(""), -0.0f}, {2, 1}, d);
    const std::vector<float> got = ops::embedding(ids({1, 0}, {2}, d), special).to_host<float>();
    CHECK(std::signbit(got[0]));
    CHECK(std::isnan(got[1]));
    // take reads the input flattened; negative indices count from the end.
    CHECK(ops::take(grid(d).transpose(0, 1), ids({-1, 1, 0}, {3}, d)).to_host<float>() ==
          F{5.5f, 3.5f, 0.5f});
    CHECK_THROWS_AS(ops::embedding(ids({0}, {1}, d), w, 4), InvalidArgument);
    CHECK_THROWS_AS(ops::embedding(ids({0}, {1}, d), w, {}, 1.0), Unsupported);
  }
}

TEST_CASE(
    "a bad index is a DeviceFault naming op, index, bound and position; the device "
    "stays usable") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = grid(d);
    try {
      Tensor r = ops::index_select(x, 1, ids({0, 3, 1}, {3}, d));
      d.synchronize();
      (void)r.to_host<float>();
      FAIL("no fault raised");
    } catch (const DeviceFault& f) {
      CHECK(f.op() == "index_select");
      CHECK(f.index() == 3);
      CHECK(f.bound() == 3);
      CHECK(f.position() == 1);
      CHECK(std::string(f.what()).find("index 3 is out of range [0, 3) at position 1") !=
            std::string::npos);
    }
    // Negative indices are not wrapped by gather (PyTorch refuses them too).
    CHECK_THROWS_AS((void)ops::gather(x, 1, ids({-1, 0}, {2, 1}, d)).to_host<float>(), DeviceFault);
    // take wraps once: -7 is out of [-6, 6).
    CHECK_THROWS_AS((void)ops::take(x, ids({-7}, {1}, d)).to_host<float>(), DeviceFault);
    CHECK(ops::take(x, ids({-6}, {1}, d)).to_host<float>() == F{0.5f});
    CHECK(ops::index_select(x, 1, ids({1}, {1}, d)).to_host<float>() == F{1.5f, 4.5f});
  }
}

TEST_CASE("0-d operands take PyTorch's shapes") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor s = Tensor::from_host(F{2.5f}, {}, d);
    // index_select of a 0-d input stays 0-d and takes exactly one index (PyTorch 2.x).
    CHECK(ops::index_select(s, 0, ids({0}, {1}, d)).shape() == Shape{});
    CHECK(ops::index_select(s, -1, ids({0}, {}, d)).to_host<float>() == F{2.5f});
    CHECK_THROWS_AS(ops::index_select(s, 0, ids({0, 0}, {2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::index_select(s, 0, ids({}, {0}, d)), InvalidArgument);
    // gather counts a 0-d tensor as 1-d: a 0-d index of a vector, a vector index of a 0-d.
    const Tensor v = Tensor::from_host(F{1.5f, 2.5f, 3.5f}, {3}, d);
    const Tensor one = ops::gather(v, 0, ids({2}, {}, d));
    CHECK(one.shape() == Shape{});
    CHECK(one.to_host<float>() == F{3.5f});
    const Tensor many = ops::gather(s, 0, ids({0, 0}, {2}, d));
    CHECK(many.shape() == Shape{2});
    CHECK(many.to_host<float>() == F{2.5f, 2.5f});
  }
}

TEST_CASE("rows of every width and alignment are copied exactly (the gather rows variant)") {
  // Embedding and index_select whose output rows are whole input rows: CUDA/HIP copy them
  // with the rows variant, in the widest unit that the row's bytes and every row start allow
  // (a column slice moves each start by one element). Every backend must give the host's bits.
  std::mt19937 gen(20260417);
  const I64 picks{5, 0, 3, 3, 1, 4, 2, 0};
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const BackendDevice& bd = d.context().backend_device();
    const bool rows = bd.offers(KernelFamily::kGather, abi::kGatherRows);
    for (DType t : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kFloat64}) {
      for (std::int64_t width : {1, 2, 3, 4, 7, 8, 16, 33, 64, 257, 1030}) {
        for (std::int64_t shift : {0, 1}) {
          CAPTURE(dtype_name(t));
          CAPTURE(width);
          CAPTURE(shift);
          std::vector<std::byte> b(std::size_t(6 * (width + shift)) * dtype_size(t));
          for (std::byte& x : b) x = std::byte(gen() & 255);
          const Tensor host = Tensor::from_host(b.data(), {6, width + shift}, t);
          Tensor dev;
          try {
            dev = host.to(d);
          } catch (const Unsupported&) {  // a dtype this device does not hold
            continue;
          }
          const Tensor wh = host.slice(1, shift, width + shift),
                       wd = dev.slice(1, shift, width + shift);
          for (DType it : {DType::kInt64, DType::kInt32}) {
            const Tensor ih = Tensor::from_host(picks, {2, 4}).to(it), id = ih.to(d);
            CHECK(bytes_of(ops::embedding(id, wd)) == bytes_of(ops::embedding(ih, wh)));
            if (rows && width > 1) CHECK(bd.last_launch().variant == abi::kGatherRows);
            const Tensor flat_h = ih.reshape({-1}), flat_d = id.reshape({-1});
            CHECK(bytes_of(ops::index_select(wd, 0, flat_d)) ==
                  bytes_of(ops::index_select(wh, 0, flat_h)));
            if (rows && width > 1) CHECK(bd.last_launch().variant == abi::kGatherRows);
          }
          // Along a middle dim, [3, 2, width] read as [3, 4, width]: rows of the last dim
          // (views of the same bytes: a copy of a float view need not keep NaN payloads).
          const Shape split{3, 2, width + shift};
          const Tensor xh = host.reshape(split).slice(2, shift, width + shift),
                       xd = dev.reshape(split).slice(2, shift, width + shift);
          const Tensor sh = ids({1, 0, 0, 1}, {4}, host_device()), sd = sh.to(d);
          CHECK(bytes_of(ops::index_select(xd, 1, sd)) == bytes_of(ops::index_select(xh, 1, sh)));
        }
      }
    }
  }
}

TEST_CASE("gathers along a contiguous last dim copy exactly, in quads and around them") {
  // On Vulkan gather_vec.comp takes an output and index that run in aligned quads along the
  // last dim (4 elements an invocation: one 16-byte index load, one store); rows of a length
  // that is a multiple of 4 reach it, 1-d takes with wrapped negatives too, and a row length
  // or row start off the quad grid takes gather.comp. Every backend must give the host's bits.
  std::mt19937 gen(20261204);
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (DType t : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kInt64}) {
      CAPTURE(dtype_name(t));
      std::vector<std::byte> b(std::size_t(37 * 52) * dtype_size(t));
      for (std::byte& x : b) x = std::byte(gen() & 255);
      const Tensor xh = Tensor::from_host(b.data(), {37, 52}, t);
      Tensor xd;
      try {
        xd = xh.to(d);
      } catch (const Unsupported&) {  // a dtype this device does not hold
        continue;
      }
      for (DType it : {DType::kInt64, DType::kInt32}) {
        CAPTURE(dtype_name(it));
        const auto random_ids = [&](const Shape& s, std::int64_t lo, std::int64_t hi) {
          std::uniform_int_distribution<std::int64_t> u(lo, hi);
          I64 v(std::size_t(numel(s)));
          for (std::int64_t& x : v) x = u(gen);
          return Tensor::from_host(v, s).to(it);
        };
        for (std::int64_t cols : {4, 48, 47, 1028}) {
          CAPTURE(cols);
          const Tensor ih = random_ids({37, cols}, 0, 51);
          CHECK(bytes_of(ops::gather(xd, 1, ih.to(d))) == bytes_of(ops::gather(xh, 1, ih)));
        }
        // Index views: rows 56 apart from column 4 (on the quad grid), and from column 1 (off).
        const Tensor wide = random_ids({37, 56}, 0, 51), wd = wide.to(d);
        for (std::int64_t from : {4, 1}) {
          CAPTURE(from);
          CHECK(bytes_of(ops::gather(xd, 1, wd.slice(1, from, from + 48))) ==
                bytes_of(ops::gather(xh, 1, wide.slice(1, from, from + 48))));
        }
        // Along dim 0 (the input's stride along the indexed dim is a row), 1-d, and take
        // wrapping negative indices.
        const Tensor down = random_ids({20, 52}, 0, 36);
        CHECK(bytes_of(ops::gather(xd, 0, down.to(d))) == bytes_of(ops::gather(xh, 0, down)));
        const Tensor flat = random_ids({200}, 0, 37 * 52 - 1);
        CHECK(bytes_of(ops::gather(xd.reshape({-1}), 0, flat.to(d))) ==
              bytes_of(ops::gather(xh.reshape({-1}), 0, flat)));
        const Tensor neg = random_ids({36}, -37 * 52, 37 * 52 - 1);
        CHECK(bytes_of(ops::take(xd, neg.to(d))) == bytes_of(ops::take(xh, neg)));
      }
    }
  }
}
