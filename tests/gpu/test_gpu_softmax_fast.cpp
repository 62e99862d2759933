// The "softmax" family's contiguous-row kernels (kernels/gpu/softmax_rows_fast.cu, the
// default; NBX_GPU_ROWS=general opts out) against the host reference: softmax and log_softmax in
// every float dtype, row lengths around the warp and vector widths and around the boundary between
// rows held in registers and rows looped over by a block (32768 elements; 16384 for float64), rows
// whose starts are 16-byte aligned and rows whose starts are not (and outputs aligned differently
// from their inputs), scale, full and row-broadcast masks with fully masked rows, PyTorch's special
// rows (+inf, only -inf, NaN, -inf among finite values, large values), masked NaN and +inf
// (ignored), vocabulary rows of 128256, and enough rows that blocks take several rounds. The
// eligible cases run on a device opened with NBX_GPU_ROWS=fast-only, which refuses a launch the
// fast kernels do not serve: a case that passes there ran them. Ineligible views must still be
// right with NBX_GPU_ROWS=fast. With NBX_TEST_GPU_BACKEND=host every device is the host (which
// ignores NBX_GPU_ROWS): that checks this file's logic without a GPU.
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

enum class MaskKind { kNone, kRowBroadcast, kFull };

// `rows` rows of `len`: input row r at in_offset + r * in_pitch, output row r at
// out_offset + r * out_pitch (the elements between rows must stay untouched).
struct Problem {
  DType t = DType::kFloat32;
  DType out_t = DType::kFloat32;
  bool log = false;
  std::int64_t rows = 1, len = 1;
  std::int64_t in_offset = 0, in_pitch = 1, out_offset = 0, out_pitch = 1;
  MaskKind mask_kind = MaskKind::kNone;
  double scale = 1.0;
  bool specials = false;
  bool transposed = false;  // the softmax dim is dim 0 of a [len, rows] tensor (ineligible)
  int accumulate = -1;      // float32 (float64 for float64) unless set
  int row_tile = 1024;      // what the wrapper passes for long rows on the H200
  std::uint64_t seed = 1;

  abi::SoftmaxParams params{};
  std::vector<std::byte> in, mask;
  std::size_t out_bytes = 0;
};

std::string label(const Problem& q) {
  return std::string(q.log ? "log_softmax " : "softmax ") + std::string(dtype_name(q.t)) + "->" +
         std::string(dtype_name(q.out_t)) + " " + std::to_string(q.rows) + "x" +
         std::to_string(q.len) + " in " + std::to_string(q.in_offset) + "+r*" +
         std::to_string(q.in_pitch) + " out " + std::to_string(q.out_offset) + "+r*" +
         std::to_string(q.out_pitch) + " mask " + std::to_string(int(q.mask_kind)) + " scale " +
         std::to_string(q.scale) + " specials " + std::to_string(q.specials) + " transposed " +
         std::to_string(q.transposed) + " seed " + std::to_string(q.seed);
}

// Fills the input (values in [-4, 4]), the mask and the launch parameters. With
// `specials`, rows 0..6 (where present) hold: +inf; only -inf; a NaN; -inf at every third
// element; large values (1000 + k % 5); a masked NaN and a masked +inf (with a mask; the row
// stays finite); and row 1 of a full mask is masked entirely.
void build(Problem& q) {
  abi::SoftmaxParams& p = q.params;
  p = abi::SoftmaxParams{};
  p.op = q.log ? abi::kSoftmax_log_softmax : abi::kSoftmax_softmax;
  p.in_dtype = std::int32_t(q.t);
  p.out_dtype = std::int32_t(q.out_t);
  p.accumulate_dtype =
      q.accumulate >= 0 ? q.accumulate
                        : std::int32_t(q.t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32);
  p.scale = q.scale;
  p.rows = q.rows;
  p.row_len = q.len;
  p.outer_ndim = 1;
  p.outer_sizes[0] = q.rows;
  // The strided variant the wrapper would take where softmax.rows does not serve
  // (launch_planned prefers the row variant): one-pass where the row cache fits.
  p.variant = q.len * (p.accumulate_dtype == std::int32_t(DType::kFloat64) ? 8 : 4) <= 16384
                  ? abi::kSoftmaxOnePass
                  : abi::kSoftmaxLooped;
  p.row_tile = q.row_tile;
  std::int64_t in_numel, out_numel, row_stride = 1;
  if (q.transposed) {
    row_stride = q.rows;
    p.in_offset = p.out_offset = 0;
    p.in_outer_strides[0] = p.out_outer_strides[0] = 1;
    in_numel = out_numel = q.rows * q.len;
  } else {
    p.in_offset = q.in_offset;
    p.out_offset = q.out_offset;
    p.in_outer_strides[0] = q.in_pitch;
    p.out_outer_strides[0] = q.out_pitch;
    in_numel = q.in_offset + (q.rows - 1) * q.in_pitch + q.len;
    out_numel = q.out_offset + (q.rows - 1) * q.out_pitch + q.len;
  }
  p.in_row_stride = p.out_row_stride = row_stride;
  q.out_bytes = std::size_t(out_numel) * dtype_size(q.out_t);
  q.in.assign(std::size_t(in_numel) * dtype_size(q.t), std::byte{0});
  std::mt19937_64 rng(q.seed);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  for (std::int64_t i = 0; i < in_numel; ++i) put_element(q.in, q.t, i, u(rng), 0);
  auto in_at = [&](std::int64_t r, std::int64_t k) {
    return p.in_offset + r * p.in_outer_strides[0] + k * row_stride;
  };
  if (q.mask_kind != MaskKind::kNone) {
    p.has_mask = 1;
    const bool full = q.mask_kind == MaskKind::kFull;
    // The full mask has the input's layout (at offset 0, pitch len); the row-broadcast one
    // is one row (outer stride 0).
    q.mask.assign(std::size_t(full ? q.rows * q.len : q.len), std::byte{0});
    std::bernoulli_distribution b(0.3);
    for (auto& m : q.mask) m = std::byte(b(rng) ? 1 : 0);
    p.mask_offset = 0;
    p.mask_row_stride = full && q.transposed ? q.rows : 1;
    p.mask_outer_strides[0] = full ? (q.transposed ? 1 : q.len) : 0;
    if (full && q.rows > 1)
      for (std::int64_t k = 0; k < q.len; ++k)
        q.mask[std::size_t(p.mask_outer_strides[0] + k * p.mask_row_stride)] = std::byte(1);
  }
  if (q.specials) {
    auto masked = [&](std::int64_t r, std::int64_t k) {
      if (!p.has_mask) return false;
      return q.mask[std::size_t(r * p.mask_outer_strides[0] + k * p.mask_row_stride)] !=
             std::byte(0);
    };
    for (std::int64_t k = 0; k < q.len; ++k) {
      if (q.rows > 0 && k == q.len / 2) put_element(q.in, q.t, in_at(0, k), INFINITY, 0);
      if (q.rows > 1) put_element(q.in, q.t, in_at(1, k), -INFINITY, 0);
      if (q.rows > 2 && k == q.len - 1) put_element(q.in, q.t, in_at(2, k), NAN, 0);
      if (q.rows > 3 && k % 3 == 0) put_element(q.in, q.t, in_at(3, k), -INFINITY, 0);
      if (q.rows > 4) put_element(q.in, q.t, in_at(4, k), 1000.0 + double(k % 5), 0);
      if (q.rows > 5 && p.has_mask && masked(5, k))
        put_element(q.in, q.t, in_at(5, k), k % 2 ? NAN : INFINITY, 0);
    }
  }
}

std::vector<std::byte> run(BackendDevice& d, const Problem& q) {
  std::vector<KernelBuffer> buffers;
  std::vector<std::byte> out(q.out_bytes, std::byte{0x5a});
  auto upload = [&](const std::vector<std::byte>& bytes, bool written) {
    DeviceMemory m = d.allocate(bytes.size());
    d.copy_from_host(m, 0, bytes.data(), bytes.size());
    buffers.push_back({m, written});
  };
  try {
    upload(out, true);
    upload(q.in, false);
    if (q.params.has_mask) upload(q.mask, false);
    nbx::testing::launch_planned(
        d, {nbx::KernelFamily::kSoftmax, buffers,
            std::as_bytes(std::span<const abi::SoftmaxParams>(&q.params, 1))});
    d.synchronize();
  } catch (...) {
    for (KernelBuffer& b : buffers) d.free(b.memory);
    throw;
  }
  d.copy_to_host(out.data(), buffers[0].memory, 0, q.out_bytes);
  for (KernelBuffer& b : buffers) d.free(b.memory);
  return out;
}

// Runs `q` on the host and on the fast-only device (which proves the fast kernels ran).
void check_fast(Problem q) {
  build(q);
  const auto expected = run(*devices().host, q);
  const auto got = run(*row_kernel_devices().fast_only, q);
  Case c;
  c.out.dtype = q.out_t;
  INFO(label(q));
  const std::string problem = compare_outputs(c, expected, got);
  CHECK_MESSAGE(problem.empty(), problem);
}

constexpr DType kFloatTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                 DType::kFloat64};

// Input and output layouts: both aligned; both starting one element in, rows one longer
// (every row a different misalignment, the output's the same as the input's); the input
// three in with rows three longer and the output contiguous (alignments differ: element
// stores).
Problem layout(Problem q, int which) {
  switch (which) {
    case 0:
      q.in_offset = q.out_offset = 0;
      q.in_pitch = q.out_pitch = q.len;
      break;
    case 1:
      q.in_offset = q.out_offset = 1;
      q.in_pitch = q.out_pitch = q.len + 1;
      break;
    default:
      q.in_offset = 3;
      q.in_pitch = q.len + 3;
      q.out_offset = 0;
      q.out_pitch = q.len;
      break;
  }
  return q;
}

TEST_CASE("softmax fast: every dtype on lengths around the warp, vector and register widths") {
  // 1..65: within a warp's vectors (head, tail, a single vector); 255..4097: several
  // vectors per thread, groups of several warps; 16384..16386: float64's register limit;
  // 32768..32776: the float types' register limit (32776 and 40000 take the looped kernel).
  const std::int64_t lens[] = {1,    2,    3,     5,     7,     8,     9,     31,    32,
                               33,   63,   64,    65,    255,   256,   257,   1000,  4096,
                               4097, 8191, 16384, 16385, 16386, 32768, 32769, 32776, 40000};
  std::uint64_t seed = 81000;
  for (DType t : kFloatTypes)
    for (bool log : {false, true})
      for (std::int64_t len : lens)
        for (int l = 0; l < 3; ++l) {
          Problem q;
          q.t = q.out_t = t;
          q.log = log;
          q.len = len;
          q.rows = len >= 4096 ? 3 : 9;
          q.seed = seed++;
          check_fast(layout(q, l));
        }
}

TEST_CASE("softmax fast: scale, full and row-broadcast masks, fully masked rows") {
  std::uint64_t seed = 82000;
  for (DType t : kFloatTypes)
    for (bool log : {false, true})
      for (MaskKind mk : {MaskKind::kRowBroadcast, MaskKind::kFull})
        for (std::int64_t len : {1, 7, 33, 1000, 4097, 40000})
          for (double scale : {0.375, -1.5}) {
            Problem q;
            q.t = q.out_t = t;
            q.log = log;
            q.len = len;
            q.rows = 6;
            q.mask_kind = mk;
            q.scale = scale;
            q.seed = seed++;
            check_fast(layout(q, int(seed % 3)));
          }
}

TEST_CASE("softmax fast: special rows follow PyTorch (+inf, only -inf, NaN give NaN)") {
  std::uint64_t seed = 83000;
  for (DType t : kFloatTypes)
    for (bool log : {false, true})
      for (MaskKind mk : {MaskKind::kNone, MaskKind::kFull})
        for (std::int64_t len : {1, 7, 64, 1000, 40000}) {
          Problem q;
          q.t = q.out_t = t;
          q.log = log;
          q.len = len;
          q.rows = 7;
          q.mask_kind = mk;
          q.specials = true;
          q.seed = seed++;
          check_fast(layout(q, int(seed % 3)));
        }
}

TEST_CASE("softmax fast: vocabulary rows of 128256, and rows enough for several rounds") {
  std::uint64_t seed = 84000;
  for (DType t : kFloatTypes)
    for (bool log : {false, true})
      for (int l : {0, 1}) {
        Problem q;
        q.t = q.out_t = t;
        q.log = log;
        q.len = 128256;
        q.rows = 3;
        q.seed = seed++;
        check_fast(layout(q, l));
      }
  // Blocks run several rounds: the looped kernel (300 rows over 2 blocks per SM) and the
  // register kernel (warp-wide rows, 70000 of them).
  for (bool log : {false, true}) {
    Problem q;
    q.log = log;
    q.len = 33000;
    q.rows = 300;
    q.seed = seed++;
    check_fast(layout(q, 1));
    q.len = 7;
    q.rows = 70000;
    q.mask_kind = MaskKind::kFull;
    q.seed = seed++;
    check_fast(layout(q, 0));
  }
}

TEST_CASE("softmax fast: ineligible views still match the host with NBX_GPU_ROWS=fast") {
  std::uint64_t seed = 85000;
  std::vector<Problem> problems;
  for (DType t : {DType::kFloat32, DType::kBFloat16}) {
    Problem tr;  // softmax over dim 0 (row stride = rows)
    tr.t = tr.out_t = t;
    tr.rows = 33;
    tr.len = 1000;
    tr.transposed = true;
    tr.seed = seed++;
    problems.push_back(tr);
    Problem mixed = layout(tr, 0);  // float16 output of another input dtype
    mixed.transposed = false;
    mixed.out_t = DType::kFloat16;
    mixed.seed = seed++;
    problems.push_back(mixed);
  }
  Problem acc;  // float32 accumulated in float64
  acc.rows = 40;
  acc.len = 500;
  acc.accumulate = int(DType::kFloat64);
  acc.seed = seed++;
  problems.push_back(layout(acc, 0));
  // A row_tile (reduce.tile_max) below what the kernels need — a warp for rows in
  // registers, a 1024-thread block for long rows — leaves the launch to the general kernel.
  Problem narrow;
  narrow.rows = 3;
  narrow.len = 40000;
  narrow.row_tile = 256;
  narrow.seed = seed++;
  problems.push_back(layout(narrow, 0));
  Problem subwarp;
  subwarp.rows = 20;
  subwarp.len = 100;
  subwarp.row_tile = 16;
  subwarp.seed = seed++;
  problems.push_back(layout(subwarp, 0));
  for (Problem q : problems) {
    build(q);
    INFO(label(q));
    const auto expected = run(*devices().host, q);
    const auto got = run(*row_kernel_devices().fast, q);
    Case c;
    c.out.dtype = q.out_t;
    const std::string problem = compare_outputs(c, expected, got);
    CHECK_MESSAGE(problem.empty(), problem);
    // fast-only refuses what the fast kernels do not serve: this is how the cases above
    // know they ran them.
    if (gpu_backend()) CHECK_THROWS_AS(run(*row_kernel_devices().fast_only, q), Unsupported);
  }
}

}  // namespace
}  // namespace nbx::gputest
