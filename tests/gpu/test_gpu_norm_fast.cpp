// The "norm" family's contiguous-row kernel (kernels/gpu/norm_rows_fast.cu, the
// default) and the general kernel (norm_kernels.cu, NBX_GPU_ROWS=general) against
// the host reference: layer_norm and rms_norm in every float dtype, with and without weight
// and bias, on row lengths around the warp and vector widths, odd lengths (row starts not
// 16-byte aligned), the boundary between rows held in registers and the looped kernel,
// many short rows (sub-warp lane groups) and few long ones (up to 1024 lanes per row),
// values with a large mean and a small spread (cancellation: the mean's rounding must be
// corrected), NaN and ±inf rows and constant rows. The eligible cases run on a device opened
// with NBX_GPU_ROWS=fast-only, which refuses a launch the fast kernel does not serve: a
// case that passes there ran the fast kernel. With NBX_TEST_GPU_BACKEND=host every device
// is the host (which ignores NBX_GPU_ROWS): that checks this file's logic without a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <span>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "tests/common/planned_launch.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

bool gpu_backend() {
  return backend_under_test() != "host";
}

// What a row holds.
enum class Values {
  kSpread,     // uniform in [-1.5, 2.5]: a mean to subtract
  kLargeMean,  // 1000 ± 0.5 (float32, float64), ± 32 ulps of 1000 (16-bit floats)
  kSpecial,    // kSpread, with NaN, +inf, -inf or both infinities in some rows, and
               // constant rows (zero variance)
};

struct Problem {
  abi::NormOp op = abi::kNorm_layer_norm;
  DType t = DType::kFloat32;
  std::int64_t rows = 1, row_len = 1;
  bool weight = false, bias = false;
  Values values = Values::kSpread;
  DType param = DType::kFloat32;  // the weight/bias dtype; t unless set otherwise
  DType accumulate = DType::kFloat32;
  int row_tile = 1024;  // what the wrapper passes for long rows on the H200
  std::uint64_t seed = 0;
};

Problem problem(abi::NormOp op, DType t, std::int64_t rows, std::int64_t row_len, bool weight,
                bool bias, Values values, std::uint64_t seed) {
  Problem q;
  q.op = op;
  q.t = q.param = t;
  q.accumulate = t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  q.rows = rows;
  q.row_len = row_len;
  q.weight = weight;
  q.bias = bias;
  q.values = values;
  q.seed = seed;
  return q;
}

std::string label(const Problem& q) {
  return std::string(q.op == abi::kNorm_layer_norm ? "layer_norm"
                     : q.op == abi::kNorm_rms_norm ? "rms_norm"
                                                   : "norm op " + std::to_string(int(q.op))) +
         " " + std::string(dtype_name(q.t)) + " [" + std::to_string(q.rows) + ", " +
         std::to_string(q.row_len) + "] weight " + std::to_string(q.weight) + " bias " +
         std::to_string(q.bias) + " param " + std::string(dtype_name(q.param)) + " values " +
         std::to_string(int(q.values)) + " seed " + std::to_string(q.seed);
}

abi::NormParams params_for(const Problem& q) {
  abi::NormParams p{};
  p.op = q.op;
  p.in_dtype = p.out_dtype = std::int32_t(q.t);
  p.accumulate_dtype = std::int32_t(q.accumulate);
  p.param_dtype = std::int32_t(q.param);
  p.has_weight = q.weight;
  p.has_bias = q.bias;
  p.row_tile = q.row_tile;
  p.eps = 1e-5;
  p.rows = q.rows;
  p.row_len = q.row_len;
  p.channels = q.row_len;
  p.inner = 1;
  p.groups = 1;
  return p;
}

// Buffers [out, in, weight, bias]; weight and bias empty where absent.
struct Inputs {
  std::vector<std::byte> in, weight, bias;
};

Inputs make_inputs(const Problem& q) {
  std::mt19937_64 rng(q.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Inputs x;
  const std::int64_t numel = q.rows * q.row_len;
  x.in.assign(std::size_t(numel) * dtype_size(q.t), std::byte{0});
  // The spread: 64 ulps of 1000 in 16-bit floats (an ulp is 4 in bfloat16, 0.5 in
  // float16); one in float32 and float64, where the mean's rounding (up to 3e-5 at 1000 in
  // float32, 1e-4 after dividing by the standard deviation of 0.29) is what is tested.
  const double spread = q.t == DType::kBFloat16 ? 256.0 : q.t == DType::kFloat16 ? 32.0 : 1.0;
  for (std::int64_t r = 0; r < q.rows; ++r) {
    const std::int64_t base = r * q.row_len;
    const bool constant = q.values == Values::kSpecial && r % 6 == 5;
    for (std::int64_t k = 0; k < q.row_len; ++k) {
      double v = q.values == Values::kLargeMean ? 1000.0 + spread * (unit(rng) - 0.5)
                                                : -1.5 + 4.0 * unit(rng);
      if (constant) v = 0.75;
      put_element(x.in, q.t, base + k, v, 0);
    }
    if (q.values != Values::kSpecial) continue;
    const std::int64_t a = (r * 13) % q.row_len, b = (r * 29 + q.row_len / 2) % q.row_len;
    switch (r % 6) {
      case 1:
        put_element(x.in, q.t, base + a, NAN, 0);
        break;
      case 2:
        put_element(x.in, q.t, base + a, INFINITY, 0);
        break;
      case 3:
        put_element(x.in, q.t, base + a, -INFINITY, 0);
        break;
      case 4:
        put_element(x.in, q.t, base + a, INFINITY, 0);
        put_element(x.in, q.t, base + b, -INFINITY, 0);
        break;
      default:
        break;
    }
  }
  auto params = [&](double lo, double hi) {
    std::vector<std::byte> v(std::size_t(q.row_len) * dtype_size(q.param));
    for (std::int64_t k = 0; k < q.row_len; ++k)
      put_element(v, q.param, k, lo + (hi - lo) * unit(rng), 0);
    return v;
  };
  if (q.weight) x.weight = params(0.5, 2.0);
  if (q.bias) x.bias = params(-1.0, 1.0);
  return x;
}

std::vector<std::byte> run(BackendDevice& d, const Problem& q, const Inputs& x) {
  const abi::NormParams p = params_for(q);
  std::vector<std::byte> out(std::size_t(q.rows * q.row_len) * dtype_size(q.t), std::byte{0x5a});
  std::vector<KernelBuffer> buffers;
  auto upload = [&](const std::vector<std::byte>& bytes, bool written) {
    if (bytes.empty()) {
      buffers.push_back({DeviceMemory{}, false});
      return;
    }
    DeviceMemory m = d.allocate(bytes.size());
    d.copy_from_host(m, 0, bytes.data(), bytes.size());
    buffers.push_back({m, written});
  };
  auto release = [&] {
    for (KernelBuffer& b : buffers)
      if (b.memory.handle) d.free(b.memory);
  };
  upload(out, true);
  upload(x.in, false);
  upload(x.weight, false);
  upload(x.bias, false);
  try {
    nbx::testing::launch_planned(d, {nbx::KernelFamily::kNorm, buffers,
                                     std::as_bytes(std::span<const abi::NormParams>(&p, 1))});
    d.synchronize();
    d.copy_to_host(out.data(), buffers[0].memory, 0, out.size());
  } catch (...) {
    release();
    throw;
  }
  release();
  return out;
}

std::string compare(const Problem& q, const std::vector<std::byte>& expected,
                    const std::vector<std::byte>& got) {
  Case c;
  c.out.dtype = q.t;
  return compare_outputs(c, expected, got);
}

// Runs `q` on the host, the general kernel (NBX_GPU_ROWS=general) and the fast-only device; both
// GPU results must match the host.
void check_fast(const Problem& q) {
  const Inputs x = make_inputs(q);
  const auto expected = run(*devices().host, q, x);
  const auto general = run(*row_kernel_devices().general, q, x);
  const auto fast = run(*row_kernel_devices().fast_only, q, x);
  INFO(label(q));
  const std::string p_general = compare(q, expected, general);
  const std::string p_fast = compare(q, expected, fast);
  CHECK_MESSAGE(p_general.empty(), "general kernel: " << p_general);
  CHECK_MESSAGE(p_fast.empty(), "fast kernel: " << p_fast);
}

constexpr DType kDTypes[] = {DType::kFloat32, DType::kBFloat16, DType::kFloat16, DType::kFloat64};
constexpr abi::NormOp kOps[] = {abi::kNorm_layer_norm, abi::kNorm_rms_norm};

// The longest row the fast kernel holds in registers: 1024 lanes × 8 vectors of float32,
// × 4 vectors of 16-bit floats or float64 (kernels/gpu/norm_rows_fast.cu, kMaxVpt).
std::int64_t register_limit(DType t) {
  const std::int64_t vec = 16 / std::int64_t(dtype_size(t));
  return 1024 * (t == DType::kFloat32 ? 8 : 4) * vec;
}

TEST_CASE("norm fast rows: both ops, every dtype, lengths around the warp and vector widths") {
  // 1..129: one vector to a few warps' worth, odd lengths (unaligned row starts: looped
  // kernel); 1000..1025 and 4096/4097: several vectors per lane.
  const std::int64_t lengths[] = {1,   2,   3,   7,   8,    9,    31,   32,   33,   64,   100, 127,
                                  128, 129, 255, 256, 1000, 1023, 1024, 1025, 2048, 4096, 4097};
  std::uint64_t seed = 91000;
  for (abi::NormOp op : kOps)
    for (DType t : kDTypes)
      for (std::int64_t len : lengths) {
        // Affine variants in turn, so each length meets several of them.
        const int affine = int(seed % 4);
        check_fast(problem(op, t, 5, len, affine & 1, affine & 2, Values::kSpread, seed++));
      }
}

TEST_CASE("norm fast rows: with and without weight and bias") {
  std::uint64_t seed = 92000;
  for (abi::NormOp op : kOps)
    for (DType t : kDTypes)
      for (int affine = 0; affine < 4; ++affine)
        for (std::int64_t len : {24, 768, 4096, 333})
          check_fast(problem(op, t, 7, len, affine & 1, affine & 2, Values::kSpread, seed++));
}

TEST_CASE("norm fast rows: many rows at the H200 benchmark's row lengths") {
  // Enough rows that no lane group is widened to fill the GPU, at the shapes benchmarks
  // take: 4096 float32 (128 lanes × 8 float4 per row), 64 float32 (16 lanes: sub-warp
  // groups), 768 bfloat16 (32 lanes × 4 vectors).
  struct Shape {
    std::int64_t rows, len;
  };
  std::uint64_t seed = 93000;
  for (abi::NormOp op : kOps)
    for (DType t : kDTypes)
      for (const Shape& s : {Shape{2200, 4096}, Shape{40000, 64}, Shape{6000, 768}})
        check_fast(problem(op, t, s.rows, s.len, true, op == abi::kNorm_layer_norm, Values::kSpread,
                           seed++));
}

TEST_CASE("norm fast rows: the boundary between registers and the looped kernel") {
  std::uint64_t seed = 94000;
  for (abi::NormOp op : kOps)
    for (DType t : kDTypes) {
      const std::int64_t limit = register_limit(t), vec = 16 / std::int64_t(dtype_size(t));
      // In registers (1024 lanes), just past them (looped, aligned rows), and unaligned.
      for (std::int64_t len : {limit, limit + vec, limit + 1})
        check_fast(problem(op, t, 3, len, true, true, Values::kSpread, seed++));
      check_fast(problem(op, t, 2, 128256, true, false, Values::kSpread, seed++));
      // A row_tile (reduce.tile_max) of 64 lanes: rows that 1024 lanes hold in registers
      // take the looped kernel with at most 64 lanes, still on the fast path.
      Problem narrow = problem(op, t, 3, limit, true, true, Values::kSpread, seed++);
      narrow.row_tile = 64;
      check_fast(narrow);
    }
}

TEST_CASE("norm fast rows: a large mean with a small spread (cancellation)") {
  // float32 rows of 1000 ± 0.5: the float32 mean is off by up to 3e-5, a 5e-5 error in
  // every output unless the deviations' sum corrects it.
  std::uint64_t seed = 95000;
  for (abi::NormOp op : kOps)
    for (DType t : kDTypes)
      for (std::int64_t len : {4096, 1000, 333, 40000})
        check_fast(problem(op, t, 12, len, false, op == abi::kNorm_layer_norm, Values::kLargeMean,
                           seed++));
}

TEST_CASE("norm fast rows: NaN, infinities and constant rows") {
  std::uint64_t seed = 96000;
  for (abi::NormOp op : kOps)
    for (DType t : kDTypes)
      for (std::int64_t len : {1, 6, 128, 4096, 1001})
        check_fast(problem(op, t, 12, len, true, true, Values::kSpecial, seed++));
}

TEST_CASE("norm fast rows: launches the kernel does not serve still match with fast") {
  std::uint64_t seed = 97000;
  std::vector<Problem> problems;
  // Weight and bias in float32 for 16-bit inputs (mixed parameter dtypes).
  for (DType t : {DType::kBFloat16, DType::kFloat16}) {
    Problem q = problem(abi::kNorm_layer_norm, t, 9, 4096, true, true, Values::kSpread, seed++);
    q.param = DType::kFloat32;
    problems.push_back(q);
  }
  // float32 accumulated in float64.
  Problem acc =
      problem(abi::kNorm_rms_norm, DType::kFloat32, 9, 1024, true, false, Values::kSpread, seed++);
  acc.accumulate = DType::kFloat64;
  problems.push_back(acc);
  for (const Problem& q : problems) {
    INFO(label(q));
    const Inputs x = make_inputs(q);
    const auto expected = run(*devices().host, q, x);
    const std::string problem_fast = compare(q, expected, run(*row_kernel_devices().fast, q, x));
    CHECK_MESSAGE(problem_fast.empty(), problem_fast);
    // fast-only refuses what the fast kernel does not serve: this is how the cases above
    // know they ran it.
    if (gpu_backend()) CHECK_THROWS_AS(run(*row_kernel_devices().fast_only, q, x), Unsupported);
  }
}

TEST_CASE("norm fast rows: group_norm is refused by fast-only, right with fast") {
  // [2, 6, 7] in 3 groups: rows of 2 channels × 7.
  abi::NormParams p{};
  p.op = abi::kNorm_group_norm;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = p.param_dtype = std::int32_t(DType::kFloat32);
  p.row_tile = 32;
  p.eps = 1e-5;
  p.rows = 6, p.row_len = 14, p.channels = 6, p.inner = 7, p.groups = 3;
  std::vector<std::byte> in(84 * 4);
  std::mt19937_64 rng(97500);
  std::uniform_real_distribution<double> u(-1.5, 2.5);
  for (int i = 0; i < 84; ++i) put_element(in, DType::kFloat32, i, u(rng), 0);
  auto launch = [&](BackendDevice& d) {
    DeviceMemory o = d.allocate(in.size()), i = d.allocate(in.size());
    d.copy_from_host(i, 0, in.data(), in.size());
    std::vector<KernelBuffer> b = {{o, true}, {i, false}};
    std::vector<std::byte> out(in.size());
    try {
      nbx::testing::launch_planned(
          d, {nbx::KernelFamily::kNorm, b, std::as_bytes(std::span<const abi::NormParams>(&p, 1))});
      d.synchronize();
      d.copy_to_host(out.data(), o, 0, out.size());
    } catch (...) {
      d.free(o);
      d.free(i);
      throw;
    }
    d.free(o);
    d.free(i);
    return out;
  };
  Case c;
  c.out.dtype = DType::kFloat32;
  const std::string problem =
      compare_outputs(c, launch(*devices().host), launch(*row_kernel_devices().fast));
  CHECK_MESSAGE(problem.empty(), problem);
  if (gpu_backend()) CHECK_THROWS_AS(launch(*row_kernel_devices().fast_only), Unsupported);
}

}  // namespace
}  // namespace nbx::gputest
