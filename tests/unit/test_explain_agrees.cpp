// What `nbx explain` says will run is what runs: for each kernel family, on every present
// device (host, vulkan:0 / cuda:0 / hip:0 where they open), the op runs on contiguous
// seeded data and the family and variant the backend then launched
// (BackendDevice::last_launch) must be the ones explain names. Sizes reach each variant
// the GPU backends have: rows in registers, long rows, strided softmax rows.
#include <doctest/doctest.h>

#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/families/kernel_family.hpp"
#include "core/ops/attention.hpp"
#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/explain.hpp"
#include "core/ops/index.hpp"
#include "core/ops/index_write.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/moe.hpp"
#include "core/ops/norm.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/rotary.hpp"
#include "core/ops/scan.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/softmax.hpp"
#include "core/ops/sort.hpp"
#include "core/tensor.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

using testing::present_devices;

Tensor random(const Shape& shape, DType t, const Device& d, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(std::size_t(numel(shape)));
  for (float& x : v) x = u(rng);
  return Tensor::from_host(v, shape, d).to(t);
}

struct Case {
  std::string op;
  DType dtype;
  Shape shape;
  std::function<void(const Tensor&)> run;
};

std::vector<Case> cases() {
  return {
      {"sum", DType::kFloat32, {64, 1000}, [](const Tensor& x) { ops::sum(x, {1}); }},
      {"amax", DType::kBFloat16, {8, 4096}, [](const Tensor& x) { ops::amax(x, {1}); }},
      {"var", DType::kFloat32, {16, 300}, [](const Tensor& x) { ops::var(x, {1}); }},
      {"softmax", DType::kFloat32, {64, 1000}, [](const Tensor& x) { ops::softmax(x, -1); }},
      {"softmax", DType::kBFloat16, {4, 128256}, [](const Tensor& x) { ops::softmax(x, -1); }},
      {"log_softmax", DType::kFloat16, {33, 7}, [](const Tensor& x) { ops::log_softmax(x, -1); }},
      {"layer_norm",
       DType::kFloat32,
       {32, 1024},
       [](const Tensor& x) { ops::layer_norm(x, {1024}, std::nullopt, std::nullopt, 1e-5); }},
      {"rms_norm",
       DType::kBFloat16,
       {16, 4096},
       [](const Tensor& x) { ops::rms_norm(x, {4096}, std::nullopt, 1e-6); }},
      {"cumsum", DType::kFloat32, {16, 1000}, [](const Tensor& x) { ops::cumsum(x, 1); }},
      {"add", DType::kFloat32, {64, 64}, [](const Tensor& x) { ops::add(x, x); }},
      {"sort", DType::kFloat32, {64, 300}, [](const Tensor& x) { ops::sort(x, -1); }},
      {"sort", DType::kFloat64, {2, 9000}, [](const Tensor& x) { ops::sort(x, -1); }},
      {"matmul", DType::kFloat32, {64, 64}, [](const Tensor& x) { ops::matmul(x, x); }},
      {"arange",
       DType::kFloat32,
       {1000},
       [](const Tensor& x) { ops::arange(0, 1000, 1, DType::kFloat32, x.device()); }},
      {"embedding",
       DType::kFloat32,
       {512, 64},
       [](const Tensor& w) {
         std::vector<std::int64_t> rows(128);
         for (std::size_t k = 0; k < rows.size(); ++k) rows[k] = std::int64_t(k * 37 % 512);
         ops::embedding(Tensor::from_host(rows, {128}, w.device()), w);
       }},
      {"scatter_add",
       DType::kFloat32,
       {64, 64},
       [](const Tensor& x) {
         std::vector<std::int64_t> to(64 * 64);
         for (std::size_t k = 0; k < to.size(); ++k) to[k] = std::int64_t(k * 37 % 64);
         ops::scatter_add(x, 1, Tensor::from_host(to, {64, 64}, x.device()), x);
       }},
      {"searchsorted",
       DType::kFloat32,
       {1000},
       [](const Tensor& x) { ops::searchsorted(ops::sort(x).values, x); }},
      {"cat", DType::kBFloat16, {64, 1000}, [](const Tensor& x) { ops::cat({x}, 0); }},
      {"scaled_dot_product_attention",
       DType::kFloat32,
       {2, 4, 40, 64},
       [](const Tensor& q) { ops::scaled_dot_product_attention(q, q, q, {}, true); }},
      {"rotary_embedding",
       DType::kFloat32,
       {2, 16, 4, 32},
       [](const Tensor& q) {
         std::vector<std::int64_t> pos(32);
         for (std::size_t k = 0; k < pos.size(); ++k) pos[k] = std::int64_t(k * 5 % 64);
         ops::rotary_embedding_(
             q, q.clone(), Tensor::from_host(pos, {2, 16}, q.device()),
             ops::rotary_cos_sin_cache(64, 32, 10000, DType::kFloat32, q.device()), 32);
       }},
      {"grouped_matmul",
       DType::kBFloat16,
       {96, 64},
       [](const Tensor& a) {
         const Tensor b = ops::cat({a, a.slice(0, 0, 96)}, 0).view({4, 48, 64});
         ops::grouped_matmul(
             a, b,
             Tensor::from_host(std::vector<std::int64_t>{0, 10, 10, 50, 96}, {5}, a.device()));
       }},
  };
}

const ops::PlanChoice* variant_choice(const ops::OpExplanation& e) {
  for (const ops::PlanChoice& c : e.choices)
    if (c.what == "variant") return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("the variant explain names is the one the backend launched, on every device") {
  for (const Device& d : present_devices()) {
    const BackendDevice& bd = d.context().backend_device();
    unsigned seed = 20261201;
    std::set<KernelFamily> seen;
    for (const Case& c : cases()) {
      const std::string what = c.op + " " + std::string(dtype_name(c.dtype)) + " " +
                               to_string(c.shape) + " on " + d.str();
      CAPTURE(what);
      const ops::PlanTarget target{d.capabilities(), d.str(), d.display_name(), &bd};
      std::vector<DType> dtypes{c.dtype};
      std::vector<Shape> shapes{c.shape};
      ops::ExplainArgs args;
      if (c.op == "add" || c.op == "matmul") dtypes.push_back(c.dtype);
      if (c.op == "embedding") dtypes.push_back(DType::kInt64), shapes.push_back({128});
      if (c.op == "scatter_add") dtypes.push_back(DType::kInt64), shapes.push_back(c.shape);
      if (c.op == "searchsorted") dtypes.push_back(c.dtype), shapes.push_back(c.shape);
      if (c.op == "scaled_dot_product_attention") {  // query, key, value; causal
        dtypes = {c.dtype, c.dtype, c.dtype};
        shapes = {c.shape, c.shape, c.shape};
        args.causal = true;
      }
      if (c.op == "rotary_embedding") {  // q, k, positions, the cache
        dtypes = {c.dtype, c.dtype, DType::kInt64, DType::kFloat32};
        shapes = {c.shape, c.shape, {2, 16}, {64, 32}};
      }
      if (c.op == "grouped_matmul") {  // a, b [E, N, K], the offsets
        dtypes = {c.dtype, c.dtype, DType::kInt64};
        shapes = {c.shape, {4, 48, 64}, {5}};
      }
      const ops::OpExplanation e = ops::explain(c.op, dtypes, shapes, target, args);
      if (e.refused) {  // the device lacks a dtype: the op must refuse the same way
        CHECK_THROWS_AS(c.run(random(c.shape, DType::kFloat32, d, seed)), Unsupported);
        continue;
      }
      const ops::PlanChoice* v = variant_choice(e);
      REQUIRE_MESSAGE(v != nullptr, (std::string("explain names no variant: ") + e.kernel));
      c.run(random(c.shape, c.dtype, d, seed++));
      const LaunchRecord ran = bd.last_launch();
      CHECK(v->value == variant_name(ran.family, ran.variant));
      CHECK(e.family == family_spec(ran.family).name);
      seen.insert(ran.family);
    }
    // Every family with public ops has a case here (the diagnostics have none).
    for (const FamilySpec& spec : all_families())
      if (spec.family != KernelFamily::kTimestamp && spec.family != KernelFamily::kCopyProbe)
        CHECK_MESSAGE(seen.count(spec.family), (std::string(spec.name) + " has no case"));
  }
}
