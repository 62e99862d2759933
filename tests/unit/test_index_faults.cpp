// Bad indices on every present device: each index read (index_select, gather,
// take_along_dim, embedding, take) with one index out of range raises nbx::DeviceFault with
// the op, index, bound and position exactly (at once on the host, at the next synchronize
// or read back elsewhere); afterwards 100 seeded random index reads on the same device match
// the host bit for bit; and in a sequence good, bad, good the fault names the bad op.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "nbx/nbx.hpp"
#include "tests/unit/expect_fault.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {
using F = std::vector<float>;
using I64 = std::vector<std::int64_t>;

// [[0.5, 1.5, 2.5, 3.5], [4.5, …], [8.5, …, 11.5]]: [3, 4], 12 elements.
Tensor grid(const Device& d) {
  F v(12);
  for (int i = 0; i < 12; ++i) v[std::size_t(i)] = float(i) + 0.5f;
  return Tensor::from_host(v, {3, 4}, d);
}
// [5, 3] rows of an embedding table.
Tensor table(const Device& d) {
  F v(15);
  for (int i = 0; i < 15; ++i) v[std::size_t(i)] = -float(i) - 0.25f;
  return Tensor::from_host(v, {5, 3}, d);
}
Tensor ids(const I64& v, const Shape& s, const Device& d, DType t) {
  return Tensor::from_host(v, s, d).to(t);
}

struct BadCase {
  const char* what;
  const char* op;
  std::function<Tensor(const Device&, DType)> run;
  std::int64_t index, bound, position;
};

std::vector<BadCase> bad_cases() {
  return {
      {"index_select past the end", "index_select",
       [](const Device& d, DType t) {
         return ops::index_select(grid(d), 1, ids({0, 2, 4, 1}, {4}, d, t));
       },
       4, 4, 2},
      {"index_select at -1", "index_select",
       [](const Device& d, DType t) {
         return ops::index_select(grid(d), 0, ids({1, -1}, {2}, d, t));
       },
       -1, 3, 1},
      {"gather past the end", "gather",
       [](const Device& d, DType t) {
         return ops::gather(grid(d), 1, ids({0, 1, 3, 7, 2, 2}, {3, 2}, d, t));
       },
       7, 4, 3},
      {"gather at -2", "gather",
       [](const Device& d, DType t) {
         return ops::gather(grid(d), 0, ids({0, -2, 1, 2}, {1, 4}, d, t));
       },
       -2, 3, 1},
      // The position is in the index's own shape, here its transpose ([3, 2] of a [2, 3]).
      {"gather through a transposed index", "gather",
       [](const Device& d, DType t) {
         return ops::gather(grid(d), 1, ids({0, 1, 2, 3, 9, 0}, {2, 3}, d, t).transpose(0, 1));
       },
       9, 4, 3},
      {"take_along_dim past the end", "take_along_dim",
       [](const Device& d, DType t) {
         return ops::take_along_dim(grid(d), ids({1, 0, 9}, {3, 1}, d, t), 1);
       },
       9, 4, 2},
      {"take_along_dim at -3", "take_along_dim",
       [](const Device& d, DType t) {
         return ops::take_along_dim(grid(d), ids({0, 2, -3, 1}, {1, 4}, d, t), 0);
       },
       -3, 3, 2},
      {"take_along_dim flattened", "take_along_dim",
       [](const Device& d, DType t) {
         return ops::take_along_dim(grid(d), ids({5, 12}, {2}, d, t));
       },
       12, 12, 1},
      {"embedding past the end", "embedding",
       [](const Device& d, DType t) {
         return ops::embedding(ids({1, 0, 5, 2}, {2, 2}, d, t), table(d));
       },
       5, 5, 2},
      {"embedding at -1", "embedding",
       [](const Device& d, DType t) {
         return ops::embedding(ids({3, -1}, {2}, d, t), table(d));
       },
       -1, 5, 1},
      {"take past the end", "take",
       [](const Device& d, DType t) {
         return ops::take(grid(d).transpose(0, 1), ids({0, -12, 12, 3}, {2, 2}, d, t));
       },
       12, 12, 2},
      {"take below -n", "take",
       [](const Device& d, DType t) {
         return ops::take(grid(d), ids({-12, -13}, {2}, d, t));
       },
       -13, 12, 1},
      // Nothing to pick from: every index is out of range (PyTorch: "tried to take from an
      // empty tensor", "index 0 is out of bounds for dimension 1 with size 0").
      {"take from an empty input", "take",
       [](const Device& d, DType t) {
         return ops::take(Tensor::empty({0}, DType::kFloat32, d), ids({0}, {1}, d, t));
       },
       0, 0, 0},
      {"gather along an empty dim", "gather",
       [](const Device& d, DType t) {
         return ops::gather(Tensor::empty({2, 0}, DType::kFloat32, d), 1, ids({0}, {1, 1}, d, t));
       },
       0, 0, 0},
      // The 32-bit extreme: its negation does not fit 32 bits.
      {"take at -2^31", "take",
       [](const Device& d, DType t) {
         return ops::take(grid(d), ids({3, INT32_MIN}, {2}, d, t));
       },
       INT32_MIN, 12, 1},
      // Quads of 4 along the last dim (Vulkan's gather_vec.comp): a bad index in a row's
      // third quad, in a 1-d take with its neighbours good, and a whole quad of bad ones
      // (every index bad against an empty input: the quad's first is named).
      {"gather in a long row's third quad", "gather",
       [](const Device& d, DType t) {
         I64 v(3 * 16, 1);
         v[16 + 9] = 16;
         F x(3 * 16, 0.5f);
         return ops::gather(Tensor::from_host(x, {3, 16}, d), 1, ids(v, {3, 16}, d, t));
       },
       16, 16, 25},
      {"take in quads below -n", "take",
       [](const Device& d, DType t) {
         return ops::take(grid(d), ids({0, -12, 5, -13, 11, 2, -1, 0}, {8}, d, t));
       },
       -13, 12, 3},
      {"take of a quad from an empty input", "take",
       [](const Device& d, DType t) {
         return ops::take(Tensor::empty({0}, DType::kFloat32, d), ids({2, 1, 0, 3}, {4}, d, t));
       },
       2, 0, 0},
  };
}

// ---- random index reads ----

std::vector<std::byte> bytes_of(const Tensor& t) {
  std::vector<std::byte> b(std::size_t(t.numel()) * t.itemsize());
  if (!b.empty()) t.contiguous().copy_to_host(b.data());
  return b;
}

struct Pair {
  Tensor host, dev;  // the host's contiguous copy, the device's view
};

struct RandomReads {
  std::mt19937_64 gen;
  const Device& d;
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {  // [lo, hi]
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(gen);
  }
  bool coin() { return uniform(0, 1) == 1; }

  // Random bits of `t` (bools 0 or 1) of `shape` through a random view (with `views`):
  // contiguous, transposed (first and last dims), or every other element of dim 0. The
  // host's copy is made contiguous through the bits' integer type: contiguous() of a float
  // view is the elementwise copy, which does not keep NaN payloads.
  Pair input(DType t, const Shape& shape, bool views) {
    const int nd = int(shape.size());
    const int layout = views ? int(uniform(0, 2)) : 0;
    Shape base = shape;
    if (layout == 1 && nd >= 2) std::swap(base[0], base[std::size_t(nd - 1)]);
    if (layout == 2 && nd >= 1) base[0] = 2 * shape[0];
    std::vector<std::byte> b(std::size_t(numel(base)) * dtype_size(t));
    for (std::byte& x : b) x = std::byte(uniform(0, 255) & (t == DType::kBool ? 1 : 255));
    const Tensor h = Tensor::from_host(b.data(), base, t);
    auto view = [&](const Tensor& x) {
      if (layout == 1 && nd >= 2) return x.transpose(0, nd - 1);
      if (layout == 2 && nd >= 1) return x.slice(0, 0, 2 * shape[0], 2);
      return x;
    };
    const DType bits = dtype_size(t) == 1   ? DType::kUInt8
                       : dtype_size(t) == 2 ? DType::kInt16
                       : dtype_size(t) == 4 ? DType::kInt32
                                            : DType::kInt64;
    const std::vector<std::byte> viewed = bytes_of(view(Tensor::from_host(b.data(), base, bits)));
    const Tensor host =
        viewed.empty() ? Tensor::empty(shape, t) : Tensor::from_host(viewed.data(), shape, t);
    return {host, view(h.to(d))};
  }

  // Indices in [lo, hi] of `shape`, maybe expanded from size 1 in a dim, maybe transposed.
  Pair index(DType it, const Shape& shape, std::int64_t lo, std::int64_t hi) {
    const int nd = int(shape.size());
    Shape base = shape;
    int expanded = -1;
    if (nd >= 1 && coin()) {
      expanded = int(uniform(0, nd - 1));
      base[std::size_t(expanded)] = std::min<std::int64_t>(shape[std::size_t(expanded)], 1);
    }
    const bool transposed = nd >= 2 && coin();
    if (transposed) std::swap(base[0], base[std::size_t(nd - 1)]);
    I64 v(std::size_t(numel(base)));
    for (std::int64_t& x : v) x = uniform(lo, hi);
    const Tensor h = Tensor::from_host(v, base).to(it);
    auto view = [&](Tensor x) {
      if (transposed) x = x.transpose(0, nd - 1);
      return expanded >= 0 ? x.expand(shape) : x;
    };
    return {view(h).contiguous(), view(h.to(d))};
  }

  Shape shape(int nd, std::int64_t lo, std::int64_t hi) {
    Shape s;
    for (int k = 0; k < nd; ++k) s.push_back(uniform(lo, hi));
    return s;
  }

  // One random read: its description, the host's result and the device's.
  struct Result {
    std::string what;
    Tensor want, got;
  };
  Result one(DType t, DType it) {
    const int op = int(uniform(0, 4));
    const int nd = int(uniform(op == 3 ? 2 : 0, op == 3 ? 2 : 4));
    const Shape in_shape = shape(nd, 0, 5);
    // take and a flattened take_along_dim copy a strided input with contiguous() (see
    // input()): those read contiguous inputs, so the comparison stays bit for bit.
    const bool flat = op == 2 && (nd == 0 || coin());
    const Pair x = input(t, in_shape, op != 4 && !flat);
    const std::int64_t n = numel(in_shape);
    const int dim = nd == 0 ? 0 : int(uniform(-nd, nd - 1));
    const int d0 = nd == 0 ? 0 : (dim + nd) % nd;
    const std::int64_t along = nd == 0 ? 1 : in_shape[std::size_t(d0)];
    std::string what = std::string(dtype_name(t)) + " " + to_string(in_shape) + " dim " +
                       std::to_string(dim) + ", " + std::string(dtype_name(it)) + " indices";
    auto run = [&](const std::function<Tensor(const Tensor&, const Tensor&)>& f, const Pair& i,
                   const char* name) {
      return Result{std::string(name) + " of " + what + " " + to_string(i.host.shape()),
                    f(x.host, i.host), f(x.dev, i.dev)};
    };
    switch (op) {
      case 0: {  // index_select: a vector or 0-d (one index of a 0-d input)
        Shape s;
        if (nd == 0)
          s = coin() ? Shape{1} : Shape{};
        else if (along == 0)
          s = Shape{0};  // no index fits an empty dim
        else
          s = coin() ? Shape{uniform(0, 6)} : Shape{};
        const Pair i = index(it, s, 0, along - 1);
        return run([dim](const Tensor& a, const Tensor& b) { return ops::index_select(a, dim, b); },
                   i, "index_select");
      }
      case 1: {  // gather: no larger than the input but along dim
        Shape s = in_shape;
        for (int k = 0; k < nd; ++k)
          s[std::size_t(k)] =
              k == d0 ? (along ? uniform(0, 5) : 0) : uniform(0, in_shape[std::size_t(k)]);
        const Pair i = index(it, s, 0, along - 1);
        return run([dim](const Tensor& a, const Tensor& b) { return ops::gather(a, dim, b); }, i,
                   "gather");
      }
      case 2: {  // take_along_dim: broadcast in the other dims, or both flattened
        if (flat) {
          const Pair i = index(it, {n ? uniform(0, 8) : 0}, 0, n - 1);
          return run([](const Tensor& a, const Tensor& b) { return ops::take_along_dim(a, b); }, i,
                     "take_along_dim (flattened)");
        }
        Shape s = in_shape;
        for (int k = 0; k < nd; ++k)
          if (k == d0)
            s[std::size_t(k)] = along ? uniform(1, 4) : 0;
          else if (coin())
            s[std::size_t(k)] = 1;
        const Pair i = index(it, s, 0, along - 1);
        return run(
            [dim](const Tensor& a, const Tensor& b) { return ops::take_along_dim(a, b, dim); }, i,
            "take_along_dim");
      }
      case 3: {  // embedding: x is the weight; indices of 0 to 3 dims
        if (in_shape[0] == 0) return one(t, it);  // no row to pick: draw again
        const Pair i = index(it, shape(int(uniform(0, 3)), 1, 4), 0, in_shape[0] - 1);
        return run([](const Tensor& w, const Tensor& b) { return ops::embedding(b, w); }, i,
                   "embedding");
      }
      default: {  // take: negative indices count from the end
        const Pair i = index(it, n ? shape(int(uniform(0, 3)), 1, 4) : Shape{0}, -n, n - 1);
        return run([](const Tensor& a, const Tensor& b) { return ops::take(a, b); }, i, "take");
      }
    }
  }
};

// 100 random reads on `d` (dtypes it holds), each exactly the host's; the seed is printed.
void check_random_reads(const Device& d, std::uint64_t seed) {
  CAPTURE(seed);
  RandomReads r{std::mt19937_64(seed), d};
  int ran = 0;
  while (ran < 100) {
    const DType t = kAllDTypes[std::size_t(r.uniform(0, kNumDTypes - 1))];
    const DType it = r.coin() ? DType::kInt64 : DType::kInt32;
    RandomReads::Result res;
    try {
      res = r.one(t, it);
    } catch (const Unsupported&) {  // a dtype the device does not hold: draw another
      continue;
    }
    ++ran;
    CAPTURE(ran);
    CAPTURE(res.what);
    REQUIRE(res.got.shape() == res.want.shape());
    REQUIRE(res.got.dtype() == res.want.dtype());
    CHECK(bytes_of(res.got) == bytes_of(res.want));
  }
}

}  // namespace

TEST_CASE("every index read with one bad index raises DeviceFault naming it exactly") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (const BadCase& c : bad_cases()) {
      for (DType t : {DType::kInt64, DType::kInt32}) {
        const std::string what = c.what, index_dtype(dtype_name(t));
        CAPTURE(what);
        CAPTURE(index_dtype);
        const std::string low = std::string(c.op) == "take" ? std::to_string(-c.bound) : "0";
        testing::expect_fault(d, {c.op, c.index, c.bound, c.position, low},
                              [&] { return c.run(d, t); });
      }
    }
    // The device stays usable: 100 random reads match the host.
    check_random_reads(d, 0x9e3779b97f4a7c15ull ^ std::hash<std::string>{}(d.str()));
  }
}

TEST_CASE("a fault inside a sequence names the bad op; the good ones before it are intact") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = grid(d);
    Tensor before, after;
    std::optional<DeviceFault> fault;
    try {
      before = ops::gather(x, 1, ids({3, 0, 1, 1, 2, 0}, {3, 2}, d, DType::kInt64));
      (void)ops::take(x, ids({2, 12, 5}, {3}, d, DType::kInt32));
      after = ops::index_select(x, 0, ids({2, 0}, {2}, d, DType::kInt64));
      d.synchronize();
    } catch (const DeviceFault& f) {
      fault = f;
    }
    REQUIRE(fault.has_value());
    CHECK(fault->op() == "take");
    CHECK(fault->index() == 12);
    CHECK(fault->bound() == 12);
    CHECK(fault->position() == 1);
    CHECK(before.to_host<float>() == F{3.5f, 0.5f, 5.5f, 5.5f, 10.5f, 8.5f});
    if (after.defined())  // the host stopped at the fault; a GPU ran the last op too
      CHECK(after.to_host<float>() == F{8.5f, 9.5f, 10.5f, 11.5f, 0.5f, 1.5f, 2.5f, 3.5f});

    // Two bad ops in a row: the first is the one raised, and nothing is left over after it.
    fault.reset();
    try {
      (void)ops::embedding(ids({0, 7}, {2}, d, DType::kInt64), table(d));
      (void)ops::gather(x, 0, ids({-1}, {1, 1}, d, DType::kInt32));
      d.synchronize();
    } catch (const DeviceFault& f) {
      fault = f;
    }
    REQUIRE(fault.has_value());
    CHECK(fault->op() == "embedding");
    CHECK(fault->index() == 7);
    CHECK(fault->position() == 1);
    CHECK_NOTHROW(d.synchronize());
    CHECK(ops::take(x, ids({-1, 0}, {2}, d, DType::kInt32)).to_host<float>() == F{11.5f, 0.5f});
  }
}
