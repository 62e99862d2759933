#include "tests/common/softmax_raw_case.hpp"

#include <cmath>
#include <random>

#include "tests/common/raw_elements.hpp"

namespace nbx::testing {

SoftmaxLaunch make_softmax_launch(const SoftmaxCase& sc, bool specials) {
  SoftmaxLaunch l;
  abi::SoftmaxParams& p = l.params;
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
  l.in.resize(std::size_t(numel + 3) * dtype_size(sc.t));
  std::mt19937_64 rng(sc.seed);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  auto put = [&](std::int64_t i, double v) { store_element(l.in.data(), sc.t, i, v, 0); };
  for (std::int64_t i = 0; i < numel + 3; ++i) put(i, u(rng));
  auto at = [&](std::int64_t r, std::int64_t k) { return 3 + r * outer + k * row_stride; };
  if (specials)
    for (std::int64_t k = 0; k < sc.len; ++k) {
      if (sc.rows > 0 && k == sc.len / 2) put(at(0, k), INFINITY);
      if (sc.rows > 1) put(at(1, k), -INFINITY);
      if (sc.rows > 2 && k == sc.len - 1) put(at(2, k), NAN);
      if (sc.rows > 3 && k % 3 == 0) put(at(3, k), -INFINITY);
      if (sc.rows > 4) put(at(4, k), 1000.0 + double(k % 5));
    }
  if (sc.mask != MaskKind::kNone) {
    p.has_mask = 1;
    const bool full = sc.mask == MaskKind::kFull;
    l.mask.resize(std::size_t(full ? numel : sc.len));
    std::bernoulli_distribution b(0.3);
    for (auto& m : l.mask) m = std::byte(b(rng) ? 1 : 0);
    p.mask_row_stride = full ? row_stride : 1;
    p.mask_outer_strides[0] = full ? outer : 0;
    if (full && sc.rows > 1)
      for (std::int64_t k = 0; k < sc.len; ++k)
        l.mask[std::size_t(1 * outer + k * row_stride)] = std::byte(1);
  }
  l.out_bytes = std::size_t(numel) * dtype_size(sc.t);
  // One-pass where the row cache fits beside any backend's scratch on every device the tests
  // meet (16 KiB: llvmpipe has 32 KiB of shared memory); the wrapper's rule is in
  // core/ops/softmax.cpp, and a backend given a one-pass row it cannot hold throws Internal.
  const std::int64_t acc = p.accumulate_dtype == std::int32_t(DType::kFloat64) ? 8 : 4;
  p.variant = sc.len * acc <= 16384 ? abi::kSoftmaxOnePass : abi::kSoftmaxLooped;
  p.row_tile = sc.row_tile;
  return l;
}

}  // namespace nbx::testing
