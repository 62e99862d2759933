// The "matmul" family on the GPU under test: what only a GPU test can reach, through the
// public ops, once per variant the device offers, each forced (the own tiled kernel, what HIP
// runs; the vendor BLAS, cuBLASLt, CUDA only): products large enough for the vendor BLAS to
// time its algorithms (each twice, the addend read once), every tile shape of the tiled
// kernel (devices opened with smaller shared-memory capabilities), and the variant report.
// Odd sizes, batches, transposed and stepped operands, alpha/beta/addends against the host
// are conformance cases (tests/conformance: conformance-cuda runs the automatic choice,
// conformance-cuda-tiled the tiled kernel under NBX_MATMUL=tiled).
//
// Tolerances: integers exact; floats |got - want| <= rtol(out dtype) * |want| + 8 * eps(acc)
// * k * mean|a*b| (the accumulation bound of k float32/float64 additions).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "nbx/nbx.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

Device gpu() {
  return open(backend_under_test() + ":0");
}

// The variants the device under test offers, each with the request that forces it.
struct VariantRequest {
  const char* name;
  ops::MatmulRequest request;
};
std::vector<VariantRequest> variants(const Device& d) {
  std::vector<VariantRequest> v = {{"tiled", ops::MatmulRequest::kTiled}};
  if (d.context().backend_device().offers(nbx::KernelFamily::kMatmul, nbx::abi::kMatmulVendorBlas))
    v.push_back({"blas", ops::MatmulRequest::kBlas});
  else
    MESSAGE("no matmul.blas on " << d.display_name() << ": "
                                 << (d.properties().extra.count("matmul.blas")
                                         ? d.properties().extra.at("matmul.blas")
                                         : std::string("(no status)")));
  return v;
}

struct RequestGuard {
  ops::MatmulRequest saved = ops::matmul_variant_request();
  ~RequestGuard() { ops::set_matmul_variant_request(saved); }
};

// The host reference under the automatic choice: a forced variant (blas, coopmat) is a
// request to the device under test, which the host would refuse by name.
template <class F>
Tensor host_ref(F&& f) {
  RequestGuard guard;
  ops::set_matmul_variant_request(ops::MatmulRequest::kAuto);
  return f();
}

// Seeded non-zero values: floats in [-1, 1] away from 0, integers in [-8, 8] \ {0}.
std::vector<std::byte> random_bytes(DType t, std::int64_t n, std::uint64_t seed) {
  std::vector<std::byte> v(std::size_t(n) * dtype_size(t));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.05, 1.0);
  std::uniform_int_distribution<int> i(1, 8);
  for (std::int64_t k = 0; k < n; ++k) {
    const bool neg = rng() & 1;
    if (is_floating(t))
      put_element(v, t, k, neg ? -u(rng) : u(rng), 0);
    else
      put_element(v, t, k, 0, neg && t != DType::kUInt8 ? -i(rng) : i(rng));
  }
  return v;
}

struct Pair {
  Tensor host, dev;
};
Pair make(DType t, const Shape& shape, std::uint64_t seed, const Device& device) {
  const auto bytes = random_bytes(t, numel(shape), seed);
  return {Tensor::from_host(bytes.data(), shape, t),
          Tensor::from_host(bytes.data(), shape, t, device)};
}

double rtol(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 2e-3;
    case DType::kBFloat16:
      return 1.6e-2;
    case DType::kFloat32:
      return 1e-5;
    default:
      return 1e-12;
  }
}

// Compares a GPU result with the host's; `k` is the product's inner size.
void compare(const Tensor& host, const Tensor& dev, std::int64_t k, const std::string& label) {
  INFO(label << " " << dtype_name(host.dtype()) << " k " << k);
  REQUIRE(host.dtype() == dev.dtype());
  REQUIRE(host.shape() == dev.shape());
  const std::size_t bytes = std::size_t(host.numel()) * dtype_size(host.dtype());
  std::vector<std::byte> e(bytes), g(bytes);
  host.copy_to_host(e.data());
  dev.copy_to_host(g.data());
  const DType t = host.dtype();
  int bad = 0;
  for (std::int64_t i = 0; i < host.numel() && bad < 5; ++i) {
    if (!is_floating(t)) {
      const std::int64_t want = element_as_int(e, t, i), got = element_as_int(g, t, i);
      if (want != got) {
        ++bad;
        FAIL_CHECK("element " << i << ": got " << got << ", want " << want);
      }
      continue;
    }
    const double want = element_as_double(e, t, i), got = element_as_double(g, t, i);
    const double acc_eps = t == DType::kFloat64 ? 2.2e-16 : 1.2e-7;
    const double tol = rtol(t) * std::fabs(want) + 8 * acc_eps * double(k) * 0.3 + 1e-300;
    const bool ok = std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= tol;
    if (!ok) {
      ++bad;
      FAIL_CHECK("element " << i << ": got " << got << ", want " << want << " (tolerance " << tol
                            << ")");
    }
  }
}

bool device_has(const Device& d, DType t) {
  const Capabilities& c = d.capabilities();
  if (t == DType::kFloat64) return c.fp64.value;
  if (t == DType::kBFloat16) return c.bf16.value != Bf16Support::kNone;
  if (t == DType::kInt64) return c.int64.value;
  return true;
}

// Two results the same bit for bit (the same algorithm on the same operands).
void check_same_bits(const Tensor& x, const Tensor& y, const std::string& label) {
  INFO(label);
  REQUIRE(x.dtype() == y.dtype());
  REQUIRE(x.shape() == y.shape());
  const std::size_t bytes = std::size_t(x.numel()) * dtype_size(x.dtype());
  std::vector<std::byte> bx(bytes), by(bytes);
  x.copy_to_host(bx.data());
  y.copy_to_host(by.data());
  CHECK(bx == by);
}

// Products of at least 2^27 multiply-adds, where the vendor BLAS with NBX_BLAS_TUNE=1 (read
// once per process: bench/run_h200_wave1.sh runs this case in a process of its own with it)
// times the heuristic's algorithms the first time it sees a problem
// (backends/cuda/cuda_blas_tune.hpp), each run twice: the first call tunes, the second takes the
// cached choice. With beta != 0 the addend is laid into the output and read back as C, so tuning
// that wrote the output would add the addend more than once: both calls against the host, the
// addend unchanged, and the two calls equal bit for bit (one algorithm per problem in a process).
// Beta 0 times into the output itself. Runs each variant the device offers (the tiled kernel too).
TEST_CASE("matmul large enough to tune the vendor BLAS, twice: the addend read once") {
  RequestGuard guard;
  const Device dev = gpu();
  std::uint64_t seed = 55000;
  const std::int64_t m = 512, k = 512, n = 512;  // 2^27 multiply-adds, the least tuned
  const double alpha = 0.75, beta = -1.5;
  for (const VariantRequest& v : variants(dev)) {
    ops::set_matmul_variant_request(v.request);
    // bfloat16 (the dtype the tuning is for) and float32 (the tightest tolerance).
    for (DType t : {DType::kBFloat16, DType::kFloat32}) {
      if (!device_has(dev, t)) continue;
      const std::string tag = std::string(v.name) + " ";
      const Pair a = make(t, {m, k}, seed++, dev);
      const Pair b = make(t, {k, n}, seed++, dev);
      const Pair full = make(t, {m, n}, seed++, dev);
      const Pair bias = make(t, {n}, seed++, dev);
      // Twice each: the first call tunes (on the vendor BLAS), the second reuses the choice.
      const auto twice = [&](const Tensor& want, auto&& run, const std::string& what) {
        const Tensor first = run(), second = run();
        compare(want, first, k, tag + what + ", first call");
        compare(want, second, k, tag + what + ", second call");
        check_same_bits(first, second, tag + what + ", first and second call");
      };
      twice(
          host_ref([&] { return ops::addmm(full.host, a.host, b.host, beta, alpha); }),
          [&] { return ops::addmm(full.dev, a.dev, b.dev, beta, alpha); }, "addmm full");
      check_same_bits(full.host, full.dev, tag + "the addend after addmm");
      twice(
          host_ref([&] { return ops::addmm(bias.host, a.host, b.host, beta, alpha); }),
          [&] { return ops::addmm(bias.dev, a.dev, b.dev, beta, alpha); }, "addmm bias");
      twice(
          host_ref([&] { return ops::mm(a.host, b.host); }), [&] { return ops::mm(a.dev, b.dev); },
          "mm (beta 0)");
      // A strided batch (2 x 256 x 512 x 512) with an addend broadcast over it.
      const Pair b1 = make(t, {2, 256, k}, seed++, dev);
      const Pair b2 = make(t, {2, k, n}, seed++, dev);
      const Pair in = make(t, {256, n}, seed++, dev);
      twice(
          host_ref([&] { return ops::baddbmm(in.host, b1.host, b2.host, beta, alpha); }),
          [&] { return ops::baddbmm(in.dev, b1.dev, b2.dev, beta, alpha); }, "baddbmm");
      check_same_bits(in.host, in.dev, tag + "the addend after baddbmm");
    }
  }
}

// Devices opened with a smaller shared memory in their capabilities make the wrapper pick
// every tile of the tiled kernel (and 1- or 2-stage pipelines), so each instantiation that
// HIP or a small-memory device would take runs here too.
TEST_CASE("every tile shape of the tiled kernel") {
  RequestGuard guard;
  ops::set_matmul_variant_request(ops::MatmulRequest::kTiled);
  std::uint64_t seed = 54000;
  for (std::int64_t smem : {49152, 16384, 8192, 4096, 2048, 1024}) {
    Capabilities caps = gpu().capabilities();
    caps.shared_memory_per_block.value = smem;
    const Device small(
        std::make_shared<DeviceContext>(backend_by_name(backend_under_test()).open(0), caps));
    for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt8}) {
      const Pair a = make(t, {3, 130, 77}, seed++, small);
      const Pair b = make(t, {3, 77, 131}, seed++, small);
      // The smallest tile (16x16x16) of a 4-byte dtype needs 2048 bytes: below that the
      // wrapper refuses by name, on the device as in the plan.
      if (std::int64_t(32 * 16 * dtype_size(t)) > smem) {
        CHECK_THROWS_AS(ops::plan_matmul(t, caps), Unsupported);
        CHECK_THROWS_AS(ops::matmul(a.dev, b.dev), Unsupported);
        continue;
      }
      const ops::MatmulPlan plan = ops::plan_matmul(t, caps);
      const std::string tag = "smem " + std::to_string(smem) + " tile " +
                              std::to_string(plan.tile_m) + "x" + std::to_string(plan.tile_n) +
                              "x" + std::to_string(plan.tile_k) + "/" +
                              std::to_string(plan.num_stages);
      compare(host_ref([&] { return ops::matmul(a.host, b.host); }), ops::matmul(a.dev, b.dev), 77,
              tag);
    }
  }
}

TEST_CASE("the device reports its vendor BLAS, and a missing variant is refused by name") {
  RequestGuard guard;
  const Device dev = gpu();
  const auto& extra = dev.properties().extra;
  REQUIRE(extra.count("matmul.blas") == 1);
  MESSAGE("matmul.blas: " << extra.at("matmul.blas"));
  const BackendDevice& bd = dev.context().backend_device();
  CHECK(bd.offers(nbx::KernelFamily::kMatmul));
  ops::set_matmul_variant_request(ops::MatmulRequest::kAuto);
  const ops::MatmulPlan plan =
      ops::plan_matmul(DType::kBFloat16, dev.capabilities(), "matmul", &bd);
  CHECK(plan.variant == (bd.offers(nbx::KernelFamily::kMatmul, nbx::abi::kMatmulVendorBlas)
                             ? abi::kMatmulVendorBlas
                             : abi::kMatmulTiled));
  if (backend_under_test() == "cuda") {
    // The H200 has cuBLASLt 13 in /usr/local/cuda/lib64: its absence would be a finding.
    CHECK_MESSAGE(bd.offers(nbx::KernelFamily::kMatmul, nbx::abi::kMatmulVendorBlas),
                  extra.at("matmul.blas"));
  } else {
    CHECK_FALSE(bd.offers(nbx::KernelFamily::kMatmul, nbx::abi::kMatmulVendorBlas));
    ops::set_matmul_variant_request(ops::MatmulRequest::kBlas);
    const Pair a = make(DType::kFloat32, {4, 4}, 1, dev);
    try {
      (void)ops::matmul(a.dev, a.dev);
      FAIL("the blas request should be refused on " << dev.display_name());
    } catch (const Unsupported& e) {
      CHECK(e.capability() == "matmul.blas");
    }
  }
}

}  // namespace
}  // namespace nbx::gputest
