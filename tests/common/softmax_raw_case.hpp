// A softmax launch built by hand for the kernel tests of every GPU backend (tests/gpu,
// tests/vulkan): the parameter block, the input (values in [-4, 4], the view starting 3
// elements into its buffer, optionally PyTorch's special rows) and the mask, as raw bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::testing {

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

struct SoftmaxLaunch {
  abi::SoftmaxParams params{};      // variant kSoftmaxOnePass; callers may change it
  std::vector<std::byte> in, mask;  // mask empty unless params.has_mask
  std::size_t out_bytes = 0;
};

// With `specials`, row r (of the first five) holds +inf, only -inf, a NaN, a -inf among
// finite values, or large values that must not overflow. The full mask has the input's
// layout with row 1 masked entirely; the row-broadcast mask is one row (outer stride 0).
SoftmaxLaunch make_softmax_launch(const SoftmaxCase& sc, bool specials);

}  // namespace nbx::testing
