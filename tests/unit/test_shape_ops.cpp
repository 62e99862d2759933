// The shape ops (core/ops/shape.hpp) on every present device against hand-computed values:
// joins with type promotion and legacy empty inputs, views that share storage, repeats,
// reversals through index_select, pixel shuffles, diagonals, every padding mode, windows and
// triangle indices, and each argument error as InvalidArgument. (test_shape.cpp tests Shape.)
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "nbx/nbx.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {
using F = std::vector<float>;
using I64 = std::vector<std::int64_t>;
using ops::IntList;

// 1, 2, 3 … (never zero, so a missed write shows) as float32 of `shape` on `d`.
Tensor seq(const Shape& shape, const Device& d) {
  F v(static_cast<std::size_t>(numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  return Tensor::from_host(v, shape, d);
}
F values(const Tensor& t) {
  return t.to(DType::kFloat32).to_host<float>();
}
}  // namespace

TEST_CASE("cat joins along a dim, promotes, skips legacy [0] inputs and checks its arguments") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor a = seq({2, 3}, d), b = seq({1, 3}, d) * 10.0;
    const Tensor r = ops::cat({a, b}, 0);
    CHECK(r.shape() == Shape{3, 3});
    CHECK(values(r) == F{1, 2, 3, 4, 5, 6, 10, 20, 30});
    // Along the last dim, a transposed input: [[1, 3], [2, 4]] beside [[1], [2]].
    const Tensor c = ops::cat({seq({2, 2}, d).transpose(0, 1), seq({2, 1}, d)}, -1);
    CHECK(values(c) == F{1, 3, 1, 2, 4, 2});
    // int32 + float16 → float16; bool + int64 → int64 (torch.result_type).
    CHECK(ops::cat({a.to(DType::kInt32), b.to(DType::kFloat16)}).dtype() == DType::kFloat16);
    const Tensor mixed = ops::cat({a.to(DType::kBool), b.to(DType::kInt64)});
    CHECK(mixed.dtype() == DType::kInt64);
    CHECK(mixed.to_host<std::int64_t>() == I64{1, 1, 1, 1, 1, 1, 10, 20, 30});
    // A 1-d [0] is skipped whatever the others' rank, but its dtype still counts.
    const Tensor skipped = ops::cat({Tensor::empty({0}, DType::kFloat64, d), a}, 1);
    CHECK(skipped.shape() == Shape{2, 3});
    CHECK(skipped.dtype() == DType::kFloat64);
    CHECK(ops::cat({Tensor::empty({0}, DType::kInt32, d)}).shape() == Shape{0});
    CHECK(ops::cat({seq({0, 3}, d), a}).shape() == Shape{2, 3});
    CHECK_THROWS_AS(ops::cat({}), InvalidArgument);
    CHECK_THROWS_AS(ops::cat({seq({}, d), seq({}, d)}), InvalidArgument);  // 0-d
    CHECK_THROWS_AS(ops::cat({a, seq({3}, d)}), InvalidArgument);          // ranks differ
    CHECK_THROWS_AS(ops::cat({a, seq({2, 2}, d)}, 0), InvalidArgument);    // sizes differ
    CHECK_THROWS_AS(ops::cat({a, a}, 2), InvalidArgument);
    CHECK_THROWS_AS(ops::cat({a, Tensor()}), InvalidArgument);
    if (!d.is_host()) CHECK_THROWS_AS(ops::cat({a, seq({1, 3}, host_device())}), InvalidArgument);
  }
}

TEST_CASE("cat_out and stack_out write a view, cast, and refuse overlap and lossy casts") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor a = seq({2, 2}, d), b = seq({1, 2}, d);
    const Tensor out = ops::full({2, 3}, 7, DType::kFloat64, d).transpose(0, 1);  // [3, 2]
    CHECK(ops::cat_out(out, {a, b}, 0).storage() == out.storage());
    CHECK(values(out) == F{1, 2, 3, 4, 1, 2});
    CHECK_THROWS_AS(ops::cat_out(ops::full({3, 2}, 0, DType::kInt32, d), {a, b}), InvalidArgument);
    CHECK_THROWS_AS(ops::cat_out(ops::full({4, 2}, 0, DType::kFloat32, d), {a, b}),
                    InvalidArgument);  // never resized
    const Tensor big = seq({2, 2}, d);
    CHECK_THROWS_AS(ops::cat_out(big, {big.narrow(0, 1, 1), big.narrow(0, 0, 1)}), InvalidArgument);
    const Tensor s = ops::full({2, 2, 2}, 0, DType::kFloat32, d);
    ops::stack_out(s, {a, a * 2.0}, 1);
    CHECK(values(s) == F{1, 2, 2, 4, 3, 4, 6, 8});
  }
}

TEST_CASE("stack adds a dim; split, chunk and meshgrid are views") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor a = seq({2, 2}, d), b = a * 10.0;
    CHECK(values(ops::stack({a, b}, 0)) == F{1, 2, 3, 4, 10, 20, 30, 40});
    const Tensor last = ops::stack({a, b}, -1);
    CHECK(last.shape() == Shape{2, 2, 2});
    CHECK(values(last) == F{1, 10, 2, 20, 3, 30, 4, 40});
    CHECK(ops::stack({seq({}, d), seq({}, d)}).shape() == Shape{2});
    CHECK_THROWS_AS(ops::stack({a, seq({4}, d)}), InvalidArgument);
    CHECK_THROWS_AS(ops::stack({a}, 3), InvalidArgument);
    CHECK_THROWS_AS(ops::stack({}), InvalidArgument);

    const Tensor x = seq({5, 2}, d);
    const ops::TensorList parts = ops::split(x, 2, 0);
    REQUIRE(parts.size() == 3);
    CHECK(parts[2].shape() == Shape{1, 2});
    CHECK(values(parts[1]) == F{5, 6, 7, 8});
    CHECK(parts[1].storage() == x.storage());
    const ops::TensorList sized = ops::split(x, IntList{1, 0, 1}, 1);
    REQUIRE(sized.size() == 3);
    CHECK(sized[1].shape() == Shape{5, 0});
    CHECK(values(sized[2]) == F{2, 4, 6, 8, 10});
    CHECK(ops::split(seq({0, 2}, d), 0, 0).size() == 1);
    CHECK_THROWS_AS(ops::split(x, 0, 0), InvalidArgument);
    CHECK_THROWS_AS(ops::split(x, -1, 0), InvalidArgument);
    CHECK_THROWS_AS(ops::split(x, IntList{2, 2}, 0), InvalidArgument);
    CHECK_THROWS_AS(ops::split(seq({}, d), 1), InvalidArgument);

    // PyTorch's chunk sizes: ceil(5 / 4) = 2, so 2, 2, 1 — three chunks, not four.
    const ops::TensorList ch = ops::chunk(x, 4, 0);
    REQUIRE(ch.size() == 3);
    CHECK(ch[2].shape() == Shape{1, 2});
    CHECK(values(ch[2]) == F{9, 10});
    CHECK(ops::chunk(seq({0, 3}, d), 3, 0).size() == 3);  // size-0 dim: `chunks` empty views
    CHECK_THROWS_AS(ops::chunk(x, 0), InvalidArgument);

    const Tensor p = seq({2}, d), q = seq({3}, d) * 10.0;
    const ops::TensorList ij = ops::meshgrid({p, q}, "ij");
    CHECK(ij[0].shape() == Shape{2, 3});
    CHECK(values(ij[0]) == F{1, 1, 1, 2, 2, 2});
    CHECK(values(ij[1]) == F{10, 20, 30, 10, 20, 30});
    CHECK(ij[1].storage() == q.storage());
    const ops::TensorList xy = ops::meshgrid({p, q}, "xy");
    CHECK(xy[0].shape() == Shape{3, 2});
    CHECK(values(xy[0]) == F{1, 2, 1, 2, 1, 2});
    CHECK(values(xy[1]) == F{10, 10, 20, 20, 30, 30});
    CHECK_THROWS_AS(ops::meshgrid({p, q}, "yx"), InvalidArgument);
    CHECK_THROWS_AS(ops::meshgrid({p, q.to(DType::kInt32)}), InvalidArgument);
    CHECK_THROWS_AS(ops::meshgrid({seq({2, 2}, d)}), InvalidArgument);
  }
}

TEST_CASE("repeat, tile and repeat_interleave") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = seq({2, 2}, d);  // [[1, 2], [3, 4]]
    const Tensor r = ops::repeat(x, {1, 2, 2});
    CHECK(r.shape() == Shape{1, 4, 4});
    CHECK(values(r) == F{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4});
    CHECK(values(ops::repeat(x.transpose(0, 1), {1, 2})) == F{1, 3, 1, 3, 2, 4, 2, 4});
    CHECK(ops::repeat(x, {0, 3}).shape() == Shape{0, 6});
    CHECK(values(ops::repeat(seq({}, d), {3})) == F{1, 1, 1});
    CHECK(ops::repeat(x, {1, 1}).storage() != x.storage());
    CHECK_THROWS_AS(ops::repeat(x, {2}), InvalidArgument);
    CHECK_THROWS_AS(ops::repeat(x, {1, -1}), InvalidArgument);
    CHECK(values(ops::tile(x, {2})) == F{1, 2, 1, 2, 3, 4, 3, 4});  // dims padded: [1, 2]
    const Tensor bools = Tensor::from_host(std::vector<bool>{true, false}, {2}, d);
    CHECK(ops::tile(bools, {2}).to_host<bool>() == std::vector<bool>{true, false, true, false});

    CHECK(values(ops::repeat_interleave(x, 2)) == F{1, 1, 2, 2, 3, 3, 4, 4});
    CHECK(values(ops::repeat_interleave(x, 2, 1)) == F{1, 1, 2, 2, 3, 3, 4, 4});
    CHECK(values(ops::repeat_interleave(x, 2, 0)) == F{1, 2, 1, 2, 3, 4, 3, 4});
    const Tensor counts = Tensor::from_host(I64{0, 3}, {2}, d);
    CHECK(values(ops::repeat_interleave(x, counts, 0)) == F{3, 4, 3, 4, 3, 4});
    CHECK(values(ops::repeat_interleave(x, counts.to(DType::kInt32), -1)) == F{2, 2, 2, 4, 4, 4});
    CHECK_THROWS_AS(ops::repeat_interleave(x, -1), InvalidArgument);
    CHECK_THROWS_AS(ops::repeat_interleave(x, Tensor::from_host(I64{1, 2, 3}, {3}, d), 0),
                    InvalidArgument);
    CHECK_THROWS_AS(ops::repeat_interleave(x, x, 0), InvalidArgument);  // float repeats
    CHECK_THROWS_AS(ops::repeat_interleave(x, Tensor::from_host(I64{-1, 2}, {2}, d), 0),
                    InvalidArgument);
  }
}

TEST_CASE("flip, roll and rot90 reorder through index_select") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = seq({2, 3}, d);  // [[1, 2, 3], [4, 5, 6]]
    CHECK(values(ops::flip(x, {1})) == F{3, 2, 1, 6, 5, 4});
    CHECK(values(ops::flip(x, {0, -1})) == F{6, 5, 4, 3, 2, 1});
    CHECK(values(ops::flip(x.transpose(0, 1), {0})) == F{3, 6, 2, 5, 1, 4});
    const Tensor i64 = Tensor::from_host(I64{INT64_MIN, 7, INT64_MAX}, {3}, d);
    CHECK(ops::flip(i64, {0}).to_host<std::int64_t>() == I64{INT64_MAX, 7, INT64_MIN});
    CHECK(ops::flip(x, {}).storage() != x.storage());
    CHECK_THROWS_AS(ops::flip(x, {1, -1}), InvalidArgument);
    CHECK_THROWS_AS(ops::flip(x, {2}), InvalidArgument);

    CHECK(values(ops::roll(x, {1})) == F{6, 1, 2, 3, 4, 5});  // flattened
    CHECK(values(ops::roll(x, {-1}, {1})) == F{2, 3, 1, 5, 6, 4});
    CHECK(values(ops::roll(x, {1, 4}, {0, 1})) == F{6, 4, 5, 3, 1, 2});
    CHECK_THROWS_AS(ops::roll(x, {1, 2}, {0}), InvalidArgument);
    CHECK_THROWS_AS(ops::roll(x, {}), InvalidArgument);

    // [[1, 2, 3], [4, 5, 6]] a quarter turn anticlockwise: [[3, 6], [2, 5], [1, 4]].
    CHECK(values(ops::rot90(x)) == F{3, 6, 2, 5, 1, 4});
    CHECK(values(ops::rot90(x, 2)) == F{6, 5, 4, 3, 2, 1});
    CHECK(values(ops::rot90(x, -1)) == F{4, 1, 5, 2, 6, 3});
    CHECK(values(ops::rot90(x, 1, {1, 0})) == values(ops::rot90(x, 3)));
    CHECK_THROWS_AS(ops::rot90(seq({3}, d)), InvalidArgument);
    CHECK_THROWS_AS(ops::rot90(x, 1, {0, 0}), InvalidArgument);
    CHECK_THROWS_AS(ops::rot90(x, 1, {0}), InvalidArgument);
  }
}

TEST_CASE("pixel_shuffle and pixel_unshuffle move channels into space and back") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    // Channels 1, 2, 3, 4 of a 1×1 image become the 2×2 block [[1, 2], [3, 4]].
    const Tensor x = seq({1, 4, 1, 1}, d);
    const Tensor up = ops::pixel_shuffle(x, 2);
    CHECK(up.shape() == Shape{1, 1, 2, 2});
    CHECK(values(up) == F{1, 2, 3, 4});
    // Two 1×2 channel images [1, 2] … [7, 8] of 4 channels: rows (1 3 2 4), (5 7 6 8).
    CHECK(values(ops::pixel_shuffle(seq({4, 1, 2}, d), 2)) == F{1, 3, 2, 4, 5, 7, 6, 8});
    const Tensor y = seq({2, 3, 4, 6}, d);
    const Tensor down = ops::pixel_unshuffle(y, 2);
    CHECK(down.shape() == Shape{2, 12, 2, 3});
    CHECK(values(ops::pixel_shuffle(down, 2)) == values(y));
    CHECK_THROWS_AS(ops::pixel_shuffle(seq({3, 2}, d), 1), InvalidArgument);
    CHECK_THROWS_AS(ops::pixel_shuffle(seq({1, 3, 2, 2}, d), 2), InvalidArgument);
    CHECK_THROWS_AS(ops::pixel_shuffle(x, 0), InvalidArgument);
    CHECK_THROWS_AS(ops::pixel_unshuffle(seq({1, 1, 3, 4}, d), 2), InvalidArgument);
  }
}

TEST_CASE("diagonal is a view; diag_embed, trace, narrow_copy and unfold") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = seq({3, 4}, d);  // rows 1-4, 5-8, 9-12
    const Tensor diag = ops::diagonal(x);
    CHECK(diag.storage() == x.storage());
    CHECK(values(diag) == F{1, 6, 11});
    CHECK(values(ops::diagonal(x, 2)) == F{3, 8});
    CHECK(values(ops::diagonal(x, -1)) == F{5, 10});
    CHECK(ops::diagonal(x, 5).shape() == Shape{0});
    CHECK(values(ops::diagonal(seq({2, 2, 2}, d), 0, 0, 2)) == F{1, 6, 3, 8});
    CHECK_THROWS_AS(ops::diagonal(x, 0, 1, -1), InvalidArgument);

    const Tensor e = ops::diag_embed(seq({2}, d), 1);
    CHECK(e.shape() == Shape{3, 3});
    CHECK(values(e) == F{0, 1, 0, 0, 0, 2, 0, 0, 0});
    CHECK(values(ops::diag_embed(seq({2, 2}, d), 0, 0, 2)) == F{1, 0, 3, 0, 0, 2, 0, 4});
    CHECK_THROWS_AS(ops::diag_embed(seq({2}, d), 0, 0, -2), InvalidArgument);

    CHECK(values(ops::trace(x)) == F{18});
    const Tensor ti = ops::trace(x.to(DType::kInt8));
    CHECK(ti.dtype() == DType::kInt64);
    CHECK(ti.to_host<std::int64_t>() == I64{18});
    CHECK(ops::trace(x.to(DType::kBool)).to_host<std::int64_t>() == I64{3});
    CHECK(ops::trace(x.to(DType::kBFloat16)).dtype() == DType::kBFloat16);
    CHECK_THROWS_AS(ops::trace(seq({3}, d)), InvalidArgument);

    const Tensor n = ops::narrow_copy(x, 1, -2, 2);
    CHECK(n.is_contiguous());
    CHECK(n.storage() != x.storage());
    CHECK(values(n) == F{3, 4, 7, 8, 11, 12});
    CHECK_THROWS_AS(ops::narrow_copy(x, 1, 3, 2), InvalidArgument);

    const Tensor s7 = seq({7}, d);
    const Tensor w = ops::unfold(s7, 0, 3, 2);
    CHECK(w.shape() == Shape{3, 3});
    CHECK(w.storage() == s7.storage());
    CHECK(values(w) == F{1, 2, 3, 3, 4, 5, 5, 6, 7});
    CHECK(values(ops::unfold(x, 0, 2, 1)) == F{1, 5, 2, 6, 3, 7, 4, 8, 5, 9, 6, 10, 7, 11, 8, 12});
    CHECK(ops::unfold(seq({}, d), 0, 1, 1).shape() == Shape{1});
    CHECK_THROWS_AS(ops::unfold(x, 1, 5, 1), InvalidArgument);
    CHECK_THROWS_AS(ops::unfold(x, 1, 2, 0), InvalidArgument);
  }
}

TEST_CASE("pad in every mode, with PyTorch's rules") {
  using ops::PadMode;
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = seq({1, 3}, d);  // [[1, 2, 3]]
    CHECK(values(ops::pad(x, {1, -1}, PadMode::kConstant, 9)) == F{9, 1, 2});
    CHECK(values(ops::pad(x, {2, 1}, PadMode::kReflect)) == F{3, 2, 1, 2, 3, 2});
    CHECK(values(ops::pad(x, {2, 1}, PadMode::kReplicate)) == F{1, 1, 1, 2, 3, 3});
    CHECK(values(ops::pad(x, {2, 1}, PadMode::kCircular)) == F{2, 3, 1, 2, 3, 1});
    CHECK(values(ops::pad(x, {-1, 2}, PadMode::kReflect)) == F{2, 3, 2, 1});
    // Two dims: [[1, 2], [3, 4]] with a column on the left and a row below, constant 0.
    const Tensor m = seq({2, 2}, d);
    CHECK(values(ops::pad(m, {1, 0, 0, 1})) == F{0, 1, 2, 0, 3, 4, 0, 0, 0});
    CHECK(values(ops::pad(m.unsqueeze(0), {0, 1, 1, 0}, PadMode::kReplicate)) ==
          F{1, 2, 2, 1, 2, 2, 3, 4, 4});
    CHECK(ops::pad(m.to(DType::kBool), {1, 1}, PadMode::kConstant, true).to_host<bool>() ==
          std::vector<bool>(8, true));
    CHECK(ops::pad(seq({0, 2}, d), {1, 1}).shape() == Shape{0, 4});
    CHECK_THROWS_AS(ops::pad(x, {1}), InvalidArgument);
    CHECK_THROWS_AS(ops::pad(x, {1, 1, 1, 1, 1, 1}), InvalidArgument);
    CHECK_THROWS_AS(ops::pad(x, {-2, -2}), InvalidArgument);
    CHECK_THROWS_AS(ops::pad(x, {3, 0}, PadMode::kReflect), InvalidArgument);
    CHECK_THROWS_AS(ops::pad(x, {4, 0}, PadMode::kCircular), InvalidArgument);
    CHECK_THROWS_AS(ops::pad(seq({3}, d), {1, 1}, PadMode::kReplicate), InvalidArgument);
    CHECK_THROWS_AS(ops::pad(x, {1, 1}, PadMode::kReflect, 1), InvalidArgument);
    CHECK_THROWS_AS(ops::pad(seq({1, 0}, d), {1, 1}, PadMode::kReplicate), InvalidArgument);
    CHECK(ops::pad_mode_named("circular") == PadMode::kCircular);
    CHECK_THROWS_AS(ops::pad_mode_named("mirror"), InvalidArgument);
  }
}

TEST_CASE("tril_indices and triu_indices are int64 [2, N], row-major") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor l = ops::tril_indices(3, 3, 0, d);
    CHECK(l.dtype() == DType::kInt64);
    CHECK(l.shape() == Shape{2, 6});
    CHECK(l.to_host<std::int64_t>() == I64{0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2});
    CHECK(ops::triu_indices(2, 3, 1, d).to_host<std::int64_t>() == I64{0, 0, 1, 1, 2, 2});
    CHECK(ops::tril_indices(2, 2, -1, d).to_host<std::int64_t>() == I64{1, 0});
    CHECK(ops::triu_indices(0, 3, 0, d).shape() == Shape{2, 0});
    CHECK_THROWS_AS(ops::tril_indices(-1, 3, 0, d), InvalidArgument);
  }
}
