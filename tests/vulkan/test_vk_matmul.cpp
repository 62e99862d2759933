// The "matmul" family on vulkan:0 against the host reference. Raw launches force each
// variant: the tiled kernel over every dtype, every tile shape the wrapper picks, odd sizes,
// transposed / broadcast / offset operands and addends, alpha/beta (beta 0 with a NaN
// addend); the cooperative-matrix kernel where the device offers it (float16; refused by
// name elsewhere, as on llvmpipe). The public ops (matmul, mm, bmm, mv, dot, addmm, baddbmm,
// addmv, addr, linear) are compared with the host in tests/conformance.
//
// Values are seeded and non-zero (floats in ±[0.05, 1], integers in ±[1, 8], which wrap
// int8/uint8/int16 sums at k = 129). Tolerances: integers exact; floats
// |got - want| <= rtol(out dtype) |want| + 8 eps(accumulate) k.
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "nbx/nbx.hpp"
#include "vk_test_util.hpp"

namespace nbx::vktest {
namespace {

Raw nonzero_raw(DType t, std::size_t n, std::uint64_t seed) {
  Raw r{t, std::vector<std::byte>(n * dtype_size(t))};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.05, 1.0);
  std::uniform_int_distribution<int> i(1, 8);
  for (std::size_t k = 0; k < n; ++k) {
    const bool neg = (rng() & 1) && t != DType::kUInt8;
    set_element(r, k, neg ? -u(rng) : u(rng), neg ? -i(rng) : i(rng));
  }
  return r;
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

// "" or the first mismatch; `k` is the product's inner size, `acc` its accumulate dtype.
std::string compare_product(const Raw& got, const Raw& want, std::int64_t k, DType acc) {
  const double eps = acc == DType::kFloat64 ? 2.3e-16 : 1.2e-7;
  for (std::size_t i = 0; i < want.count(); ++i) {
    bool ok;
    double g, w;
    if (is_floating(want.dtype)) {
      g = element_as_double(got, i), w = element_as_double(want, i);
      const double tol = rtol(want.dtype) * std::fabs(w) + 8 * eps * double(k);
      ok = std::isnan(w) ? std::isnan(g) : std::fabs(g - w) <= tol;
    } else {
      g = double(element_as_int(got, i)), w = double(element_as_int(want, i));
      ok = element_as_int(got, i) == element_as_int(want, i);
    }
    if (!ok)
      return "element " + std::to_string(i) + " (" + std::string(dtype_name(want.dtype)) +
             "): vulkan " + std::to_string(g) + ", host " + std::to_string(w);
  }
  return {};
}

bool device_has(DType t) {
  const DeviceProperties& p = vulkan_device().properties();
  if (t == DType::kFloat64) return p.fp64.value_or(false);
  if (t == DType::kInt64) return p.int64.value_or(false);
  return true;
}

DType accumulate_of(DType t) {
  return (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
}

// One raw product: operands with explicit layouts, run on a device.
struct Product {
  abi::MatmulParams p{};
  Raw a, b, addend, out;
};

struct Layout {
  bool a_t = false, b_t = false;  // stored transposed
  std::int64_t a_offset = 0;      // elements before A (an odd one rules out vector loads)
  std::int64_t batch = 1;
  bool a_broadcast = false;  // A has one matrix for the whole batch (stride 0)
  bool addend = false, addend_row_broadcast = false;
  double alpha = 1, beta = 0;
  bool nan_addend = false;  // with beta 0: must not reach the result
};

Product make_product(DType t, DType out, std::int64_t m, std::int64_t n, std::int64_t k,
                     const Layout& lay, std::uint64_t seed, int tile_m, int tile_n, int tile_k,
                     std::int32_t variant) {
  Product r;
  abi::MatmulParams& p = r.p;
  p.a_dtype = std::int32_t(t);
  p.out_dtype = std::int32_t(out);
  p.accumulate_dtype = std::int32_t(accumulate_of(t));
  p.tile_m = tile_m, p.tile_n = tile_n, p.tile_k = tile_k, p.num_stages = 1;
  p.variant = variant;
  p.m = m, p.n = n, p.k = k;
  p.batch_ndim = 1;
  p.batch = lay.batch;
  p.batch_sizes[0] = lay.batch;
  p.alpha = lay.alpha, p.beta = lay.beta;
  const std::int64_t a_mats = lay.a_broadcast ? 1 : lay.batch;
  r.a = nonzero_raw(t, std::size_t(lay.a_offset + a_mats * m * k), seed);
  r.b = nonzero_raw(t, std::size_t(lay.batch * k * n), seed + 1);
  p.a_offset = lay.a_offset;
  p.a_batch_strides[0] = lay.a_broadcast ? 0 : m * k;
  p.a_row_stride = lay.a_t ? 1 : k;
  p.a_col_stride = lay.a_t ? m : 1;
  p.b_batch_strides[0] = k * n;
  p.b_row_stride = lay.b_t ? 1 : n;
  p.b_col_stride = lay.b_t ? k : 1;
  p.out_batch_strides[0] = m * n;
  p.out_row_stride = n, p.out_col_stride = 1;
  r.out = Raw{out, std::vector<std::byte>(std::size_t(lay.batch * m * n) * dtype_size(out),
                                          std::byte{0x5a})};
  if (lay.addend) {
    p.has_addend = 1;
    p.addend_dtype = std::int32_t(t);
    const std::int64_t rows = lay.addend_row_broadcast ? 1 : m;
    r.addend = nonzero_raw(t, std::size_t(lay.batch * rows * n), seed + 2);
    if (lay.nan_addend)
      for (std::size_t i = 0; i < r.addend.count(); i += 3) set_element(r.addend, i, NAN, 0);
    p.addend_batch_strides[0] = rows * n;
    p.addend_row_stride = lay.addend_row_broadcast ? 0 : n;
    p.addend_col_stride = 1;
  }
  return r;
}

Raw run_product(BackendDevice& dev, const Product& r) {
  std::vector<KernelBuffer> buffers;
  auto upload = [&dev](const Raw& raw) {
    DeviceMemory mem = dev.allocate(std::max<std::size_t>(raw.bytes.size(), 16));
    if (!raw.bytes.empty()) dev.copy_from_host(mem, 0, raw.bytes.data(), raw.bytes.size());
    return mem;
  };
  buffers.push_back({upload(r.out), true});
  buffers.push_back({upload(r.a), false});
  buffers.push_back({upload(r.b), false});
  if (r.p.has_addend) buffers.push_back({upload(r.addend), false});
  Raw out = r.out;
  try {
    dev.launch({nbx::KernelFamily::kMatmul, buffers, std::as_bytes(std::span(&r.p, 1))});
    dev.copy_to_host(out.bytes.data(), buffers[0].memory, 0, out.bytes.size());
    dev.synchronize();
  } catch (...) {
    for (KernelBuffer& b : buffers) dev.free(b.memory);
    throw;
  }
  for (KernelBuffer& b : buffers) dev.free(b.memory);
  return out;
}

// Runs on both devices and compares; returns false when vulkan refused it by name.
bool check_product(const Product& r, const std::string& label) {
  INFO(label);
  Raw got;
  try {
    got = run_product(vulkan_device(), r);
  } catch (const Unsupported& e) {
    MESSAGE("refused: " << std::string(e.what()));
    return false;
  }
  // The host reference runs the tiled variant (a variant is a speed choice, never a
  // semantic one): the host offers no other.
  Product host = r;
  host.p.variant = abi::kMatmulTiled;
  const Raw want = run_product(host_device(), host);
  CHECK_MESSAGE(compare_product(got, want, r.p.k, DType(r.p.accumulate_dtype)) == "",
                compare_product(got, want, r.p.k, DType(r.p.accumulate_dtype)));
  return true;
}

struct Tile {
  int m, n, k;
};
// The wrapper's tile list (core/ops/linalg.cpp).
constexpr Tile kTiles[] = {{128, 128, 32}, {128, 64, 32}, {64, 64, 32},
                           {64, 64, 16},   {32, 32, 16},  {16, 16, 16}};
constexpr DType kAllTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                               DType::kFloat64, DType::kInt8,    DType::kUInt8,
                               DType::kInt16,   DType::kInt32,   DType::kInt64};

std::uint64_t tile_bytes(const Tile& t, DType d) {
  return std::uint64_t(t.m + t.n) * t.k * (dtype_size(d) == 8 ? 8 : 4);
}

TEST_CASE("tiled: every dtype, every tile, odd sizes") {
  struct Size {
    std::int64_t m, n, k;
  };
  const Size sizes[] = {{1, 1, 1}, {17, 17, 17}, {65, 129, 33}, {129, 17, 65}};
  const std::uint64_t shared =
      std::uint64_t(vulkan_device().properties().shared_memory_per_block.value_or(0));
  std::uint64_t seed = 7100;
  for (DType t : kAllTypes) {
    if (!device_has(t)) continue;
    for (const Tile& tile : kTiles) {
      // Every tile for the common float types; the largest and smallest for the rest.
      const bool main_type = t == DType::kFloat32 || t == DType::kFloat16;
      if (!main_type && &tile != &kTiles[0] && &tile != &kTiles[5]) continue;
      for (const Size& s : sizes) {
        const std::string label = std::string(dtype_name(t)) + " " + std::to_string(s.m) + "x" +
                                  std::to_string(s.n) + "x" + std::to_string(s.k) + " tile " +
                                  std::to_string(tile.m) + "x" + std::to_string(tile.n) + "x" +
                                  std::to_string(tile.k) + " seed " + std::to_string(seed);
        const Product r =
            make_product(t, t, s.m, s.n, s.k, {}, seed, tile.m, tile.n, tile.k, abi::kMatmulTiled);
        seed += 3;
        const bool ran = check_product(r, label);
        // Refused only where the tile does not fit the device's shared memory.
        CHECK_MESSAGE(ran == (tile_bytes(tile, t) <= shared), label);
      }
    }
  }
}

TEST_CASE("tiled: transposed, offset, broadcast operands; alpha, beta, addends") {
  std::uint64_t seed = 7300;
  const DType types[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt8,
                         DType::kInt32,   DType::kFloat64, DType::kInt64};
  struct Named {
    const char* name;
    Layout lay;
  };
  const Named layouts[] = {
      {"A transposed", {.a_t = true}},
      {"B transposed", {.b_t = true}},
      {"both transposed, batch 3", {.a_t = true, .b_t = true, .batch = 3}},
      {"A offset 3", {.a_offset = 3}},
      {"A broadcast over batch 4", {.batch = 4, .a_broadcast = true}},
      {"addend, alpha 3 beta 2", {.addend = true, .alpha = 3, .beta = 2}},
      {"row-broadcast addend, beta -1",
       {.batch = 2, .addend = true, .addend_row_broadcast = true, .beta = -1}},
      {"beta 0 ignores a NaN addend", {.addend = true, .beta = 0, .nan_addend = true}},
  };
  for (DType t : types) {
    if (!device_has(t)) continue;
    for (const Named& n : layouts) {
      if (n.lay.nan_addend && !is_floating(t)) continue;
      for (const Tile& tile : {kTiles[2], kTiles[3]}) {
        const std::string label = std::string(dtype_name(t)) + " " + n.name + " tile " +
                                  std::to_string(tile.m) + "x" + std::to_string(tile.k) + " seed " +
                                  std::to_string(seed);
        const Product r =
            make_product(t, t, 67, 68, 36, n.lay, seed, tile.m, tile.n, tile.k, abi::kMatmulTiled);
        seed += 3;
        CHECK_MESSAGE(check_product(r, label), label);
      }
    }
  }
  // float16 operands with a float32 output (the wrapper's choice without native bf16).
  const Product r =
      make_product(DType::kFloat16, DType::kFloat32, 65, 33, 129,
                   {.addend = true, .alpha = 0.5, .beta = 2}, 7400, 64, 64, 32, abi::kMatmulTiled);
  CHECK(check_product(r, "float16 -> float32 with addend"));
  // k = 0: alpha * 0 + beta * addend.
  const Product z = make_product(DType::kFloat32, DType::kFloat32, 5, 7, 0,
                                 {.addend = true, .beta = 3}, 7401, 16, 16, 16, abi::kMatmulTiled);
  CHECK(check_product(z, "k = 0"));
}

TEST_CASE("tiled: refusals by name") {
  // 128 x 128 x 64 float32 needs 64 KiB of shared memory: more than llvmpipe's 32 KiB and
  // NVIDIA's 48 KiB.
  const Product big = make_product(DType::kFloat32, DType::kFloat32, 8, 8, 8, {}, 7500, 128, 128,
                                   64, abi::kMatmulTiled);
  if (tile_bytes({128, 128, 64}, DType::kFloat32) >
      std::uint64_t(vulkan_device().properties().shared_memory_per_block.value_or(0))) {
    try {
      run_product(vulkan_device(), big);
      FAIL("an oversized tile ran");
    } catch (const Unsupported& e) {
      CHECK(e.capability() == "shared_memory.per_block");
      CHECK(std::string(e.what()).find("refused") != std::string::npos);
    }
  }
  const Product blas = make_product(DType::kFloat32, DType::kFloat32, 8, 8, 8, {}, 7501, 16, 16, 16,
                                    abi::kMatmulVendorBlas);
  CHECK_THROWS_AS(run_product(vulkan_device(), blas), Unsupported);
  Product odd = make_product(DType::kFloat32, DType::kFloat32, 8, 8, 8, {}, 7502, 24, 16, 16,
                             abi::kMatmulTiled);
  CHECK_THROWS_AS(run_product(vulkan_device(), odd), InvalidArgument);
}

// Restores NBX_VULKAN_COOPMAT (which cooperative-matrix build the backend takes).
struct CoopmatBuildGuard {
  ~CoopmatBuildGuard() { unsetenv("NBX_VULKAN_COOPMAT"); }
};

// The float16 products of one cooperative-matrix build against the host.
void check_coopmat_build(std::uint64_t seed) {
  struct Size {
    std::int64_t m, n, k;
  };
  const Size sizes[] = {{1, 1, 1},     {16, 16, 16},   {17, 17, 17},    {65, 129, 33},
                        {129, 17, 65}, {128, 128, 32}, {257, 255, 1000}};
  for (DType out : {DType::kFloat32, DType::kFloat16}) {
    for (const Size& s : sizes) {
      const std::string label = "coopmat float16 -> " + std::string(dtype_name(out)) + " " +
                                std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                                std::to_string(s.k) + " seed " + std::to_string(seed);
      const Product r = make_product(DType::kFloat16, out, s.m, s.n, s.k, {}, seed, 128, 128, 32,
                                     abi::kMatmulCoopMatrix);
      seed += 3;
      CHECK_MESSAGE(check_product(r, label), label);
    }
  }
  const Layout layouts[] = {{.a_t = true},
                            {.b_t = true, .batch = 3},
                            {.a_offset = 3, .batch = 2, .a_broadcast = true},
                            {.addend = true, .alpha = 0.5, .beta = 2},
                            {.addend = true, .addend_row_broadcast = true, .beta = -1},
                            {.addend = true, .beta = 0, .nan_addend = true}};
  for (const Layout& lay : layouts) {
    const std::string label = "coopmat layout seed " + std::to_string(seed);
    const Product r = make_product(DType::kFloat16, DType::kFloat32, 131, 67, 72, lay, seed, 128,
                                   128, 32, abi::kMatmulCoopMatrix);
    seed += 3;
    CHECK_MESSAGE(check_product(r, label), label);
  }
}

TEST_CASE("cooperative matrix: float16 where offered, refused by name elsewhere") {
  BackendDevice& dev = vulkan_device();
  const auto& extra = dev.properties().extra;
  const auto it = extra.find("matmul.coopmat");
  REQUIRE_MESSAGE(it != extra.end(), "the backend reports matmul.coopmat in its properties");
  MESSAGE("matmul.coopmat on " << dev.display_name() << ": " << it->second);
  if (extra.count("cooperative_matrix_shapes"))
    MESSAGE("cooperative-matrix shapes: " << extra.at("cooperative_matrix_shapes"));
  const bool offered = it->second.rfind("float16", 0) == 0;
  // offers(matmul.coopmat) is the wrapper's question: never yes without a kernel.
  CHECK((offered || !dev.offers(nbx::KernelFamily::kMatmul, nbx::abi::kMatmulCoopMatrix)));
  if (offered && !dev.offers(nbx::KernelFamily::kMatmul, nbx::abi::kMatmulCoopMatrix))
    MESSAGE(
        "offers(matmul.coopmat) is false although the device has a build: the "
        "wrapper will not pick the variant (per-device kernel answers missing)");
  const Product tiny = make_product(DType::kFloat16, DType::kFloat32, 16, 16, 16, {}, 7600, 128,
                                    128, 32, abi::kMatmulCoopMatrix);
  if (!offered) {
    try {
      run_product(dev, tiny);
      FAIL("a cooperative-matrix launch ran on a device without one");
    } catch (const Unsupported& e) {
      CHECK(e.capability() == "matmul.coopmat");
    }
    return;
  }
  // Each build the device can run: glslc's NV module and the KHR one rewritten from it.
  CoopmatBuildGuard guard;
  int builds = 0;
  for (const char* build : {"nv", "khr"}) {
    setenv("NBX_VULKAN_COOPMAT", build, 1);
    try {
      run_product(dev, tiny);
    } catch (const Unsupported& e) {
      MESSAGE("coopmat build " << build << " not run: " << std::string(e.what()));
      continue;
    }
    ++builds;
    INFO("coopmat build " << build);
    check_coopmat_build(7700);
  }
  CHECK(builds > 0);
  unsetenv("NBX_VULKAN_COOPMAT");
  // Other dtypes are not cooperative-matrix products: the variant's contract
  // (core/families/matmul_family.cpp) refuses them at the seam, never swapped.
  const Product bf = make_product(DType::kBFloat16, DType::kBFloat16, 16, 16, 16, {}, 7800, 128,
                                  128, 32, abi::kMatmulCoopMatrix);
  try {
    run_product(dev, bf);
    FAIL("a bfloat16 cooperative-matrix launch ran");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("matmul.coopmat variant does not serve it") !=
          std::string::npos);
  }
}

}  // namespace
}  // namespace nbx::vktest
