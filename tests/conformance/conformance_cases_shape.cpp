// The shape ops (core/ops/shape.hpp: cat … triu_indices) × every dtype against the host. They
// copy elements (views, the elementwise copy, index_select), so every result is exact and the
// inputs carry the dtype's general values (±0, NaN, ±inf, extremes). Cases: 1-d to 5-d,
// negative dims, transposed, sliced and broadcast (stride-0) inputs, 0-size and 0-d tensors,
// type promotion across cat's inputs (bool, int32, float32 beside the cell's dtype), outs that
// are transposed views, and the argument errors (rejected alike). trace sums, so its cell
// takes bounded values and the dtype's tolerance. tril/triu_indices have no input dtype: their
// int64 cell runs, the others are n/a. Strided cases are marked `view` (--quick keeps them for
// float32 and int32: each layout is a new Vulkan copy pipeline).
#include <cstdint>
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "core/ops/creation.hpp"
#include "core/ops/shape.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;
using Op = std::function<Outputs(std::span<const Tensor>, const Device&)>;
using ops::IntList;

const View kNone = {};
const View kTransposed = [](const Tensor& t) { return t.transpose(0, 1); };
// Every other element of dim 0 from 1, dim 1 from 1 (an offset and a step).
const View kSliced = [](const Tensor& t) {
  return t.slice(0, 1, t.size(0), 2).slice(1, 1, t.size(1));
};
View expand_to(Shape s) {
  return [s](const Tensor& t) { return t.expand(s); };
}

struct Operand {
  Shape shape;  // before the view
  View view = {};
  std::optional<DType> dtype = {};  // another dtype (bounded values); the cell's otherwise
};

struct Cases {
  DType dtype;
  Rng& rng;
  Device dev;
  std::vector<FamilyCase> cases;

  void add(std::string name, const std::vector<Operand>& operands, Op op) {
    FamilyCase c{std::move(name), 1, false, {}, {}, {}};
    for (const Operand& o : operands) {
      c.view = c.view || o.view;
      const Tensor host =
          o.dtype ? draw_tensor(rng, *o.dtype, o.shape) : general_values(rng, dtype, o.shape);
      add_operand(c, host, dev, o.view);
    }
    c.call = std::move(op);
    cases.push_back(std::move(c));
  }
  // One operand of `shape` (through `view`), the op of one tensor.
  void one(std::string name, const Shape& shape, const View& view,
           std::function<Tensor(const Tensor&)> f) {
    add(std::move(name), {{shape, view}},
        [f = std::move(f)](std::span<const Tensor> in, const Device&) -> Outputs {
          return {f(in[0])};
        });
  }
  void many(std::string name, const Shape& shape, const View& view,
            std::function<ops::TensorList(const Tensor&)> f) {
    add(std::move(name), {{shape, view}},
        [f = std::move(f)](std::span<const Tensor> in, const Device&) -> Outputs {
          return f(in[0]);
        });
  }
};

ops::TensorList list_of(std::span<const Tensor> in) {
  return {in.begin(), in.end()};
}
Op cat_on(std::int64_t dim) {
  return [dim](std::span<const Tensor> in, const Device&) -> Outputs {
    return {ops::cat(list_of(in), dim)};
  };
}
Op stack_on(std::int64_t dim) {
  return [dim](std::span<const Tensor> in, const Device&) -> Outputs {
    return {ops::stack(list_of(in), dim)};
  };
}
// An out of the result's shape and dtype, written through a transposed view of a tensor of
// 7s (an element left unwritten shows).
Tensor transposed_out(const Shape& shape, DType t, const Device& d) {
  Shape reversed;
  std::vector<std::int64_t> order;
  for (int i = shape.size() - 1; i >= 0; --i) reversed.push_back(shape[i]), order.push_back(i);
  return ops::full(reversed, 7, t, d).permute(order);
}
template <Tensor (*Join)(const ops::TensorList&, std::int64_t),
          Tensor (*JoinOut)(const Tensor&, const ops::TensorList&, std::int64_t)>
Op out_form(std::int64_t dim) {
  return [dim](std::span<const Tensor> in, const Device& d) -> Outputs {
    const Tensor r = Join(list_of(in), dim);
    return {JoinOut(transposed_out(r.shape(), r.dtype(), d), list_of(in), dim)};
  };
}

std::vector<FamilyCase> cat_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.add("dim0", {{{3, 4}}, {{2, 4}}}, cat_on(0));
  a.add("dim1-three", {{{3, 2}}, {{3, 5}}, {{3, 1}}}, cat_on(1));
  a.add("3-d-dim-1", {{{2, 3, 2}}, {{2, 3, 4}}}, cat_on(-1));
  a.add("one-input", {{{4, 3}}}, cat_on(0));
  a.add("transposed", {{{4, 3}, kTransposed}, {{3, 2}}}, cat_on(1));
  a.add("sliced", {{{7, 5}, kSliced}, {{3, 4}}}, cat_on(0));
  a.add("broadcast", {{{1, 4}, expand_to({3, 4})}, {{2, 4}}}, cat_on(0));
  a.add("legacy-empty-skipped", {{{0}}, {{2, 3}}, {{0}}}, cat_on(1));
  a.add("0-size", {{{0, 4}}, {{2, 4}}, {{4, 0}, kTransposed}}, cat_on(0));
  a.add("promote-bool", {{{2, 3}}, {{2, 3}, {}, DType::kBool}}, cat_on(0));
  a.add("promote-int32", {{{2, 3}, {}, DType::kInt32}, {{1, 3}}}, cat_on(0));
  a.add("promote-float32", {{{2, 3}}, {{2, 2}, {}, DType::kFloat32}}, cat_on(1));
  // The join family: more inputs than one launch (16), rows along dim 1 and 2, a 1-d run,
  // rows that cross a block, contiguous inputs beside strided ones in one call.
  std::vector<Operand> many, rows, mixed;
  for (int k = 0; k < 18; ++k) {
    many.push_back({{k % 4, 3}});
    rows.push_back({{3, 2, 1 + k % 3}});
    mixed.push_back({{2 + k % 2, 3}, k % 3 == 1 ? kTransposed : kNone});
  }
  for (Operand& o : mixed)
    if (o.view) o.shape = {3, o.shape[0]};  // transposed to [*, 3]
  a.add("18-inputs-dim0", many, cat_on(0));
  a.add("18-inputs-last-dim", rows, cat_on(2));
  a.add("18-inputs-mixed-layouts", mixed, cat_on(0));
  a.add("3-d-middle-dim", {{{2, 3, 5}}, {{2, 1, 5}}, {{2, 4, 5}}}, cat_on(1));
  a.add("1-d", {{{5}}, {{3}}, {{7}}}, cat_on(0));
  a.add("long-rows", {{{2, 9000}}, {{2, 13}}, {{2, 4097}}}, cat_on(1));
  a.add("0-d", {{{}}, {{}}}, cat_on(0));                       // rejected
  a.add("ranks-differ", {{{2, 3}}, {{3}}}, cat_on(0));         // rejected
  a.add("sizes-differ", {{{2, 3}}, {{2, 4}}}, cat_on(0));      // rejected
  a.add("dim-out-of-range", {{{2, 3}}, {{2, 3}}}, cat_on(2));  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> cat_out_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  constexpr auto form = out_form<ops::cat, ops::cat_out>;
  a.add("dim0", {{{3, 4}}, {{2, 4}}}, form(0));
  a.add("dim1", {{{3, 2}}, {{3, 5}, kNone, DType::kBool}}, form(1));
  a.add("transposed-input", {{{4, 3}, kTransposed}, {{3, 3}}}, form(-1));
  a.add("overlapping-out", {{{2, 3}}},
        [](std::span<const Tensor> in, const Device&) -> Outputs {  // rejected
          return {ops::cat_out(in[0], {in[0].narrow(0, 0, 1), in[0].narrow(0, 1, 1)}, 0)};
        });
  return std::move(a.cases);
}

std::vector<FamilyCase> stack_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.add("dim0", {{{3, 4}}, {{3, 4}}}, stack_on(0));
  a.add("dim-1", {{{2, 3}}, {{2, 3}}, {{2, 3}}}, stack_on(-1));
  a.add("3-d-dim2", {{{2, 3, 4}}, {{2, 3, 4}}}, stack_on(2));
  a.add("transposed", {{{4, 3}, kTransposed}, {{3, 4}}}, stack_on(1));
  a.add("0-d", {{{}}, {{}}, {{}}}, stack_on(0));
  a.add("0-size", {{{0, 3}}, {{0, 3}}}, stack_on(1));
  a.add("promote-bool", {{{2, 2}, {}, DType::kBool}, {{2, 2}}}, stack_on(0));
  a.add("17-inputs-dim1", std::vector<Operand>(17, Operand{{3, 5}}), stack_on(1));
  a.add("shapes-differ", {{{2, 3}}, {{3, 2}}}, stack_on(0));  // rejected
  a.add("dim-out-of-range", {{{2, 3}}}, stack_on(4));         // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> stack_out_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  constexpr auto form = out_form<ops::stack, ops::stack_out>;
  a.add("dim0", {{{3, 4}}, {{3, 4}}}, form(0));
  a.add("dim-1-transposed", {{{4, 3}, kTransposed}, {{3, 4}}}, form(-1));
  return std::move(a.cases);
}

std::vector<FamilyCase> split_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.many("size-2-dim0", {5, 3}, kNone, [](const Tensor& x) { return ops::split(x, 2, 0); });
  a.many("size-4-dim-1", {2, 9}, kNone, [](const Tensor& x) { return ops::split(x, 4, -1); });
  a.many("sizes", {2, 6}, kNone, [](const Tensor& x) {
    return ops::split(x, IntList{1, 0, 3, 2}, 1);
  });
  a.many("transposed", {4, 5}, kTransposed, [](const Tensor& x) { return ops::split(x, 3, 0); });
  a.many("0-size-size-0", {0, 3}, kNone, [](const Tensor& x) { return ops::split(x, 0, 0); });
  a.many("larger-than-dim", {3, 2}, kNone, [](const Tensor& x) { return ops::split(x, 5, 0); });
  a.many("bad-sum", {3, 2}, kNone, [](const Tensor& x) { return ops::split(x, IntList{1, 1}, 0); });
  a.many("0-d", {}, kNone, [](const Tensor& x) { return ops::split(x, 1, 0); });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> chunk_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.many("5-in-4", {5, 3}, kNone, [](const Tensor& x) { return ops::chunk(x, 4, 0); });
  a.many("6-in-3-dim-1", {2, 6}, kNone, [](const Tensor& x) { return ops::chunk(x, 3, -1); });
  a.many("more-chunks-than-size", {3, 2}, kNone, [](const Tensor& x) { return ops::chunk(x, 5); });
  a.many("sliced", {7, 5}, kSliced, [](const Tensor& x) { return ops::chunk(x, 2, 1); });
  a.many("0-size", {0, 2}, kNone, [](const Tensor& x) { return ops::chunk(x, 3, 0); });
  a.many("zero-chunks", {3}, kNone, [](const Tensor& x) { return ops::chunk(x, 0); });  // rejected
  return std::move(a.cases);
}

Op meshgrid_of(const char* indexing) {
  return [indexing](std::span<const Tensor> in, const Device&) -> Outputs {
    return ops::meshgrid(list_of(in), indexing);
  };
}

std::vector<FamilyCase> meshgrid_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.add("ij", {{{3}}, {{4}}}, meshgrid_of("ij"));
  a.add("xy-three", {{{2}}, {{3}}, {{4}}}, meshgrid_of("xy"));
  a.add("0-d-and-empty", {{{}}, {{0}}, {{2}}}, meshgrid_of("ij"));
  a.add("sliced", {{{7}, [](const Tensor& x) { return x.slice(0, 1, 7, 2); }}, {{2}}},
        meshgrid_of("xy"));
  a.add("one", {{{5}}}, meshgrid_of("xy"));
  a.add("2-d-input", {{{2, 2}}}, meshgrid_of("ij"));  // rejected
  a.add("bad-indexing", {{{2}}}, meshgrid_of("ji"));  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> repeat_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("2-d", {2, 3}, kNone, [](const Tensor& x) { return ops::repeat(x, {2, 3}); });
  a.one("new-leading-dims", {2, 3}, kNone, [](const Tensor& x) {
    return ops::repeat(x, {2, 1, 1, 2});
  });
  a.one("0-d", {}, kNone, [](const Tensor& x) { return ops::repeat(x, {3, 2}); });
  a.one("ones", {3, 2}, kNone, [](const Tensor& x) { return ops::repeat(x, {1, 1}); });
  a.one("zero", {3, 2}, kNone, [](const Tensor& x) { return ops::repeat(x, {0, 2}); });
  a.one("transposed", {3, 4}, kTransposed, [](const Tensor& x) { return ops::repeat(x, {2, 2}); });
  a.one("broadcast", {1, 3}, expand_to({2, 3}), [](const Tensor& x) {
    return ops::repeat(x, {1, 2});
  });
  a.one("5-d", {2, 1, 2, 1, 2}, kNone, [](const Tensor& x) {
    return ops::repeat(x, {1, 2, 1, 3, 1});
  });
  a.one("too-few", {2, 3}, kNone, [](const Tensor& x) { return ops::repeat(x, {2}); });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> tile_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("fewer-dims", {2, 3}, kNone, [](const Tensor& x) { return ops::tile(x, {2}); });
  a.one("more-dims", {3}, kNone, [](const Tensor& x) { return ops::tile(x, {2, 2}); });
  a.one("sliced", {7, 5}, kSliced, [](const Tensor& x) { return ops::tile(x, {1, 3}); });
  a.one("negative", {3}, kNone, [](const Tensor& x) { return ops::tile(x, {-1}); });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> repeat_interleave_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("dim1", {2, 3}, kNone, [](const Tensor& x) { return ops::repeat_interleave(x, 2, 1); });
  a.one("flattened", {2, 3}, kNone, [](const Tensor& x) { return ops::repeat_interleave(x, 3); });
  a.one("dim-2-transposed", {4, 3}, kTransposed,
        [](const Tensor& x) { return ops::repeat_interleave(x, 2, -2); });
  a.one("zero", {3}, kNone, [](const Tensor& x) { return ops::repeat_interleave(x, 0, 0); });
  const auto counts = [](std::vector<std::int64_t> v, const Tensor& like) {
    return Tensor::from_host(v, {static_cast<std::int64_t>(v.size())}, like.device());
  };
  a.one("tensor-repeats", {3, 2}, kNone, [counts](const Tensor& x) {
    return ops::repeat_interleave(x, counts({2, 0, 3}, x), 0);
  });
  a.one("tensor-repeats-int32-dim1", {2, 3}, kNone, [counts](const Tensor& x) {
    return ops::repeat_interleave(x, counts({1, 2, 1}, x).to(DType::kInt32), 1);
  });
  a.one("one-count-flattened", {2, 2}, kNone,
        [counts](const Tensor& x) { return ops::repeat_interleave(x, counts({2}, x)); });
  a.one("0-size", {0, 2}, kNone, [](const Tensor& x) { return ops::repeat_interleave(x, 2, 0); });
  a.one("negative", {3}, kNone,
        [](const Tensor& x) { return ops::repeat_interleave(x, -1, 0); });  // rejected
  a.one("counts-mismatch", {3}, kNone, [counts](const Tensor& x) {
    return ops::repeat_interleave(x, counts({1, 2}, x), 0);  // rejected
  });
  return std::move(a.cases);
}

std::vector<FamilyCase> flip_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("both", {3, 4}, kNone, [](const Tensor& x) { return ops::flip(x, {0, 1}); });
  a.one("last", {3, 4}, kNone, [](const Tensor& x) { return ops::flip(x, {-1}); });
  a.one("3-d-outer", {2, 3, 4}, kNone, [](const Tensor& x) { return ops::flip(x, {0, 2}); });
  a.one("transposed", {4, 3}, kTransposed, [](const Tensor& x) { return ops::flip(x, {1}); });
  a.one("sliced", {7, 5}, kSliced, [](const Tensor& x) { return ops::flip(x, {0}); });
  a.one("none", {2, 3}, kNone, [](const Tensor& x) { return ops::flip(x, {}); });
  a.one("0-size", {0, 3}, kNone, [](const Tensor& x) { return ops::flip(x, {0, 1}); });
  a.one("0-d", {}, kNone, [](const Tensor& x) { return ops::flip(x, {0}); });
  a.one("repeated-dim", {2, 3}, kNone, [](const Tensor& x) {
    return ops::flip(x, {1, -1});
  });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> roll_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("flattened", {3, 4}, kNone, [](const Tensor& x) { return ops::roll(x, {5}); });
  a.one("two-dims", {3, 4}, kNone, [](const Tensor& x) { return ops::roll(x, {2, -1}, {0, 1}); });
  a.one("past-the-size", {3, 5}, kNone, [](const Tensor& x) { return ops::roll(x, {7}, {0}); });
  a.one("multiple-of-size", {3, 5}, kNone,
        [](const Tensor& x) { return ops::roll(x, {-10}, {1}); });
  a.one("transposed", {4, 3}, kTransposed, [](const Tensor& x) { return ops::roll(x, {1}, {-1}); });
  a.one("0-size", {0, 3}, kNone, [](const Tensor& x) { return ops::roll(x, {1}, {1}); });
  a.one("0-d", {}, kNone, [](const Tensor& x) { return ops::roll(x, {3}); });
  a.one("unaligned", {3, 4}, kNone, [](const Tensor& x) {
    return ops::roll(x, {1, 2}, {0});
  });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> rot90_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  for (std::int64_t k : {1, 2, 3, -1, 4})
    a.one("k" + std::to_string(k), {3, 4}, kNone,
          [k](const Tensor& x) { return ops::rot90(x, k); });
  a.one("dims-1-0", {3, 4}, kNone, [](const Tensor& x) { return ops::rot90(x, 1, {1, 0}); });
  a.one("3-d-dims-1-2", {2, 3, 4}, kNone, [](const Tensor& x) { return ops::rot90(x, 1, {1, 2}); });
  a.one("transposed", {4, 3}, kTransposed, [](const Tensor& x) { return ops::rot90(x, 3); });
  a.one("1-d", {4}, kNone, [](const Tensor& x) { return ops::rot90(x, 1, {0, 0}); });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> pixel_shuffle_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("r2", {1, 8, 2, 3}, kNone, [](const Tensor& x) { return ops::pixel_shuffle(x, 2); });
  a.one("r3-5-d", {2, 1, 9, 2, 2}, kNone, [](const Tensor& x) { return ops::pixel_shuffle(x, 3); });
  a.one("3-d", {4, 3, 2}, kNone, [](const Tensor& x) { return ops::pixel_shuffle(x, 2); });
  a.one(
      "permuted", {2, 3, 4, 2},
      [](const Tensor& x) {
        return x.permute({0, 3, 1, 2});
      },
      [](const Tensor& x) { return ops::pixel_shuffle(x, 1); });
  a.one(
      "transposed-hw", {1, 4, 3, 2}, [](const Tensor& x) { return x.transpose(2, 3); },
      [](const Tensor& x) { return ops::pixel_shuffle(x, 2); });
  a.one("0-batch", {0, 4, 2, 2}, kNone, [](const Tensor& x) { return ops::pixel_shuffle(x, 2); });
  a.one("channels", {1, 6, 2, 2}, kNone,
        [](const Tensor& x) { return ops::pixel_shuffle(x, 2); });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> pixel_unshuffle_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("r2", {1, 2, 4, 6}, kNone, [](const Tensor& x) { return ops::pixel_unshuffle(x, 2); });
  a.one("r3-5-d", {2, 1, 1, 3, 6}, kNone,
        [](const Tensor& x) { return ops::pixel_unshuffle(x, 3); });
  a.one(
      "transposed-hw", {1, 2, 4, 2}, [](const Tensor& x) { return x.transpose(2, 3); },
      [](const Tensor& x) { return ops::pixel_unshuffle(x, 2); });
  a.one("0-channels", {1, 0, 2, 2}, kNone,
        [](const Tensor& x) { return ops::pixel_unshuffle(x, 2); });
  a.one("height", {1, 1, 3, 2}, kNone,
        [](const Tensor& x) { return ops::pixel_unshuffle(x, 2); });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> diagonal_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("main", {4, 4}, kNone, [](const Tensor& x) { return ops::diagonal(x); });
  a.one("offset-1", {3, 5}, kNone, [](const Tensor& x) { return ops::diagonal(x, 1); });
  a.one("offset-minus-2", {5, 3}, kNone, [](const Tensor& x) { return ops::diagonal(x, -2); });
  a.one("3-d-dims-2-0", {3, 2, 4}, kNone,
        [](const Tensor& x) { return ops::diagonal(x, 0, 2, 0); });
  a.one("transposed", {5, 4}, kTransposed, [](const Tensor& x) { return ops::diagonal(x, 1); });
  a.one("sliced", {7, 5}, kSliced, [](const Tensor& x) { return ops::diagonal(x); });
  a.one("past-the-end", {3, 3}, kNone, [](const Tensor& x) { return ops::diagonal(x, 4); });
  a.one("same-dims", {3, 3}, kNone,
        [](const Tensor& x) { return ops::diagonal(x, 0, 1, -1); });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> diag_embed_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("1-d", {3}, kNone, [](const Tensor& x) { return ops::diag_embed(x); });
  a.one("offset-1", {2, 3}, kNone, [](const Tensor& x) { return ops::diag_embed(x, 1); });
  a.one("offset-minus-2-dims-0-2", {2, 3}, kNone,
        [](const Tensor& x) { return ops::diag_embed(x, -2, 0, 2); });
  a.one("transposed", {3, 2}, kTransposed, [](const Tensor& x) { return ops::diag_embed(x); });
  a.one("0-size", {0, 2}, kNone, [](const Tensor& x) { return ops::diag_embed(x); });
  a.one("same-dims", {3}, kNone,
        [](const Tensor& x) { return ops::diag_embed(x, 0, 0, 0); });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> trace_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  const auto bounded = [&](std::string name, const Shape& s, const View& v) {
    a.add(std::move(name), {{s, v, t}},
          [](std::span<const Tensor> in, const Device&) -> Outputs { return {ops::trace(in[0])}; });
    a.cases.back().k = std::min(s[0], s[1]);
  };
  bounded("square", {4, 4}, kNone);
  bounded("wide", {3, 6}, kNone);
  bounded("tall-transposed", {3, 6}, kTransposed);
  bounded("0-size", {0, 3}, kNone);
  bounded("3-d", {2, 2}, [](const Tensor& x) { return x.unsqueeze(0); });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> pad_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  using ops::PadMode;
  const Scalar value = t == DType::kBool ? Scalar(true) : is_floating(t) ? Scalar(2.5) : Scalar(3);
  const auto mode = [&](std::string name, const Shape& s, const View& v, IntList pads, PadMode m) {
    a.one(std::move(name), s, v, [=](const Tensor& x) {
      return ops::pad(x, pads, m, m == PadMode::kConstant ? value : 0);
    });
  };
  mode("constant-last", {2, 3}, kNone, {1, 2}, PadMode::kConstant);
  mode("constant-two-dims", {2, 3}, kNone, {0, 1, 2, 1}, PadMode::kConstant);
  mode("constant-crop", {3, 4}, kNone, {-1, 2, 1, -2}, PadMode::kConstant);
  mode("constant-1-d", {4}, kNone, {3, 0}, PadMode::kConstant);
  mode("constant-0-size", {0, 2}, kNone, {1, 1, 1, 0}, PadMode::kConstant);
  mode("constant-transposed", {4, 3}, kTransposed, {1, 1}, PadMode::kConstant);
  mode("reflect-1-d", {2, 5}, kNone, {2, 4}, PadMode::kReflect);
  mode("reflect-2-d", {1, 3, 4}, kNone, {3, 1, 2, 2}, PadMode::kReflect);
  mode("reflect-negative", {2, 5}, kNone, {-1, 3}, PadMode::kReflect);
  mode("reflect-3-d-batch", {1, 1, 3, 3, 3}, kNone, {1, 1, 2, 0, 0, 2}, PadMode::kReflect);
  mode("replicate-1-d", {3, 2, 4}, kNone, {3, 2}, PadMode::kReplicate);
  mode(
      "replicate-2-d-sliced", {7, 5}, [](const Tensor& x) { return kSliced(x).unsqueeze(0); },
      {2, 1, 1, 3}, PadMode::kReplicate);
  mode("circular-1-d", {1, 4}, kNone, {3, 4}, PadMode::kCircular);
  mode("circular-2-d", {2, 3, 4}, kNone, {-1, 2, 3, 0}, PadMode::kCircular);
  mode(
      "circular-transposed", {1, 4, 3}, [](const Tensor& x) { return x.transpose(1, 2); },
      {1, 1, 2, 2}, PadMode::kCircular);
  mode("reflect-too-wide", {2, 3}, kNone, {3, 0}, PadMode::kReflect);        // rejected
  mode("circular-too-wide", {2, 3}, kNone, {0, 4}, PadMode::kCircular);      // rejected
  mode("replicate-rank", {3}, kNone, {1, 1}, PadMode::kReplicate);           // rejected
  mode("constant-odd", {3}, kNone, {1}, PadMode::kConstant);                 // rejected
  mode("constant-negative-size", {3}, kNone, {-2, -2}, PadMode::kConstant);  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> narrow_copy_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("dim1", {5, 4}, kNone, [](const Tensor& x) { return ops::narrow_copy(x, 1, 1, 2); });
  a.one("negative-start", {5, 4}, kNone,
        [](const Tensor& x) { return ops::narrow_copy(x, 0, -3, 3); });
  a.one("transposed", {4, 5}, kTransposed,
        [](const Tensor& x) { return ops::narrow_copy(x, 0, 2, 2); });
  a.one("empty", {5, 4}, kNone, [](const Tensor& x) { return ops::narrow_copy(x, 1, 4, 0); });
  a.one("out-of-range", {5, 4}, kNone,
        [](const Tensor& x) { return ops::narrow_copy(x, 1, 3, 2); });  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> unfold_cases(DType t, Rng& rng, const Device& dev) {
  Cases a{t, rng, dev, {}};
  a.one("1-d", {7}, kNone, [](const Tensor& x) { return ops::unfold(x, 0, 3, 2); });
  a.one("dim1", {3, 6}, kNone, [](const Tensor& x) { return ops::unfold(x, 1, 2, 2); });
  a.one("overlapping", {2, 5}, kNone, [](const Tensor& x) { return ops::unfold(x, -1, 3, 1); });
  a.one("transposed", {5, 3}, kTransposed, [](const Tensor& x) { return ops::unfold(x, 1, 2, 3); });
  a.one("0-d", {}, kNone, [](const Tensor& x) { return ops::unfold(x, 0, 1, 1); });
  a.one("size-0", {2, 3}, kNone, [](const Tensor& x) { return ops::unfold(x, 1, 0, 2); });
  a.one("too-large", {2, 3}, kNone,
        [](const Tensor& x) { return ops::unfold(x, 1, 4, 1); });  // rejected
  return std::move(a.cases);
}

// No input: the int64 cell runs, the other dtypes are n/a (rejected alike).
template <Tensor (*Indices)(std::int64_t, std::int64_t, std::int64_t, const Device&)>
std::vector<FamilyCase> indices_cases(DType t, Rng&, const Device&) {
  std::vector<FamilyCase> cases;
  const auto add = [&](std::string name, std::int64_t r, std::int64_t c, std::int64_t off) {
    FamilyCase k{std::move(name), 1, false, {}, {}, {}};
    k.call = [=](std::span<const Tensor>, const Device& d) -> Outputs {
      if (t != DType::kInt64)
        throw InvalidArgument("indices", "the triangle indices are int64 only.");
      return {Indices(r, c, off, d)};
    };
    cases.push_back(std::move(k));
  };
  add("square", 4, 4, 0);
  add("wide-offset-1", 3, 5, 1);
  add("tall-offset-minus-2", 5, 3, -2);
  add("empty", 0, 3, 0);
  add("offset-past-the-end", 3, 3, 7);
  add("negative-row", -1, 3, 0);  // rejected
  return cases;
}

const FamilySpec kSpecs[] = {
    {"cat", "shape", true, cat_cases},
    {"cat_out", "shape", true, cat_out_cases},
    {"stack", "shape", true, stack_cases},
    {"stack_out", "shape", true, stack_out_cases},
    {"split", "shape", true, split_cases},
    {"chunk", "shape", true, chunk_cases},
    {"meshgrid", "shape", true, meshgrid_cases},
    {"repeat", "shape", true, repeat_cases},
    {"tile", "shape", true, tile_cases},
    {"repeat_interleave", "shape", true, repeat_interleave_cases},
    {"flip", "shape", true, flip_cases},
    {"roll", "shape", true, roll_cases},
    {"rot90", "shape", true, rot90_cases},
    {"pixel_shuffle", "shape", true, pixel_shuffle_cases},
    {"pixel_unshuffle", "shape", true, pixel_unshuffle_cases},
    {"diagonal", "shape", true, diagonal_cases},
    {"diag_embed", "shape", true, diag_embed_cases},
    {"trace", "shape", false, trace_cases},
    {"pad", "shape", true, pad_cases},
    {"narrow_copy", "shape", true, narrow_copy_cases},
    {"unfold", "shape", true, unfold_cases},
    {"tril_indices", "shape", true, indices_cases<ops::tril_indices>},
    {"triu_indices", "shape", true, indices_cases<ops::triu_indices>},
};

}  // namespace

std::span<const FamilySpec> shape_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
