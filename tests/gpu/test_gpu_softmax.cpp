// The "softmax" family on the GPU against the host reference, through raw launches so that
// both variants are forced on every row length: softmax / log_softmax in every float dtype,
// rows of 1 to 128256 elements, lane groups of 1 to 256, scale, row-broadcast and full
// masks (with fully masked rows), the softmax dim strided (dim 0 of a 2-d tensor), and
// PyTorch's special rows (+inf, only -inf, NaN, -inf next to finite values).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <span>

#include "core/errors.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

std::vector<std::byte> run_softmax(BackendDevice& d, const abi::SoftmaxParams& p,
                                   const std::vector<std::byte>& in, std::size_t out_bytes,
                                   const std::vector<std::byte>* mask) {
  std::vector<KernelBuffer> buffers;
  std::vector<std::byte> out(out_bytes, std::byte{0x5a});
  auto upload = [&](const std::vector<std::byte>& bytes, bool written) {
    DeviceMemory m = d.allocate(bytes.size());
    d.copy_from_host(m, 0, bytes.data(), bytes.size());
    buffers.push_back({m, written});
  };
  upload(out, true);
  upload(in, false);
  if (mask) upload(*mask, false);
  d.launch({"softmax", buffers, std::as_bytes(std::span<const abi::SoftmaxParams>(&p, 1))});
  d.synchronize();
  d.copy_to_host(out.data(), buffers[0].memory, 0, out_bytes);
  for (KernelBuffer& b : buffers) d.free(b.memory);
  return out;
}

enum class MaskKind { kNone, kRowBroadcast, kFull };

struct SoftmaxCase {
  DType t = DType::kFloat32;
  bool log = false;
  std::int64_t rows = 1, len = 1;
  bool transposed = false;  // the softmax dim is dim 0 of a [len, rows] tensor
  MaskKind mask = MaskKind::kNone;
  double scale = 1.0;
  int row_tile = 32;
  std::uint64_t seed = 1;
};

// Values in [-4, 4]; with `specials`, row r (of the first five) holds +inf, only -inf, a
// NaN, a -inf among finite values, or large values that must not overflow.
void check_softmax(const SoftmaxCase& sc, bool specials = false) {
  abi::SoftmaxParams p{};
  p.op = sc.log ? abi::kSoftmax_log_softmax : abi::kSoftmax_softmax;
  p.in_dtype = p.out_dtype = std::int32_t(sc.t);
  p.accumulate_dtype = std::int32_t(sc.t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32);
  p.scale = sc.scale;
  p.rows = sc.rows;
  p.row_len = sc.len;
  p.outer_ndim = 1;
  p.outer_sizes[0] = sc.rows;
  const std::int64_t row_stride = sc.transposed ? sc.rows : 1, outer = sc.transposed ? 1 : sc.len;
  p.in_row_stride = p.out_row_stride = row_stride;
  p.in_outer_strides[0] = p.out_outer_strides[0] = outer;
  p.in_offset = 3;  // a view that starts inside its buffer
  const std::int64_t numel = sc.rows * sc.len;
  std::vector<std::byte> in(std::size_t(numel + 3) * dtype_size(sc.t));
  std::mt19937_64 rng(sc.seed);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  for (std::int64_t i = 0; i < numel + 3; ++i) put_element(in, sc.t, i, u(rng), 0);
  auto at = [&](std::int64_t r, std::int64_t k) { return 3 + r * outer + k * row_stride; };
  if (specials)
    for (std::int64_t k = 0; k < sc.len; ++k) {
      if (sc.rows > 0 && k == sc.len / 2) put_element(in, sc.t, at(0, k), INFINITY, 0);
      if (sc.rows > 1) put_element(in, sc.t, at(1, k), -INFINITY, 0);
      if (sc.rows > 2 && k == sc.len - 1) put_element(in, sc.t, at(2, k), NAN, 0);
      if (sc.rows > 3 && k % 3 == 0) put_element(in, sc.t, at(3, k), -INFINITY, 0);
      if (sc.rows > 4) put_element(in, sc.t, at(4, k), 1000.0 + double(k % 5), 0);
    }
  std::vector<std::byte> mask;
  if (sc.mask != MaskKind::kNone) {
    p.has_mask = 1;
    const bool full = sc.mask == MaskKind::kFull;
    // The row-broadcast mask is one row of len (outer stride 0); the full one has the
    // input's layout, and its row 1 masked entirely.
    mask.resize(std::size_t(full ? numel : sc.len));
    std::bernoulli_distribution b(0.3);
    for (auto& m : mask) m = std::byte(b(rng) ? 1 : 0);
    p.mask_row_stride = full ? row_stride : 1;
    p.mask_outer_strides[0] = full ? outer : 0;
    if (full && sc.rows > 1)
      for (std::int64_t k = 0; k < sc.len; ++k)
        mask[std::size_t(1 * outer + k * row_stride)] = std::byte(1);
  }
  const std::size_t out_bytes = std::size_t(numel) * dtype_size(sc.t);
  const auto* m = p.has_mask ? &mask : nullptr;
  p.variant = abi::kSoftmaxOnePass;
  p.row_tile = sc.row_tile;
  const auto expected = run_softmax(*devices().host, p, in, out_bytes, m);
  Case c;
  c.out.dtype = sc.t;
  for (int variant : {abi::kSoftmaxOnePass, abi::kSoftmaxLooped}) {
    p.variant = variant;
    const auto got = run_softmax(*devices().gpu[0].device, p, in, out_bytes, m);
    INFO((sc.log ? "log_softmax " : "softmax ")
         << dtype_name(sc.t) << " rows " << sc.rows << " len " << sc.len << " transposed "
         << sc.transposed << " mask " << int(sc.mask) << " scale " << sc.scale << " row_tile "
         << sc.row_tile << " variant " << variant << " specials " << specials << " seed "
         << sc.seed);
    const std::string problem = compare_outputs(c, expected, got);
    CHECK_MESSAGE(problem.empty(), problem);
  }
}

constexpr DType kFloatTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                 DType::kFloat64};

TEST_CASE("softmax and log_softmax match the host on rows of 1 to 128256 elements") {
  std::uint64_t seed = 7000;
  for (DType t : kFloatTypes)
    for (bool log : {false, true}) {
      for (std::int64_t len : {1, 7, 1000, 5000})
        for (int tile : {1, 32, 64, 256})
          check_softmax({t, log, 9, len, false, MaskKind::kNone, 1.0, tile, seed++});
      check_softmax({t, log, 3, 128256, false, MaskKind::kNone, 1.0, 256, seed++});
    }
}

TEST_CASE("scaled and masked softmax, and a strided softmax dim, match the host") {
  std::uint64_t seed = 8000;
  for (DType t : kFloatTypes)
    for (bool log : {false, true}) {
      for (MaskKind mk : {MaskKind::kRowBroadcast, MaskKind::kFull})
        for (std::int64_t len : {7, 1000, 5000})
          check_softmax({t, log, 6, len, false, mk, 0.375, 64, seed++});
      for (std::int64_t len : {1, 7, 1000})
        check_softmax({t, log, 33, len, true, MaskKind::kNone, 1.0, 32, seed++});
      check_softmax({t, log, 5, 1000, true, MaskKind::kFull, 2.0, 128, seed++});
    }
}

TEST_CASE("softmax special rows follow PyTorch (+inf, only -inf, NaN give NaN)") {
  std::uint64_t seed = 9000;
  for (DType t : kFloatTypes)
    for (bool log : {false, true})
      for (std::int64_t len : {1, 7, 1000})
        for (int tile : {1, 64})
          check_softmax({t, log, 6, len, false, MaskKind::kNone, 1.0, tile, seed++}, true);
}

}  // namespace
}  // namespace nbx::gputest
