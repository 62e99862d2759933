// The index writes (core/ops/index_write.hpp: the scatter family; the search family is in
// conformance_cases_search.cpp) × every dtype against the host. Each cell forces a scatter variant
// for its calls: the atomic one (NBX_SCATTER=atomic), or the deterministic sorted pass ("_det"
// cells: set_deterministic_algorithms(true), NBX_SCATTER=sorted). Atomic float sums and
// products may round in another order, so those cells take the dtype's tolerance over the
// terms a destination folds (k); assignments there write distinct destinations (which
// duplicate wins is unspecified); max/min, integers and bool are exact in any order. In the
// "_det" cells results are exact (but for prod, mean and alpha: see kIndexWriteSpecs), duplicates
// included (the last write wins, sums in index order), at sizes past the sort family's largest tile
// (its radix pass sorts the keys). Cases: 1-d to 4-d, negative dims, transposed/sliced self,
// transposed/strided/broadcast indices, strided and expanded sources, duplicates, negative indices
// where the op wraps (index_fill, index_put), empty index lists, 0-size and 0-d tensors, int32
// ("_i32") and int64 indices, in-place forms through views ("_inplace": the base is an output),
// argument errors rejected alike. "<op>_fault": one bad index per case in both modes, the
// DeviceFault's index, bound, position and op compared with the host's (searchsorted's sorter:
// take_along_dim's).
#include "tests/conformance/conformance_index_write_util.hpp"

namespace nbx::conformance {
namespace {
using namespace index_write_util;

// ---- scatter, scatter_add, scatter_reduce ----

struct ScatterShape {
  const char* name;
  Shape self;
  Layout self_layout;
  std::int64_t dim;
  Shape index;
  Layout index_layout;
  Shape src;
  Layout src_layout;
  bool duplicates_only = false;  // more indices along dim than self has: duplicates by force
};

std::vector<ScatterShape> scatter_shapes() {
  const Layout c = Layout::kContiguous, t = Layout::kTransposed, s = Layout::kStrided,
               e = Layout::kExpanded0;
  return {
      {"dim1", {5, 7}, c, 1, {5, 4}, c, {5, 6}, c},
      {"dim0", {6, 4}, c, 0, {3, 4}, c, {4, 4}, c},
      {"dim-1-of-1-d", {30}, c, -1, {20}, c, {25}, c},
      {"3-d-dim-1", {3, 4, 5}, c, -1, {2, 4, 3}, c, {3, 4, 4}, c},
      {"3-d-dim1", {3, 6, 4}, c, 1, {3, 5, 2}, c, {3, 5, 3}, c},
      {"4-d-dim1", {2, 3, 4, 5}, c, 1, {2, 2, 3, 5}, c, {2, 3, 4, 5}, c},
      {"4-d-dim-4", {4, 2, 2, 3}, c, -4, {3, 2, 1, 3}, c, {3, 2, 2, 3}, c},
      {"transposed-self", {5, 7}, t, 1, {4, 3}, c, {5, 5}, c},
      {"transposed-index", {5, 7}, c, 1, {5, 4}, t, {5, 4}, c},
      {"strided-index", {6, 8}, c, 1, {6, 5}, s, {6, 5}, c},
      {"broadcast-index", {5, 7}, c, 1, {5, 3}, e, {5, 3}, c},
      {"strided-src", {5, 7}, c, 1, {5, 4}, c, {5, 6}, s},
      {"expanded-src", {5, 7}, c, 1, {4, 6}, c, {4, 6}, e},
      {"transposed-src-dim0", {6, 5}, c, 0, {4, 5}, c, {5, 5}, t},
      {"empty-index", {5, 7}, c, 1, {5, 0}, c, {5, 3}, c},
      {"empty-index-rows", {5, 7}, c, 0, {0, 7}, c, {2, 7}, c},
      {"0-size-self", {0, 4}, c, 1, {0, 2}, c, {0, 3}, c},
      {"0-d", {}, c, 0, {}, c, {}, c},
      {"wide", {64, 100}, c, 1, {64, 80}, c, {64, 80}, c},
      {"many-duplicates", {4, 3}, c, 0, {40, 3}, c, {40, 3}, c, true},
      {"long-duplicates", {7}, c, 0, {5000}, c, {5000}, c, true},
  };
}

// op(self, dim, index, src) per shape; `values` of self and src; `k`: the terms a destination
// folds (an upper bound), 1 for exact ops.
void scatter_cases(
    Cases& a, bool duplicates, Values vkind, bool accumulates,
    const std::function<Tensor(const Tensor&, std::int64_t, const Tensor&, const Tensor&)>& op) {
  for (const ScatterShape& sh : scatter_shapes()) {
    if (sh.duplicates_only && !duplicates) continue;
    if (reorder_too_long(accumulates, a.dtype, sh.name)) continue;
    const int nd = std::max(1, sh.self.size());
    const int d0 = int((sh.dim + nd) % nd);
    const std::int64_t bound = sh.self.size() ? sh.self[d0] : 1;
    const I64 iv = scatter_index(a.rng, sh.index, sh.self.size() ? d0 : 0, bound, duplicates);
    const std::int64_t k = accumulates ? (sh.index.size() ? sh.index[d0] : 1) + 1 : 1;
    const std::int64_t dim = sh.dim;
    a.add(sh.name, k,
          {a.values(sh.self, vkind, sh.self_layout), a.index(iv, sh.index, sh.index_layout),
           a.values(sh.src, vkind, sh.src_layout)},
          [op, dim](std::span<const Tensor> in) -> Outputs {
            return {op(in[0], dim, in[1], in[2])};
          });
  }
  // Rejected alike: an index larger than self in a dim but dim, ranks that differ.
  a.add("index-larger-than-self", 1,
        {a.values({3, 4}, vkind), a.index(I64(10, 0), {5, 2}), a.values({5, 2}, vkind)},
        [op](std::span<const Tensor> in) -> Outputs { return {op(in[0], 1, in[1], in[2])}; });
  a.add("ranks-differ", 1, {a.values({3, 4}, vkind), a.index({0, 1}, {2}), a.values({3, 4}, vkind)},
        [op](std::span<const Tensor> in) -> Outputs { return {op(in[0], 1, in[1], in[2])}; });
}

// The in-place form through a view: self is the transpose of a [7, 5] base (or every other
// column of a [5, 14] one), the base the output.
void inplace_scatter_cases(
    Cases& a, bool duplicates, Values vkind, bool accumulates,
    const std::function<void(const Tensor&, std::int64_t, const Tensor&, const Tensor&)>& op) {
  const I64 iv = scatter_index(a.rng, {5, 4}, 1, 7, duplicates);
  for (int which = 0; which < 2; ++which) {
    const Tensor base = draw(a.rng, a.dtype, which ? Shape{5, 14} : Shape{7, 5}, vkind);
    const View self_of =
        which ? View([](const Tensor& t) { return t.slice(1, 0, 14, 2); }) : kTranspose01;
    a.add(which ? "inplace-strided-self" : "inplace-transposed-self", accumulates ? 5 : 1,
          {{base, kNone}, a.index(iv, {5, 4}), a.values({5, 6}, vkind)},
          [op, self_of](std::span<const Tensor> in) -> Outputs {
            const Tensor b = in[0].clone();
            op(self_of(b), 1, in[1], in[2]);
            return {b};
          });
  }
}

using ScatterOp = std::function<Tensor(const Tensor&, std::int64_t, const Tensor&, const Tensor&)>;

struct ScatterCell {
  std::optional<std::string> reduce;  // scatter's "add"/"multiply", scatter_reduce's names
  bool scatter_reduce = false;
  bool include_self = true;
  bool add = false;    // scatter_add
  bool value = false;  // scatter with a scalar value
};

std::vector<FamilyCase> scatter_cell(const ScatterCell& cell, DType dtype, DType it, Rng& rng,
                                     const Device& dev, const char* mode) {
  Cases a{dtype, it, rng, dev, mode, {}};
  const std::string r = cell.reduce.value_or("");
  const bool sum_like = cell.add || r == "add" || r == "sum" || r == "mean";
  const bool prod_like = r == "multiply" || r == "prod";
  const bool accumulates = (sum_like || prod_like) && is_floating(dtype) && !a.det();
  // Assignments write distinct destinations unless the cell is deterministic.
  const bool assign = !cell.add && !cell.reduce;
  const bool duplicates = !assign || a.det();
  const Values vkind = a.det() || !(sum_like || prod_like) ? Values::kGeneral
                       : prod_like                         ? Values::kNearOne
                                                           : sum_values(accumulates, dtype);
  ScatterOp op;
  if (cell.add)
    op = [](const Tensor& s, std::int64_t d, const Tensor& i, const Tensor& x) {
      return ops::scatter_add(s, d, i, x);
    };
  else if (cell.scatter_reduce)
    op = [r, inc = cell.include_self](const Tensor& s, std::int64_t d, const Tensor& i,
                                      const Tensor& x) {
      return ops::scatter_reduce(s, d, i, x, r, inc);
    };
  else if (cell.value)
    op = [cell](const Tensor& s, std::int64_t d, const Tensor& i, const Tensor& x) {
      // The value: src's first element as a host scalar (of self's kind), or 1 when empty.
      const Scalar v =
          x.numel() ? x.reshape({-1}).narrow(0, 0, 1).to(host_device()).item() : Scalar(1);
      std::optional<std::string_view> reduce;
      if (cell.reduce) reduce = *cell.reduce;
      return ops::scatter(s, d, i, v, reduce);
    };
  else
    op = [cell](const Tensor& s, std::int64_t d, const Tensor& i, const Tensor& x) {
      std::optional<std::string_view> reduce;
      if (cell.reduce) reduce = *cell.reduce;
      return ops::scatter(s, d, i, x, reduce);
    };
  scatter_cases(a, duplicates, vkind, accumulates, op);
  if (!cell.value)
    inplace_scatter_cases(
        a, duplicates, vkind, accumulates,
        [cell, r](const Tensor& s, std::int64_t d, const Tensor& i, const Tensor& x) {
          if (cell.add)
            ops::scatter_add_(s, d, i, x);
          else if (cell.scatter_reduce)
            ops::scatter_reduce_(s, d, i, x, r, cell.include_self);
          else if (cell.reduce)
            ops::scatter_(s, d, i, x, std::string_view(*cell.reduce));
          else
            ops::scatter_(s, d, i, x);
        });
  // Rejected alike: an unknown reduction.
  if (cell.scatter_reduce || cell.reduce)
    a.add("unknown-reduce", 1,
          {a.values({3, 4}, vkind), a.index({0, 1}, {1, 2}), a.values({3, 4}, vkind)},
          [cell](std::span<const Tensor> in) -> Outputs {
            if (cell.scatter_reduce) return {ops::scatter_reduce(in[0], 1, in[1], in[2], "max")};
            return {ops::scatter(in[0], 1, in[1], in[2], "divide")};
          });
  return std::move(a.cases);
}

// ---- index_add, index_copy, index_fill ----

struct AlongShape {
  const char* name;
  Shape self;
  Layout self_layout;
  std::int64_t dim;
  std::int64_t count;  // indices
  Layout index_layout;
  Layout src_layout;
  bool duplicates_only = false;
};

std::vector<AlongShape> along_shapes() {
  const Layout c = Layout::kContiguous, t = Layout::kTransposed, s = Layout::kStrided,
               e = Layout::kExpanded0;
  return {
      {"dim0", {7, 5}, c, 0, 4, c, c},
      {"dim-1", {4, 6}, c, -1, 5, c, c},
      {"1-d", {40}, c, 0, 25, c, c},
      {"3-d-dim1", {3, 5, 4}, c, 1, 3, c, c},
      {"4-d-dim-2", {2, 3, 4, 5}, c, -2, 3, c, c},
      {"transposed-self", {6, 5}, t, 1, 4, c, c},
      {"strided-index", {6, 5}, c, 0, 5, s, c},
      {"transposed-source", {6, 5}, c, 0, 5, c, t},
      {"strided-source", {6, 5}, c, 1, 3, c, s},
      {"expanded-source", {6, 5}, c, 0, 4, c, e},
      {"empty-index", {4, 5}, c, 0, 0, c, c},
      {"0-size-self", {4, 0}, c, 0, 3, c, c},
      {"0-d", {}, c, 0, 1, c, c},
      {"wide", {300, 33}, c, 0, 200, c, c},
      {"many-duplicates", {3, 4}, c, 0, 50, c, c, true},
      {"long-duplicates", {5, 2}, c, 0, 4500, c, c, true},
  };
}

enum class AlongOp { kAdd, kAddAlpha, kCopy, kFill };

std::vector<FamilyCase> along_cell(AlongOp which, DType dtype, DType it, Rng& rng,
                                   const Device& dev, const char* mode) {
  Cases a{dtype, it, rng, dev, mode, {}};
  const bool sum = which == AlongOp::kAdd || which == AlongOp::kAddAlpha;
  const bool duplicates = sum || a.det();
  const bool accumulates = sum && is_floating(dtype) && !a.det();
  const Values vkind = accumulates ? sum_values(true, dtype) : Values::kGeneral;
  const Scalar alpha = which != AlongOp::kAddAlpha ? Scalar(1)
                       : dtype == DType::kBool     ? Scalar(true)
                       : is_floating(dtype)        ? Scalar(-1.5)
                                                   : Scalar(3);
  const Scalar fill = draw_scalar(rng, dtype, ValueKind::kGeneral);
  for (const AlongShape& sh : along_shapes()) {
    if (sh.duplicates_only && !duplicates) continue;
    if (reorder_too_long(accumulates, dtype, sh.name)) continue;
    const int nd = std::max(1, sh.self.size());
    const int d0 = int((sh.dim + nd) % nd);
    const std::int64_t bound = sh.self.size() ? sh.self[d0] : 1;
    if (!duplicates && sh.count > bound) continue;
    // index_fill wraps negative indices: half of them drawn as i - bound.
    I64 iv = duplicates || bound == 0 ? drawn(rng, bound ? sh.count : 0, 0, bound - 1)
                                      : distinct(rng, sh.count, bound);
    if (which == AlongOp::kFill)
      for (std::int64_t& x : iv)
        if (rng.below(2)) x -= bound;
    const std::int64_t n = bound ? sh.count : 0;
    const Shape ishape = sh.self.size() ? Shape{n} : Shape{};
    Shape src = sh.self;
    if (sh.self.size()) src[d0] = n;
    const std::int64_t dim = sh.dim;
    std::vector<Operand> operands{a.values(sh.self, vkind, sh.self_layout),
                                  a.index(iv, ishape, sh.index_layout)};
    if (which != AlongOp::kFill) operands.push_back(a.values(src, vkind, sh.src_layout));
    a.add(sh.name, accumulates ? n + 1 : 1, operands,
          [which, dim, alpha, fill](std::span<const Tensor> in) -> Outputs {
            switch (which) {
              case AlongOp::kAdd:
              case AlongOp::kAddAlpha:
                return {ops::index_add(in[0], dim, in[1], in[2], alpha)};
              case AlongOp::kCopy:
                return {ops::index_copy(in[0], dim, in[1], in[2])};
              default:
                return {ops::index_fill(in[0], dim, in[1], fill)};
            }
          });
  }
  // In place through a transposed self (the base the output).
  const I64 iv = duplicates ? drawn(rng, 5, 0, 6) : distinct(rng, 5, 7);
  a.add("inplace-transposed-self", accumulates ? 6 : 1,
        {{draw(rng, dtype, {7, 4}, vkind), kNone}, a.index(iv, {5}), a.values({4, 5}, vkind)},
        [which, alpha, fill](std::span<const Tensor> in) -> Outputs {
          const Tensor b = in[0].clone(), self = b.transpose(0, 1);  // [4, 7]
          if (which == AlongOp::kCopy)
            ops::index_copy_(self, 1, in[1], in[2]);
          else if (which == AlongOp::kFill)
            ops::index_fill_(self, 1, in[1], fill);
          else
            ops::index_add_(self, 1, in[1], in[2], alpha);
          return {b};
        });
  // Rejected alike: a 2-d index, a source of the wrong size along dim.
  a.add("2-d-index", 1, {a.values({4, 5}, vkind), a.index({0, 1}, {1, 2}), a.values({2, 5}, vkind)},
        [which, fill](std::span<const Tensor> in) -> Outputs {
          if (which == AlongOp::kFill) return {ops::index_fill(in[0], 0, in[1], fill)};
          return {ops::index_add(in[0], 0, in[1], in[2])};
        });
  if (which != AlongOp::kFill)
    a.add("source-size", 1,
          {a.values({4, 5}, vkind), a.index({0, 1}, {2}), a.values({3, 5}, vkind)},
          [which](std::span<const Tensor> in) -> Outputs {
            if (which == AlongOp::kCopy) return {ops::index_copy(in[0], 0, in[1], in[2])};
            return {ops::index_add(in[0], 0, in[1], in[2])};
          });
  return std::move(a.cases);
}

// ---- index_put ----

enum class PutKind { kAssign, kAccumulate, kMask };

std::vector<FamilyCase> index_put_cell(PutKind kind, DType dtype, DType it, Rng& rng,
                                       const Device& dev, const char* mode) {
  Cases a{dtype, it, rng, dev, mode, {}};
  const bool accumulate = kind == PutKind::kAccumulate;
  const bool duplicates = accumulate || a.det();
  const bool accumulates = accumulate && is_floating(dtype) && !a.det();
  const Values vkind = accumulates ? sum_values(true, dtype) : Values::kGeneral;
  // Indices into a dim of `bound`, each maybe written as i - bound (wrapped once).
  const auto put_index = [&](std::int64_t n, std::int64_t bound, bool dup) {
    I64 v = dup ? drawn(rng, n, 0, bound - 1) : distinct(rng, n, bound);
    for (std::int64_t& x : v)
      if (rng.below(3) == 0) x -= bound;
    return v;
  };
  const auto put = [accumulate](std::span<const Tensor> in, int n_indices) -> Outputs {
    std::vector<Tensor> idx(in.begin() + 1, in.begin() + 1 + n_indices);
    return {ops::index_put(in[0], idx, in[1 + n_indices], accumulate)};
  };
  if (kind == PutKind::kMask) {
    // A bool mask over the leading dims, values [count] or one broadcast element.
    const auto mask_case = [&](const char* name, const Shape& self, const Shape& mshape,
                               bool scalar_value, Layout self_layout, bool as_uint8) {
      Tensor m = draw_tensor(rng, DType::kBool, mshape);
      const std::int64_t count = numel(mshape) ? ops::sum(m.to(DType::kInt32)).item().to_int() : 0;
      Shape vs{};
      if (!scalar_value) {
        vs.push_back(count);
        for (int k = mshape.size(); k < self.size(); ++k) vs.push_back(self[k]);
      }
      if (as_uint8) m = m.to(DType::kUInt8);
      a.add(name, 1, {a.values(self, vkind, self_layout), {m, kNone}, a.values(vs, vkind)},
            [put](std::span<const Tensor> in) { return put(in, 1); });
    };
    mask_case("full-mask", {5, 6}, {5, 6}, false, Layout::kContiguous, false);
    mask_case("full-mask-scalar", {5, 6}, {5, 6}, true, Layout::kContiguous, false);
    mask_case("row-mask", {6, 4}, {6}, false, Layout::kContiguous, false);
    mask_case("row-mask-3-d", {4, 3, 5}, {4}, false, Layout::kContiguous, false);
    mask_case("leading-2-d-mask", {4, 3, 5}, {4, 3}, true, Layout::kContiguous, false);
    mask_case("transposed-self", {5, 7}, {5, 7}, false, Layout::kTransposed, false);
    mask_case("uint8-mask", {6, 4}, {6}, false, Layout::kContiguous, true);
    mask_case("0-size", {0, 4}, {0}, true, Layout::kContiguous, false);
    mask_case("wide", {70, 80}, {70, 80}, false, Layout::kContiguous, false);
    // A mask with an index tensor after it: (mask coordinates) × columns broadcast.
    {
      const Tensor m = tensor_of({1, 0, 1, 1, 0, 1}, {6}, DType::kBool);
      a.add("mask-and-index", 1,
            {a.values({6, 5}, vkind), {m, kNone}, a.index({4, -1, 0, 2}, {4}), a.values({}, vkind)},
            [put](std::span<const Tensor> in) { return put(in, 2); });
    }
    return std::move(a.cases);
  }
  const Layout c = Layout::kContiguous;
  struct PutShape {
    const char* name;
    Shape self;
    Layout self_layout;
    std::vector<Shape> indices;  // broadcast together (distinct destinations: see below)
    std::vector<Layout> layouts;
    bool values_full;  // values of the result's shape, else one broadcast element
  };
  const std::vector<PutShape> shapes = {
      {"one-vector", {7, 5}, c, {{4}}, {c}, true},
      {"one-vector-scalar", {7, 5}, c, {{6}}, {c}, false},
      {"two-vectors", {6, 7}, c, {{5}, {5}}, {c, c}, true},
      {"broadcast-pair", {6, 7}, c, {{4, 1}, {3}}, {c, c}, true},
      {"broadcast-pair-scalar", {6, 7}, c, {{3, 1}, {1, 4}}, {c, c}, false},
      {"three-of-3-d", {4, 5, 6}, c, {{3}, {3}, {3}}, {c, c, c}, true},
      {"leading-of-3-d", {8, 5, 3}, c, {{2, 3}}, {c}, true},
      {"1-d", {50}, c, {{30}}, {c}, true},
      {"transposed-self", {6, 7}, Layout::kTransposed, {{5}, {5}}, {c, c}, true},
      {"strided-index", {6, 7}, c, {{5}, {5}}, {Layout::kStrided, c}, true},
      {"transposed-index", {6, 7}, c, {{2, 3}}, {Layout::kTransposed}, true},
      {"empty-index", {5, 4}, c, {{0}}, {c}, false},
      {"0-size-self", {0, 4}, c, {{0}}, {c}, false},
      {"wide", {300, 20}, c, {{250}}, {c}, true},
  };
  for (const PutShape& sh : shapes) {
    // Distinct destinations for assignments outside the sorted mode: each index tensor's
    // values distinct, and where two broadcast against each other (a [n, 1] and a [m]) their
    // pairs are distinct too; tensors of one shape are paired element by element with the
    // first one distinct.
    std::vector<Operand> operands{a.values(sh.self, vkind, sh.self_layout)};
    Shape bshape;
    for (std::size_t j = 0; j < sh.indices.size(); ++j) {
      const Shape& is = sh.indices[j];
      const bool dup = duplicates || (j > 0 && is == sh.indices[0]);
      operands.push_back(a.index(put_index(numel(is), sh.self[int(j)], dup), is, sh.layouts[j]));
      bshape = j == 0 ? is : broadcast_shapes(bshape, is);
    }
    Shape vs{};
    if (sh.values_full) {
      vs = bshape;
      for (int k = int(sh.indices.size()); k < sh.self.size(); ++k) vs.push_back(sh.self[k]);
    }
    operands.push_back(a.values(vs, vkind));
    const int n = int(sh.indices.size());
    a.add(sh.name, accumulates ? numel(bshape) + 1 : 1, operands,
          [put, n](std::span<const Tensor> in) { return put(in, n); });
  }
  if (duplicates) {
    a.add(
        "many-duplicates", accumulates ? 61 : 1,
        {a.values({3, 4}, vkind), a.index(put_index(60, 3, true), {60}), a.values({60, 4}, vkind)},
        [put](std::span<const Tensor> in) { return put(in, 1); });
    if (!reorder_too_long(accumulates, dtype, "long-duplicates"))
      a.add("long-duplicates", accumulates ? 5001 : 1,
            {a.values({9}, vkind), a.index(put_index(5000, 9, true), {5000}),
             a.values({5000}, vkind)},
            [put](std::span<const Tensor> in) { return put(in, 1); });
  }
  // In place through a transposed self, the base the output.
  a.add("inplace-transposed-self", accumulates ? 6 : 1,
        {{draw(rng, dtype, {5, 6}, vkind), kNone},
         a.index(put_index(4, 6, duplicates), {4}),
         a.values({4, 5}, vkind)},
        [accumulate](std::span<const Tensor> in) -> Outputs {
          const Tensor b = in[0].clone();
          ops::index_put_(b.transpose(0, 1), {in[1]}, in[2], accumulate);
          return {b};
        });
  // Rejected alike: too many indices, values that do not broadcast.
  a.add("too-many-indices", 1,
        {a.values({3, 4}, vkind), a.index({0}, {1}), a.index({0}, {1}), a.index({0}, {1}),
         a.values({}, vkind)},
        [put](std::span<const Tensor> in) { return put(in, 3); });
  a.add("values-do-not-broadcast", 1,
        {a.values({3, 4}, vkind), a.index({0, 1}, {2}), a.values({3}, vkind)},
        [put](std::span<const Tensor> in) { return put(in, 1); });
  return std::move(a.cases);
}

// ---- masked_scatter, masked_select, nonzero ----

std::vector<FamilyCase> masked_cell(bool scatter, DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, DType::kInt64, rng, dev, "atomic", {}};
  struct MaskShape {
    const char* name;
    Shape self, mask;
    Layout self_layout, mask_layout;
  };
  const Layout c = Layout::kContiguous, t = Layout::kTransposed, e = Layout::kExpanded0;
  const std::vector<MaskShape> shapes = {
      {"same-shape", {6, 7}, {6, 7}, c, c},
      {"broadcast-row", {6, 7}, {7}, c, c},
      {"broadcast-column", {6, 7}, {6, 1}, c, c},
      {"3-d", {3, 4, 5}, {3, 1, 5}, c, c},
      {"transposed-self", {5, 6}, {5, 6}, t, c},
      {"transposed-mask", {5, 6}, {5, 6}, c, t},
      {"expanded-mask", {5, 6}, {5, 6}, c, e},
      {"1-d", {100}, {100}, c, c},
      {"0-d", {}, {}, c, c},
      {"0-size", {0, 5}, {5}, c, c},
      {"wide", {80, 90}, {80, 90}, c, c},
  };
  for (const MaskShape& sh : shapes) {
    const Tensor m = draw_tensor(rng, DType::kBool, sh.mask);
    std::vector<Operand> operands{a.values(sh.self, Values::kGeneral, sh.self_layout),
                                  laid_out(m, sh.mask_layout)};
    if (scatter)
      operands.push_back(a.values({numel(sh.self) + rng.range(0, 3)}, Values::kGeneral,
                                  rng.below(2) ? Layout::kStrided : Layout::kContiguous));
    a.add(sh.name, 1, operands, [scatter](std::span<const Tensor> in) -> Outputs {
      if (scatter) return {ops::masked_scatter(in[0], in[1], in[2])};
      return {ops::masked_select(in[0], in[1])};
    });
  }
  if (scatter) {
    // In place through a transposed self; a source too small for the mask (rejected alike:
    // it is checked on the host).
    a.add("inplace-transposed-self", 1,
          {{general_values(rng, dtype, {6, 5}), kNone},
           {draw_tensor(rng, DType::kBool, {5, 6}), kNone},
           a.values({30}, Values::kGeneral)},
          [](std::span<const Tensor> in) -> Outputs {
            const Tensor b = in[0].clone();
            ops::masked_scatter_(b.transpose(0, 1), in[1], in[2]);
            return {b};
          });
    a.add("source-too-small", 1,
          {a.values({4, 5}, Values::kGeneral),
           {tensor_of(std::vector<double>(20, 1), {4, 5}, DType::kBool), kNone},
           a.values({19}, Values::kGeneral)},
          [](std::span<const Tensor> in) -> Outputs {
            return {ops::masked_scatter(in[0], in[1], in[2])};
          });
  }
  // Rejected alike: masks that do not broadcast.
  a.add("mask-does-not-broadcast", 1,
        {a.values({4, 5}, Values::kGeneral),
         {draw_tensor(rng, DType::kBool, {4}), kNone},
         a.values({20}, Values::kGeneral)},
        [scatter](std::span<const Tensor> in) -> Outputs {
          if (scatter) return {ops::masked_scatter(in[0], in[1], in[2])};
          return {ops::masked_select(in[0], in[1])};
        });
  return std::move(a.cases);
}

std::vector<FamilyCase> masked_scatter_cases(DType d, Rng& r, const Device& dev) {
  return masked_cell(true, d, r, dev);
}
std::vector<FamilyCase> masked_select_cases(DType d, Rng& r, const Device& dev) {
  return masked_cell(false, d, r, dev);
}

enum class NonzeroForm { kMatrix, kTuple, kArgwhere };

std::vector<FamilyCase> nonzero_cell(NonzeroForm form, DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, DType::kInt64, rng, dev, "atomic", {}};
  const auto call = [form](std::span<const Tensor> in) -> Outputs {
    if (form == NonzeroForm::kTuple) return ops::nonzero_tuple(in[0]);
    return {form == NonzeroForm::kArgwhere ? ops::argwhere(in[0]) : ops::nonzero(in[0])};
  };
  const auto add = [&](const char* name, const Shape& s, Layout layout) {
    a.add(name, 1, {laid_out(with_zeros(rng, general_values(rng, dtype, s)), layout)}, call);
  };
  add("2-d", {6, 7}, Layout::kContiguous);
  add("1-d", {50}, Layout::kContiguous);
  add("3-d", {3, 4, 5}, Layout::kContiguous);
  add("4-d", {2, 3, 2, 4}, Layout::kContiguous);
  add("transposed", {5, 6}, Layout::kTransposed);
  add("strided", {5, 6}, Layout::kStrided);
  add("expanded", {4, 6}, Layout::kExpanded0);
  add("0-d", {}, Layout::kContiguous);
  add("0-size", {0, 3}, Layout::kContiguous);
  add("wide", {100, 70}, Layout::kContiguous);
  a.add("all-zero", 1, {{Tensor::zeros({4, 5}, dtype), kNone}}, call);
  a.add("0-d-zero", 1, {{Tensor::zeros({}, dtype), kNone}}, call);
  return std::move(a.cases);
}

template <NonzeroForm Form>
std::vector<FamilyCase> nonzero_cases(DType d, Rng& r, const Device& dev) {
  return nonzero_cell(Form, d, r, dev);
}

// ---- one_hot, bincount ----

// one_hot of `dtype` indices: int64 takes it (PyTorch's rule), the rest are rejected alike.
std::vector<FamilyCase> one_hot_cases(DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, dtype, rng, dev, "atomic", {}};
  const auto add = [&](const char* name, const Shape& s, std::int64_t classes, std::int64_t hi,
                       Layout layout) {
    const Tensor x = Tensor::from_host(drawn(rng, numel(s), 0, hi), s).to(dtype);
    a.add(name, 1, {laid_out(x, layout, 0)}, [classes](std::span<const Tensor> in) -> Outputs {
      return {ops::one_hot(in[0], classes)};
    });
  };
  add("1-d", {20}, 6, 5, Layout::kContiguous);
  add("infer-classes", {20}, -1, 7, Layout::kContiguous);
  add("2-d", {4, 5}, 5, 4, Layout::kContiguous);
  add("transposed", {4, 5}, -1, 6, Layout::kTransposed);
  add("strided", {3, 6}, 7, 6, Layout::kStrided);
  add("0-d", {}, 4, 3, Layout::kContiguous);
  add("empty", {0}, 3, 2, Layout::kContiguous);
  add("wide", {3000}, 40, 39, Layout::kContiguous);
  return std::move(a.cases);
}

std::vector<FamilyCase> bincount_cases(DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, dtype, rng, dev, "atomic", {}};
  const auto add = [&](const char* name, std::int64_t n, std::int64_t hi, std::int64_t minlength,
                       Layout layout) {
    const Tensor x = Tensor::from_host(drawn(rng, n, 0, hi), {n}).to(dtype);
    a.add(name, 1, {laid_out(x, layout, 0)}, [minlength](std::span<const Tensor> in) -> Outputs {
      return {ops::bincount(in[0], {}, minlength)};
    });
  };
  add("few-bins", 50, 4, 0, Layout::kContiguous);
  add("minlength", 30, 5, 12, Layout::kContiguous);
  add("minlength-smaller", 30, 5, 2, Layout::kContiguous);
  add("strided", 40, 9, 0, Layout::kStrided);
  add("expanded", 40, 9, 0, Layout::kExpanded0);
  add("empty", 0, 0, 0, Layout::kContiguous);
  add("empty-minlength", 0, 0, 4, Layout::kContiguous);
  add("many", 6000, 100, 0, Layout::kContiguous);
  a.add("2-d", 1, {{Tensor::zeros({2, 3}, dtype), kNone}},  // rejected alike
        [](std::span<const Tensor> in) -> Outputs { return {ops::bincount(in[0])}; });
  return std::move(a.cases);
}

// bincount with weights of `dtype` (x int64): float32 sums stay float32, the rest float64.
std::vector<FamilyCase> bincount_weights_cases(DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, DType::kInt64, rng, dev, "atomic", {}};
  const auto add = [&](const char* name, std::int64_t n, std::int64_t hi, std::int64_t minlength,
                       Layout layout) {
    const Tensor x = Tensor::from_host(drawn(rng, n, 0, hi), {n});
    a.add(name, is_floating(dtype) ? n + 1 : 1,
          {{x, kNone}, laid_out(draw_tensor(rng, dtype, {n}), layout)},
          [minlength](std::span<const Tensor> in) -> Outputs {
            return {ops::bincount(in[0], in[1], minlength)};
          });
  };
  add("few-bins", 50, 4, 0, Layout::kContiguous);
  add("minlength", 30, 5, 12, Layout::kContiguous);
  add("strided-weights", 40, 9, 0, Layout::kStrided);
  add("empty-minlength", 0, 0, 4, Layout::kContiguous);
  add("many", 3000, 60, 0, Layout::kContiguous);
  a.add("weights-length", 1,
        {{Tensor::zeros({3}, DType::kInt64), kNone},
         {draw_tensor(rng, dtype, {2}), kNone}},  // rejected alike
        [](std::span<const Tensor> in) -> Outputs { return {ops::bincount(in[0], in[1])}; });
  return std::move(a.cases);
}

// ---- faults: one bad index per case, in both modes ----

struct FaultCase {
  std::string name;
  std::string op;  // the fault's op
  std::int64_t bound;
  std::int64_t count;  // index elements; the bad one at `at`
  Shape index_shape;
  bool wraps;
  std::function<Outputs(std::span<const Tensor>)> call;  // in[0] self, in[1] index, in[2] src
  Shape self, src;
};

}  // namespace

std::vector<FamilyCase> index_write_util::fault_cell(const std::string& which, DType dtype,
                                                     Rng& rng, const Device& dev) {
  std::vector<FamilyCase> out;
  for (const char* mode : {"atomic", "sorted"})
    for (DType it : {DType::kInt32, DType::kInt64}) {
      const bool wide = it == DType::kInt64;
      const bool int64_only = which == "one_hot" || which == "searchsorted";
      if (int64_only && !wide) continue;
      // (self shape, dim or -, index shape, src shape, bound, wraps, op name, call)
      Shape self{4, 6}, ishape, src;
      std::int64_t bound = 6;
      bool wraps = false;
      std::string op = which;
      std::function<Outputs(std::span<const Tensor>)> call;
      if (which == "scatter" || which == "scatter_add" || which == "scatter_reduce") {
        ishape = {3, 4}, src = {4, 5};
        call = [which](std::span<const Tensor> in) -> Outputs {
          if (which == "scatter") return {ops::scatter(in[0], 1, in[1], in[2])};
          if (which == "scatter_add") return {ops::scatter_add(in[0], 1, in[1], in[2])};
          return {ops::scatter_reduce(in[0], 1, in[1], in[2], "amax", false)};
        };
      } else if (which == "index_add" || which == "index_copy" || which == "index_fill") {
        ishape = {12}, src = {4, 12};
        wraps = which == "index_fill";
        call = [which](std::span<const Tensor> in) -> Outputs {
          if (which == "index_add") return {ops::index_add(in[0], 1, in[1], in[2])};
          if (which == "index_copy") return {ops::index_copy(in[0], 1, in[1], in[2])};
          return {ops::index_fill(in[0], 1, in[1], 0)};
        };
      } else if (which == "index_put") {
        ishape = {3, 4}, src = {};
        wraps = true;
        call = [](std::span<const Tensor> in) -> Outputs {
          // Rows broadcast from [3, 1] (in range), columns the bad-index tensor.
          const Tensor rows =
              Tensor::from_host(I64{0, 3, 1}, {3, 1}).to(in[1].dtype()).to(in[1].device());
          return {ops::index_put(in[0], {rows, in[1]}, in[2], true)};
        };
      } else if (which == "one_hot") {
        ishape = {3, 4}, bound = 6;
        call = [](std::span<const Tensor> in) -> Outputs { return {ops::one_hot(in[1], 6)}; };
      } else {  // searchsorted's sorter
        op = "take_along_dim";
        ishape = {6}, self = {6};
        call = [](std::span<const Tensor> in) -> Outputs {
          return {ops::searchsorted(in[0], in[0], false, false, {}, in[1])};
        };
      }
      std::vector<std::pair<const char*, std::int64_t>> bad{
          {"bound", bound},
          {"int32-max", INT32_MAX},
          {"int32-min", INT32_MIN},
          wraps ? std::pair<const char*, std::int64_t>{"below-minus-bound", -bound - 1}
                : std::pair<const char*, std::int64_t>{"minus-one", -1}};
      if (wide) {
        bad.push_back({"2^32", std::int64_t(1) << 32});
        bad.push_back({"int64-min", INT64_MIN});
      }
      int k = 0;
      for (const auto& [bad_name, value] : bad) {
        const std::int64_t n = numel(ishape);
        const std::int64_t at = (k++ * 5) % n;
        I64 idx = drawn(rng, n, 0, bound - 1);
        if (which == "searchsorted") idx = distinct(rng, n, bound);
        idx[std::size_t(at)] = value;
        FamilyCase c{
            std::string(bad_name) + "-" + mode + (wide ? "-int64" : ""), 1, false, {}, {}, {}};
        c.call = [call, op, mode](std::span<const Tensor> in, const Device& d) -> Outputs {
          ScopedMode m(mode);
          try {
            const Outputs r = call(in);
            d.synchronize();
            for (const Tensor& t : r) (void)bits_of(t);
          } catch (const DeviceFault& f) {
            return {Tensor::from_host(I64{f.index(), f.bound(), f.position(), f.op() == op ? 1 : 0},
                                      {4})};
          }
          throw Internal(op + " on " + d.str() + ": no DeviceFault for an index out of range.");
        };
        Tensor self_values = general_values(rng, dtype, self);
        if (which == "searchsorted") self_values = sorted_rows(rng, dtype, self);
        add_operand(c, self_values, dev);
        add_operand(c, Tensor::from_host(idx, ishape).to(it), dev);
        add_operand(c, general_values(rng, dtype, src), dev);
        out.push_back(std::move(c));
      }
    }
  return out;
}

namespace {

template <const char* Op>
std::vector<FamilyCase> faults(DType d, Rng& r, const Device& dev) {
  return fault_cell(Op, d, r, dev);
}

// ---- the cell table ----

template <ScatterCell (*Cell)(), DType Index, bool Det>
std::vector<FamilyCase> scatter_spec(DType d, Rng& r, const Device& dev) {
  return scatter_cell(Cell(), d, Index, r, dev, Det ? "sorted" : "atomic");
}
template <AlongOp Which, DType Index, bool Det>
std::vector<FamilyCase> along_spec(DType d, Rng& r, const Device& dev) {
  return along_cell(Which, d, Index, r, dev, Det ? "sorted" : "atomic");
}
template <PutKind Kind, DType Index, bool Det>
std::vector<FamilyCase> put_spec(DType d, Rng& r, const Device& dev) {
  return index_put_cell(Kind, d, Index, r, dev, Det ? "sorted" : "atomic");
}

constexpr DType kI64 = DType::kInt64, kI32 = DType::kInt32;

ScatterCell cell_plain() {
  return {};
}
ScatterCell cell_value() {
  return {{}, false, true, false, true};
}
ScatterCell cell_reduce_add() {
  return {"add"};
}
ScatterCell cell_reduce_multiply() {
  return {"multiply"};
}
ScatterCell cell_value_add() {
  return {"add", false, true, false, true};
}
ScatterCell cell_add() {
  return {{}, false, true, true};
}
ScatterCell cell_sum() {
  return {"sum", true, true};
}
ScatterCell cell_sum_ex() {
  return {"sum", true, false};
}
ScatterCell cell_prod() {
  return {"prod", true, true};
}
ScatterCell cell_prod_ex() {
  return {"prod", true, false};
}
ScatterCell cell_mean() {
  return {"mean", true, true};
}
ScatterCell cell_mean_ex() {
  return {"mean", true, false};
}
ScatterCell cell_amax() {
  return {"amax", true, true};
}
ScatterCell cell_amax_ex() {
  return {"amax", true, false};
}
ScatterCell cell_amin() {
  return {"amin", true, true};
}
ScatterCell cell_amin_ex() {
  return {"amin", true, false};
}

constexpr char kScatter[] = "scatter", kScatterAdd[] = "scatter_add",
               kScatterReduce[] = "scatter_reduce", kIndexAdd[] = "index_add",
               kIndexCopy[] = "index_copy", kIndexFill[] = "index_fill", kIndexPut[] = "index_put",
               kOneHot[] = "one_hot";

// exact: false where atomic float sums/products round in arrival order (the dtype's tolerance
// over k terms); every "_det" cell is exact but the three marked below.
const FamilySpec kIndexWriteSpecs[] = {
    {"scatter", "index_write", true, scatter_spec<cell_plain, kI64, false>},
    {"scatter_i32", "index_write", true, scatter_spec<cell_plain, kI32, false>},
    {"scatter_det", "index_write", true, scatter_spec<cell_plain, kI64, true>},
    {"scatter_value", "index_write", true, scatter_spec<cell_value, kI64, false>},
    {"scatter_value_det", "index_write", true, scatter_spec<cell_value, kI32, true>},
    {"scatter_reduce_add", "index_write", false, scatter_spec<cell_reduce_add, kI64, false>},
    {"scatter_reduce_add_det", "index_write", true, scatter_spec<cell_reduce_add, kI64, true>},
    {"scatter_reduce_multiply", "index_write", false,
     scatter_spec<cell_reduce_multiply, kI64, false>},
    {"scatter_value_add", "index_write", false, scatter_spec<cell_value_add, kI32, false>},
    {"scatter_add", "index_write", false, scatter_spec<cell_add, kI64, false>},
    {"scatter_add_i32", "index_write", false, scatter_spec<cell_add, kI32, false>},
    {"scatter_add_det", "index_write", true, scatter_spec<cell_add, kI64, true>},
    {"scatter_add_det_i32", "index_write", true, scatter_spec<cell_add, kI32, true>},
    {"scatter_reduce_sum", "index_write", false, scatter_spec<cell_sum, kI64, false>},
    {"scatter_reduce_sum_noself", "index_write", false, scatter_spec<cell_sum_ex, kI64, false>},
    {"scatter_reduce_prod", "index_write", false, scatter_spec<cell_prod, kI64, false>},
    {"scatter_reduce_prod_noself", "index_write", false, scatter_spec<cell_prod_ex, kI32, false>},
    {"scatter_reduce_mean", "index_write", false, scatter_spec<cell_mean, kI64, false>},
    {"scatter_reduce_mean_noself", "index_write", false, scatter_spec<cell_mean_ex, kI32, false>},
    {"scatter_reduce_amax", "index_write", true, scatter_spec<cell_amax, kI64, false>},
    {"scatter_reduce_amax_noself", "index_write", true, scatter_spec<cell_amax_ex, kI64, false>},
    {"scatter_reduce_amin", "index_write", true, scatter_spec<cell_amin, kI32, false>},
    {"scatter_reduce_amin_noself", "index_write", true, scatter_spec<cell_amin_ex, kI64, false>},
    {"scatter_reduce_sum_det", "index_write", true, scatter_spec<cell_sum, kI64, true>},
    // prod_det and mean_det / index_add_alpha_det: the fold is in index order, but products
    // reach subnormals (which NVIDIA's Vulkan driver flushes) and mean and alpha add the
    // device's elementwise div and mul (Vulkan's OpFDiv may be 2.5 ulp off): the dtype's
    // tolerance, not bit equality.
    {"scatter_reduce_prod_det", "index_write", false, scatter_spec<cell_prod_ex, kI64, true>},
    {"scatter_reduce_mean_det", "index_write", false, scatter_spec<cell_mean, kI32, true>},
    {"scatter_reduce_amax_det", "index_write", true, scatter_spec<cell_amax_ex, kI64, true>},
    {"scatter_fault", "index_write", true, faults<kScatter>},
    {"scatter_add_fault", "index_write", true, faults<kScatterAdd>},
    {"scatter_reduce_fault", "index_write", true, faults<kScatterReduce>},
    {"index_add", "index_write", false, along_spec<AlongOp::kAdd, kI64, false>},
    {"index_add_i32", "index_write", false, along_spec<AlongOp::kAdd, kI32, false>},
    {"index_add_alpha", "index_write", false, along_spec<AlongOp::kAddAlpha, kI64, false>},
    {"index_add_det", "index_write", true, along_spec<AlongOp::kAdd, kI64, true>},
    {"index_add_alpha_det", "index_write", false, along_spec<AlongOp::kAddAlpha, kI32, true>},
    {"index_copy", "index_write", true, along_spec<AlongOp::kCopy, kI64, false>},
    {"index_copy_i32", "index_write", true, along_spec<AlongOp::kCopy, kI32, false>},
    {"index_copy_det", "index_write", true, along_spec<AlongOp::kCopy, kI64, true>},
    {"index_fill", "index_write", true, along_spec<AlongOp::kFill, kI64, false>},
    {"index_fill_i32", "index_write", true, along_spec<AlongOp::kFill, kI32, false>},
    {"index_add_fault", "index_write", true, faults<kIndexAdd>},
    {"index_copy_fault", "index_write", true, faults<kIndexCopy>},
    {"index_fill_fault", "index_write", true, faults<kIndexFill>},
    {"index_put", "index_write", true, put_spec<PutKind::kAssign, kI64, false>},
    {"index_put_i32", "index_write", true, put_spec<PutKind::kAssign, kI32, false>},
    {"index_put_det", "index_write", true, put_spec<PutKind::kAssign, kI64, true>},
    {"index_put_accumulate", "index_write", false, put_spec<PutKind::kAccumulate, kI64, false>},
    {"index_put_accumulate_i32", "index_write", false, put_spec<PutKind::kAccumulate, kI32, false>},
    {"index_put_accumulate_det", "index_write", true, put_spec<PutKind::kAccumulate, kI64, true>},
    {"index_put_mask", "index_write", true, put_spec<PutKind::kMask, kI64, false>},
    {"index_put_mask_det", "index_write", true, put_spec<PutKind::kMask, kI64, true>},
    {"index_put_fault", "index_write", true, faults<kIndexPut>},
    {"masked_scatter", "index_write", true, masked_scatter_cases},
    {"masked_select", "index_write", true, masked_select_cases},
    {"nonzero", "index_write", true, nonzero_cases<NonzeroForm::kMatrix>},
    {"nonzero_tuple", "index_write", true, nonzero_cases<NonzeroForm::kTuple>},
    {"argwhere", "index_write", true, nonzero_cases<NonzeroForm::kArgwhere>},
    {"one_hot", "index_write", true, one_hot_cases},
    {"one_hot_fault", "index_write", true, faults<kOneHot>},
    {"bincount", "index_write", true, bincount_cases},
    {"bincount_weights", "index_write", false, bincount_weights_cases},
};

}  // namespace

std::span<const FamilySpec> index_write_specs() {
  return kIndexWriteSpecs;
}

}  // namespace nbx::conformance
