// The "scan" family (cumsum, cumprod, cummax, cummin) on the GPU under test, where the
// conformance suite (tests/conformance: every other public scan against the host) cannot
// go: a row of 2^24 elements through the chunked kernels, float32 rows of 4,000,000 whose
// sums and products only a compensated scan keeps within its promised bound, and malformed
// launches.
//
// Tolerances are the conformance suite's (accumulated_tolerance: the dtype's rtol/atol
// scaled by sqrt(k)) with k the element's position in its row + 1. Float sums and products
// also meet the tighter bound the kernel promises (compensated, rounded once): within 2 ulps
// of the host, plus 2^-24 of the largest prefix so far in the row (sums) or of the value
// itself (products). Compensated, the kernels stay within 0.4 of it (an emulation of the
// chunked kernels' combine order on this file's float32 rows); uncompensated, the same
// order's sums miss it by 2-3.5 times (the tree keeps only ~60 roundings per prefix, so a
// 2^-20 allowance would pass them) and its products by 10^4 times (their rounding errors
// lean one way: scan_kernels.cu). Extremes, indices and integer results compare exactly.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <span>

#include "core/errors.hpp"
#include "nbx/nbx.hpp"
#include "tests/conformance/conformance_compare.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

Device gpu() {
  return open(backend_under_test() + ":0");
}

enum class Op { kCumsum, kCumprod, kCummax, kCummin };
constexpr Op kAllOps[] = {Op::kCumsum, Op::kCumprod, Op::kCummax, Op::kCummin};

const char* op_name(Op op) {
  switch (op) {
    case Op::kCumsum:
      return "cumsum";
    case Op::kCumprod:
      return "cumprod";
    case Op::kCummax:
      return "cummax";
    default:
      return "cummin";
  }
}

bool extreme(Op op) {
  return op == Op::kCummax || op == Op::kCummin;
}

struct Pair {
  Tensor host, dev;
};
Pair upload(const std::vector<std::byte>& bytes, const Shape& shape, DType t) {
  return {Tensor::from_host(bytes.data(), shape, t),
          Tensor::from_host(bytes.data(), shape, t, gpu())};
}

std::vector<std::byte> bytes_of(const Tensor& t) {
  std::vector<std::byte> b(std::size_t(t.numel()) * dtype_size(t.dtype()));
  t.copy_to_host(b.data());
  return b;
}

// Compares a row-major result of `shape` scanned along `dim`, element by element in row
// order; reports the first mismatch (with its row, position and both values).
std::string compare_scan(Op op, const Tensor& host, const Tensor& dev, const Shape& shape, int dim,
                         bool is_index) {
  if (host.dtype() != dev.dtype()) return "dtypes differ";
  const DType t = host.dtype();
  const auto e = bytes_of(host), g = bytes_of(dev);
  std::int64_t outer = 1, len = 1, inner = 1;
  for (int d = 0; d < int(shape.size()); ++d)
    (d < dim ? outer : d == dim ? len : inner) *= shape[d];
  if (shape.empty()) len = 1;
  const bool exact = is_index || extreme(op) || !is_floating(t);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      double running_max = 0;
      for (std::int64_t k = 0; k < len; ++k) {
        const std::int64_t at = (o * len + k) * inner + i;
        const conformance::Element x = conformance::load_element(e.data(), t, at);
        const conformance::Element y = conformance::load_element(g.data(), t, at);
        bool ok;
        if (!x.is_float) {
          ok = x.i == y.i;
        } else if (std::isnan(x.f) || std::isnan(y.f)) {
          ok = std::isnan(x.f) && std::isnan(y.f);
        } else if (exact || std::isinf(x.f) || std::isinf(y.f)) {
          // Extremes copy an input element: the later of tied ±0 keeps its sign.
          ok = x.f == y.f && std::signbit(x.f) == std::signbit(y.f);
        } else {
          const conformance::Tolerance tol = conformance::accumulated_tolerance(false, t, k + 1);
          const double err = std::fabs(y.f - x.f);
          ok = err <= tol.atol + tol.rtol * std::fabs(x.f);
          running_max = std::max(running_max, std::fabs(x.f));
          if (ok && (op == Op::kCumsum || op == Op::kCumprod))
            ok = err <= 2 * conformance::ulp_at(x.f, t) +
                            std::ldexp(op == Op::kCumsum ? running_max : std::fabs(x.f), -24);
        }
        if (!ok)
          return std::string(is_index ? "index" : "value") + " at row " +
                 std::to_string(o * inner + i) + ", position " + std::to_string(k) + ": host " +
                 conformance::format_element(x) + ", gpu " + conformance::format_element(y);
      }
    }
  return "";
}

// Runs `op` along `dim` of `x` on both devices and checks values (and indices).
void check(Op op, const Pair& x, int dim, const std::string& label) {
  const Shape shape = x.host.shape();
  const int d = shape.empty() ? 0 : (dim < 0 ? dim + int(shape.size()) : dim);
  INFO(label << ": " << op_name(op) << " " << dtype_name(x.host.dtype()) << " dim " << dim);
  Tensor hv, dv, hi, di;
  switch (op) {
    case Op::kCumsum:
      hv = ops::cumsum(x.host, dim);
      dv = ops::cumsum(x.dev, dim);
      break;
    case Op::kCumprod:
      hv = ops::cumprod(x.host, dim);
      dv = ops::cumprod(x.dev, dim);
      break;
    case Op::kCummax: {
      auto h = ops::cummax(x.host, dim), g = ops::cummax(x.dev, dim);
      hv = h.values, dv = g.values, hi = h.indices, di = g.indices;
      break;
    }
    default: {
      auto h = ops::cummin(x.host, dim), g = ops::cummin(x.dev, dim);
      hv = h.values, dv = g.values, hi = h.indices, di = g.indices;
      break;
    }
  }
  REQUIRE(dv.shape() == hv.shape());
  const std::string values = compare_scan(op, hv, dv, shape, d, false);
  CHECK_MESSAGE(values.empty(), values);
  if (extreme(op)) {
    const std::string indices = compare_scan(op, hi, di, shape, d, true);
    CHECK_MESSAGE(indices.empty(), indices);
  }
}

// Inputs for the chunked rows, none of whose results are zeros:
//  sums: floats in [-2, 2]; integers over their whole range (int64 sums wrap, exactly);
//  products: floats ±exp(u), u in [-0.001, 0.001] (a row of 16,777,216 stays well inside
//    float32's range); odd integers in {-3, -1, 1, 3} (an even factor would wrap to 0);
//  extremes: 20·sin(2πk / 300000) rounded down, plus 0..2: many chunks in a row where the
//    running extreme holds, then ties at each period's peak and trough (the later index).
std::vector<std::byte> draw_long(DType t, std::int64_t n, Op op, std::uint64_t seed) {
  std::vector<std::byte> v(std::size_t(n) * dtype_size(t));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const bool fl = is_floating(t);
  for (std::int64_t i = 0; i < n; ++i) {
    double f = 0;
    std::int64_t k = 0;
    if (op == Op::kCumsum) {
      f = -2 + 4 * unit(rng);
      k = std::int64_t(rng());
    } else if (op == Op::kCumprod) {
      const std::uint64_t r = rng();
      f = (r % 2 ? 1 : -1) * std::exp(0.001 * (2 * unit(rng) - 1));
      k = std::int64_t(r % 4) * 2 - 3;
    } else {
      k = std::int64_t(std::floor(20 * std::sin(6.283185307179586 * double(i) / 300000))) +
          std::int64_t(rng() % 3);
      f = double(k);
    }
    put_element(v, t, i, fl ? f : 0, k);
  }
  return v;
}

// A row of 16,777,216 = 2^24 elements (past float32's exact integers: positions and cummax
// indices must not be counted in float32), split into chunks of whole 8192-element tiles
// over many blocks in three kernels (chunk states, their prefixes, the rescan from each
// prefix); NaN planted at a chunk's first element and later at a tile's last (it sticks;
// the later takes the index). The suite's rows stop at 3·10^5 (tests/conformance).
TEST_CASE("a row of 2^24 elements split into chunks over many blocks") {
  std::uint64_t seed = 36000;
  const std::int64_t len = 16777216;
  for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kInt32, DType::kInt64})
    for (Op op : kAllOps) {
      std::vector<std::byte> bytes = draw_long(t, len, op, seed++);
      if (extreme(op) && is_floating(t)) {
        const std::int64_t a = len * 3 / 4 / 16384 * 16384;
        put_element(bytes, t, a, NAN, 0);
        put_element(bytes, t, a + 3 * 8192 - 1, NAN, 0);
      }
      check(op, upload(bytes, {1, len}, t), 1, "one row of " + std::to_string(len));
    }
}

// Float32 rows of 4,000,000 (chunked) that only a compensated scan gets within 2^-24 of the
// running maximum (sums) or of the value (products). Emulated in the chunked kernels' combine
// order (the H200's plan: 489 chunks of one tile), uncompensated: all positive sums in
// [0.25, 2] (prefixes to 4.5e6) miss the bound by 2.8 times, large [1024, 2048] alternating
// with small [0.25, 2] (prefixes to 3.1e9) by 2.3 times, factors ±exp(±0.001) by 1.2e4 times
// (uncompensated products lean low; the 16,777,216-element row above was 0.8% off at element
// 13,630,554 on the H200 before products were compensated). Compensated: at most 0.39.
TEST_CASE("float32 sums and products that need a compensated scan") {
  const std::int64_t n = 4000000;
  std::mt19937_64 rng(37000);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::byte> positive(std::size_t(n) * 4), alternating(std::size_t(n) * 4),
      factors(std::size_t(n) * 4);
  for (std::int64_t i = 0; i < n; ++i) {
    put_element(positive, DType::kFloat32, i, 0.25 + 1.75 * unit(rng), 0);
    const double u = unit(rng);
    put_element(alternating, DType::kFloat32, i, i % 2 ? 0.25 + 1.75 * u : 1024 * (1 + u), 0);
    const std::uint64_t r = rng();
    put_element(factors, DType::kFloat32, i,
                (r % 2 ? 1 : -1) * std::exp(0.001 * (2 * unit(rng) - 1)), 0);
  }
  check(Op::kCumsum, upload(positive, {1, n}, DType::kFloat32), 1, "4e6 positive terms");
  check(Op::kCumsum, upload(alternating, {1, n}, DType::kFloat32), 1,
        "4e6 terms, large and small in turn");
  check(Op::kCumprod, upload(factors, {1, n}, DType::kFloat32), 1, "4e6 factors near +-1");
}

TEST_CASE("malformed scan launches are refused by name") {
  BackendDevice& d = *devices().gpu[0].device;
  DeviceMemory out = d.allocate(64 * 4), in = d.allocate(64 * 4), idx = d.allocate(64 * 8);
  abi::ScanParams p{};
  p.op = abi::kScan_cumsum;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = int(DType::kFloat32);
  p.lanes = 4;  // scan.lanes: 4 lanes of 4 elements cover a row of 16
  p.outer_ndim = 1;
  p.outer_sizes[0] = 4;
  p.in_outer_strides[0] = p.out_outer_strides[0] = 16;
  p.in_row_stride = p.out_row_stride = 1;
  p.rows = 4;
  p.row_len = 16;
  KernelBuffer buffers[3] = {{out, true}, {in, false}, {idx, true}};
  auto launch = [&](const abi::ScanParams& q, int n) {
    d.launch({nbx::KernelFamily::kScan, std::span<const KernelBuffer>(buffers, std::size_t(n)),
              std::as_bytes(std::span<const abi::ScanParams>(&q, 1))});
    d.synchronize();
  };
  CHECK(d.offers(nbx::KernelFamily::kScan));
  CHECK_NOTHROW(launch(p, 2));
  abi::ScanParams q = p;
  q.row_len = 17;  // the last row reaches one element past the buffers
  q.in_outer_strides[0] = q.out_outer_strides[0] = 16;
  CHECK_THROWS_AS(launch(q, 2), InvalidArgument);
  q = p;
  q.in_offset = std::int64_t(1) << 62;  // (last + 1) · 4 bytes would wrap 64 bits to 256
  CHECK_THROWS_AS(launch(q, 2), InvalidArgument);
  q = p;
  q.op = 7;
  CHECK_THROWS_AS(launch(q, 2), InvalidArgument);
  q = p;
  q.op = abi::kScan_cummax;  // needs its index buffer
  CHECK_THROWS_AS(launch(q, 2), InvalidArgument);
  q = p;
  q.rows = 5;  // disagrees with the outer sizes
  CHECK_THROWS_AS(launch(q, 2), InvalidArgument);
  q = p;
  q.op = abi::kScan_cummax;
  q.in_dtype = q.out_dtype = q.accumulate_dtype = int(DType::kInt64);
  q.outer_sizes[0] = q.rows = 1;  // one row: the int64 views fit their buffers
  CHECK_NOTHROW(launch(q, 3));
  q.accumulate_dtype = int(DType::kFloat32);  // int64 values compared as float32
  CHECK_THROWS_AS(launch(q, 3), InvalidArgument);
  d.free(out);
  d.free(in);
  d.free(idx);
}

}  // namespace
}  // namespace nbx::gputest
