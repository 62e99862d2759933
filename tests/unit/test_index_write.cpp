// The index writes (core/ops/index_write.hpp: scatter, scatter_add, scatter_reduce, index_add,
// index_copy, index_fill, index_put, masked_scatter, masked_select, nonzero, one_hot,
// bincount, searchsorted, bucketize) on every present device against hand-computed values
// (each checked against PyTorch 1.13): duplicates, negative indices where the op wraps,
// strided, transposed and expanded index and source views, int32 and int64 indices, 0-size and
// 0-d tensors, every reduction with include_self true and false, NaN in amax/amin, bool masks
// and broadcast index tuples, searchsorted with NaN and ±0; argument errors (InvalidArgument),
// and the deterministic mode: float32 sums with many duplicates bit for bit the host's on every
// device, assignments the last write. The "overlay:" cases run again without int64 / fp64.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/ops/index_write.hpp"
#include "nbx/nbx.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {
using D = std::vector<double>;
using F = std::vector<float>;
using I64 = std::vector<std::int64_t>;
using I32 = std::vector<std::int32_t>;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
constexpr DType f32 = DType::kFloat32, f64 = DType::kFloat64, i32 = DType::kInt32,
                i64 = DType::kInt64, b8 = DType::kBool;

// `v` as `t` on `d` (converted on the host first: a device without fp64 still takes it).
Tensor on(const D& v, const Shape& s, const Device& d, DType t = f32) {
  return Tensor::from_host(v, s).to(t).to(d);
}
Tensor ids(const I64& v, const Shape& s, const Device& d, DType t = i64) {
  return Tensor::from_host(v, s).to(t).to(d);
}
Tensor mask(const std::vector<bool>& v, const Shape& s, const Device& d) {
  return Tensor::from_host(v, s).to(d);
}
// A result's values as doubles (through the host: the device may lack fp64).
D vals(const Tensor& t) {
  return t.to(host_device()).contiguous().to(f64).to_host<double>();
}
I64 ints(const Tensor& t) {
  return t.to(host_device()).contiguous().to(i64).to_host<std::int64_t>();
}
// Equal element by element, NaN equal to NaN.
bool same(const D& a, const D& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!(a[k] == b[k] || (std::isnan(a[k]) && std::isnan(b[k])))) return false;
  return true;
}
std::vector<std::byte> bytes_of(const Tensor& t) {
  std::vector<std::byte> b(std::size_t(t.numel()) * t.itemsize());
  if (!b.empty()) t.to(host_device()).contiguous().copy_to_host(b.data());
  return b;
}

// Restores the deterministic flag and NBX_SCATTER when a case ends.
struct ModeGuard {
  bool was = deterministic_algorithms();
  std::string env = std::getenv("NBX_SCATTER") ? std::getenv("NBX_SCATTER") : "";
  bool had_env = std::getenv("NBX_SCATTER") != nullptr;
  ~ModeGuard() {
    set_deterministic_algorithms(was);
    if (had_env)
      setenv("NBX_SCATTER", env.c_str(), 1);
    else
      unsetenv("NBX_SCATTER");
  }
};
void deterministic(bool on) {
  set_deterministic_algorithms(on);
  unsetenv("NBX_SCATTER");
}

// A throw of InvalidArgument or DeviceFault (a value check PyTorch makes on the host that a
// device may make in its kernel: a negative count, a class past num_classes).
bool refused(const std::function<void(void)>& f, const Device& d) {
  try {
    f();
    d.synchronize();
  } catch (const InvalidArgument&) {
    return true;
  } catch (const DeviceFault&) {
    return true;
  }
  return false;
}
}  // namespace

TEST_CASE("scatter assigns along a dim, from views, with int32 and int64 indices") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor self = on({10, 11, 12, 13, 14, 15, 16, 17}, {2, 4}, d);
    const Tensor src = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    for (DType t : {i32, i64}) {
      CAPTURE(dtype_name(t));
      // self[i][index[i][j]] = src[i][j]: the index [2, 2] of a [2, 3] source.
      const Tensor r = ops::scatter(self, 1, ids({3, 0, 1, 2}, {2, 2}, d, t), src);
      CHECK(r.shape() == Shape{2, 4});
      CHECK(r.dtype() == f32);
      CHECK(vals(r) == D{2, 11, 12, 1, 14, 4, 5, 17});
      CHECK(vals(ops::scatter(self, -1, ids({3, 0, 1, 2}, {2, 2}, d, t), src)) ==
            D{2, 11, 12, 1, 14, 4, 5, 17});
      // Along dim 0: self[index[0][j]][j] = src[0][j].
      const Tensor src4 = on({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}, d);
      CHECK(vals(ops::scatter(self, 0, ids({1, 0, 1, 0}, {1, 4}, d, t), src4)) ==
            D{10, 2, 12, 4, 1, 15, 3, 17});
      // A scalar value.
      CHECK(vals(ops::scatter(self, 1, ids({3, 1}, {2, 1}, d, t), Scalar(9.5))) ==
            D{10, 11, 12, 9.5, 14, 9.5, 16, 17});
    }
    // The input is not written by the out-of-place form.
    CHECK(vals(self) == D{10, 11, 12, 13, 14, 15, 16, 17});
    // A transposed index ([[3, 1], [0, 2]] viewed as [[3, 0], [1, 2]]) and a strided source
    // (every other column of [[1, 0, 2, 0, 3, 0], [4, 0, 5, 0, 6, 0]]).
    const Tensor tidx = ids({3, 1, 0, 2}, {2, 2}, d).transpose(0, 1);
    const Tensor ssrc = on({1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}, {2, 6}, d).slice(1, 0, 6, 2);
    CHECK(vals(ops::scatter(self, 1, tidx, ssrc)) == D{2, 11, 12, 1, 14, 4, 5, 17});
    // An expanded index: [1, 3] to both rows; an expanded (stride-0) source column.
    const Tensor eidx = ids({1, 3}, {1, 2}, d, i32).expand({2, 2});
    const Tensor esrc = on({7, 8}, {2, 1}, d).expand({2, 3});
    CHECK(vals(ops::scatter(self, 1, eidx, esrc)) == D{10, 7, 12, 7, 14, 8, 16, 8});
    // The in-place form writes through self's strides: a transposed view.
    const Tensor base = on({10, 11, 12, 13, 14, 15}, {2, 3}, d);
    const Tensor tv = base.transpose(0, 1);  // [[10, 13], [11, 14], [12, 15]]
    const Tensor same_tv = ops::scatter_(tv, 0, ids({2, 0}, {1, 2}, d), on({-1, -2}, {1, 2}, d));
    CHECK(same_tv.storage() == base.storage());
    CHECK(vals(base) == D{10, 11, -1, -2, 14, 15});
    // Other dtypes: int64, bool, float16.
    CHECK(ints(ops::scatter(on({1, 2, 3}, {3}, d, i64), 0, ids({2, 0}, {2}, d),
                            on({-5, 7}, {2}, d, i64))) == I64{7, 2, -5});
    CHECK(ints(ops::scatter(on({0, 0, 1}, {3}, d, b8), 0, ids({0, 2}, {2}, d),
                            on({1, 0}, {2}, d, b8))) == I64{1, 0, 0});
    CHECK(vals(ops::scatter(on({0.5, 1.5, 2.5}, {3}, d, DType::kFloat16), 0, ids({1}, {1}, d),
                            Scalar(-0.25))) == D{0.5, -0.25, 2.5});
    // 0-d: self, index and src all 0-d.
    const Tensor z = ops::scatter(on({1}, {}, d), 0, ids({0}, {}, d), on({5}, {}, d));
    CHECK(z.shape() == Shape{});
    CHECK(vals(z) == D{5});
    // An empty index writes nothing; an empty self takes an empty index.
    CHECK(vals(ops::scatter(self, 1, ids({}, {2, 0}, d), src)) == vals(self));
    CHECK(ops::scatter(Tensor::empty({0, 3}, f32, d), 0, ids({}, {0, 3}, d),
                       Tensor::empty({0, 3}, f32, d))
              .shape() == Shape{0, 3});
  }
}

TEST_CASE("scatter with reduce add and multiply accumulates duplicates") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor self = on({10, 11, 12, 13, 14, 15, 16, 17}, {2, 4}, d);
    const Tensor src = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    const Tensor idx = ids({0, 0, 3, 2, 2, 2}, {2, 3}, d);
    CHECK(vals(ops::scatter(self, 1, idx, src, "add")) == D{13, 11, 12, 16, 14, 15, 31, 17});
    CHECK(vals(ops::scatter(self, 1, idx, src, "multiply")) == D{20, 11, 12, 39, 14, 15, 1920, 17});
    CHECK(vals(ops::scatter(self, 1, idx, Scalar(2), "add")) == D{14, 11, 12, 15, 14, 15, 22, 17});
    CHECK(vals(ops::scatter(self, 1, idx, Scalar(2), "multiply")) ==
          D{40, 11, 12, 26, 14, 15, 128, 17});
    // scatter_add: int32 self and source, int32 indices, wrapping arithmetic.
    const Tensor si = on({1, 2, 3}, {3}, d, i32);
    CHECK(ints(ops::scatter_add(si, 0, ids({2, 2, 0, 2}, {4}, d, i32),
                                on({1, 1, 5, 1}, {4}, d, i32))) == I64{6, 2, 6});
    CHECK(ints(ops::scatter_add(on({2147483647}, {1}, d, i32), 0, ids({0}, {1}, d),
                                on({1}, {1}, d, i32))) == I64{-2147483648LL});
    // scatter_add_ in place, 2-d along dim 0 with an index smaller than src.
    const Tensor m = on({1, 2, 3, 4, 5, 6}, {3, 2}, d);
    ops::scatter_add_(m, 0, ids({2, 0, 2, 2}, {2, 2}, d), on({10, 20, 30, 40, 50, 60}, {3, 2}, d));
    CHECK(vals(m) == D{1, 22, 3, 4, 45, 46});
    // bool: add is or.
    CHECK(ints(ops::scatter_add(on({0, 1, 0}, {3}, d, b8), 0, ids({0, 0, 2}, {3}, d),
                                on({1, 1, 0}, {3}, d, b8))) == I64{1, 1, 0});
  }
}

TEST_CASE("scatter_reduce: every reduction, include_self true and false") {
  // self [5, -2, 7, 1], sources [2, 3, -4, 6, 2, 8] into [0, 2, 0, 3, 2, 0]: destination 0
  // takes {2, -4, 8}, 2 takes {3, 2}, 3 takes {6}, 1 none.
  struct Want {
    const char* reduce;
    bool include_self;
    D floats;
    I64 integers;
  };
  const std::vector<Want> wants = {
      {"sum", true, {11, -2, 12, 7}, {11, -2, 12, 7}},
      {"sum", false, {6, -2, 5, 6}, {6, -2, 5, 6}},
      {"prod", true, {-320, -2, 42, 6}, {-320, -2, 42, 6}},
      {"prod", false, {-64, -2, 6, 6}, {-64, -2, 6, 6}},
      {"mean", true, {2.75, -2, 4, 3.5}, {2, -2, 4, 3}},
      {"mean", false, {2, -2, 2.5, 6}, {2, -2, 2, 6}},
      {"amax", true, {8, -2, 7, 6}, {8, -2, 7, 6}},
      {"amax", false, {8, -2, 3, 6}, {8, -2, 3, 6}},
      {"amin", true, {-4, -2, 2, 1}, {-4, -2, 2, 1}},
      {"amin", false, {-4, -2, 2, 6}, {-4, -2, 2, 6}},
  };
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (const Want& w : wants) {
      CAPTURE(w.reduce);
      CAPTURE(w.include_self);
      for (DType it : {i32, i64}) {
        const Tensor idx = ids({0, 2, 0, 3, 2, 0}, {6}, d, it);
        for (DType t : {f32, f64, DType::kFloat16, DType::kBFloat16}) {
          CAPTURE(dtype_name(t));
          const Tensor r =
              ops::scatter_reduce(on({5, -2, 7, 1}, {4}, d, t), 0, idx,
                                  on({2, 3, -4, 6, 2, 8}, {6}, d, t), w.reduce, w.include_self);
          CHECK(r.dtype() == t);
          CHECK(vals(r) == w.floats);
        }
        for (DType t : {i32, i64, DType::kInt16}) {
          CAPTURE(dtype_name(t));
          const Tensor r =
              ops::scatter_reduce(on({5, -2, 7, 1}, {4}, d, t), 0, idx,
                                  on({2, 3, -4, 6, 2, 8}, {6}, d, t), w.reduce, w.include_self);
          CHECK(ints(r) == w.integers);
        }
      }
    }
    // Integer mean floor-divides: (-7 + 2 + 0) / 3 = -5/3 → -2, (3 - 6) / 2 → -2.
    CHECK(ints(ops::scatter_reduce(on({-7, 0, 3}, {3}, d, i32), 0, ids({0, 0, 2}, {3}, d),
                                   on({2, 0, -6}, {3}, d, i32), "mean")) == I64{-2, 0, -2});
    CHECK(ints(ops::scatter_reduce(on({-7, 0, 3}, {3}, d, i64), 0, ids({0, 2, 2}, {3}, d),
                                   on({9, -4, -1}, {3}, d, i64), "mean", false)) == I64{9, 0, -3});
    // NaN wins amax and amin, from the source or from self (include_self).
    const Tensor nan_src = on({kNaN, 3, 0.5}, {3}, d);
    const Tensor nidx = ids({0, 0, 1}, {3}, d);
    CHECK(
        same(vals(ops::scatter_reduce(on({1, 2}, {2}, d), 0, nidx, nan_src, "amax")), D{kNaN, 2}));
    CHECK(same(vals(ops::scatter_reduce(on({1, 2}, {2}, d), 0, nidx, nan_src, "amin")),
               D{kNaN, 0.5}));
    CHECK(same(vals(ops::scatter_reduce(on({kNaN, 2}, {2}, d), 0, ids({0}, {1}, d), on({3}, {1}, d),
                                        "amax")),
               D{kNaN, 2}));
    CHECK(same(vals(ops::scatter_reduce(on({kNaN, 2}, {2}, d), 0, ids({0}, {1}, d), on({3}, {1}, d),
                                        "amax", false)),
               D{3, 2}));
    CHECK(same(vals(ops::scatter_reduce(on({kNaN, 2}, {2}, d), 0, ids({0, 1}, {2}, d),
                                        on({-kInf, kInf}, {2}, d), "amin", false)),
               D{-kInf, kInf}));
    // 2-d along dim 0 through a transposed self (in place), an index smaller than src.
    const Tensor base = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    ops::scatter_reduce_(base.transpose(0, 1), 0, ids({2, 2}, {1, 2}, d),
                         on({10, 20, 30, 40}, {2, 2}, d), "sum");
    CHECK(vals(base) == D{1, 2, 13, 4, 5, 26});
    // bool: sum is or, prod is and, amax/amin are or/and.
    CHECK(ints(ops::scatter_reduce(on({0, 1}, {2}, d, b8), 0, ids({0, 1}, {2}, d),
                                   on({1, 0}, {2}, d, b8), "prod")) == I64{0, 0});
    CHECK(ints(ops::scatter_reduce(on({0, 1}, {2}, d, b8), 0, ids({0, 1}, {2}, d),
                                   on({1, 0}, {2}, d, b8), "amax")) == I64{1, 1});
  }
}

TEST_CASE("index_add, index_copy and index_fill along a dim") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor self = on({1, 2, 3, 4, 5, 6}, {3, 2}, d);
    for (DType t : {i32, i64}) {
      CAPTURE(dtype_name(t));
      // Duplicate rows accumulate, alpha scales the source.
      CHECK(vals(ops::index_add(self, 0, ids({2, 0, 2}, {3}, d, t),
                                on({10, 20, 30, 40, 50, 60}, {3, 2}, d), 2)) ==
            D{61, 82, 3, 4, 125, 166});
      CHECK(vals(ops::index_add(self, -1, ids({1, 1}, {2}, d, t),
                                on({1, 2, 3, 4, 5, 6}, {3, 2}, d))) == D{1, 5, 3, 11, 5, 17});
      CHECK(vals(ops::index_copy(self, 0, ids({2, 0}, {2}, d, t), on({7, 8, 9, 10}, {2, 2}, d))) ==
            D{9, 10, 3, 4, 7, 8});
      // index_fill wraps negative indices once: -1 is the last column, -3 the first.
      const Tensor w = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
      CHECK(vals(ops::index_fill(w, 1, ids({-1}, {1}, d, t), 9)) == D{1, 2, 9, 4, 5, 9});
      CHECK(vals(ops::index_fill(w, 1, ids({-3}, {}, d, t), 9)) == D{9, 2, 3, 9, 5, 6});
      CHECK(vals(ops::index_fill(w, 0, ids({1, 1}, {2}, d, t), -0.5)) ==
            D{1, 2, 3, -0.5, -0.5, -0.5});
    }
    // Integers: alpha an integer; int8 wraps.
    CHECK(ints(ops::index_add(on({1, 2, 3}, {3}, d, i64), 0, ids({0, 0}, {2}, d),
                              on({5, 6}, {2}, d, i64), 3)) == I64{34, 2, 3});
    CHECK(ints(ops::index_add(on({120, 0}, {2}, d, DType::kInt8), 0, ids({0, 0}, {2}, d),
                              on({5, 6}, {2}, d, DType::kInt8))) == I64{-125, 0});
    // In place through a transposed view, from a strided source and an expanded index.
    const Tensor base = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    const Tensor tv = base.transpose(0, 1);  // [[1, 4], [2, 5], [3, 6]]
    const Tensor ssrc = on({10, 0, 20, 0, 30, 0, 40, 0}, {2, 4}, d).slice(1, 0, 4, 2);
    ops::index_add_(tv, 0, ids({1}, {1}, d).expand({2}), ssrc);  // rows 1 += [10,20] + [30,40]
    CHECK(vals(base) == D{1, 42, 3, 4, 65, 6});
    ops::index_copy_(tv, 1, ids({0}, {1}, d, i32), on({-1, -2, -3}, {3, 1}, d));
    CHECK(vals(base) == D{-1, -2, -3, 4, 65, 6});
    ops::index_fill_(tv, 0, ids({2, 0}, {2}, d), Scalar(7));
    CHECK(vals(base) == D{7, -2, 7, 7, 65, 7});
    // 0-d self: index_add, index_copy and index_fill with a 0-d or one-element index.
    CHECK(vals(ops::index_add(on({2}, {}, d), 0, ids({0}, {1}, d), on({3}, {}, d))) == D{5});
    CHECK(vals(ops::index_copy(on({2}, {}, d), 0, ids({0}, {}, d), on({3}, {}, d))) == D{3});
    CHECK(vals(ops::index_fill(on({2}, {}, d), 0, ids({0}, {}, d), 8)) == D{8});
    // Empty indices write nothing; an empty dim of self.
    CHECK(vals(ops::index_add(self, 0, ids({}, {0}, d), Tensor::empty({0, 2}, f32, d))) ==
          vals(self));
    CHECK(vals(ops::index_fill(self, 1, ids({}, {0}, d), 5)) == vals(self));
    CHECK(ops::index_copy(Tensor::empty({3, 0}, f32, d), 0, ids({1}, {1}, d),
                          Tensor::empty({1, 0}, f32, d))
              .shape() == Shape{3, 0});
    // Other dtypes: bool index_fill, float16 index_add, bfloat16 index_copy.
    CHECK(ints(ops::index_fill(on({0, 0, 0}, {3}, d, b8), 0, ids({1}, {1}, d), true)) ==
          I64{0, 1, 0});
    CHECK(vals(ops::index_add(on({0.5, 1}, {2}, d, DType::kFloat16), 0, ids({1, 1}, {2}, d),
                              on({0.25, 0.25}, {2}, d, DType::kFloat16))) == D{0.5, 1.5});
    CHECK(vals(ops::index_copy(on({0.5, 1}, {2}, d, DType::kBFloat16), 0, ids({0}, {1}, d),
                               on({-3}, {1}, d, DType::kBFloat16))) == D{-3, 1});
  }
}

TEST_CASE("index_put: index tuples broadcast, masks, undefined dims, accumulate") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    D a(12);
    for (int k = 0; k < 12; ++k) a[std::size_t(k)] = k;
    const Tensor x = on(a, {3, 4}, d);  // [[0, 1, 2, 3], [4, …], [8, …, 11]]
    for (DType t : {i32, i64}) {
      CAPTURE(dtype_name(t));
      // Two index vectors: x[0][1] = 100, x[2][3] = 200.
      CHECK(vals(ops::index_put(x, {ids({0, 2}, {2}, d, t), ids({1, 3}, {2}, d, t)},
                                on({100, 200}, {2}, d))) ==
            D{0, 100, 2, 3, 4, 5, 6, 7, 8, 9, 10, 200});
      // [[0], [2]] and [1, 3] broadcast to 2 × 2 positions; a 0-d value.
      CHECK(vals(ops::index_put(x, {ids({0, 2}, {2, 1}, d, t), ids({1, 3}, {2}, d, t)},
                                on({7}, {}, d))) == D{0, 7, 2, 7, 4, 5, 6, 7, 8, 7, 10, 7});
      // A negative index wraps once: row -1 is row 2; values broadcast along the row.
      CHECK(vals(ops::index_put(x, {ids({-1}, {1}, d, t)}, on({1, 2, 3, 4}, {4}, d))) ==
            D{0, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4});
      // [3, 1] rows with [0, 2] columns, values [3, 2].
      CHECK(vals(ops::index_put(x, {ids({0, 1, 2}, {3, 1}, d, t), ids({0, 2}, {2}, d, t)},
                                on({1, 2, 3, 4, 5, 6}, {3, 2}, d))) ==
            D{1, 1, 2, 3, 3, 5, 4, 7, 5, 9, 6, 11});
    }
    // A bool mask over the first dim: rows 0 and 2.
    CHECK(vals(ops::index_put(x, {mask({true, false, true}, {3}, d)}, on({-1}, {}, d))) ==
          D{-1, -1, -1, -1, 4, 5, 6, 7, -1, -1, -1, -1});
    // A mask with an index tensor: (0, 0) and (2, 3).
    CHECK(vals(ops::index_put(x, {mask({true, false, true}, {3}, d), ids({0, 3}, {2}, d)},
                              on({50, 60}, {2}, d))) == D{50, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 60});
    // A full 2-d mask takes the values in row-major order.
    const Tensor mk = mask(
        {true, false, true, false, false, false, true, true, true, true, false, false}, {3, 4}, d);
    CHECK(vals(ops::index_put(x, {mk}, on({-1, -2, -3, -4, -5, -6}, {6}, d))) ==
          D{-1, 1, -2, 3, 4, 5, -3, -4, -5, -6, 10, 11});
    // A uint8 mask stands for its nonzero coordinates as well.
    CHECK(vals(ops::index_put(x, {on({0, 1, 0}, {3}, d, DType::kUInt8)}, on({9}, {}, d))) ==
          D{0, 1, 2, 3, 9, 9, 9, 9, 8, 9, 10, 11});
    // An undefined tensor takes the whole dim: x[:, [1, 3]] = [100, 200].
    CHECK(vals(ops::index_put(x, {Tensor(), ids({1, 3}, {2}, d)}, on({100, 200}, {2}, d))) ==
          D{0, 100, 2, 200, 4, 100, 6, 200, 8, 100, 10, 200});
    // accumulate with duplicates: [10, 20, 30] at [1, 1, 1, 0] += [1, 2, 3, 4].
    CHECK(vals(ops::index_put(on({10, 20, 30}, {3}, d), {ids({1, 1, 1, 0}, {4}, d)},
                              on({1, 2, 3, 4}, {4}, d), true)) == D{14, 26, 30});
    CHECK(ints(ops::index_put(on({10, 20, 30}, {3}, d, i32), {ids({-1, 2, 0}, {3}, d, i32)},
                              on({5}, {}, d, i32), true)) == I64{15, 20, 40});
    // accumulate with a mask: every selected element + its value.
    CHECK(vals(ops::index_put(x, {mk}, on({1}, {}, d), true)) ==
          D{1, 1, 3, 3, 4, 5, 7, 8, 9, 10, 10, 11});
    // Strided / transposed index tensors and an expanded value.
    const Tensor sidx = ids({2, -9, 0, -9}, {4}, d).slice(0, 0, 4, 2);  // [2, 0]
    const Tensor tj = ids({1, 3, 0, 2}, {2, 2}, d).transpose(0, 1);     // [[1, 0], [3, 2]]
    CHECK(vals(ops::index_put(x, {sidx.unsqueeze(1), tj.narrow(0, 0, 1)},
                              on({5}, {1}, d).expand({2, 2}))) ==
          D{5, 5, 2, 3, 4, 5, 6, 7, 5, 5, 10, 11});
    // In place through a transposed self.
    const Tensor base = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    const Tensor r = ops::index_put_(base.transpose(0, 1), {ids({2}, {1}, d)}, on({8, 9}, {2}, d));
    CHECK(r.storage() == base.storage());
    CHECK(vals(base) == D{1, 2, 8, 4, 5, 9});
    // Empty index lists and an empty mask write nothing.
    CHECK(vals(ops::index_put(x, {ids({}, {0}, d)}, on({1}, {}, d))) == a);
    CHECK(vals(ops::index_put(x, {mask({false, false, false}, {3}, d)}, on({1}, {}, d), true)) ==
          a);
    // bool and int8 selves.
    CHECK(ints(ops::index_put(on({0, 0, 1}, {3}, d, b8), {ids({0}, {1}, d)}, on({1}, {}, d, b8))) ==
          I64{1, 0, 1});
    CHECK(ints(ops::index_put(on({1, 2, 3}, {3}, d, DType::kInt8), {ids({2, 2}, {2}, d)},
                              on({100, 100}, {2}, d, DType::kInt8), true)) == I64{1, 2, -53});
  }
}

TEST_CASE("masked_scatter and masked_select with broadcast masks") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor a = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    // A [3] mask over both rows: (0,0), (0,2), (1,0), (1,2) take 10, 20, 30, 40 in order.
    CHECK(vals(ops::masked_scatter(a, mask({true, false, true}, {3}, d),
                                   on({10, 20, 30, 40, 50}, {5}, d))) == D{10, 2, 20, 30, 5, 40});
    // A [2, 1] mask: the whole first row; a 2-d source read in row-major order.
    CHECK(vals(ops::masked_scatter(a, mask({true, false}, {2, 1}, d),
                                   on({10, 20, 30, 40}, {2, 2}, d))) == D{10, 20, 30, 4, 5, 6});
    // A transposed source, ints.
    CHECK(ints(ops::masked_scatter(
              on({1, 2, 3, 4}, {4}, d, i64), mask({false, true, true, false}, {4}, d),
              on({7, 8, 9, 10}, {2, 2}, d, i64).transpose(0, 1))) == I64{1, 7, 9, 4});
    // In place through a transposed self: (0,0), (1,0), (2,0) of the view, i.e. row 0 of a.
    const Tensor base = on({1, 2, 3, 4, 5, 6}, {2, 3}, d);
    ops::masked_scatter_(base.transpose(0, 1), mask({true, false}, {2}, d),
                         on({-1, -2, -3}, {3}, d));
    CHECK(vals(base) == D{-1, -2, -3, 4, 5, 6});
    // An all-false mask needs no source at all.
    CHECK(vals(ops::masked_scatter(a, mask({false, false, false}, {3}, d),
                                   Tensor::empty({0}, f32, d))) == vals(a));
    // 0-d self and mask.
    CHECK(vals(ops::masked_scatter(on({3}, {}, d), mask({true}, {}, d), on({8, 9}, {2}, d))) ==
          D{8});

    // masked_select: the selected elements, 1-d.
    const Tensor s = ops::masked_select(a, mask({true, false, true}, {3}, d));
    CHECK(s.shape() == Shape{4});
    CHECK(vals(s) == D{1, 3, 4, 6});
    // Self broadcasts against a larger mask too.
    CHECK(vals(ops::masked_select(on({1, 2, 3}, {3}, d),
                                  mask({true, false, true, false, true, false}, {2, 3}, d))) ==
          D{1, 3, 2});
    CHECK(vals(ops::masked_select(a.transpose(0, 1), mask({false, true}, {2}, d))) == D{4, 5, 6});
    CHECK(ops::masked_select(a, mask({false, false, false}, {3}, d)).shape() == Shape{0});
    const Tensor zs = ops::masked_select(on({5}, {}, d), mask({true}, {}, d));
    CHECK(zs.shape() == Shape{1});
    CHECK(vals(zs) == D{5});
    CHECK(ops::masked_select(Tensor::empty({0, 3}, f32, d), mask({true, true, true}, {3}, d))
              .shape() == Shape{0});
    // NaN and -0 are copied.
    const D got =
        vals(ops::masked_select(on({kNaN, -0.0, 1}, {3}, d), mask({true, true, false}, {3}, d)));
    CHECK(std::isnan(got[0]));
    CHECK(std::signbit(got[1]));
    // Errors: the source too small; a float mask; shapes that do not broadcast.
    CHECK_THROWS_AS((void)vals(ops::masked_scatter(a, mask({true, false, true}, {3}, d),
                                                   on({10, 20, 30}, {3}, d))),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::masked_select(a, on({1, 0, 1}, {3}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::masked_select(a, mask({true, false}, {2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::masked_scatter(a, mask({true, false}, {2}, d), on({1, 2, 3}, {3}, d)),
                    InvalidArgument);
    CHECK_THROWS_AS(
        ops::masked_scatter(a, mask({true, false, true}, {3}, d), on({1, 2, 3, 4}, {4}, d, i32)),
        InvalidArgument);
  }
}

TEST_CASE("nonzero, nonzero_tuple and argwhere: row-major coordinates, 0-d and empty") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = on({0, 2, 0, 3, 0, -1}, {2, 3}, d);
    const Tensor n = ops::nonzero(x);
    CHECK(n.dtype() == i64);
    CHECK(n.shape() == Shape{3, 2});
    CHECK(ints(n) == I64{0, 1, 1, 0, 1, 2});
    CHECK(ints(ops::argwhere(x)) == I64{0, 1, 1, 0, 1, 2});
    const std::vector<Tensor> tup = ops::nonzero_tuple(x);
    REQUIRE(tup.size() == 2);
    CHECK(ints(tup[0]) == I64{0, 1, 1});
    CHECK(ints(tup[1]) == I64{1, 0, 2});
    // -0 is zero, NaN is not; a transposed view in its own row-major order.
    CHECK(ints(ops::nonzero(on({-0.0, kNaN, 0, 0.5}, {4}, d))) == I64{1, 3});
    CHECK(ints(ops::nonzero(x.transpose(0, 1))) == I64{0, 1, 1, 0, 2, 1});
    for (DType t : {b8, DType::kInt8, DType::kUInt8, DType::kInt16, i32, i64, DType::kFloat16,
                    DType::kBFloat16, f64}) {
      CAPTURE(dtype_name(t));
      CHECK(ints(ops::nonzero(on({0, 1, 1, 0, 0, 1}, {3, 2}, d, t))) == I64{0, 1, 1, 0, 2, 1});
    }
    // 0-d: [1, 0] for a non-zero, [0, 0] for a zero; the tuple form treats it as 1-d.
    CHECK(ops::nonzero(on({5}, {}, d)).shape() == Shape{1, 0});
    CHECK(ops::nonzero(on({0}, {}, d)).shape() == Shape{0, 0});
    CHECK(ops::argwhere(on({5}, {}, d)).shape() == Shape{1, 0});
    const std::vector<Tensor> z = ops::nonzero_tuple(on({5}, {}, d));
    REQUIRE(z.size() == 1);
    CHECK(ints(z[0]) == I64{0});
    const std::vector<Tensor> z0 = ops::nonzero_tuple(on({0}, {}, d));
    REQUIRE(z0.size() == 1);
    CHECK(z0[0].shape() == Shape{0});
    // Empty inputs and all zeros.
    CHECK(ops::nonzero(Tensor::empty({0, 3}, f32, d)).shape() == Shape{0, 2});
    CHECK(ops::nonzero(on({0, 0, 0, 0}, {2, 1, 2}, d)).shape() == Shape{0, 3});
    // Many elements: every third of 5000.
    D big(5000, 0.0);
    for (std::size_t k = 0; k < big.size(); k += 3) big[k] = 1.5;
    const I64 got = ints(ops::nonzero(on(big, {5000}, d)));
    REQUIRE(got.size() == 1667);
    bool ok = true;
    for (std::size_t k = 0; k < got.size(); ++k) ok = ok && got[k] == std::int64_t(3 * k);
    CHECK(ok);
  }
}

TEST_CASE("one_hot and bincount") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = ids({2, 0, 1}, {3}, d);
    const Tensor h = ops::one_hot(x, 4);
    CHECK(h.dtype() == i64);
    CHECK(h.shape() == Shape{3, 4});
    CHECK(ints(h) == I64{0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0});
    // -1: max + 1 classes.
    CHECK(ops::one_hot(x).shape() == Shape{3, 3});
    CHECK(ints(ops::one_hot(x, -1)) == I64{0, 0, 1, 1, 0, 0, 0, 1, 0});
    // 2-d and transposed inputs, a 0-d input, an empty input with num_classes.
    const Tensor m = ids({1, 0, 3, 1}, {2, 2}, d).transpose(0, 1);  // [[1, 3], [0, 1]]
    CHECK(ops::one_hot(m, 4).shape() == Shape{2, 2, 4});
    CHECK(ints(ops::one_hot(m, 4)) == I64{0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0});
    CHECK(ints(ops::one_hot(ids({2}, {}, d))) == I64{0, 0, 1});
    CHECK(ops::one_hot(ids({}, {0}, d), 3).shape() == Shape{0, 3});
    CHECK_THROWS_AS(ops::one_hot(ids({}, {0}, d)), InvalidArgument);  // no max to infer from
    CHECK_THROWS_AS(ops::one_hot(on({1, 0}, {2}, d)), InvalidArgument);
    CHECK(refused([&] { (void)ints(ops::one_hot(ids({0, -1}, {2}, d), 3)); }, d));
    CHECK(refused([&] { (void)ints(ops::one_hot(ids({0, 3}, {2}, d), 3)); }, d));
    CHECK(refused([&] { (void)ints(ops::one_hot(ids({0, -2}, {2}, d))); }, d));

    // bincount: counts, minlength, weights (float32 stays float32, others give float64).
    const Tensor v = ids({1, 1, 3}, {3}, d);
    const Tensor c = ops::bincount(v);
    CHECK(c.dtype() == i64);
    CHECK(ints(c) == I64{0, 2, 0, 1});
    CHECK(ints(ops::bincount(v, {}, 6)) == I64{0, 2, 0, 1, 0, 0});
    CHECK(ints(ops::bincount(v, {}, 2)) == I64{0, 2, 0, 1});
    const Tensor w32 = ops::bincount(v, on({0.5, 1, 2}, {3}, d));
    CHECK(w32.dtype() == f32);
    CHECK(vals(w32) == D{0, 1.5, 0, 2});
    for (DType wt : {f64, DType::kFloat16, DType::kBFloat16, i32, i64, DType::kInt8}) {
      CAPTURE(dtype_name(wt));
      const Tensor r = ops::bincount(v, on({1, 2, 4}, {3}, d, wt), 5);
      CHECK(r.dtype() == f64);
      CHECK(vals(r) == D{0, 3, 0, 4, 0});
    }
    // Other integer dtypes of x, a strided x, an empty x.
    for (DType t : {DType::kUInt8, DType::kInt8, DType::kInt16, i32}) {
      CAPTURE(dtype_name(t));
      CHECK(ints(ops::bincount(on({4, 0, 4, 4}, {4}, d, t))) == I64{1, 0, 0, 0, 3});
    }
    CHECK(ints(ops::bincount(ids({2, 9, 2, 9, 0, 9}, {6}, d).slice(0, 0, 6, 2))) == I64{1, 0, 2});
    CHECK(ops::bincount(ids({}, {0}, d)).shape() == Shape{0});
    CHECK(ints(ops::bincount(ids({}, {0}, d), {}, 3)) == I64{0, 0, 0});
    // Many counts into few bins (duplicates everywhere).
    I64 many(3000);
    for (std::size_t k = 0; k < many.size(); ++k) many[k] = std::int64_t(k % 7);
    CHECK(ints(ops::bincount(ids(many, {3000}, d))) == I64{429, 429, 429, 429, 428, 428, 428});
    // Errors: 2-d, float, bool, weights of another length, negative minlength, negative values.
    CHECK_THROWS_AS(ops::bincount(ids({1, 2}, {1, 2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::bincount(on({1, 2}, {2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::bincount(on({1, 0}, {2}, d, b8)), InvalidArgument);
    CHECK_THROWS_AS(ops::bincount(v, on({1, 2}, {2}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::bincount(v, {}, -1), InvalidArgument);
    CHECK(refused([&] { (void)ints(ops::bincount(ids({1, -1}, {2}, d))); }, d));
  }
}

TEST_CASE("searchsorted and bucketize: left and right, NaN and ±0, sorter, out_int32") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (DType t : {f32, f64, DType::kFloat16, DType::kBFloat16}) {
      CAPTURE(dtype_name(t));
      const Tensor seq = on({1, 3, 3, 5}, {4}, d, t);
      const Tensor v = on({0, 3, 4, 6, kNaN}, {5}, d, t);
      const Tensor left = ops::searchsorted(seq, v);
      CHECK(left.dtype() == i64);
      CHECK(ints(left) == I64{0, 1, 3, 4, 4});
      CHECK(ints(ops::searchsorted(seq, v, false, true)) == I64{0, 3, 3, 4, 4});
      CHECK(ints(ops::searchsorted(seq, v, false, false, "right")) == I64{0, 3, 3, 4, 4});
      CHECK(ints(ops::searchsorted(seq, v, false, true, "right")) == I64{0, 3, 3, 4, 4});
      CHECK(ints(ops::searchsorted(seq, v, false, false, "left")) == I64{0, 1, 3, 4, 4});
      // -0 equals +0: both insert before [-0, 0] on the left, after it on the right.
      const Tensor zeros = on({-0.0, 0.0, 1}, {3}, d, t);
      CHECK(ints(ops::searchsorted(zeros, on({0.0, -0.0}, {2}, d, t))) == I64{0, 0});
      CHECK(ints(ops::searchsorted(zeros, on({0.0, -0.0}, {2}, d, t), false, true)) == I64{2, 2});
      // A NaN at the end of the sequence compares false: PyTorch's loop goes right past it.
      CHECK(ints(ops::searchsorted(on({1, 2, kNaN}, {3}, d, t), on({5, kNaN, 1.5}, {3}, d, t))) ==
            I64{3, 3, 1});
      CHECK(ints(ops::searchsorted(on({-kInf, 0, kInf}, {3}, d, t), on({-kInf, kInf}, {2}, d, t),
                                   false, true)) == I64{1, 3});
    }
    // out_int32.
    const Tensor seq = on({1, 3, 3, 5}, {4}, d);
    const Tensor r32 = ops::searchsorted(seq, on({3, 9}, {2}, d), true);
    CHECK(r32.dtype() == i32);
    CHECK(ints(r32) == I64{1, 4});
    // A sorter: [5, 1, 3] sorted by [1, 2, 0].
    CHECK(ints(ops::searchsorted(on({5, 1, 3}, {3}, d), on({2, 5}, {2}, d), false, false, {},
                                 ids({1, 2, 0}, {3}, d))) == I64{1, 2});
    CHECK(ints(ops::searchsorted(on({5, 1, 3}, {3}, d), on({2, 5}, {2}, d), false, true, {},
                                 ids({1, 2, 0}, {3}, d))) == I64{1, 3});
    // Rows: a 2-d sequence with the values' leading dim; transposed values.
    const Tensor s2 = on({1, 3, 5, 2, 4, 6}, {2, 3}, d, i64);
    CHECK(ints(ops::searchsorted(s2, on({3, 3}, {2, 1}, d, i64))) == I64{1, 1});
    CHECK(ints(ops::searchsorted(s2, on({3, 3}, {2, 1}, d, i64), false, true)) == I64{2, 1});
    CHECK(ints(ops::searchsorted(s2, on({0, 6, 5, 2}, {2, 2}, d, i64).transpose(0, 1))) ==
          I64{0, 2, 2, 0});
    // A 1-d sequence with 2-d values; a scalar value (0-d result); integers.
    CHECK(ints(ops::searchsorted(seq, on({1, 2, 3, 4}, {2, 2}, d))) == I64{0, 1, 1, 3});
    const Tensor sc = ops::searchsorted(seq, Scalar(3));
    CHECK(sc.shape() == Shape{});
    CHECK(ints(sc) == I64{1});
    CHECK(ints(ops::searchsorted(seq, Scalar(3), false, true)) == I64{3});
    for (DType t : {DType::kInt8, DType::kUInt8, DType::kInt16, i32, i64}) {
      CAPTURE(dtype_name(t));
      CHECK(ints(ops::searchsorted(on({0, 2, 2, 7}, {4}, d, t), on({2, 8, 0}, {3}, d, t))) ==
            I64{1, 4, 0});
    }
    // Promotion: int64 sequence, float values.
    CHECK(ints(ops::searchsorted(on({1, 2, 3}, {3}, d, i64), on({1.5}, {1}, d))) == I64{1});
    // A strided sequence: every other element of [1, 9, 2, 9, 4, 9].
    CHECK(ints(ops::searchsorted(on({1, 9, 2, 9, 4, 9}, {6}, d).slice(0, 0, 6, 2),
                                 on({3}, {1}, d))) == I64{2});
    // An empty sequence, empty values, 0-d values.
    CHECK(ints(ops::searchsorted(on({}, {0}, d), on({3}, {1}, d))) == I64{0});
    CHECK(ops::searchsorted(seq, on({}, {0}, d)).shape() == Shape{0});
    CHECK(ints(ops::searchsorted(seq, on({4}, {}, d))) == I64{3});
    // A long sequence (5000 even numbers) and many values.
    D evens(5000), probe(300);
    for (std::size_t k = 0; k < evens.size(); ++k) evens[k] = 2.0 * double(k);
    for (std::size_t k = 0; k < probe.size(); ++k) probe[k] = double(33 * k) - 1;
    const I64 got = ints(ops::searchsorted(on(evens, {5000}, d, f64), on(probe, {300}, d, f64)));
    bool ok = true;
    for (std::size_t k = 0; k < probe.size(); ++k) {
      const double p = probe[k];
      const std::int64_t want =
          p < 0 ? 0 : std::min<std::int64_t>(5000, std::int64_t(std::ceil(p / 2)));
      ok = ok && got[k] == want;
    }
    CHECK(ok);

    // bucketize: searchsorted of x in 1-d boundaries.
    const Tensor bx = on({1, 6, 3, 9}, {2, 2}, d, i64);
    const Tensor bounds = on({1, 5, 7}, {3}, d, i64);
    CHECK(ops::bucketize(bx, bounds).shape() == Shape{2, 2});
    CHECK(ints(ops::bucketize(bx, bounds)) == I64{0, 2, 1, 3});
    CHECK(ints(ops::bucketize(bx, bounds, false, true)) == I64{1, 2, 1, 3});
    CHECK(ops::bucketize(bx, bounds, true).dtype() == i32);
    CHECK(ints(ops::bucketize(on({3}, {}, d, i64), bounds)) == I64{1});
    CHECK(ints(ops::bucketize(on({kNaN, -0.0}, {2}, d), on({-1, 0, 1}, {3}, d))) == I64{3, 1});

    // Errors.
    CHECK_THROWS_AS(ops::searchsorted(seq, on({1}, {1}, d), false, true, "left"), InvalidArgument);
    CHECK_THROWS_AS(ops::searchsorted(seq, on({1}, {1}, d), false, false, "middle"),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::searchsorted(s2, on({3, 3, 3}, {3, 1}, d, i64)), InvalidArgument);
    CHECK_THROWS_AS(ops::searchsorted(on({3}, {}, d), on({3}, {1}, d)), InvalidArgument);
    CHECK_THROWS_AS(
        ops::searchsorted(seq, on({1}, {1}, d), false, false, {}, ids({0, 1, 2, 3}, {4}, d, i32)),
        InvalidArgument);
    CHECK_THROWS_AS(
        ops::searchsorted(seq, on({1}, {1}, d), false, false, {}, ids({0, 1, 2}, {3}, d)),
        InvalidArgument);
    CHECK_THROWS_AS(ops::searchsorted(on({0, 1}, {2}, d, b8), on({1}, {1}, d, b8)),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::bucketize(on({1}, {1}, d), on({1, 2, 3, 4}, {2, 2}, d)), InvalidArgument);
  }
}

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
