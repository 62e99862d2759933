// The "reduce" family's contiguous-row kernel (kernels/gpu/reduce_rows_fast.cu, the
// default) against the host reference and against the general kernel (NBX_GPU_ROWS=
// general): every op it serves × every dtype, on row lengths around the warp and
// vector widths, rows whose starts are 16-byte aligned and rows whose starts are not, many
// short rows and a few long ones (several warps per row), NaN and ±inf planted, ties for
// the extremes, zeros for the counts, int64 wrap-around. The eligible cases run on a device
// opened with NBX_GPU_ROWS=fast-only, which refuses a launch the fast kernel does not serve:
// a case that passes there ran the fast kernel. Ineligible views (transposed, several
// reduced dims, ops it leaves to the general kernel) must still be right with
// NBX_GPU_ROWS=fast. With NBX_TEST_GPU_BACKEND=host every device is the host (which ignores
// NBX_GPU_ROWS): that checks this file's logic without a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
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

struct Result {
  std::vector<std::byte> out, indices;
};

// A reduction of `rows` rows: the kept dims (sizes and input strides, outermost first), one
// or more reduced dims, the input storage and the output layout.
struct Problem {
  int op = 0;
  DType t = DType::kFloat32;
  double attr = 0;
  std::vector<std::int64_t> kept_sizes, kept_strides, red_sizes, red_strides;
  std::int64_t in_offset = 0, out_offset = 0, out_step = 1;
  std::vector<std::byte> in;
  int accumulate = -1;  // the dtype's usual accumulation unless set
  int row_tile = 1024;  // what the wrapper passes for long rows on the H200
};

bool with_index(int op) {
  return op == abi::kReduce_max_with_index || op == abi::kReduce_min_with_index;
}

abi::ReduceParams params_for(const Problem& q) {
  abi::ReduceParams p{};
  p.op = q.op;
  p.in_dtype = std::int32_t(q.t);
  p.out_dtype = std::int32_t(reduce_out_dtype(q.op, q.t));
  p.accumulate_dtype =
      q.accumulate >= 0 ? q.accumulate : std::int32_t(reduce_accumulate_dtype(q.op, q.t));
  p.row_tile = q.row_tile;
  p.attr = q.attr;
  p.rows = 1, p.row_len = 1;
  p.out_ndim = int(q.kept_sizes.size());
  p.red_ndim = int(q.red_sizes.size());
  for (int d = 0; d < p.out_ndim; ++d) {
    p.out_sizes[d] = q.kept_sizes[std::size_t(d)];
    p.in_kept_strides[d] = q.kept_strides[std::size_t(d)];
    p.rows *= p.out_sizes[d];
  }
  for (int d = 0; d < p.red_ndim; ++d) {
    p.red_sizes[d] = q.red_sizes[std::size_t(d)];
    p.in_red_strides[d] = q.red_strides[std::size_t(d)];
    p.row_len *= p.red_sizes[d];
  }
  std::int64_t s = q.out_step;
  for (int d = p.out_ndim - 1; d >= 0; --d) {
    p.out_strides[d] = p.index_strides[d] = s;
    s *= p.out_sizes[d];
  }
  p.in_offset = q.in_offset;
  p.out_offset = p.index_offset = q.out_offset;
  return p;
}

Result run(BackendDevice& d, const Problem& q) {
  const abi::ReduceParams p = params_for(q);
  const std::int64_t out_elems = q.out_offset + p.rows * q.out_step;
  Result r;
  r.out.assign(std::size_t(out_elems) * dtype_size(reduce_out_dtype(q.op, q.t)), std::byte{0x5a});
  if (with_index(q.op)) r.indices.assign(std::size_t(out_elems) * 8, std::byte{0x5a});
  std::vector<KernelBuffer> buffers;
  DeviceMemory o = d.allocate(r.out.size()), i = d.allocate(q.in.size());
  d.copy_from_host(o, 0, r.out.data(), r.out.size());
  d.copy_from_host(i, 0, q.in.data(), q.in.size());
  buffers.push_back({o, true});
  buffers.push_back({i, false});
  if (with_index(q.op)) {
    DeviceMemory x = d.allocate(r.indices.size());
    d.copy_from_host(x, 0, r.indices.data(), r.indices.size());
    buffers.push_back({x, true});
  }
  try {
    nbx::testing::launch_planned(d, {nbx::KernelFamily::kReduce, buffers,
                                     std::as_bytes(std::span<const abi::ReduceParams>(&p, 1))});
    d.synchronize();
  } catch (...) {
    for (KernelBuffer& b : buffers) d.free(b.memory);
    throw;
  }
  d.copy_to_host(r.out.data(), o, 0, r.out.size());
  if (with_index(q.op)) d.copy_to_host(r.indices.data(), buffers[2].memory, 0, r.indices.size());
  for (KernelBuffer& b : buffers) d.free(b.memory);
  return r;
}

// "" when `got` matches `expected` (values under the output dtype's tolerance, indices
// exactly).
std::string compare(const Problem& q, const Result& expected, const Result& got) {
  Case c;
  c.out.dtype = reduce_out_dtype(q.op, q.t);
  std::string problem = compare_outputs(c, expected.out, got.out);
  if (problem.empty() && expected.indices != got.indices) problem = "the index buffers differ";
  return problem;
}

enum class Fill { kSum, kProd, kExtreme, kCount };

Fill fill_for(int op) {
  switch (op) {
    case abi::kReduce_sum:
    case abi::kReduce_mean:
      return Fill::kSum;
    case abi::kReduce_prod:
      return Fill::kProd;
    case abi::kReduce_any:
    case abi::kReduce_all:
    case abi::kReduce_count_nonzero:
      return Fill::kCount;
    default:
      return Fill::kExtreme;
  }
}

// The value of element k of row r. Sums: multiples of 0.25 in (0, 2] (no cancellation, so
// a float32 accumulation can be held to float32 tolerance against the host's float64;
// integers add up to wrap-around in int64 rows). Products: ±1 with rare 2 and 0.5 (exact
// in every float type, far from overflow) or small integers (wrapping). Extremes: 0..9
// (many ties: the first index must win). Counts: 0..9, with all-nonzero and all-zero rows.
void put_value(std::vector<std::byte>& buf, DType t, std::int64_t at, Fill f, std::int64_t r,
               std::mt19937_64& rng) {
  const std::uint64_t u = rng();
  double v = 0;
  switch (f) {
    case Fill::kSum:
      v = is_floating(t) ? double(u % 8 + 1) / 4 : double(u % 10);
      break;
    case Fill::kProd:
      if (is_floating(t)) {
        v = (u & 1) ? 1.0 : -1.0;
        if (u % 1000 == 7) v = 2;
        if (u % 1000 == 8) v = 0.5;
      } else {
        static constexpr int kSmall[] = {1, -1, 1, 3, -3, 2, 1, 5, 7, -1};
        v = kSmall[u % 10];
        if (t == DType::kUInt8 && v < 0) v = 255;
      }
      break;
    case Fill::kExtreme:
      v = double(u % 10);
      if (t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64)
        v -= 5;
      break;
    case Fill::kCount:
      v = double(u % 10);
      if (r % 5 == 0 && v == 0) v = 1;
      if (r % 5 == 1) v = 0;
      break;
  }
  if (t == DType::kBool) v = v != 0 ? 1 : 0;
  put_element(buf, t, at, v, std::int64_t(v));
}

// Awkward values in some rows at position-dependent places: NaN, +inf, -inf, both
// infinities, a tie at the top of the type; int64 extremes (sums wrap).
void plant(std::vector<std::byte>& buf, DType t, std::int64_t row_start, std::int64_t len,
           std::int64_t r, Fill f) {
  const std::int64_t a = (r * 13) % len, b = (r * 29 + len / 2) % len;
  if (is_floating(t)) {
    switch (r % 7) {
      case 1:
        put_element(buf, t, row_start + a, NAN, 0);
        break;
      case 2:
        put_element(buf, t, row_start + a, INFINITY, 0);
        break;
      case 3:
        put_element(buf, t, row_start + a, -INFINITY, 0);
        break;
      case 4:
        put_element(buf, t, row_start + a, INFINITY, 0);
        put_element(buf, t, row_start + b, -INFINITY, 0);
        break;
      case 5:  // a NaN after an earlier NaN: the first one's index wins
        put_element(buf, t, row_start + std::min(a, b), NAN, 0);
        put_element(buf, t, row_start + std::max(a, b), NAN, 0);
        break;
      default:
        break;
    }
  } else if (t != DType::kBool && f == Fill::kExtreme && r % 7 == 2) {
    // Two copies of a value above the rest: the first must win.
    put_element(buf, t, row_start + std::min(a, b), 100, 100);
    put_element(buf, t, row_start + std::max(a, b), 100, 100);
  } else if (t == DType::kInt64 && f == Fill::kSum && r % 7 == 3) {
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    put_element(buf, t, row_start + a, double(big), big);
    put_element(buf, t, row_start + b, double(big), big);
  }
}

// `rows` rows of `len` elements, row r starting at offset + r * stride.
Problem make_problem(int op, DType t, std::int64_t rows, std::int64_t len, std::int64_t offset,
                     std::int64_t stride, std::uint64_t seed) {
  Problem q;
  q.op = op;
  q.t = t;
  q.kept_sizes = {rows};
  q.kept_strides = {stride};
  q.red_sizes = {len};
  q.red_strides = {1};
  q.in_offset = offset;
  const std::int64_t numel = offset + (rows - 1) * stride + len;
  q.in.assign(std::size_t(numel) * dtype_size(t), std::byte{0});
  std::mt19937_64 rng(seed);
  const Fill f = fill_for(op);
  for (std::int64_t k = 0; k < numel; ++k) put_value(q.in, t, k, f, 0, rng);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t k = 0; k < len; ++k) put_value(q.in, t, offset + r * stride + k, f, r, rng);
    plant(q.in, t, offset + r * stride, len, r, f);
  }
  return q;
}

const std::vector<int>& fast_ops() {
  static const std::vector<int> ops = {abi::kReduce_sum,
                                       abi::kReduce_mean,
                                       abi::kReduce_prod,
                                       abi::kReduce_amax,
                                       abi::kReduce_amin,
                                       abi::kReduce_argmax,
                                       abi::kReduce_argmin,
                                       abi::kReduce_max_with_index,
                                       abi::kReduce_min_with_index,
                                       abi::kReduce_any,
                                       abi::kReduce_all,
                                       abi::kReduce_count_nonzero};
  return ops;
}

bool op_takes(int op, DType t) {
  if (op == abi::kReduce_mean && !is_floating(t)) return false;
  if (t == DType::kBool)
    return op == abi::kReduce_sum || op == abi::kReduce_any || op == abi::kReduce_all ||
           op == abi::kReduce_count_nonzero;
  return true;
}

// Runs `q` on the host, the default device and the fast-only device; both GPU results must
// match the host.
void check_fast(const Problem& q, const std::string& label) {
  const Result expected = run(*devices().host, q);
  const Result general = run(*row_kernel_devices().general, q);
  const Result fast = run(*row_kernel_devices().fast_only, q);
  INFO(label);
  const std::string p_general = compare(q, expected, general);
  const std::string p_fast = compare(q, expected, fast);
  CHECK_MESSAGE(p_general.empty(), "general kernel: " << p_general);
  CHECK_MESSAGE(p_fast.empty(), "fast kernel: " << p_fast);
}

const DType kDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
                         DType::kInt32,   DType::kInt64,   DType::kInt8,     DType::kUInt8,
                         DType::kBool,    DType::kInt16};

TEST_CASE("fast rows: every op and dtype on lengths around the warp and vector widths") {
  struct Shape {
    std::int64_t rows, len;
  };
  // 1..33: within one vector and one warp; 255/4096/4097: unrolled vectors with tails;
  // 100000 with 3 rows: several warps per row.
  const Shape shapes[] = {{7, 1},   {9, 31},   {9, 32},   {9, 33},
                          {5, 255}, {6, 4096}, {5, 4097}, {3, 100000}};
  std::uint64_t seed = 71000;
  for (int op : fast_ops())
    for (DType t : kDTypes) {
      if (!op_takes(op, t)) continue;
      for (const Shape& s : shapes) {
        // Row starts: all 16-byte aligned; offset by one element with rows one longer
        // (every row a different misalignment); offset by three, rows three apart.
        const std::int64_t layouts[][2] = {{0, s.len}, {1, s.len + 1}, {3, s.len + 3}};
        for (const auto& l : layouts) {
          const Problem q = make_problem(op, t, s.rows, s.len, l[0], l[1], seed++);
          check_fast(q, "op " + std::to_string(op) + " " + std::string(dtype_name(t)) + " " +
                            std::to_string(s.rows) + "x" + std::to_string(s.len) + " offset " +
                            std::to_string(l[0]) + " row stride " + std::to_string(l[1]) +
                            " seed " + std::to_string(seed - 1));
        }
      }
    }
}

TEST_CASE("fast rows: many short rows, few long rows, strided and offset outputs") {
  std::uint64_t seed = 72000;
  for (int op : fast_ops())
    for (DType t : kDTypes) {
      if (!op_takes(op, t)) continue;
      for (const auto& s : {std::pair<std::int64_t, std::int64_t>{5000, 300}, {2, 300001}}) {
        Problem q = make_problem(op, t, s.first, s.second, 5, s.second + 5, seed++);
        q.out_offset = 3;
        q.out_step = 2;  // every other output element: the ones between stay 0x5a
        check_fast(q, "op " + std::to_string(op) + " " + std::string(dtype_name(t)) + " " +
                          std::to_string(s.first) + "x" + std::to_string(s.second) + " seed " +
                          std::to_string(seed - 1));
        // A row_tile (reduce.tile_max) of 8 lanes: fewer lanes per row, same answers.
        q.row_tile = 8;
        check_fast(q, "row_tile 8, op " + std::to_string(op) + " " + std::string(dtype_name(t)) +
                          " seed " + std::to_string(seed - 1));
      }
    }
}

TEST_CASE("fast rows: a whole 1-d tensor (no kept dim) reduces to one element") {
  std::uint64_t seed = 72500;
  for (int op : fast_ops())
    for (DType t : kDTypes) {
      if (!op_takes(op, t)) continue;
      Problem q = make_problem(op, t, 1, 100003, 2, 100003, seed++);
      q.kept_sizes.clear();
      q.kept_strides.clear();
      check_fast(q, "op " + std::to_string(op) + " " + std::string(dtype_name(t)) +
                        " 1-d of 100003 at offset 2");
    }
}

TEST_CASE("fast rows: two kept dims in permuted order are decomposed per row") {
  // Input [4, 6, 33] contiguous; output over (dim 1, dim 0), reducing dim 2.
  std::uint64_t seed = 73000;
  for (int op : {abi::kReduce_sum, abi::kReduce_argmax, abi::kReduce_min_with_index,
                 abi::kReduce_count_nonzero})
    for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kInt64, DType::kUInt8}) {
      Problem q = make_problem(op, t, 24, 33, 0, 33, seed++);
      q.kept_sizes = {6, 4};
      q.kept_strides = {33, 6 * 33};
      check_fast(q, "op " + std::to_string(op) + " " + std::string(dtype_name(t)) +
                        " kept (6, 4) strides (33, 198)");
    }
}

TEST_CASE("fast rows: ineligible views and ops still match the host with NBX_GPU_ROWS=fast") {
  std::uint64_t seed = 74000;
  std::vector<Problem> problems;
  for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kInt32}) {
    for (int op : {abi::kReduce_sum, abi::kReduce_argmax, abi::kReduce_all}) {
      // Transposed: reduce dim 0 of a contiguous [300, 40] (reduced stride 40).
      Problem tr = make_problem(op, t, 1, 300 * 40, 0, 300 * 40, seed++);
      tr.kept_sizes = {40};
      tr.kept_strides = {1};
      tr.red_sizes = {300};
      tr.red_strides = {40};
      problems.push_back(tr);
      // Two reduced dims (contiguous, but not collapsed): [10, 20, 30] over dims 1 and 2.
      Problem two = make_problem(op, t, 1, 6000, 0, 6000, seed++);
      two.kept_sizes = {10};
      two.kept_strides = {600};
      two.red_sizes = {20, 30};
      two.red_strides = {30, 1};
      problems.push_back(two);
    }
  }
  // Ops the fast kernel leaves to the general one, on contiguous rows.
  for (int op : {abi::kReduce_var, abi::kReduce_std, abi::kReduce_norm, abi::kReduce_logsumexp}) {
    Problem q = make_problem(abi::kReduce_sum, DType::kFloat32, 40, 500, 0, 500, seed++);
    q.op = op;
    q.attr = op == abi::kReduce_norm ? 2.0 : 1.0;
    problems.push_back(q);
  }
  // A float32 input accumulated in float64 (not an accumulation the fast kernel has).
  Problem acc = make_problem(abi::kReduce_sum, DType::kFloat32, 40, 500, 0, 500, seed++);
  acc.accumulate = int(DType::kFloat64);
  problems.push_back(acc);
  for (const Problem& q : problems) {
    INFO("op " << q.op << " " << dtype_name(q.t) << " red_ndim " << q.red_sizes.size()
               << " red stride " << q.red_strides.back());
    const Result expected = run(*devices().host, q);
    const Result got = run(*row_kernel_devices().fast, q);
    const std::string problem = compare(q, expected, got);
    CHECK_MESSAGE(problem.empty(), problem);
    // fast-only refuses what the fast kernel does not serve: this is how the cases above
    // know they ran it.
    if (gpu_backend()) CHECK_THROWS_AS(run(*row_kernel_devices().fast_only, q), Unsupported);
  }
}

TEST_CASE("fast rows: a malformed NBX_GPU_ROWS is refused when the device opens") {
  if (!gpu_backend()) return;  // the host does not read it
  CHECK_THROWS_AS(open_with_rows("fastest"), InvalidArgument);
}

}  // namespace
}  // namespace nbx::gputest
