// Bad indices in the index writes on every present device, in both scatter modes (atomic,
// and deterministic: NBX_SCATTER=sorted): each op that reads an index (scatter, scatter_add,
// scatter_reduce, index_add, index_copy, index_fill, index_put, one_hot, and searchsorted's
// sorter, read by take_along_dim) with one index out of range raises nbx::DeviceFault with
// the op, index, bound and position exactly (at once on the host, at the next synchronize or
// read back elsewhere). The in-place forms write into a [3, 4] view inside a [5, 6] tensor of
// sentinels: nothing outside the view may change (an unchecked index past either end lands
// there), and each element of the view is either its old value or the value the good
// elements give it (the host stops at the fault, a GPU writes the good elements), so the bad
// element wrote nothing. Afterwards 100 seeded random index writes on the same device match
// the host, and in a sequence good, bad, good the fault names the bad op. A long write with one
// bad index deep in its tail names it exactly, and (on a GPU) every good element is written.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/ops/index_write.hpp"
#include "nbx/nbx.hpp"
#include "tests/scatter_mode.hpp"
#include "tests/unit/expect_fault.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {
using D = std::vector<double>;
using I64 = std::vector<std::int64_t>;
constexpr DType f32 = DType::kFloat32, f64 = DType::kFloat64, i32 = DType::kInt32,
                i64 = DType::kInt64;

Tensor on(const D& v, const Shape& s, const Device& d, DType t = f32) {
  return Tensor::from_host(v, s).to(t).to(d);
}
Tensor ids(const I64& v, const Shape& s, const Device& d, DType t) {
  return Tensor::from_host(v, s).to(t).to(d);
}
D vals(const Tensor& t) {
  return t.to(host_device()).contiguous().to(f64).to_host<double>();
}

// The scatter mode for the duration of a case: "atomic" or "sorted" (deterministic).
using Mode = testing::ScatterModeScope;

// The destination: a [3, 4] view (rows 1…3, columns 1…4) of a [5, 6] tensor. The view holds
// 4r + c + 0.5, the frame around it -100 - k.
struct Frame {
  Tensor base, view;
};
Frame frame(const Device& d) {
  D v(30);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 6; ++c) {
      const bool inside = r >= 1 && r <= 3 && c >= 1 && c <= 4;
      v[std::size_t(6 * r + c)] = inside ? 4.0 * (r - 1) + (c - 1) + 0.5 : -100.0 - (6 * r + c);
    }
  const Tensor base = on(v, {5, 6}, d);
  return {base, base.slice(0, 1, 4).slice(1, 1, 5)};
}
D view_before() {
  D v(12);
  for (int k = 0; k < 12; ++k) v[std::size_t(k)] = k + 0.5;
  return v;
}

struct BadCase {
  const char* what;
  const char* op;
  // Writes into `dest` (the [3, 4] view) with `bad` placed in the index (of `t`), or (one_hot,
  // searchsorted: dest unused) returns a result.
  std::function<Tensor(const Tensor& dest, const Device&, DType t, std::int64_t bad)> run;
  std::int64_t bound, position;
  bool wraps;               // negative indices wrap once (index_fill, index_put)
  bool in_place;            // writes dest
  D good;                   // the view after the good elements alone (in_place)
  bool int64_only = false;  // one_hot and the sorter take int64 only (PyTorch's rule)
};

std::vector<BadCase> bad_cases() {
  return {
      {"scatter_ along dim 1",
       "scatter",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::scatter_(v, 1, ids({1, b, 0, 2, 3, 1}, {3, 2}, d, t),
                              on({10, 11, 12, 13, 14, 15}, {3, 2}, d));
       },
       4,
       1,
       false,
       true,
       {0.5, 10, 2.5, 3.5, 12, 5.5, 13, 7.5, 8.5, 15, 10.5, 14}},
      {"scatter_ of a value through a transposed index",
       "scatter",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         // [[2, 0, b], [1, 3, 0]] transposed: [[2, 1], [0, 3], [b, 0]]; b at position 4.
         return ops::scatter_(v, 1, ids({2, 0, b, 1, 3, 0}, {2, 3}, d, t).transpose(0, 1),
                              Scalar(-7));
       },
       4,
       4,
       false,
       true,
       {0.5, -7, -7, 3.5, -7, 5.5, 6.5, -7, -7, 9.5, 10.5, 11.5}},
      {"scatter_add_ along dim 0",
       "scatter_add",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::scatter_add_(v, 0, ids({2, 0, 1, b, 2, 2, 0, 1}, {2, 4}, d, t),
                                  on({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}, d));
       },
       3,
       3,
       false,
       true,
       {0.5, 3.5, 9.5, 3.5, 4.5, 5.5, 9.5, 15.5, 14.5, 15.5, 10.5, 11.5}},
      {"scatter_ with reduce multiply",
       "scatter",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::scatter_(v, 1, ids({0, 0, 3, b}, {2, 2}, d, t), on({2, 4, 2, 3}, {2, 2}, d),
                              "multiply");
       },
       4,
       3,
       false,
       true,
       {4, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 15, 8.5, 9.5, 10.5, 11.5}},
      {"scatter_reduce_ amax without self",
       "scatter_reduce",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::scatter_reduce_(v, 1, ids({0, 0, b, 3, 2, 2}, {3, 2}, d, t),
                                     on({20, -5, 7, 30, 1, 2}, {3, 2}, d), "amax", false);
       },
       4,
       2,
       false,
       true,
       {20, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 30, 8.5, 9.5, 2, 11.5}},
      {"scatter_reduce_ mean with self",
       "scatter_reduce",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::scatter_reduce_(v, 1, ids({1, 1, b, 0, 3, 3}, {3, 2}, d, t),
                                     on({2, 4, 9, 6, 0.5, 1.5}, {3, 2}, d), "mean", true);
       },
       4,
       2,
       false,
       true,
       {0.5, 2.5, 2.5, 3.5, 5.25, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 4.5}},
      {"index_add_ along dim 1",
       "index_add",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         D s(12);
         for (int k = 0; k < 12; ++k) s[std::size_t(k)] = k + 1;
         return ops::index_add_(v, 1, ids({2, b, 0, 2}, {4}, d, t), on(s, {3, 4}, d));
       },
       4,
       1,
       false,
       true,
       {3.5, 1.5, 7.5, 3.5, 11.5, 5.5, 19.5, 7.5, 19.5, 9.5, 31.5, 11.5}},
      {"index_add_ along dim 0 with alpha",
       "index_add",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::index_add_(v, 0, ids({0, 0, b}, {3}, d, t), on(D(12, 1), {3, 4}, d), 2);
       },
       3,
       2,
       false,
       true,
       {4.5, 5.5, 6.5, 7.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5}},
      {"index_copy_ along dim 0",
       "index_copy",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::index_copy_(v, 0, ids({b, 1}, {2}, d, t),
                                 on({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}, d));
       },
       3,
       0,
       false,
       true,
       {0.5, 1.5, 2.5, 3.5, 5, 6, 7, 8, 8.5, 9.5, 10.5, 11.5}},
      {"index_fill_ along dim 1",
       "index_fill",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::index_fill_(v, 1, ids({3, b, -4}, {3}, d, t), -1);
       },
       4,
       1,
       true,
       true,
       {-1, 1.5, 2.5, -1, -1, 5.5, 6.5, -1, -1, 9.5, 10.5, -1}},
      {"index_put_ in the row indices",
       "index_put",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::index_put_(v, {ids({0, 2, b}, {3}, d, t), ids({1, 3, 0}, {3}, d, t)},
                                on({10, 20, 30}, {3}, d));
       },
       3,
       2,
       true,
       true,
       {0.5, 10, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 20}},
      {"index_put_ accumulate in the column indices",
       "index_put",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::index_put_(v, {ids({1, 1, 2, 0}, {4}, d, t), ids({0, b, 0, 3}, {4}, d, t)},
                                on({1, 2, 3, 4}, {4}, d), true);
       },
       4,
       1,
       true,
       true,
       {0.5, 1.5, 2.5, 7.5, 5.5, 5.5, 6.5, 7.5, 11.5, 9.5, 10.5, 11.5}},
      {"index_put_ of whole rows",
       "index_put",
       [](const Tensor& v, const Device& d, DType t, std::int64_t b) {
         return ops::index_put_(v, {ids({2, b}, {2}, d, t)}, on({-3}, {}, d));
       },
       3,
       1,
       true,
       true,
       {0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, -3, -3, -3, -3}},
      {"one_hot",
       "one_hot",
       [](const Tensor&, const Device& d, DType t, std::int64_t b) {
         return ops::one_hot(ids({0, 2, 1, b, 1, 0}, {2, 3}, d, t), 3);
       },
       3,
       3,
       false,
       false,
       {},
       true},
      {"searchsorted with a bad sorter",
       "take_along_dim",
       [](const Tensor&, const Device& d, DType t, std::int64_t b) {
         return ops::searchsorted(on({5, 1, 3, 4}, {4}, d), on({2, 4.5}, {2}, d), false, false, {},
                                  ids({1, 2, b, 0}, {4}, d, t));
       },
       4,
       2,
       false,
       false,
       {},
       true},
  };
}

struct BadIndex {
  const char* name;
  std::int64_t value;
};
std::vector<BadIndex> bad_indices(const BadCase& c, bool wide) {
  std::vector<BadIndex> v{{"bound", c.bound}, {"int32-max", INT32_MAX}, {"int32-min", INT32_MIN}};
  v.push_back(c.wraps ? BadIndex{"below-minus-bound", -c.bound - 1} : BadIndex{"minus-one", -1});
  if (wide) {
    v.push_back({"2^32", std::int64_t(1) << 32});
    v.push_back({"2^32-plus-1", (std::int64_t(1) << 32) + 1});
    v.push_back({"int64-min", INT64_MIN});
  }
  return v;
}

// ---- random index writes, the device against the host ----

struct Pair {
  Tensor host, dev;
};

// Equal as values with the same sign (so -0 is not +0), NaN equal to any NaN.
bool same_values(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const D x = vals(a), y = vals(b);
  for (std::size_t k = 0; k < x.size(); ++k) {
    if (std::isnan(x[k]) && std::isnan(y[k])) continue;
    if (x[k] != y[k] || std::signbit(x[k]) != std::signbit(y[k])) return false;
  }
  return true;
}

struct RandomWrites {
  std::mt19937_64 gen;
  const Device& d;
  // The atomic variant: assignments with duplicates keep an unspecified write and float
  // products round in arrival order, so those draw distinct destinations and powers of two.
  bool atomic = false;
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(gen);
  }
  bool coin() { return uniform(0, 1) == 1; }

  // Halves in -2 … 2 (0 … 4 unsigned, 0/1 bool) of `t`: exact in every dtype.
  D draw(DType t, std::int64_t n, bool pow2 = false) {
    D v(std::size_t(std::max<std::int64_t>(n, 0)));
    static const double kPow2[] = {-2, -1, -0.5, 0, 0.5, 1, 2};
    for (double& x : v) {
      if (pow2 && is_floating(t))
        x = kPow2[uniform(0, 6)];
      else if (t == DType::kBool)
        x = double(uniform(0, 1));
      else if (t == DType::kUInt8)
        x = double(uniform(0, 4));
      else if (is_floating(t))
        x = double(uniform(-4, 4)) / 2;
      else
        x = double(uniform(-3, 3));
    }
    return v;
  }
  // Values of `shape` on both sides; the device's maybe through a transposed or sliced view.
  Pair values(DType t, const Shape& shape, bool pow2 = false) {
    const int nd = int(shape.size());
    const int layout = int(uniform(0, 2));
    const D v = draw(t, numel(shape) * (layout == 2 ? 2 : 1), pow2);
    if (layout == 1 && nd >= 2) {
      Shape base = shape;
      std::swap(base[0], base[std::size_t(nd - 1)]);
      const Tensor h = Tensor::from_host(v, base).to(t);
      return {h.transpose(0, nd - 1).contiguous(), h.to(d).transpose(0, nd - 1)};
    }
    if (layout == 2 && nd >= 1) {
      Shape base = shape;
      base[0] *= 2;
      const Tensor h = Tensor::from_host(v, base).to(t);
      return {h.slice(0, 0, base[0], 2).contiguous(), h.to(d).slice(0, 0, base[0], 2)};
    }
    const Tensor h = Tensor::from_host(D(v.begin(), v.begin() + numel(shape)), shape).to(t);
    return {h, h.to(d)};
  }
  // Indices in [lo, hi] of `shape`, maybe expanded from size 1 in a dim, maybe transposed.
  Pair index(DType it, const Shape& shape, std::int64_t lo, std::int64_t hi) {
    const int nd = int(shape.size());
    Shape base = shape;
    int expanded = -1;
    if (nd >= 1 && uniform(0, 3) == 0) {
      expanded = int(uniform(0, nd - 1));
      base[std::size_t(expanded)] = std::min<std::int64_t>(shape[std::size_t(expanded)], 1);
    }
    const bool transposed = nd >= 2 && coin();
    if (transposed) std::swap(base[0], base[std::size_t(nd - 1)]);
    I64 v(std::size_t(numel(base)));
    for (std::int64_t& x : v) x = hi >= lo ? uniform(lo, hi) : 0;
    const Tensor h = Tensor::from_host(v, base).to(it);
    auto view = [&](Tensor x) {
      if (transposed) x = x.transpose(0, nd - 1);
      return expanded >= 0 ? x.expand(shape) : x;
    };
    return {view(h).contiguous(), view(h.to(d))};
  }
  // An index of `shape` distinct along each line of `dim` (shape[dim] <= bound), maybe
  // through a transposed view.
  Pair distinct_index(DType it, const Shape& shape, int dim, std::int64_t bound) {
    const int nd = int(shape.size());
    const std::int64_t n = numel(shape);
    I64 v(static_cast<std::size_t>(n));
    std::int64_t inner = 1;
    for (int k = dim + 1; k < nd; ++k) inner *= shape[k];
    const std::int64_t along = nd ? shape[dim] : 1;
    for (std::int64_t o = 0; n > 0 && o < n / (along * inner); ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        I64 line(static_cast<std::size_t>(bound));
        for (std::int64_t k = 0; k < bound; ++k) line[std::size_t(k)] = k;
        std::shuffle(line.begin(), line.end(), gen);
        for (std::int64_t a = 0; a < along; ++a)
          v[std::size_t((o * along + a) * inner + i)] = line[std::size_t(a)];
      }
    const Tensor h = Tensor::from_host(v, shape).to(it);
    if (nd >= 2 && coin())
      return {h, h.transpose(0, nd - 1).contiguous().to(d).transpose(0, nd - 1)};
    return {h, h.to(d)};
  }
  Pair mask(const Shape& shape) {
    std::vector<bool> v(std::size_t(numel(shape)));
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = coin();
    const Tensor h = Tensor::from_host(v, shape);
    return {h, h.to(d)};
  }
  Shape shape(int nd, std::int64_t lo, std::int64_t hi) {
    Shape s;
    for (int k = 0; k < nd; ++k) s.push_back(uniform(lo, hi));
    return s;
  }

  struct Result {
    std::string what;
    Tensor want, got;
  };
  using Call = std::function<Tensor(const std::vector<Tensor>&)>;
  Result run(std::string what, const std::vector<Pair>& in, const Call& f) {
    std::vector<Tensor> h, g;
    for (const Pair& p : in) h.push_back(p.host), g.push_back(p.dev);
    Result r{std::move(what), f(h), {}};
    r.got = f(g);
    return r;
  }

  // One random write of dtype t with index dtype it; throws InvalidArgument where the host
  // refuses the combination (the caller draws again).
  Result one(DType t, DType it) {
    const int op = int(uniform(0, 12));
    const int nd = int(uniform(1, 3));
    Shape s = shape(nd, 1, 5);
    if (uniform(0, 9) == 0) s[std::size_t(uniform(0, nd - 1))] = 0;
    const std::int64_t dim = uniform(-nd, nd - 1), d0 = (dim + nd) % nd, along = s[std::size_t(d0)];
    const std::string where = std::string(dtype_name(t)) + " " + to_string(s) + " dim " +
                              std::to_string(dim) + ", " + std::string(dtype_name(it)) + " indices";
    const Pair self0 = values(t, s), &self = self0;
    switch (op) {
      case 0:
      case 1:
      case 2: {  // scatter (src or value, reduce), scatter_add, scatter_reduce
        static const char* kReduce[] = {"sum", "prod", "mean", "amax", "amin"};
        const int kind = int(uniform(0, 2));
        const bool scalar = coin();
        const std::string reduce_name = kReduce[uniform(0, 4)];
        // Distinct destinations for an atomic assignment of a tensor; powers of two for
        // atomic float products.
        const bool distinct = atomic && op == 0 && kind == 0 && !scalar;
        const bool pow2 = atomic && ((op == 0 && kind == 2) || (op == 2 && reduce_name == "prod"));
        Shape is = s;
        for (int k = 0; k < nd; ++k)
          is[std::size_t(k)] = k == d0 ? (along ? uniform(0, distinct ? along : 7) : 0)
                                       : uniform(0, s[std::size_t(k)]);
        Shape ss = is;
        for (int k = 0; k < nd; ++k) ss[k] += uniform(0, 1);
        const Pair idx =
            distinct ? distinct_index(it, is, int(d0), along) : index(it, is, 0, along - 1);
        const Pair src = values(t, ss, pow2);
        const Pair self = pow2 ? values(t, s, true) : self0;
        if (op == 0) {
          const std::optional<std::string> reduce =
              kind == 0 ? std::nullopt : std::optional<std::string>(kind == 1 ? "add" : "multiply");
          const double value = double(uniform(-4, 4)) / 2;
          return run(
              "scatter " + std::string(reduce ? *reduce : "") + (scalar ? " value " : " ") + where,
              {self, idx, src}, [=](const std::vector<Tensor>& x) {
                std::optional<std::string_view> r;
                if (reduce) r = *reduce;
                return scalar ? ops::scatter(x[0], dim, x[1], Scalar(value), r)
                              : ops::scatter(x[0], dim, x[1], x[2], r);
              });
        }
        if (op == 1)
          return run("scatter_add " + where, {self, idx, src}, [=](const std::vector<Tensor>& x) {
            return ops::scatter_add(x[0], dim, x[1], x[2]);
          });
        const std::string reduce = reduce_name;
        const bool include = coin();
        return run("scatter_reduce " + reduce + (include ? "" : " excluding self ") + where,
                   {self, idx, src}, [=](const std::vector<Tensor>& x) {
                     return ops::scatter_reduce(x[0], dim, x[1], x[2], reduce, include);
                   });
      }
      case 3:
      case 4:
      case 5: {  // index_add, index_copy, index_fill: a vector index along dim
        const bool distinct = atomic && op == 4;  // index_copy: distinct rows
        const std::int64_t n = along ? uniform(0, distinct ? along : 8) : 0;
        const Pair idx = distinct ? distinct_index(it, {n}, 0, along)
                                  : index(it, {n}, op == 5 ? -along : 0, along - 1);
        Shape ss = s;
        ss[std::size_t(d0)] = n;
        const Pair src = values(t, ss);
        if (op == 3) {
          const Scalar alpha = t == DType::kBool ? Scalar(true)
                               : is_floating(t)  ? Scalar(double(uniform(-2, 2)) / 2)
                                                 : Scalar(uniform(-2, 2));
          return run("index_add " + where, {self, idx, src}, [=](const std::vector<Tensor>& x) {
            return ops::index_add(x[0], dim, x[1], x[2], alpha);
          });
        }
        if (op == 4)
          return run("index_copy " + where, {self, idx, src}, [=](const std::vector<Tensor>& x) {
            return ops::index_copy(x[0], dim, x[1], x[2]);
          });
        const Scalar value = t == DType::kBool ? Scalar(true) : Scalar(uniform(-3, 3));
        return run("index_fill " + where, {self, idx}, [=](const std::vector<Tensor>& x) {
          return ops::index_fill(x[0], dim, x[1], value);
        });
      }
      case 6: {  // index_put: 1 … nd index tensors broadcast together, or a mask
        const bool accumulate = coin();
        if (uniform(0, 3) == 0) {
          const Pair m = mask(s);
          const std::int64_t count = numel(s) == 0 ? 0 : ops::nonzero(m.host).size(0);
          const Pair v = values(t, coin() && !(atomic && !accumulate) ? Shape{count} : Shape{});
          return run("index_put mask " + where, {self, m, v}, [=](const std::vector<Tensor>& x) {
            return ops::index_put(x[0], {x[1]}, x[2], accumulate);
          });
        }
        const int k = int(uniform(1, nd));
        const Shape bs = shape(int(uniform(1, 2)), 1, 4);
        std::vector<Pair> in{self};
        for (int j = 0; j < k; ++j) {
          Shape js = bs;
          if (coin()) js[0] = 1;  // broadcast
          const std::int64_t size = s[std::size_t(j)];
          if (size == 0) js = Shape{0};
          in.push_back(index(it, js, -size, size - 1));
        }
        const bool any_empty =
            std::any_of(s.begin(), s.begin() + k, [](std::int64_t x) { return x == 0; });
        Shape vs{};  // an atomic assignment writes one value (duplicates agree)
        if (!any_empty && coin() &&
            !(atomic && !accumulate))  // values of the result's trailing shape
          for (int j = k; j < nd; ++j) vs.push_back(s[j]);
        in.push_back(values(t, vs));
        return run("index_put " + std::to_string(k) + " tensors " +
                       (accumulate ? "accumulate " : "") + where,
                   in, [=](const std::vector<Tensor>& x) {
                     std::vector<Tensor> indices(x.begin() + 1, x.end() - 1);
                     return ops::index_put(x[0], indices, x.back(), accumulate);
                   });
      }
      case 7: {  // masked_scatter with a broadcast mask
        Shape ms = s;
        for (int j = 0; j < nd; ++j)
          if (coin()) ms[j] = 1;
        const Pair m = mask(ms), src = values(t, {numel(s) + uniform(0, 2)});
        return run("masked_scatter " + where, {self, m, src}, [](const std::vector<Tensor>& x) {
          return ops::masked_scatter(x[0], x[1], x[2]);
        });
      }
      case 8: {
        Shape ms = s;
        for (int j = 0; j < nd; ++j)
          if (coin()) ms[j] = 1;
        const Pair m = mask(ms);
        return run("masked_select " + where, {self, m},
                   [](const std::vector<Tensor>& x) { return ops::masked_select(x[0], x[1]); });
      }
      case 9:
        return run("nonzero " + where, {self},
                   [](const std::vector<Tensor>& x) { return ops::nonzero(x[0]); });
      case 10: {
        const Pair x = index(i64, s, 0, 4);
        const std::int64_t classes = coin() ? -1 : 5;
        if (numel(s) == 0 && classes == -1) return one(t, it);
        return run("one_hot " + to_string(s), {x},
                   [=](const std::vector<Tensor>& y) { return ops::one_hot(y[0], classes); });
      }
      case 11: {
        const Pair x = index(t == DType::kUInt8 ? DType::kUInt8 : it, {uniform(0, 30)}, 0, 6);
        const bool weighted = coin();
        const Pair w = values(weighted ? t : f32, {x.host.numel()});
        const std::int64_t minlength = uniform(0, 9);
        return run(
            std::string("bincount") + (weighted ? " weights " + std::string(dtype_name(t)) : ""),
            {x, w}, [=](const std::vector<Tensor>& y) {
              return weighted ? ops::bincount(y[0], y[1], minlength)
                              : ops::bincount(y[0], {}, minlength);
            });
      }
      default: {  // searchsorted in sorted rows (1-d, or the values' leading dims)
        const bool rows = nd >= 2 && coin();
        Shape seq_shape = rows ? s : Shape{uniform(0, 9)};
        if (rows) seq_shape[nd - 1] = uniform(0, 9);
        const Tensor seq_h = ops::sort(values(t, seq_shape).host, -1).values;
        const Pair seq{seq_h, seq_h.to(d)};
        const bool right = coin(), out32 = coin();
        return run("searchsorted " + to_string(seq_shape) + " in " + where, {seq, self},
                   [=](const std::vector<Tensor>& x) {
                     return ops::searchsorted(x[0], x[1], out32, right);
                   });
      }
    }
  }
};

// 100 random writes on `d` (dtypes it holds) in `mode`, each the host's exactly.
void check_random_writes(const Device& d, std::uint64_t seed, const std::string& mode) {
  CAPTURE(seed);
  CAPTURE(mode);
  Mode m(mode);
  RandomWrites r{std::mt19937_64(seed), d, mode == "atomic"};
  int ran = 0, drawn = 0;
  while (ran < 100 && drawn < 2000) {
    ++drawn;
    const DType t = kAllDTypes[std::size_t(r.uniform(0, kNumDTypes - 1))];
    const DType it = r.coin() ? i64 : i32;
    RandomWrites::Result res;
    try {
      res = r.one(t, it);
    } catch (const Unsupported&) {  // a dtype the device does not hold: draw another
      continue;
    } catch (const InvalidArgument&) {  // a combination PyTorch refuses (the host too)
      continue;
    }
    ++ran;
    CAPTURE(ran);
    CAPTURE(res.what);
    REQUIRE(res.got.shape() == res.want.shape());
    REQUIRE(res.got.dtype() == res.want.dtype());
    // Atomic float sums and assignments with duplicates may differ in order: exact only in
    // the sorted mode, or where no order matters.
    CHECK(same_values(res.got, res.want));
  }
  CHECK(ran == 100);
}

}  // namespace

TEST_CASE("every index write with one bad index raises DeviceFault naming it exactly") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (const char* mode : {"atomic", "sorted"}) {
      CAPTURE(mode);
      Mode m(mode);
      for (const BadCase& c : bad_cases()) {
        for (DType t : {i64, i32}) {
          if (c.int64_only && t != i64) continue;
          for (const BadIndex& b : bad_indices(c, t == i64)) {
            const std::string what = c.what, index_dtype(dtype_name(t)), bad = b.name;
            CAPTURE(what);
            CAPTURE(index_dtype);
            CAPTURE(bad);
            const Frame fr = frame(d);
            const D base_before = vals(fr.base);
            const std::string low = c.wraps ? std::to_string(-c.bound) : "0";
            if (!testing::expect_fault(d, {c.op, b.value, c.bound, c.position, low},
                                       [&] { return c.run(fr.view, d, t, b.value); }))
              continue;
            // Nothing written for the bad element: the frame untouched, each view element old
            // or as the good elements leave it.
            const D after = vals(fr.base);
            const D before = view_before();
            for (int r = 0; r < 5; ++r)
              for (int col = 0; col < 6; ++col) {
                const std::size_t k = std::size_t(6 * r + col);
                const bool inside = r >= 1 && r <= 3 && col >= 1 && col <= 4;
                CAPTURE(r);
                CAPTURE(col);
                if (!inside || !c.in_place) {
                  CHECK(after[k] == base_before[k]);
                  continue;
                }
                const std::size_t v = std::size_t(4 * (r - 1) + (col - 1));
                // A GPU writes every good element; the host stops at the fault, so an element
                // a good element targets may hold a partial result there (a reduction's
                // identity, a partial mean) — but one no good element changes stays as it was.
                if (d.is_host() && c.good[v] != before[v]) continue;
                CHECK((after[k] == before[v] || after[k] == c.good[v]));
              }
          }
        }
      }
    }
    // The device stays usable: 100 random writes in each mode match the host.
    const std::uint64_t seed = 0x9e3779b97f4a7c15ull ^ std::hash<std::string>{}(d.str());
    check_random_writes(d, seed, "sorted");
    check_random_writes(d, seed + 1, "atomic");
  }
}

TEST_CASE("a fault inside a sequence of index writes names the bad op; the good ones stand") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (const char* mode : {"atomic", "sorted"}) {
      CAPTURE(mode);
      Mode m(mode);
      Tensor before, after;
      std::optional<DeviceFault> fault;
      try {
        before = ops::index_add(on({1, 2, 3}, {3}, d), 0, ids({2, 2}, {2}, d, i64),
                                on({10, 20}, {2}, d));
        (void)ops::scatter_add(on({1, 2, 3}, {3}, d), 0, ids({0, 7, 1}, {3}, d, i32),
                               on({1, 1, 1}, {3}, d));
        after = ops::index_put(on({1, 2, 3}, {3}, d), {ids({-1}, {1}, d, i64)}, on({9}, {}, d));
        d.synchronize();
      } catch (const DeviceFault& f) {
        fault = f;
      }
      REQUIRE(fault.has_value());
      CHECK(fault->op() == "scatter_add");
      CHECK(fault->index() == 7);
      CHECK(fault->bound() == 3);
      CHECK(fault->position() == 1);
      CHECK(vals(before) == D{1, 2, 33});
      if (after.defined()) CHECK(vals(after) == D{1, 2, 9});

      // Two bad ops in a row: the first is raised, nothing left over.
      fault.reset();
      try {
        (void)ops::index_copy(on({1, 2, 3}, {3}, d), 0, ids({5}, {1}, d, i64), on({4}, {1}, d));
        (void)ops::index_fill(on({1, 2, 3}, {3}, d), 0, ids({-9}, {1}, d, i32), 0);
        d.synchronize();
      } catch (const DeviceFault& f) {
        fault = f;
      }
      REQUIRE(fault.has_value());
      CHECK(fault->op() == "index_copy");
      CHECK(fault->index() == 5);
      CHECK(fault->position() == 0);
      CHECK_NOTHROW(d.synchronize());
      CHECK(vals(ops::scatter(on({1, 2, 3}, {3}, d), 0, ids({1}, {1}, d, i32), Scalar(0))) ==
            D{1, 0, 3});
    }
  }
}

TEST_CASE("the good elements of each fault case give the view the case expects") {
  // The `good` values of bad_cases() checked on the host with the bad element replaced by a
  // harmless twin: for these cases, writing the same destination as a good element with
  // the identity (or the same value) of the op.
  const Device h = host_device();
  struct Twin {
    const char* what;
    std::function<Tensor(const Tensor&)> run;
  };
  const std::vector<Twin> twins = {
      {"scatter_ along dim 1",
       [&](const Tensor& v) {
         // The bad element (0, 1) replaced by column 1 with the value 10 row 0 has anyway.
         return ops::scatter_(v, 1, ids({1, 1, 0, 2, 3, 1}, {3, 2}, h, i64),
                              on({10, 10, 12, 13, 14, 15}, {3, 2}, h));
       }},
      {"scatter_add_ along dim 0",
       [&](const Tensor& v) {
         return ops::scatter_add_(v, 0, ids({2, 0, 1, 0, 2, 2, 0, 1}, {2, 4}, h, i64),
                                  on({1, 2, 3, 0, 5, 6, 7, 8}, {2, 4}, h));
       }},
      {"index_add_ along dim 1",
       [&](const Tensor& v) {
         D s(12);
         for (int k = 0; k < 12; ++k) s[std::size_t(k)] = (k % 4 == 1) ? 0 : k + 1;
         return ops::index_add_(v, 1, ids({2, 0, 0, 2}, {4}, h, i64), on(s, {3, 4}, h));
       }},
      {"index_put_ accumulate in the column indices",
       [&](const Tensor& v) {
         return ops::index_put_(v, {ids({1, 1, 2, 0}, {4}, h, i64), ids({0, 0, 0, 3}, {4}, h, i64)},
                                on({1, 0, 3, 4}, {4}, h), true);
       }},
  };
  for (const Twin& tw : twins) {
    CAPTURE(tw.what);
    const BadCase* c = nullptr;
    static const std::vector<BadCase> all = bad_cases();
    for (const BadCase& b : all)
      if (std::string(b.what) == tw.what) c = &b;
    REQUIRE(c != nullptr);
    const Frame fr = frame(h);
    tw.run(fr.view);
    CHECK(vals(fr.view) == c->good);
  }
}

TEST_CASE("a bad index deep in a long index write is named exactly; the good ones are written") {
  // 2125 elements (past two workgroup tiles of the Vulkan rows path, kernels/vulkan/
  // scatter_rows.comp) with one bad index at position 2103, in the tail; and a 2-dim index_add
  // whose bad index spoils a whole row of 67. On a GPU every good element is written: the
  // result is the twin's whose bad element adds 0 at index 0. Integer values: exact sums.
  const std::int64_t n = 2125, at = 2103, bound = 50;
  std::mt19937 gen(20261205);
  std::uniform_int_distribution<std::int64_t> pick(0, bound - 1), value(-8, 8);
  I64 idx(static_cast<std::size_t>(n));
  D src(static_cast<std::size_t>(n)), self(static_cast<std::size_t>(bound));
  for (std::int64_t& x : idx) x = pick(gen);
  for (double& x : src) x = double(value(gen));
  for (double& x : self) x = double(value(gen));
  I64 twin_idx = idx;
  D twin_src = src;
  twin_idx[std::size_t(at)] = 0;
  twin_src[std::size_t(at)] = 0;
  const Device h = host_device();
  const D want = vals(
      ops::scatter_add(on(self, {bound}, h), 0, ids(twin_idx, {n}, h, i64), on(twin_src, {n}, h)));
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (const char* mode : {"atomic", "sorted"}) {
      CAPTURE(mode);
      Mode m(mode);
      for (DType t : {i64, i32}) {
        CAPTURE(dtype_name(t));
        std::vector<std::int64_t> bads{bound, -1, INT32_MIN};
        if (t == i64) bads.insert(bads.end(), {std::int64_t(1) << 40, -(std::int64_t(1) << 40)});
        for (std::int64_t bad : bads) {
          CAPTURE(bad);
          I64 with_bad = idx;
          with_bad[std::size_t(at)] = bad;
          const Tensor dest = on(self, {bound}, d);
          if (!testing::expect_fault(d, {"scatter_add", bad, bound, at, "0"}, [&] {
                return ops::scatter_add_(dest, 0, ids(with_bad, {n}, d, t), on(src, {n}, d));
              }))
            continue;
          if (!d.is_host()) CHECK(vals(dest) == want);  // the host stops at the fault
          // index_put wraps once: -bound - 1 is the first value out of range below.
          with_bad[std::size_t(at)] = -bound - 1;
          testing::expect_fault(
              d, {"index_put", -bound - 1, bound, at, std::to_string(-bound)}, [&] {
                return ops::index_put(on(self, {bound}, d), {ids(with_bad, {n}, d, t)},
                                      on(src, {n}, d), true);
              });
          // index_add of rows of 67: index 40 of 45 is bad, so are its row's 67 elements.
          I64 rows(45, 3);
          rows[40] = bad;
          testing::expect_fault(d, {"index_add", bad, 33, 40, "0"}, [&] {
            return ops::index_add(on(D(33 * 67, 1), {33, 67}, d), 0, ids(rows, {45}, d, t),
                                  on(D(45 * 67, 2), {45, 67}, d));
          });
        }
      }
    }
  }
}
