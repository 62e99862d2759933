// The index writes along a dim and by index tuples (core/ops/index_write.hpp: scatter,
// scatter_add, scatter_reduce, index_add, index_copy, index_fill, index_put) on every present
// device against hand-computed values (each checked against PyTorch 1.13): duplicates,
// negative indices where the op wraps, strided, transposed and expanded index and source views,
// int32 and int64 indices, 0-size and 0-d tensors, every reduction with include_self true and
// false, NaN in amax/amin, bool masks and broadcast index tuples; and seeded long and two-dim
// writes (past several workgroups, rows of no power-of-two length) against the host's bytes.
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/unit/index_write_test_util.hpp"

using namespace nbx;
using namespace nbx::testing::index_write;

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
    // A uint8 mask stands for its nonzero coordinates as well; one value through it alone is
    // refused, as PyTorch 2.x refuses it (masked_fill_ takes bool masks only).
    const Tensor byte_mask = on({0, 1, 0}, {3}, d, DType::kUInt8);
    CHECK(vals(ops::index_put(x, {byte_mask}, on({9, 9, 9, 9}, {4}, d))) ==
          D{0, 1, 2, 3, 9, 9, 9, 9, 8, 9, 10, 11});
    CHECK_THROWS_WITH_AS(ops::index_put(x, {byte_mask}, on({9}, {}, d)),
                         doctest::Contains("only supports boolean masks"), InvalidArgument);
    CHECK(vals(ops::index_put(x, {byte_mask}, on({9}, {}, d), /*accumulate=*/true)) ==
          D{0, 1, 2, 3, 13, 14, 15, 16, 8, 9, 10, 11});
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

namespace {

// A host tensor of shape `s` and dtype `t`: seeded integers in [lo, hi] (float sums of these
// are exact, so they agree in any order of accumulation).
Tensor host_ints(std::mt19937& gen, const Shape& s, std::int64_t lo, std::int64_t hi, DType t) {
  std::uniform_int_distribution<std::int64_t> u(lo, hi);
  I64 v(std::size_t(numel(s)));
  for (std::int64_t& x : v) x = u(gen);
  return Tensor::from_host(v, s).to(t);
}

// `op` on host inputs and on their copies on `d`: the same bytes. A dtype the device does not
// hold skips the cell.
void check_like_host(const Device& d, const std::vector<Tensor>& in,
                     const std::function<Tensor(const std::vector<Tensor>&)>& op) {
  std::vector<Tensor> moved;
  try {
    for (const Tensor& t : in) moved.push_back(t.to(d));
  } catch (const Unsupported&) {
    return;
  }
  CHECK(bytes_of(op(moved)) == bytes_of(op(in)));
}

}  // namespace

TEST_CASE("long and two-dim index writes match the host: tails, duplicates, wraps, views") {
  // Lengths past several workgroups with a ragged tail, rows whose length is no power of two,
  // every reduction the Vulkan atomic variant's rows path serves (kernels/vulkan/
  // scatter_rows.comp: launches of at most two merged dims, 4 elements an invocation, the row
  // by a multiply-high divider, int64 indices as one uvec2) and a 3-dim view that merges into
  // none (scatter.comp's element form). Integer values: float sums agree in any order.
  std::mt19937 gen(20261203);
  const std::int64_t n = 2 * 4 * 256 + 77;  // two tiles of 4 × 256 elements and a ragged tail
  const DType u8 = DType::kUInt8, i16 = DType::kInt16, f16 = DType::kFloat16;
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (DType it : {i64, i32}) {
      CAPTURE(dtype_name(it));
      for (DType t : {f32, i32}) {
        CAPTURE(dtype_name(t));
        // 1-d into 50 destinations: about 40 duplicates each.
        check_like_host(
            d,
            {host_ints(gen, {50}, -20, 20, t), host_ints(gen, {n}, 0, 49, it),
             host_ints(gen, {n}, -8, 8, t)},
            [](const std::vector<Tensor>& x) { return ops::scatter_add(x[0], 0, x[1], x[2]); });
        // Along dim 1 of [7, 41] from rows of 300: a 2-dim launch, every reduction.
        for (const std::string r : {"sum", "amax", "amin", "prod"}) {
          CAPTURE(r);
          const bool prod = r == "prod";
          const std::int64_t lo = prod ? -1 : -50, hi = prod ? 1 : 50;  // products stay exact
          check_like_host(d,
                          {host_ints(gen, {7, 41}, -50, 50, t), host_ints(gen, {7, 300}, 0, 40, it),
                           host_ints(gen, {7, 300}, lo, hi, t)},
                          [&](const std::vector<Tensor>& x) {
                            return ops::scatter_reduce(x[0], 1, x[1], x[2], r, true);
                          });
        }
        // index_put accumulating through negative indices (each wrapped once), 1-d.
        check_like_host(
            d,
            {host_ints(gen, {40}, -9, 9, t), host_ints(gen, {n}, -40, 39, it),
             host_ints(gen, {n}, -9, 9, t)},
            [](const std::vector<Tensor>& x) { return ops::index_put(x[0], {x[1]}, x[2], true); });
      }
      // index_add along dim 0 (the index constant along each row of 67) and along dim 1.
      check_like_host(
          d,
          {host_ints(gen, {33, 67}, -9, 9, f32), host_ints(gen, {45}, 0, 32, it),
           host_ints(gen, {45, 67}, -9, 9, f32)},
          [](const std::vector<Tensor>& x) { return ops::index_add(x[0], 0, x[1], x[2]); });
      check_like_host(
          d,
          {host_ints(gen, {5, 97}, -9, 9, f32), host_ints(gen, {131}, 0, 96, it),
           host_ints(gen, {5, 131}, -9, 9, f32)},
          [](const std::vector<Tensor>& x) { return ops::index_add(x[0], 1, x[1], x[2]); });
      // index_copy of a permutation (distinct destinations) in 1-, 2- and 4-byte dtypes: plain
      // stores of bytes and halves beside their neighbours' writes.
      I64 perm(103);
      for (std::size_t k = 0; k < perm.size(); ++k) perm[k] = std::int64_t(k);
      std::shuffle(perm.begin(), perm.end(), gen);
      const Tensor order = Tensor::from_host(perm, {103}).to(it);
      for (DType t : {u8, b8, i16, f16, f32, i32}) {
        CAPTURE(dtype_name(t));
        check_like_host(
            d, {host_ints(gen, {6, 103}, 0, 100, t), order, host_ints(gen, {6, 103}, 0, 100, t)},
            [](const std::vector<Tensor>& x) { return ops::index_copy(x[0], 1, x[1], x[2]); });
      }
      // index_fill wraps negative indices: [9, 1030] along dim 1.
      check_like_host(
          d, {host_ints(gen, {9, 1030}, -9, 9, f32), host_ints(gen, {700}, -1030, 1029, it)},
          [](const std::vector<Tensor>& x) { return ops::index_fill(x[0], 1, x[1], 0.5); });
      // A transposed source: out and index merge dims 0 and 1, the source does not.
      check_like_host(d,
                      {host_ints(gen, {4, 5, 6}, -9, 9, f32), host_ints(gen, {4, 5, 6}, 0, 5, it),
                       host_ints(gen, {5, 4, 6}, -9, 9, f32)},
                      [](const std::vector<Tensor>& x) {
                        return ops::scatter_add(x[0], 2, x[1], x[2].transpose(0, 1));
                      });
    }
    // Deterministic algorithms: float sums of arbitrary values in index order, the host's bits.
    ModeGuard guard;
    deterministic(true);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    F src(std::size_t(n), 0.0f);
    for (float& v : src) v = u(gen);
    check_like_host(
        d,
        {host_ints(gen, {50}, -20, 20, f32), host_ints(gen, {n}, 0, 49, i64),
         Tensor::from_host(src, {n})},
        [](const std::vector<Tensor>& x) { return ops::scatter_add(x[0], 0, x[1], x[2]); });
  }
}
