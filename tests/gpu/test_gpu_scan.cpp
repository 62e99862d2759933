// The "scan" family (cumsum, cumprod, cummax, cummin) through the public ops on the GPU under
// test against the same ops on the host: every dtype; rows of 1 to 16,777,216 elements, so
// every kernel shape runs (groups of 1 to 32 lanes, one block per row over many tiles, rows
// split into chunks over many blocks); a
// scan along dim 0 of transposed, strided, sliced and broadcast views; NaN, ±inf, ±0 and
// ties; a requested dtype; malformed launches.
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

constexpr DType kAllTypes[] = {DType::kBool,    DType::kInt8,   DType::kUInt8,   DType::kInt16,
                               DType::kInt32,   DType::kInt64,  DType::kFloat16, DType::kBFloat16,
                               DType::kFloat32, DType::kFloat64};

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

// Values an op's inputs get (the same bytes go to the host and to the GPU).
//  sums: floats in [-2, 2]; integers over their whole range (int64 sums wrap, exactly).
//  products: floats ±exp(u), u in [-0.01, 0.01], so a row of 3e6 stays far inside float32's
//    range (past it, float32 and the host's float64 part ways); integers in [-3, 3].
//  extremes: small integers (ties everywhere), ±0, ±inf, and some fractions; no NaN (a NaN
//    sticks: the NaN cases are planted on purpose below).
std::vector<std::byte> draw(DType t, std::int64_t n, Op op, std::uint64_t seed) {
  std::vector<std::byte> v(std::size_t(n) * dtype_size(t));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (std::int64_t i = 0; i < n; ++i) {
    double f = 0;
    std::int64_t k = 0;
    const double u = unit(rng);
    if (t == DType::kBool) {
      k = u < 0.5 ? 0 : 1;
    } else if (!is_floating(t)) {
      if (op == Op::kCumsum) {
        k = std::int64_t(rng());  // put_element wraps it into t
      } else if (op == Op::kCumprod) {
        k = std::int64_t(rng() % 7) - 3;
      } else {
        k = std::int64_t(rng() % 9) - (t == DType::kUInt8 ? 0 : 4);
        if (u < 0.01) k = std::int64_t(rng());  // an extreme of the dtype, wrapped
      }
    } else if (op == Op::kCumsum) {
      f = -2 + 4 * u;
    } else if (op == Op::kCumprod) {
      f = (rng() % 2 ? 1 : -1) * std::exp(-0.01 + 0.02 * unit(rng));
    } else {
      static constexpr double kPicks[] = {0.0, -0.0, INFINITY, -INFINITY, 0.5, -1.25};
      f = u < 0.1 ? kPicks[rng() % std::size(kPicks)] : double(std::int64_t(rng() % 9) - 4);
    }
    put_element(v, t, i, f, k);
  }
  return v;
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

TEST_CASE("scans on the GPU match the host for every dtype and row length") {
  std::uint64_t seed = 31000;
  for (DType t : kAllTypes)
    for (Op op : kAllOps)
      for (std::int64_t len : {1, 31, 32, 33, 65, 1024, 100000}) {
        const Shape shape{len > 1024 ? 2 : 5, len};
        const Pair x = upload(draw(t, numel(shape), op, seed), shape, t);
        check(op, x, 1, "rows of " + std::to_string(len) + ", seed " + std::to_string(seed));
        ++seed;
      }
}

TEST_CASE("scans of 3,000,000-element rows and of many rows") {
  std::uint64_t seed = 32000;
  const std::pair<DType, Op> long_cases[] = {
      {DType::kFloat32, Op::kCumsum},  {DType::kFloat64, Op::kCumsum},
      {DType::kInt32, Op::kCumsum},    {DType::kBFloat16, Op::kCumsum},
      {DType::kFloat32, Op::kCumprod}, {DType::kInt64, Op::kCumprod},
      {DType::kFloat32, Op::kCummax},  {DType::kInt64, Op::kCummin},
      {DType::kFloat16, Op::kCummin}};
  for (auto [t, op] : long_cases) {
    const Shape shape{1, 3000000};
    check(op, upload(draw(t, numel(shape), op, seed), shape, t), 1,
          "one row of 3e6, seed " + std::to_string(seed));
    ++seed;
  }
  // 10000 rows of 300: a warp per row over 3 tiles (on devices of up to 156 SMs).
  // 40000 rows of 50 side by side (dim 0): a lane per row. Rows of 1 and 3.
  for (DType t : {DType::kFloat32, DType::kInt16, DType::kBFloat16})
    for (Op op : kAllOps) {
      const Shape many{10000, 300}, side{50, 40000}, ones{7000, 1}, threes{7000, 3};
      check(op, upload(draw(t, numel(many), op, seed), many, t), 1, "10000 rows of 300");
      check(op, upload(draw(t, numel(side), op, seed + 1), side, t), 0, "dim 0 of 50 x 40000");
      check(op, upload(draw(t, numel(ones), op, seed + 2), ones, t), 1, "rows of 1");
      check(op, upload(draw(t, numel(threes), op, seed + 3), threes, t), -1, "rows of 3");
      seed += 4;
    }
}

TEST_CASE("scans along dim 0 of transposed, strided, sliced and broadcast views") {
  std::uint64_t seed = 33000;
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64, DType::kBool})
    for (Op op : kAllOps) {
      INFO("seed " << seed);
      // Dim 0 of a transposed [65, 1000]: the scan runs along memory, the rows across it.
      const Pair a = upload(draw(t, 65 * 1000, op, seed++), {65, 1000}, t);
      check(op, {a.host.transpose(0, 1), a.dev.transpose(0, 1)}, 0, "dim 0 of transposed");
      // Dim 0 of a contiguous [1000, 65]: the scan strides across memory.
      const Pair b = upload(draw(t, 1000 * 65, op, seed++), {1000, 65}, t);
      check(op, b, 0, "dim 0 of contiguous");
      // Every second row from row 1, columns 3.. of a [401, 70]: offsets and strides.
      const Pair c = upload(draw(t, 401 * 70, op, seed++), {401, 70}, t);
      const Pair cs{c.host.slice(0, 1, 401, 2).slice(1, 3, 70),
                    c.dev.slice(0, 1, 401, 2).slice(1, 3, 70)};
      check(op, cs, 0, "dim 0 of a sliced view");
      check(op, cs, 1, "dim 1 of a sliced view");
      // A row broadcast down dim 0 (stride 0 along the scan).
      const Pair d = upload(draw(t, 33, op, seed++), {1, 33}, t);
      check(op, {d.host.expand({40, 33}), d.dev.expand({40, 33})}, 0, "dim 0 of a broadcast");
      // The middle dim of a 3-d tensor, and a 0-d tensor.
      const Pair e = upload(draw(t, 4 * 37 * 6, op, seed++), {4, 37, 6}, t);
      check(op, e, 1, "middle dim of [4, 37, 6]");
      const Pair s = upload(draw(t, 1, op, seed++), {}, t);
      check(op, s, 0, "0-d");
      const Pair z = upload({}, {3, 0}, t);
      check(op, z, 1, "zero-size");
    }
}

// Rows with planted NaN, ±inf, ±0 and ties; the long ones put the special values in
// different tiles of a block-per-row scan.
TEST_CASE("scans keep NaN, inf and tie rules (PyTorch's cummax_cummin_helper)") {
  const std::vector<std::vector<double>> rows = {
      {1, NAN, 3, NAN, 2, 5},
      {NAN, 1, 2, 3, 4, 5},
      {2, 2, 1, 2, 2, 1},
      {-0.0, 0.0, -0.0, 0.0, 0.0, -0.0},
      {INFINITY, 1, -INFINITY, 2, 3, 4},
      {-INFINITY, -INFINITY, 1, INFINITY, INFINITY, NAN},
      {3, 1, 4, 1, 5, 9},
  };
  for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    std::vector<std::byte> bytes(rows.size() * 6 * dtype_size(t));
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t k = 0; k < 6; ++k)
        put_element(bytes, t, std::int64_t(r * 6 + k), rows[r][k], 0);
    const Pair x = upload(bytes, {std::int64_t(rows.size()), 6}, t);
    for (Op op : kAllOps) check(op, x, 1, "planted rows");
    // The same rows down dim 0 (a column each).
    for (Op op : kAllOps)
      check(op, {x.host.transpose(0, 1), x.dev.transpose(0, 1)}, 0, "planted columns");

    // Long rows: ties everywhere (values in {0, 1, 2}), one NaN in the middle of row 0 and
    // two in row 1 (the later takes the index), an inf in row 2, NaN and -inf in row 3.
    const std::int64_t n = 100000;
    std::vector<std::byte> big(std::size_t(4 * n) * dtype_size(t));
    std::mt19937_64 rng(34000);
    for (std::int64_t i = 0; i < 4 * n; ++i) put_element(big, t, i, double(rng() % 3), 0);
    put_element(big, t, 50001, NAN, 0);
    put_element(big, t, n + 20000, NAN, 0);
    put_element(big, t, n + 70000, NAN, 0);
    put_element(big, t, 2 * n + 9000, INFINITY, 0);
    put_element(big, t, 3 * n + 8191, -INFINITY, 0);
    put_element(big, t, 3 * n + 8192, NAN, 0);
    const Pair y = upload(big, {4, n}, t);
    for (Op op : kAllOps) check(op, y, 1, "long rows with NaN/inf");
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

// Few long rows: fewer rows than two per SM split into chunks of whole 8192-element tiles,
// a block each, in three kernels (chunk states, their prefixes, the rescan from each
// prefix). Single rows of 1e5, 1e6 and 16,777,216 elements, three rows, a row that starts
// one element past a 16-byte boundary (scalar reads), two rows of stride 2, and 300 rows
// (a block each); NaN planted at a chunk's first element and later at a tile's last (it
// sticks; the later takes the index).
TEST_CASE("few long rows split into chunks over many blocks") {
  std::uint64_t seed = 36000;
  for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kInt32, DType::kInt64})
    for (Op op : kAllOps) {
      for (std::int64_t len : {100000, 1000000, 16777216}) {
        std::vector<std::byte> bytes = draw_long(t, len, op, seed++);
        if (extreme(op) && is_floating(t)) {
          const std::int64_t a = len * 3 / 4 / 16384 * 16384;
          put_element(bytes, t, a, NAN, 0);
          put_element(bytes, t, a + 3 * 8192 - 1, NAN, 0);
        }
        check(op, upload(bytes, {1, len}, t), 1, "one row of " + std::to_string(len));
      }
      const Shape three{3, 400000};
      check(op, upload(draw_long(t, numel(three), op, seed++), three, t), 1, "3 rows of 4e5");
      const Pair u = upload(draw_long(t, 300001, op, seed++), {1, 300001}, t);
      check(op, {u.host.slice(1, 1, 300001), u.dev.slice(1, 1, 300001)}, 1, "a row from element 1");
      const Shape pairs{300000, 2};
      check(op, upload(draw_long(t, numel(pairs), op, seed++), pairs, t), 0, "dim 0 of 300000 x 2");
      // Rows enough to keep a block per row (two per SM on devices of up to 150 SMs), each
      // over two tiles of that block.
      const Shape blocks{300, 10000};
      check(op, upload(draw_long(t, numel(blocks), op, seed++), blocks, t), 1, "300 rows of 1e4");
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

TEST_CASE("a requested dtype casts first; integer sums give int64") {
  std::uint64_t seed = 35000;
  const Pair i8 = upload(draw(DType::kInt8, 5 * 300, Op::kCumsum, seed++), {5, 300}, DType::kInt8);
  const Tensor h = ops::cumsum(i8.host, 1, DType::kInt32),
               g = ops::cumsum(i8.dev, 1, DType::kInt32);
  CHECK(g.dtype() == DType::kInt64);
  const std::string p = compare_scan(Op::kCumsum, h, g, {5, 300}, 1, false);
  CHECK_MESSAGE(p.empty(), p);
  const Pair f16 =
      upload(draw(DType::kFloat16, 5 * 300, Op::kCumprod, seed++), {5, 300}, DType::kFloat16);
  const Tensor hp = ops::cumprod(f16.host, -1, DType::kFloat32),
               gp = ops::cumprod(f16.dev, -1, DType::kFloat32);
  CHECK(gp.dtype() == DType::kFloat32);
  const std::string q = compare_scan(Op::kCumprod, hp, gp, {5, 300}, 1, false);
  CHECK_MESSAGE(q.empty(), q);
}

TEST_CASE("malformed scan launches are refused by name") {
  BackendDevice& d = *devices().gpu[0].device;
  DeviceMemory out = d.allocate(64 * 4), in = d.allocate(64 * 4), idx = d.allocate(64 * 8);
  abi::ScanParams p{};
  p.op = abi::kScan_cumsum;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = int(DType::kFloat32);
  p.outer_ndim = 1;
  p.outer_sizes[0] = 4;
  p.in_outer_strides[0] = p.out_outer_strides[0] = 16;
  p.in_row_stride = p.out_row_stride = 1;
  p.rows = 4;
  p.row_len = 16;
  KernelBuffer buffers[3] = {{out, true}, {in, false}, {idx, true}};
  auto launch = [&](const abi::ScanParams& q, int n) {
    d.launch({"scan", std::span<const KernelBuffer>(buffers, std::size_t(n)),
              std::as_bytes(std::span<const abi::ScanParams>(&q, 1))});
    d.synchronize();
  };
  CHECK(d.has_kernel("scan"));
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
