#include <doctest/doctest.h>

#include <string>

#include "core/errors.hpp"
#include "core/shape.hpp"

using namespace nbx;

TEST_CASE("numel and contiguous strides") {
  CHECK(numel(Shape{}) == 1);
  CHECK(numel(Shape{2, 0, 3}) == 0);
  CHECK(numel(Shape{2, 3, 4}) == 24);
  CHECK(contiguous_strides({2, 3, 4}) == Strides{12, 4, 1});
  CHECK(contiguous_strides({}) == Strides{});
  CHECK(contiguous_strides({2, 0, 3}) == Strides{3, 3, 1});
}

TEST_CASE("contiguity ignores size-1 dims and zero-size views") {
  CHECK(is_contiguous({2, 3}, {3, 1}));
  CHECK_FALSE(is_contiguous({2, 3}, {1, 2}));
  CHECK(is_contiguous({2, 1, 3}, {3, 99, 1}));
  CHECK(is_contiguous({0, 3}, {7, 7}));
  CHECK_FALSE(is_contiguous({2, 3}, {0, 1}));
}

TEST_CASE("broadcasting follows NumPy rules and names the shapes on failure") {
  CHECK(broadcast_shapes({3, 1}, {1, 4}) == Shape{3, 4});
  CHECK(broadcast_shapes({}, {2, 3}) == Shape{2, 3});
  CHECK(broadcast_shapes({5, 1, 3}, {4, 1}) == Shape{5, 4, 3});
  CHECK(broadcast_shapes({0}, {1}) == Shape{0});
  try {
    broadcast_shapes({2, 3}, {4, 3}, "add");
    FAIL("expected InvalidArgument");
  } catch (const InvalidArgument& e) {
    const std::string m = e.what();
    CHECK(m.find("[2, 3]") != std::string::npos);
    CHECK(m.find("[4, 3]") != std::string::npos);
    CHECK(e.op() == "add");
  }
  CHECK(broadcast_strides({3, 1}, {1, 1}, {2, 3, 4}) == Strides{0, 1, 0});
  CHECK_THROWS_AS(broadcast_strides({3}, {1}, {4}), InvalidArgument);
}

TEST_CASE("dims hold at most kMaxDims entries") {
  Dims d;
  for (int i = 0; i < kMaxDims; ++i) d.push_back(1);
  CHECK_THROWS_AS(d.push_back(1), InvalidArgument);
  CHECK(wrap_dim(-1, 3, "x") == 2);
  CHECK(wrap_dim(0, 0, "x") == 0);
  CHECK_THROWS_AS(wrap_dim(3, 3, "x"), InvalidArgument);
}
