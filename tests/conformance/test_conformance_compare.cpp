// The comparison logic on its own: if these pass, a real mismatch cannot pass the suite.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/half.hpp"
#include "tests/conformance/conformance_compare.hpp"

using namespace nbx;
using namespace nbx::conformance;

namespace {

template <class T>
Comparison compare(DType t, const Tolerance& tol, const std::vector<T>& want,
                   const std::vector<T>& got) {
  REQUIRE(want.size() == got.size());
  return compare_buffers(t, tol, want.data(), got.data(), std::int64_t(want.size()));
}

Comparison compare_f32(const std::vector<float>& want, const std::vector<float>& got,
                       std::string_view op = "add") {
  return compare(DType::kFloat32, tolerance_for(op, DType::kFloat32), want, got);
}

}  // namespace

TEST_CASE("NaN matches only NaN") {
  CHECK(compare_f32({1.0f, NAN}, {1.0f, NAN}).ok);
  const Comparison c = compare_f32({1.0f, NAN}, {1.0f, 2.0f});
  CHECK_FALSE(c.ok);
  CHECK(c.worst_index == 1);
  CHECK(c.mismatches == 1);
  CHECK_FALSE(compare_f32({1.0f, 2.0f}, {1.0f, NAN}).ok);
  // Even where a tolerance of "anything" would apply, NaN stays NaN.
  CHECK_FALSE(compare(DType::kFloat32, Tolerance{1e9, 1e9, 0, false, ""}, std::vector<float>{3.0f},
                      std::vector<float>{NAN})
                  .ok);
}

TEST_CASE("infinities match exactly") {
  CHECK(compare_f32({INFINITY, -INFINITY}, {INFINITY, -INFINITY}).ok);
  CHECK_FALSE(compare_f32({INFINITY}, {-INFINITY}).ok);
  CHECK_FALSE(compare_f32({INFINITY}, {3.4e38f}).ok);
  CHECK_FALSE(compare_f32({-3.4e38f}, {-INFINITY}).ok);
  const Comparison c = compare_f32({0.5f, INFINITY, 2.0f}, {0.5f, -INFINITY, 2.0f});
  CHECK(c.worst_index == 1);
  CHECK(std::isinf(c.max_abs_error));
}

TEST_CASE("bfloat16: a 2-ulp difference passes, 3 ulps do not") {
  const Tolerance tol = tolerance_for("exp", DType::kBFloat16);
  const std::uint16_t one = double_to_bf16_bits(1.0);  // 0x3f80; the ulp at 1.0 is 2^-7
  CHECK(bf16_bits_to_double(one) == 1.0);
  CHECK(compare(DType::kBFloat16, tol, std::vector<std::uint16_t>{one},
                std::vector<std::uint16_t>{std::uint16_t(one + 2)})
            .ok);
  CHECK(compare(DType::kBFloat16, tol, std::vector<std::uint16_t>{std::uint16_t(one + 2)},
                std::vector<std::uint16_t>{one})
            .ok);
  CHECK_FALSE(compare(DType::kBFloat16, tol, std::vector<std::uint16_t>{one},
                      std::vector<std::uint16_t>{std::uint16_t(one + 3)})
                  .ok);
}

TEST_CASE("integers and bool are exact") {
  CHECK(compare(DType::kInt32, tolerance_for("add", DType::kInt32), std::vector<std::int32_t>{5, 7},
                std::vector<std::int32_t>{5, 7})
            .ok);
  const Comparison c = compare(DType::kInt32, tolerance_for("add", DType::kInt32),
                               std::vector<std::int32_t>{5, 7}, std::vector<std::int32_t>{5, 8});
  CHECK_FALSE(c.ok);
  CHECK(c.worst_index == 1);
  CHECK(c.max_abs_error == 1);
  // Beyond 2^53 a double cannot tell these apart; the comparison must.
  const std::int64_t big = (std::int64_t(1) << 60) + 1;
  CHECK_FALSE(compare(DType::kInt64, tolerance_for("mul", DType::kInt64),
                      std::vector<std::int64_t>{big}, std::vector<std::int64_t>{big - 1})
                  .ok);
  CHECK_FALSE(compare(DType::kBool, tolerance_for("eq", DType::kBool),
                      std::vector<std::uint8_t>{1, 0}, std::vector<std::uint8_t>{1, 1})
                  .ok);
}

TEST_CASE("float32 tolerance: rtol 1.3e-6 and atol 1e-5") {
  CHECK(compare_f32({1000.0f}, {1000.001f}).ok);       // 1e-6 relative
  CHECK_FALSE(compare_f32({1000.0f}, {1000.01f}).ok);  // 1e-5 relative
  CHECK(compare_f32({0.0f}, {9e-6f}).ok);              // within atol near zero
  CHECK_FALSE(compare_f32({0.0f}, {2e-5f}).ok);
  CHECK(compare_f32({0.0f}, {-0.0f}).ok);  // signed zeros are equal
}

TEST_CASE("exact-by-definition float ops allow no difference") {
  CHECK(tolerance_for("floor", DType::kFloat32).exact);
  CHECK(tolerance_for("maximum", DType::kFloat16).exact);
  CHECK_FALSE(tolerance_for("exp", DType::kFloat32).exact);
  const float x = 1000.0f;
  CHECK_FALSE(compare_f32({x}, {std::nextafter(x, 2000.0f)}, "floor").ok);
  CHECK(compare_f32({x}, {std::nextafter(x, 2000.0f)}, "add").ok);
}

TEST_CASE("a per-op ulp allowance is counted in ulps of the output dtype") {
  const Tolerance tol{0, 0, 4, false, "test"};
  const float x = 1.5f;
  const float ulp = float(ulp_at(x, DType::kFloat32));
  CHECK(ulp == std::nextafter(x, 2.0f) - x);
  CHECK(compare(DType::kFloat32, tol, std::vector<float>{x}, std::vector<float>{x + 3 * ulp}).ok);
  CHECK_FALSE(
      compare(DType::kFloat32, tol, std::vector<float>{x}, std::vector<float>{x + 5 * ulp}).ok);
}

TEST_CASE("the worst element is the one furthest beyond its allowance") {
  const Comparison c = compare_f32({1.0f, 100.0f, 5.0f}, {1.1f, 100.5f, 5.0f});
  CHECK_FALSE(c.ok);
  CHECK(c.mismatches == 2);
  CHECK(c.worst_index == 0);  // 10% off beats 0.5% off
  CHECK(c.worst_expected.f == 1.0);
  CHECK(std::fabs(c.worst_actual.f - 1.1) < 1e-6);
}

TEST_CASE("accumulated results: tolerance grows with sqrt(k), extrema stay exact") {
  const Tolerance k1 = accumulated_tolerance(false, DType::kFloat32, 1);
  const Tolerance k64 = accumulated_tolerance(false, DType::kFloat32, 64);
  CHECK(k64.rtol == doctest::Approx(8 * k1.rtol));
  CHECK(k64.atol == doctest::Approx(8 * k1.atol));
  // A sum of 64 terms that cancels near zero: 5e-5 off passes with k = 64, not with k = 1.
  const std::vector<float> want{1e-3f}, got{1e-3f + 5e-5f};
  CHECK(compare(DType::kFloat32, k64, want, got).ok);
  CHECK_FALSE(compare(DType::kFloat32, k1, want, got).ok);
  CHECK(accumulated_tolerance(true, DType::kFloat32, 64).exact);
  CHECK(accumulated_tolerance(false, DType::kInt64, 64).exact);
  CHECK_FALSE(compare(DType::kFloat32, accumulated_tolerance(true, DType::kFloat32, 64),
                      std::vector<float>{2.0f}, std::vector<float>{std::nextafter(2.0f, 3.0f)})
                  .ok);
}

TEST_CASE("ops accurate to a few ulps relative have no atol to hide a wrong small result") {
  // vulkan:0's softplus(-10) before issue 11 defect 8: 4e-4 relative, inside float32's atol.
  const std::vector<float> want{4.53988978e-5f}, old_vulkan{4.54177098e-5f};
  CHECK(compare_f32(want, old_vulkan, "add").ok);
  CHECK_FALSE(compare_f32(want, old_vulkan, "softplus").ok);
  CHECK_FALSE(compare_f32({-1.80056270e-6f}, {-1.90734863e-6f}, "mish").ok);  // 6% off
  CHECK(compare_f32(want, {std::nextafter(std::nextafter(want[0], 1.0f), 1.0f)}, "softplus").ok);
  // A subnormal result may be flushed to 0 (NVIDIA's Vulkan driver, softplus(-45.48)); the
  // smallest normal is the only atol left.
  CHECK(compare_f32({1.55639418e-40f}, {0.0f}, "softplus").ok);
  CHECK_FALSE(compare_f32({2.4e-38f}, {0.0f}, "softplus").ok);
}
