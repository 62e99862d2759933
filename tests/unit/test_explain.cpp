// `nbx explain`'s planner: the decisions it reports are the ones the ops take, for present
// devices and for absent architectures read from their device files.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/capability_resolver.hpp"
#include "core/ops/explain.hpp"
#include "nbx/nbx.hpp"

using namespace nbx;

namespace {
ops::OpExplanation on_host(const char* op, std::vector<DType> dtypes, std::vector<Shape> shapes) {
  const Device host = host_device();
  return ops::explain(op, dtypes, shapes, {host.capabilities(), host.str(), host.display_name()});
}
ops::OpExplanation on_arch(const char* op, std::vector<DType> dtypes, std::vector<Shape> shapes,
                           const char* arch) {
  static std::vector<Capabilities> keep;  // PlanTarget holds a reference
  keep.push_back(capabilities_for_arch(arch));
  return ops::explain(op, dtypes, shapes, {keep.back(), arch, std::string("arch ") + arch});
}
const ops::PlanChoice* choice(const ops::OpExplanation& e, const std::string& what) {
  for (const auto& c : e.choices)
    if (c.what == what) return &c;
  return nullptr;
}
}  // namespace

TEST_CASE("explain reports the dtype the op really returns") {
  const Tensor a = Tensor::full({4, 3}, 7, int32), b = Tensor::full({3}, 2, int32);
  const auto e = on_host("div", {int32, int32}, {{4, 3}, {3}});
  REQUIRE_FALSE(e.refused);
  CHECK(e.output == std::string(dtype_name(ops::div(a, b).dtype())) + " [4, 3]");
  CHECK(e.kernel.find("strided") != std::string::npos);
  CHECK(choice(e, "compute_dtype")->value == "float64");

  const Tensor h = Tensor::full({8}, 1.5, float16);
  const auto g = on_host("gelu", {float16}, {{8}});
  CHECK(g.output == "float16 [8]");
  CHECK(choice(g, "compute_dtype")->value == "float32");
  CHECK(ops::gelu(h).dtype() == float16);

  const auto s = on_host("sum", {int8}, {{5, 7}});
  CHECK(s.output == "int64 [5]");
  CHECK(ops::sum(Tensor::full({5, 7}, 3, int8), {-1}).dtype() == int64);
}

TEST_CASE("capability-driven branches differ by architecture") {
  const auto no_fp64 = on_arch("div", {int32, int32}, {{16}}, "vulkan/generic");
  REQUIRE_FALSE(no_fp64.refused);
  CHECK(choice(no_fp64, "compute_dtype")->value == "float32");
  CHECK(choice(no_fp64, "compute_dtype")->capability == "fp64");
  const auto fp64 = on_arch("div", {int32, int32}, {{16}}, "amd/gfx90a");
  CHECK(choice(fp64, "compute_dtype")->value == "float64");

  const auto refused = on_arch("add", {float64, float64}, {{2}}, "vulkan/generic");
  CHECK(refused.refused);
  CHECK(refused.refused_capability == "fp64");

  const auto volta = on_arch("matmul", {float16, float16}, {{64, 64}, {64, 64}}, "nvidia/sm_70");
  CHECK(volta.output == "float32 [64, 64]");
  const auto hopper = on_arch("matmul", {float16, float16}, {{64, 64}, {64, 64}}, "nvidia/sm_90");
  CHECK(hopper.output == "float16 [64, 64]");

  // A 128k-vocabulary row does not fit shared memory: the looped softmax.
  const auto big = on_arch("softmax", {bfloat16}, {{4, 128256}}, "nvidia/sm_90");
  CHECK(choice(big, "variant")->value == "looped");
  const auto small = on_arch("softmax", {bfloat16}, {{4, 4096}}, "nvidia/sm_90");
  CHECK(choice(small, "variant")->value == "one-pass");
  CHECK(std::stoi(choice(small, "row_tile")->value) <=
        capabilities_for_arch("nvidia/sm_90").reduce.tile_max.value);
}

TEST_CASE("explain rejects what it cannot describe") {
  CHECK_THROWS_AS(on_host("frobnicate", {float32}, {{2}}), InvalidArgument);
  CHECK_THROWS_AS(on_host("add", {float32}, {{2}}), InvalidArgument);  // add takes two
  const auto bad = on_host("bitwise_and", {float32, float32}, {{2}});
  CHECK(bad.refused);
  CHECK(bad.refusal.find("float32") != std::string::npos);
}
