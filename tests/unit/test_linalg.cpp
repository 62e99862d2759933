// Matrix products on the host: hand-computed products, identities against a naive triple
// loop on seeded data, strided/transposed/broadcast operands, shape errors, and the plan.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/capability_resolver.hpp"
#include "core/ops/explain.hpp"
#include "core/registry.hpp"
#include "nbx/nbx.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {
using F = std::vector<float>;
using D = std::vector<double>;
Tensor f32(F v, Shape s) {
  return Tensor::from_host(v, s);
}
D seeded(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-3.0, 3.0);
  D v(n);
  for (double& x : v) x = dist(rng);
  return v;
}
// Row-major a (m×k) times b (k×n), the plainest loop there is.
D naive(const D& a, const D& b, int m, int k, int n) {
  D c(static_cast<std::size_t>(m * n), 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int q = 0; q < k; ++q)
        c[static_cast<std::size_t>(i * n + j)] +=
            a[static_cast<std::size_t>(i * k + q)] * b[static_cast<std::size_t>(q * n + j)];
  return c;
}
void check_close(const D& got, const D& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
}
bool message_has(const std::function<void()>& f, const std::string& text) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return std::string(e.what()).find(text) != std::string::npos;
  }
  return false;
}
}  // namespace

TEST_CASE("hand-computed products: mm, dot, mv, vector-matrix") {
  const Tensor a = f32({1, 2, 3, 4}, {2, 2});
  const Tensor b = f32({5, 6, 7, 8}, {2, 2});
  CHECK(ops::matmul(a, b).to_host<float>() == F{19, 22, 43, 50});
  CHECK(ops::mm(b, a).to_host<float>() == F{23, 34, 31, 46});
  const Tensor r = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor c = f32({7, 8, 9, 10, 11, 12}, {3, 2});
  const Tensor rc = ops::matmul(r, c);
  CHECK(rc.shape() == Shape{2, 2});
  CHECK(rc.to_host<float>() == F{58, 64, 139, 154});
  const Tensor d = ops::dot(f32({1, 2, 3}, {3}), f32({4, 5, 6}, {3}));
  CHECK(d.shape() == Shape{});
  CHECK(d.item().to_double() == 32.0);
  CHECK(ops::matmul(f32({1, 2, 3}, {3}), f32({4, -5, 6}, {3})).item().to_double() == 12.0);
  const Tensor v = f32({1, 0.5f, -1}, {3});
  CHECK(ops::mv(r, v).to_host<float>() == F{-1, 0.5f});
  CHECK(ops::matmul(r, v).shape() == Shape{2});
  CHECK(ops::matmul(r, v).to_host<float>() == F{-1, 0.5f});
  const Tensor row = ops::matmul(f32({1, 2}, {2}), b);
  CHECK(row.shape() == Shape{2});
  CHECK(row.to_host<float>() == F{19, 22});
}

TEST_CASE("A @ I = A and (AB)^T = B^T A^T on seeded data, against a naive loop") {
  const unsigned seed = 1130;
  INFO("seed " << seed);
  const int m = 5, k = 7, n = 3;
  const D av = seeded(m * k, seed), bv = seeded(k * n, seed + 1);
  const Tensor A = Tensor::from_host(av, {m, k});
  const Tensor B = Tensor::from_host(bv, {k, n});
  D eye(k * k, 0.0);
  for (int i = 0; i < k; ++i) eye[static_cast<std::size_t>(i * k + i)] = 1.0;
  CHECK(ops::matmul(A, Tensor::from_host(eye, {k, k})).to_host<double>() == av);
  const D ab = naive(av, bv, m, k, n);
  check_close(ops::matmul(A, B).to_host<double>(), ab);
  // B^T A^T through transposed views (strides swapped, no copies) is (AB)^T.
  const Tensor bt_at = ops::matmul(B.transpose(0, 1), A.transpose(0, 1));
  CHECK(bt_at.shape() == Shape{n, m});
  check_close(bt_at.transpose(0, 1).contiguous().to_host<double>(), ab);
}

TEST_CASE("strided operands: a stepped slice and a transposed storage") {
  const unsigned seed = 77;
  INFO("seed " << seed);
  // A stored as its transpose (k×m), B every other row of a (2k)×n buffer.
  const int m = 4, k = 3, n = 5;
  const D at = seeded(k * m, seed), b2 = seeded(2 * k * n, seed + 1);
  const Tensor A = Tensor::from_host(at, {k, m}).transpose(0, 1);
  const Tensor B = Tensor::from_host(b2, {2 * k, n}).slice(0, 0, 2 * k, 2);
  D a(m * k), b(k * n);
  for (int i = 0; i < m; ++i)
    for (int q = 0; q < k; ++q)
      a[static_cast<std::size_t>(i * k + q)] = at[static_cast<std::size_t>(q * m + i)];
  for (int q = 0; q < k; ++q)
    for (int j = 0; j < n; ++j)
      b[static_cast<std::size_t>(q * n + j)] = b2[static_cast<std::size_t>(2 * q * n + j)];
  check_close(ops::matmul(A, B).to_host<double>(), naive(a, b, m, k, n));
}

TEST_CASE("batched products broadcast their batch dims") {
  const unsigned seed = 4242;
  INFO("seed " << seed);
  const int m = 3, k = 4, n = 2;
  const D av = seeded(2 * m * k, seed), bv = seeded(5 * k * n, seed + 1);
  const Tensor A = Tensor::from_host(av, {2, 1, m, k});
  const Tensor B = Tensor::from_host(bv, {5, k, n});
  const Tensor C = ops::matmul(A, B);
  REQUIRE(C.shape() == Shape{2, 5, m, n});
  const D got = C.to_host<double>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j) {
      const D a(av.begin() + i * m * k, av.begin() + (i + 1) * m * k);
      const D b(bv.begin() + j * k * n, bv.begin() + (j + 1) * k * n);
      const D want = naive(a, b, m, k, n);
      const D part(got.begin() + (i * 5 + j) * m * n, got.begin() + (i * 5 + j + 1) * m * n);
      check_close(part, want);
    }
  // A 3-d batch times a 1-d vector, and a 1-d vector times a 3-d batch.
  const Tensor v = f32({1, -1, 2, 0.5f}, {4});
  const Tensor batch = Tensor::from_host(bv, {5, k, n}).transpose(1, 2);  // [5, n, k]
  CHECK(ops::matmul(batch, v.to(float64)).shape() == Shape{5, n});
  CHECK(ops::matmul(v.to(float64), Tensor::from_host(bv, {5, k, n})).shape() == Shape{5, n});
  const D bm = ops::matmul(v.to(float64), Tensor::from_host(bv, {5, k, n})).to_host<double>();
  const D vd = {1, -1, 2, 0.5};
  check_close(D(bm.begin(), bm.begin() + n), naive(vd, D(bv.begin(), bv.begin() + k * n), 1, k, n));
}

TEST_CASE("bmm, addmm, baddbmm, addmv, addr with beta and alpha") {
  const Tensor m1 = f32({1, 2, 3, 4}, {2, 2});
  const Tensor m2 = f32({5, 6, 7, 8}, {2, 2});
  // 0.5 * [10, 20] (broadcast over rows) + 2 * [[19, 22], [43, 50]]
  CHECK(ops::addmm(f32({10, 20}, {2}), m1, m2, 0.5, 2).to_host<float>() == F{43, 54, 91, 110});
  CHECK(ops::addmm(f32({1, 2, 3, 4}, {2, 2}), m1, m2).to_host<float>() == F{20, 24, 46, 54});
  // With beta 0 the input is not read: its NaN does not propagate.
  CHECK(ops::addmm(f32({NAN, NAN}, {2}), m1, m2, 0).to_host<float>() == F{19, 22, 43, 50});
  const Tensor b1 = f32({1, 2, 3, 4, -1, 0, 0, -1}, {2, 2, 2});
  const Tensor b2 = f32({5, 6, 7, 8, 2, 3, 4, 5}, {2, 2, 2});
  CHECK(ops::bmm(b1, b2).to_host<float>() == F{19, 22, 43, 50, -2, -3, -4, -5});
  // input [2, 1, 1]: one value per batch entry.
  CHECK(ops::baddbmm(f32({100, 200}, {2, 1, 1}), b1, b2).to_host<float>() ==
        F{119, 122, 143, 150, 198, 197, 196, 195});
  CHECK(ops::addmv(f32({1}, {1}), m1, f32({1, 1}, {2})).to_host<float>() == F{4, 8});
  CHECK(ops::addmv(f32({1, -1}, {2}), m1, f32({2, 1}, {2}), 2, -1).to_host<float>() == F{-2, -12});
  CHECK(ops::addr(f32({1, 1, 1, 1}, {2, 2}), f32({1, 2}, {2}), f32({3, 4}, {2}), 3, 2)
            .to_host<float>() == F{9, 11, 15, 19});
  CHECK_THROWS_AS(ops::bmm(b1, f32({1, 2, 3, 4}, {1, 2, 2})), InvalidArgument);
  CHECK_THROWS_AS(ops::addmm(f32({1, 2, 3}, {3}), m1, m2), InvalidArgument);
}

TEST_CASE("linear = x @ weight^T + bias, for 1-d, 2-d and 3-d inputs") {
  const unsigned seed = 99;
  INFO("seed " << seed);
  const D wv = seeded(4 * 3, seed), xv = seeded(2 * 5 * 3, seed + 1);
  const D bias = {0.25, -1, 2, 3.5};
  const Tensor w = Tensor::from_host(wv, {4, 3});
  const Tensor x = Tensor::from_host(xv, {2, 5, 3});
  const Tensor y = ops::linear(x, w, Tensor::from_host(bias, {4}));
  REQUIRE(y.shape() == Shape{2, 5, 4});
  D wt(3 * 4);
  for (int o = 0; o < 4; ++o)
    for (int i = 0; i < 3; ++i)
      wt[static_cast<std::size_t>(i * 4 + o)] = wv[static_cast<std::size_t>(o * 3 + i)];
  D want = naive(xv, wt, 10, 3, 4);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] += bias[i % 4];
  check_close(y.to_host<double>(), want);
  const Tensor y1 = ops::linear(Tensor::from_host(D(xv.begin(), xv.begin() + 3), {3}), w);
  CHECK(y1.shape() == Shape{4});
  check_close(y1.to_host<double>(), naive(D(xv.begin(), xv.begin() + 3), wt, 1, 3, 4));
  CHECK(message_has(
      [&] {
        ops::linear(x, Tensor::from_host(wv, {3, 4}));
      },
      "[2, 5, 3] and [3, 4]"));
}

TEST_CASE("integer products wrap like PyTorch's CPU ones; alpha/beta must be integers") {
  const Tensor a = Tensor::from_host(std::vector<std::int32_t>{1, 2, 3, 4}, {2, 2});
  const Tensor b = Tensor::from_host(std::vector<std::int32_t>{5, 6, 7, 8}, {2, 2});
  const Tensor c = ops::matmul(a, b);
  CHECK(c.dtype() == int32);
  CHECK(c.to_host<std::int32_t>() == std::vector<std::int32_t>{19, 22, 43, 50});
  const Tensor i8 = Tensor::from_host(std::vector<std::int8_t>{100, 100}, {2});
  CHECK(ops::dot(i8, Tensor::from_host(std::vector<std::int8_t>{1, 1}, {2})).item().to_int() ==
        -56);
  CHECK(ops::addmm(a, a, b, 2, 3).to_host<std::int32_t>() ==
        std::vector<std::int32_t>{59, 70, 135, 158});
  CHECK_THROWS_AS(ops::addmm(a, a, b, 0.5), InvalidArgument);
}

TEST_CASE("half types keep their dtype on the host (native bf16) and round once") {
  const Tensor a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = f32({0.5f, -1, 2, 0.25f, -3, 1}, {3, 2});
  for (DType t : {float16, bfloat16}) {
    const Tensor c = ops::matmul(a.to(t), b.to(t));
    CHECK(c.dtype() == t);
    CHECK(c.to(float32).to_host<float>() == F{-4.5f, 2.5f, -6.0f, 3.25f});
  }
}

TEST_CASE("shape and dtype errors name both shapes") {
  const Tensor a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(message_has([&] { ops::matmul(a, a); }, "[2, 3] and [2, 3]"));
  const Tensor b3 = Tensor::full({2, 3, 2}, 1.5, float32),
               c3 = Tensor::full({3, 2, 4}, 1.5, float32);
  CHECK(message_has([&] { ops::matmul(b3, c3); }, "[2, 3, 2] and [3, 2, 4]"));
  CHECK(message_has([&] { ops::dot(f32({1, 2}, {2}), f32({1, 2, 3}, {3})); }, "[2] and [3]"));
  CHECK_THROWS_AS(ops::matmul(Tensor::full({}, 2.0, float32), a), InvalidArgument);
  CHECK_THROWS_AS(ops::matmul(a, a.transpose(0, 1).to(float64)), InvalidArgument);
  const Tensor bools = Tensor::from_host(std::vector<bool>{true, false}, {2});
  CHECK_THROWS_AS(ops::dot(bools, bools), InvalidArgument);
  CHECK_THROWS_AS(ops::mm(a, f32({1, 2, 3}, {3})), InvalidArgument);
  CHECK(message_has([&] { ops::matmul_shape({2, 3}, {4, 5}); }, "[2, 3] and [4, 5]"));
  CHECK(ops::matmul_shape({7, 1, 2, 3}, {5, 3, 4}) == Shape{7, 5, 2, 4});
}

TEST_CASE("zero-size products: empty outputs, and k = 0 gives beta * input") {
  CHECK(ops::matmul(Tensor::empty({0, 3}, float32), Tensor::full({3, 2}, 1.5, float32)).shape() ==
        Shape{0, 2});
  const Tensor z = ops::matmul(Tensor::empty({2, 0}, float32), Tensor::empty({0, 3}, float32));
  CHECK(z.to_host<float>() == F(6, 0.0f));
  CHECK(ops::addmm(f32({1, 2, 3}, {3}), Tensor::empty({2, 0}, float32),
                   Tensor::empty({0, 3}, float32), 2)
            .to_host<float>() == F{2, 4, 6, 2, 4, 6});
}

TEST_CASE("plan_matmul: float16 output follows native bf16; tiles fit shared memory") {
  const Capabilities& host = host_device().capabilities();
  const ops::MatmulPlan native = ops::plan_matmul(float16, host);
  CHECK(native.out_dtype == float16);
  CHECK(native.accumulate_dtype == float32);
  Capabilities emulated = host;
  emulated.bf16.value = Bf16Support::kEmulated;
  const ops::MatmulPlan guarded = ops::plan_matmul(float16, emulated);
  CHECK(guarded.out_dtype == float32);
  REQUIRE(!guarded.choices.empty());
  CHECK(guarded.choices[0].what == "out_dtype");
  CHECK(guarded.choices[0].capability == "bf16");
  CHECK(ops::plan_matmul(bfloat16, emulated).out_dtype == bfloat16);
  CHECK(ops::plan_matmul(float32, emulated).out_dtype == float32);

  CHECK(ops::plan_matmul(float16, capabilities_for_arch("nvidia/sm_70")).out_dtype == float32);
  CHECK(ops::plan_matmul(float16, capabilities_for_arch("nvidia/sm_90")).out_dtype == float16);
  for (const char* arch : {"nvidia/sm_70", "nvidia/sm_90", "amd/gfx90a", "mesa/llvmpipe", "host"})
    for (DType t : {float16, bfloat16, float32, float64}) {
      const Capabilities caps = capabilities_for_arch(arch);
      if (t == float64 && !caps.fp64.value) continue;
      INFO(arch << " " << dtype_name(t));
      const ops::MatmulPlan p = ops::plan_matmul(t, caps);
      CHECK(p.shared_memory_bytes <= caps.shared_memory_per_block.value);
      CHECK(p.shared_memory_bytes == static_cast<std::int64_t>(p.num_stages) *
                                         (p.tile_m + p.tile_n) * p.tile_k *
                                         static_cast<std::int64_t>(dtype_size(t)));
      CHECK(p.num_stages >= 1);
      CHECK(p.num_stages <= std::max(1, caps.pipelining.max_num_stages.value));
    }
  // A 48 KB device keeps a 3-stage 128x128x32 bf16 pipeline; a 16 KB one gets smaller tiles.
  Capabilities small = capabilities_for_arch("nvidia/sm_90");
  small.shared_memory_per_block.value = 49152;
  const ops::MatmulPlan p48 = ops::plan_matmul(bfloat16, small);
  CHECK(p48.tile_m == 128);
  CHECK(p48.tile_n == 128);
  CHECK(p48.num_stages == 3);
  small.shared_memory_per_block.value = 16384;
  const ops::MatmulPlan p16 = ops::plan_matmul(bfloat16, small);
  CHECK(p16.tile_m * p16.tile_n < 128 * 128);
  CHECK(p16.num_stages >= 2);
  small.shared_memory_per_block.value = 512;
  try {
    ops::plan_matmul(float32, small);
    FAIL("a 512-byte shared memory should refuse");
  } catch (const Unsupported& e) {
    CHECK(e.capability() == "shared_memory.per_block");
  }
  Capabilities no_fp64 = host;
  no_fp64.fp64.value = false;
  try {
    ops::plan_matmul(float64, no_fp64);
    FAIL("float64 without fp64 should refuse");
  } catch (const Unsupported& e) {
    CHECK(e.capability() == "fp64");
  }
  CHECK_THROWS_AS(ops::plan_matmul(DType::kBool, host), InvalidArgument);
}

TEST_CASE("float16 matmul on a device without native bf16 returns float32 (overflow guard)") {
  // A second host device whose capabilities say bf16 is only emulated, as on sm_70/sm_75.
  Capabilities caps = host_device().capabilities();
  caps.bf16.value = Bf16Support::kEmulated;
  caps.bf16.source = "test (bf16 emulated)";
  const Device pre_ampere(std::make_shared<DeviceContext>(backend_by_name("host").open(0), caps));
  // 300 * 300 = 90000 is past float16's largest finite value (65504).
  const std::vector<float> big = {300, 300};
  const Tensor a = Tensor::from_host(big, {1, 2}).to(float16);
  const Tensor b = Tensor::from_host(big, {2, 1}).to(float16);
  const Tensor native = ops::matmul(a, b);
  CHECK(native.dtype() == float16);
  CHECK(std::isinf(native.to(float32).item().to_double()));
  const Tensor guarded = ops::matmul(a.to(pre_ampere), b.to(pre_ampere));
  CHECK(guarded.dtype() == float32);
  CHECK(guarded.item().to_double() == 180000.0);
  // addmm reads a float16 addend into the float32 output.
  const Tensor bias = Tensor::from_host(std::vector<float>{0.5f}, {1}).to(float16).to(pre_ampere);
  CHECK(ops::addmm(bias, a.to(pre_ampere), b.to(pre_ampere)).item().to_double() == 180000.5);
  CHECK(ops::matmul(a.to(bfloat16).to(pre_ampere), b.to(bfloat16).to(pre_ampere)).dtype() ==
        bfloat16);
}

// Meson runs this case twice: on the plain host (native bf16: float16 stays float16) and
// with NBX_DEVICE_OVERLAY=tests/data/overlays/bf16_emulated.yml (float32 output), so both
// branches of the overflow guard run through the capability model, as on sm_70/sm_75.
TEST_CASE("overlay: float16 matmul output follows the device's bf16 support") {
  const Capabilities& caps = host_device().capabilities();
  const bool native = caps.bf16.value == Bf16Support::kNative;
  const std::vector<float> big = {300, 300};
  const Tensor a = Tensor::from_host(big, {1, 2}).to(float16);
  const Tensor b = Tensor::from_host(big, {2, 1}).to(float16);
  const Tensor out = ops::matmul(a, b);
  const ops::OpExplanation e =
      ops::explain("matmul", {float16, float16}, {{1, 2}, {2, 1}}, {caps, "host", "host"});
  REQUIRE_FALSE(e.refused);
  REQUIRE(!e.choices.empty());
  CHECK(e.choices[0].what == "out_dtype");
  if (native) {
    CHECK(out.dtype() == float16);
    CHECK(std::isinf(out.to(float32).item().to_double()));  // 90000 > 65504
    CHECK(e.output == "float16 [1, 1]");
    CHECK(e.choices[0].capability.empty());
  } else {
    INFO("overlay: " << caps.overlay);
    CHECK(caps.bf16.source.find("overlay") != std::string::npos);
    CHECK(out.dtype() == float32);
    CHECK(out.item().to_double() == 180000.0);
    CHECK(e.output == "float32 [1, 1]");
    CHECK(e.choices[0].capability == "bf16");
    CHECK(e.choices[0].source.find("overlay") != std::string::npos);
    CHECK(e.choices[0].reason.find("overflow") != std::string::npos);
  }
  CHECK(ops::matmul(a.to(bfloat16), b.to(bfloat16)).dtype() == bfloat16);
}

namespace {
const ops::PlanChoice* choice(const ops::MatmulPlan& p, const std::string& what) {
  for (const ops::PlanChoice& c : p.choices)
    if (c.what == what) return &c;
  return nullptr;
}
bool has_choice(const ops::OpExplanation& e, const std::string& what, const std::string& value) {
  for (const ops::PlanChoice& c : e.choices)
    if (c.what == what && c.value == value) return true;
  return false;
}
// Restores NBX_MATMUL's request when a case ends.
struct RequestGuard {
  ops::MatmulRequest saved = ops::matmul_variant_request();
  ~RequestGuard() { ops::set_matmul_variant_request(saved); }
};
}  // namespace

TEST_CASE("plan_matmul variant: vendor BLAS on CUDA archs, tiled on HIP and the host") {
  RequestGuard guard;
  ops::set_matmul_variant_request(ops::MatmulRequest::kAuto);
  const Capabilities hopper = capabilities_for_arch("nvidia/sm_90");
  for (DType t : {float16, bfloat16, float32, float64}) {
    const ops::MatmulPlan p = ops::plan_matmul(t, hopper);
    CHECK(p.variant == abi::kMatmulVendorBlas);
    const ops::PlanChoice* c = choice(p, "variant");
    REQUIRE(c != nullptr);
    CHECK(c->value == "matmul.blas");
    CHECK(c->capability == "matmul.blas");
    CHECK(c->source.find("cuBLASLt") != std::string::npos);
    CHECK(c->source.find("when the library loads at run time") != std::string::npos);
  }
  // cuBLASLt has no wrapping integer product: integers take the tiled kernel, and say why.
  const ops::MatmulPlan ints = ops::plan_matmul(int32, hopper);
  CHECK(ints.variant == abi::kMatmulTiled);
  REQUIRE(choice(ints, "variant") != nullptr);
  CHECK(choice(ints, "variant")->reason.find("int32") != std::string::npos);
  for (const char* arch : {"amd/gfx90a", "host"}) {
    const ops::MatmulPlan p = ops::plan_matmul(float16, capabilities_for_arch(arch));
    CHECK(p.variant == abi::kMatmulTiled);
    REQUIRE(choice(p, "variant") != nullptr);
    CHECK(choice(p, "variant")->capability == "matmul.blas");
  }
  // Vulkan with a cooperative-matrix unit: float16 takes it; bfloat16 (no bfloat16 type
  // in the shader toolchain) and float32 the tiled kernel.
  const Capabilities vk = capabilities_for_arch("nvidia/sm_90", "vulkan");
  CHECK(ops::plan_matmul(float16, vk).variant == abi::kMatmulCoopMatrix);
  CHECK(ops::plan_matmul(bfloat16, vk).variant == abi::kMatmulTiled);
  CHECK(ops::plan_matmul(float32, vk).variant == abi::kMatmulTiled);
  // A present device answers through has_kernel: the host has neither.
  const BackendDevice& host = host_device().context().backend_device();
  const ops::MatmulPlan on_host =
      ops::plan_matmul(float32, host_device().capabilities(), "matmul", &host);
  CHECK(on_host.variant == abi::kMatmulTiled);
  REQUIRE(choice(on_host, "variant") != nullptr);
  CHECK(choice(on_host, "variant")->source.find("runtime") != std::string::npos);
}

TEST_CASE("NBX_MATMUL requests: tiled is always there, a missing variant is refused by name") {
  RequestGuard guard;
  const Capabilities hopper = capabilities_for_arch("nvidia/sm_90");
  ops::set_matmul_variant_request(ops::MatmulRequest::kTiled);
  const ops::MatmulPlan tiled = ops::plan_matmul(bfloat16, hopper);
  CHECK(tiled.variant == abi::kMatmulTiled);
  CHECK(choice(tiled, "variant")->reason.find("NBX_MATMUL=tiled") != std::string::npos);
  const ops::OpExplanation e = ops::explain("matmul", {bfloat16, bfloat16}, {{64, 32}, {32, 8}},
                                            {hopper, "nvidia/sm_90", "arch nvidia/sm_90"});
  CHECK(has_choice(e, "variant", "matmul.tiled"));
  // The host product still runs (the host's "matmul" serves every variant request it has).
  CHECK(ops::matmul(f32({1, 2}, {1, 2}), f32({3, 4}, {2, 1})).item().to_double() == 11.0);

  ops::set_matmul_variant_request(ops::MatmulRequest::kBlas);
  CHECK(ops::plan_matmul(float32, hopper).variant == abi::kMatmulVendorBlas);
  for (const char* arch : {"amd/gfx90a", "host"}) {
    try {
      ops::plan_matmul(float32, capabilities_for_arch(arch));
      FAIL("the blas request should refuse on " << arch);
    } catch (const Unsupported& u) {
      CHECK(u.capability() == "matmul.blas");
      CHECK(std::string(u.what()).find("NBX_MATMUL") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(ops::plan_matmul(int32, hopper), Unsupported);
  CHECK_THROWS_AS(ops::matmul(f32({1, 2}, {1, 2}), f32({3, 4}, {2, 1})), Unsupported);
  ops::set_matmul_variant_request(ops::MatmulRequest::kCoopMatrix);
  CHECK_THROWS_AS(ops::plan_matmul(float16, hopper), Unsupported);
  CHECK(ops::plan_matmul(float16, capabilities_for_arch("nvidia/sm_90", "vulkan")).variant ==
        abi::kMatmulCoopMatrix);
}

TEST_CASE("explain matmul names the variant and the capability behind it") {
  RequestGuard guard;
  ops::set_matmul_variant_request(ops::MatmulRequest::kAuto);
  const Capabilities hopper = capabilities_for_arch("nvidia/sm_90");
  const ops::OpExplanation e = ops::explain("matmul", {float32, float32}, {{64, 32}, {32, 8}},
                                            {hopper, "nvidia/sm_90", "arch nvidia/sm_90"});
  REQUIRE_FALSE(e.refused);
  CHECK(has_choice(e, "variant", "matmul.blas"));
  bool found = false;
  for (const ops::PlanChoice& c : e.choices)
    found = found || (c.what == "variant" && c.capability == "matmul.blas");
  CHECK(found);
  const ops::OpExplanation amd =
      ops::explain("matmul", {float16, float16}, {{64, 32}, {32, 8}},
                   {capabilities_for_arch("amd/gfx90a"), "amd/gfx90a", "arch amd/gfx90a"});
  CHECK(has_choice(amd, "variant", "matmul.tiled"));
}

TEST_CASE("a shared B folds the batch into rows; NaN addends with beta 0 stay unread") {
  // [2, 3, 4] @ [4, 5] + bias: one 6 x 4 product after folding, same values as per batch.
  const D av = seeded(24, 7), bv = seeded(20, 8);
  const Tensor a = Tensor::from_host(av, {2, 3, 4});
  const Tensor b = Tensor::from_host(bv, {4, 5});
  const Tensor bias = Tensor::from_host(D{1, 2, 3, 4, 5}, {5});
  const Tensor out = ops::linear(a, b.transpose(0, 1), bias);
  CHECK(out.shape() == Shape{2, 3, 5});
  D want = naive(av, bv, 6, 4, 5);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] += static_cast<double>(i % 5 + 1);
  check_close(out.to_host<double>(), want);
  // A transposed batch does not fold; the result is the same.
  const Tensor at = Tensor::from_host(av, {2, 4, 3}).transpose(1, 2);
  CHECK(ops::matmul(at, b).shape() == Shape{2, 3, 5});
  const Tensor nan = Tensor::full({3, 5}, std::nan(""), float64);
  const D prod = ops::baddbmm(nan, a, b.unsqueeze(0).expand({2, 4, 5}), 0.0).to_host<double>();
  for (double v : prod) CHECK_FALSE(std::isnan(v));
}

// A 16-bit product of one column with an addend rounds once: 43.5 + 0.125 = 43.625 lies halfway
// between the bfloat16 neighbours 43.5 and 43.75; rounded there before the bias -35.75 it
// would give 7.75 (or 8.0), not 7.875 (cuBLASLt's matrix-vector path did, on the H200).
TEST_CASE("bfloat16 linear and addmv of one column add the bias before rounding, every device") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const auto bf = [&](F v, Shape s) { return f32(v, s).to(d).to(DType::kBFloat16); };
    const Tensor x = bf({43.5f, 0.125f}, {1, 2});
    const Tensor linear = ops::linear(x, bf({1, 1}, {2}), bf({-35.75f}, {}));
    CHECK(linear.to(DType::kFloat32).to_host<float>() == F{7.875f});
    const Tensor addmv = ops::addmv(bf({-35.75f}, {1}), x, bf({1, 1}, {2}));
    CHECK(addmv.to(DType::kFloat32).to_host<float>() == F{7.875f});
  }
}
