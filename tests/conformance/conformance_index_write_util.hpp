// The helpers of the index-write conformance cases (conformance_cases_index_write.cpp,
// conformance_cases_search.cpp): views and layouts of operands, drawn values and indices,
// the scatter-mode guard, the case builder, and the fault cells both families use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "core/ops/index.hpp"
#include "core/ops/index_write.hpp"
#include "core/ops/sort.hpp"
#include "tests/conformance/conformance_families.hpp"
#include "tests/scatter_mode.hpp"

namespace nbx::conformance::index_write_util {

using View = std::function<Tensor(const Tensor&)>;
using Call = std::function<Outputs(std::span<const Tensor>)>;
using I64 = std::vector<std::int64_t>;

const View kNone = {};
const View kTranspose01 = [](const Tensor& t) { return t.transpose(0, 1); };

inline View expand_to(Shape shape) {
  return [shape](const Tensor& t) { return t.expand(shape); };
}

// The scatter variant of a cell's calls (tests/scatter_mode.hpp).
using ScopedMode = testing::ScatterModeScope;

// How an operand is laid out on the device: the logical tensor is the same on both sides.
enum class Layout { kContiguous, kTransposed, kStrided, kExpanded0 };

struct Operand {
  Tensor base;
  View view;
};

// `logical` (a host tensor) as a base and the view that gives it back: transposed (dims 0 and
// 1), every other element of the last dim (the elements between hold `filler`, which an index
// read would fault on), or expanded along dim 0 from its first row.
inline Operand laid_out(const Tensor& logical, Layout layout, double filler = 0) {
  const int nd = logical.dim();
  if (layout == Layout::kTransposed && nd >= 2)
    return {logical.transpose(0, 1).contiguous(), kTranspose01};
  if (layout == Layout::kStrided && nd >= 1) {
    Shape wide = logical.shape();
    const std::int64_t n = wide[nd - 1];
    wide[nd - 1] = 2 * n;
    const Tensor base = Tensor::full(wide, filler, logical.dtype());
    base.slice(nd - 1, 0, 2 * n, 2).copy_(logical);
    return {base, [nd, n](const Tensor& t) { return t.slice(nd - 1, 0, 2 * n, 2); }};
  }
  if (layout == Layout::kExpanded0 && nd >= 1 && logical.size(0) > 0) {
    const Shape full = logical.shape();
    return {logical.narrow(0, 0, 1).contiguous(), expand_to(full)};
  }
  return {logical, kNone};
}

// A half-type sum of thousands of terms rounds at every step in whatever order the atomic
// variant's writes land: its error follows the partial sums (which cancel to a small result),
// past the dtype's tolerance of the result. Such cases run in the "_det" cells (exact) only.
inline bool reorder_too_long(bool accumulates, DType t, const char* name) {
  return accumulates && (t == DType::kFloat16 || t == DType::kBFloat16) &&
         std::string(name) == "long-duplicates";
}

inline Tensor index_tensor(const I64& v, const Shape& shape, DType index_dtype) {
  return Tensor::from_host(v, shape).to(index_dtype);
}

// What an operand's values are.
enum class Values {
  kGeneral,  // general_values: mixed magnitudes, ±0, NaN, ±inf, extremes
  kBounded,  // draw_tensor: 2^-7 … 2 with random signs (sums cannot overflow in one order only)
  kNearOne,  // draw_near_one: long products neither vanish nor overflow
  kGrid,     // draw_ties: halves in -2 … 2, so float16/bfloat16 sums of up to ~60 terms are
             // exact in any order (their rounding at each step would otherwise follow the
             // partial sums, past the tolerance of a result that cancels)
};

// The values of a sum-like cell: the grid for half types where atomic writes reorder the sum.
inline Values sum_values(bool accumulates, DType t) {
  return accumulates && (t == DType::kFloat16 || t == DType::kBFloat16) ? Values::kGrid
                                                                        : Values::kBounded;
}

inline Tensor draw(Rng& rng, DType t, const Shape& s, Values kind) {
  switch (kind) {
    case Values::kBounded:
      return draw_tensor(rng, t, s);
    case Values::kNearOne:
      return draw_near_one(rng, t, s);
    case Values::kGrid:
      return draw_ties(rng, t, s);
    default:
      return general_values(rng, t, s);
  }
}

inline I64 drawn(Rng& rng, std::int64_t n, std::int64_t lo, std::int64_t hi) {
  I64 v(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  for (std::int64_t& x : v) x = rng.range(lo, hi);
  return v;
}

// The first `n` of a random permutation of [0, bound) (n <= bound): distinct indices.
inline I64 distinct(Rng& rng, std::int64_t n, std::int64_t bound) {
  I64 p(static_cast<std::size_t>(bound));
  std::iota(p.begin(), p.end(), 0);
  for (std::int64_t k = bound - 1; k > 0; --k)
    std::swap(p[std::size_t(k)], p[std::size_t(rng.below(k + 1))]);
  p.resize(static_cast<std::size_t>(n));
  return p;
}

// An index of `shape` for scatter along `dim` into a dim of `bound`: duplicates drawn, or
// distinct along each line of dim (so no two elements of the iteration share a destination).
inline I64 scatter_index(Rng& rng, const Shape& shape, int dim, std::int64_t bound,
                         bool duplicates) {
  const std::int64_t n = numel(shape);
  if (duplicates || n == 0 || shape.size() == 0) return drawn(rng, n, 0, bound - 1);
  I64 v(static_cast<std::size_t>(n));
  const std::int64_t along = shape[dim];
  std::int64_t inner = 1;
  for (int k = dim + 1; k < shape.size(); ++k) inner *= shape[k];
  const std::int64_t outer = n / (along * inner);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      const I64 line = distinct(rng, along, bound);
      for (std::int64_t a = 0; a < along; ++a)
        v[std::size_t((o * along + a) * inner + i)] = line[std::size_t(a)];
    }
  return v;
}

struct Cases {
  DType dtype, index_dtype;
  Rng& rng;
  Device dev;
  const char* mode;  // "atomic" or "sorted"
  std::vector<FamilyCase> cases;

  bool det() const { return std::string(mode) == "sorted"; }

  void add(std::string name, std::int64_t k, const std::vector<Operand>& operands, Call call) {
    FamilyCase c{std::move(name), k, false, {}, {}, {}};
    c.call = [call = std::move(call), mode = mode](std::span<const Tensor> in,
                                                   const Device&) -> Outputs {
      ScopedMode m(mode);
      return call(in);
    };
    for (const Operand& o : operands) add_operand(c, o.base, dev, o.view);
    cases.push_back(std::move(c));
  }
  Operand values(const Shape& s, Values kind, Layout layout = Layout::kContiguous) {
    return laid_out(draw(rng, dtype, s, kind), layout);
  }
  Operand index(const I64& v, const Shape& s, Layout layout = Layout::kContiguous) {
    return laid_out(index_tensor(v, s, index_dtype), layout, 1 << 20);
  }
};

// Sorted rows (NaN last, as the sort family puts them) of general values with ties.
inline Tensor sorted_rows(Rng& rng, DType t, const Shape& s) {
  Tensor x = general_values(rng, t, s);
  if (numel(s) >= 4 && s.size() >= 1) {  // a few repeats of the first element: ties
    Tensor flat = x.reshape({-1});
    flat.narrow(0, 1, 1).copy_(flat.narrow(0, 0, 1));
    flat.narrow(0, numel(s) - 1, 1).copy_(flat.narrow(0, 0, 1));
  }
  return s.size() == 0 || numel(s) == 0 ? x : ops::sort(x, -1).values;
}

// One bad index per case, in both modes (atomic and sorted), for op `which`.
std::vector<FamilyCase> fault_cell(const std::string& which, DType dtype, Rng& rng,
                                   const Device& dev);

}  // namespace nbx::conformance::index_write_util
