// Index reads (the gather family: index_select, gather, take_along_dim, embedding, take) ×
// every dtype against the host. Three cells per op: int64 indices (PyTorch's dtype), int32
// ones ("<op>_i32"), and bad indices ("<op>_fault": each case one index out of range, the
// DeviceFault's index, bound, position and op compared with the host's, then the next case
// runs on the same device). The family copies bits, so each result is compared twice: as
// values, and as the integers of its bits (NaN payloads, -0 and a planted subnormal must
// survive; compare_buffers holds -0 equal to +0 and NaN equal to any NaN).
// Cases: 1-d to 4-d, negative dims, transposed, sliced and broadcast (stride-0) inputs,
// strided, transposed and broadcast indices, duplicates, empty index lists, 0-d inputs and
// indices where PyTorch takes them, take with negative indices, embedding with [B, S].
// No case is marked `view`: the family's Vulkan pipelines are specialised by element size
// and index width only, so a strided case costs no new pipeline and --quick keeps them all.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "core/ops/index.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;
using Op = std::function<Tensor(std::span<const Tensor>)>;

const View kNone = {};
const View kTranspose01 = [](const Tensor& t) { return t.transpose(0, 1); };

// A negative subnormal and a quiet NaN with a payload, per floating dtype: patterns only a
// bit-for-bit copy keeps (draw_values draws no subnormals).
void plant_bit_patterns(Rng& rng, DType t, std::vector<std::byte>& b, bool payloads) {
  const std::size_t item = dtype_size(t), n = b.size() / item;
  if (!is_floating(t) || n < 2) return;
  std::uint64_t subnormal = 0, nan = 0;
  switch (t) {
    case DType::kFloat16:
      subnormal = 0x8001, nan = 0x7e2b;
      break;
    case DType::kBFloat16:
      subnormal = 0x8001, nan = 0x7fc3;
      break;
    case DType::kFloat32:
      subnormal = 0x80000001u, nan = 0x7fc12345u;
      break;
    default:
      subnormal = 0x8000000000000001ull, nan = 0x7ff8000000012345ull;
      break;
  }
  const std::size_t at = std::size_t(rng.below(std::int64_t(n)));
  std::memcpy(b.data() + at * item, &subnormal, item);  // little-endian: the low bytes
  if (payloads) std::memcpy(b.data() + (at + 1) % n * item, &nan, item);
}

// The dtype's general values (mixed magnitudes, ±0, NaN, ±inf, extremes) plus the patterns
// (`payloads` false: the subnormal only).
Tensor values(Rng& rng, DType t, const Shape& shape, bool payloads = true) {
  if (numel(shape) == 0) return Tensor::empty(shape, t);
  std::vector<std::byte> b = draw_values(rng, t, ValueKind::kGeneral, numel(shape));
  plant_bit_patterns(rng, t, b, payloads);
  return Tensor::from_host(b.data(), shape, t);
}

// add_operand with the reference's contiguous copy made through the bits' integer type: a
// float copy (contiguous() is the elementwise copy, computing in the dtype) turns float16 and
// bfloat16 NaN payloads into the canonical NaN, which this family must not do.
void add_exact_operand(FamilyCase& c, const Tensor& host, const Device& device, const View& view) {
  auto apply = [&](const Tensor& t) { return view ? view(t) : t; };
  const Tensor viewed_bits = apply(bits_of(host)).contiguous();
  std::vector<std::byte> b(static_cast<std::size_t>(viewed_bits.numel()) * host.itemsize());
  if (!b.empty()) viewed_bits.copy_to_host(b.data());
  c.reference.push_back(b.empty() ? Tensor::empty(viewed_bits.shape(), host.dtype())
                                  : Tensor::from_host(b.data(), viewed_bits.shape(), host.dtype()));
  c.device.push_back(apply(device.is_host() ? host : host.to(device)));
}

Tensor index_tensor(const std::vector<std::int64_t>& v, const Shape& shape, DType index_dtype) {
  return Tensor::from_host(v, shape).to(index_dtype);
}

// Indices drawn in [lo, hi] (duplicates come with the draw).
std::vector<std::int64_t> draw_indices(Rng& rng, const Shape& shape, std::int64_t lo,
                                       std::int64_t hi) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(numel(shape)));
  for (std::int64_t& x : v) x = rng.range(lo, hi);
  return v;
}

struct Cases {
  DType dtype, index_dtype;
  Rng& rng;
  Device dev;
  std::vector<FamilyCase> cases;
  bool payloads = true;  // NaN payloads planted in the input (see take_cases)

  // A case whose outputs are the result and its bits.
  static FamilyCase result_case(std::string name, Op op) {
    FamilyCase c{std::move(name), 1, false, {}, {}, {}};
    c.call = [op = std::move(op)](std::span<const Tensor> in, const Device&) -> Outputs {
      const Tensor r = op(in);
      return {r, bits_of(r)};
    };
    return c;
  }

  // The input (values of `in_shape` through `in_view`) and the index (through `idx_view`)
  // on both sides.
  void add(std::string name, const Shape& in_shape, const View& in_view,
           const std::vector<std::int64_t>& idx, const Shape& idx_shape, const View& idx_view,
           Op op) {
    FamilyCase c = result_case(std::move(name), std::move(op));
    add_exact_operand(c, values(rng, dtype, in_shape, payloads), dev, in_view);
    add_operand(c, index_tensor(idx, idx_shape, index_dtype), dev, idx_view);
    cases.push_back(std::move(c));
  }
  // A large case (full mode only), drawn when it runs: indices in [lo, hi].
  void add_large(std::string name, const Shape& in_shape, const Shape& idx_shape, std::int64_t lo,
                 std::int64_t hi, Op op) {
    FamilyCase c = result_case(std::move(name), std::move(op));
    defer_operands(c, rng, [=, t = dtype, it = index_dtype, d = dev](FamilyCase& self, Rng& r) {
      add_exact_operand(self, values(r, t, in_shape), d, kNone);
      add_operand(self, index_tensor(draw_indices(r, idx_shape, lo, hi), idx_shape, it), d);
    });
    cases.push_back(std::move(c));
  }
  // Indices drawn in [lo, hi].
  void add_drawn(std::string name, const Shape& in_shape, const View& in_view,
                 const Shape& idx_shape, std::int64_t lo, std::int64_t hi, const View& idx_view,
                 Op op) {
    add(std::move(name), in_shape, in_view, draw_indices(rng, idx_shape, lo, hi), idx_shape,
        idx_view, std::move(op));
  }

  // Indices drawn in [0, bound) of `idx_shape` with `bad` at flat position `at` (row-major,
  // before `idx_view`): the op must raise DeviceFault on both sides, and index, bound,
  // position and op name are the outputs compared.
  void add_fault(std::string name, const std::string& op_name, const Shape& in_shape,
                 const View& in_view, const Shape& idx_shape, std::int64_t bound, std::int64_t at,
                 std::int64_t bad, const View& idx_view, Op op) {
    std::vector<std::int64_t> idx = draw_indices(rng, idx_shape, 0, bound - 1);
    idx[std::size_t(at)] = bad;
    FamilyCase c{std::move(name), 1, false, {}, {}, {}};
    c.call = [op = std::move(op), op_name](std::span<const Tensor> in, const Device& d) -> Outputs {
      try {
        const Tensor r = op(in);
        d.synchronize();
        (void)bits_of(r);
      } catch (const DeviceFault& f) {
        return {Tensor::from_host(std::vector<std::int64_t>{f.index(), f.bound(), f.position(),
                                                            f.op() == op_name ? 1 : 0},
                                  {4})};
      }
      throw Internal(op_name + " on " + d.str() + ": no DeviceFault for an index out of range.");
    };
    add_exact_operand(c, values(rng, dtype, in_shape), dev, in_view);
    add_operand(c, index_tensor(idx, idx_shape, index_dtype), dev, idx_view);
    cases.push_back(std::move(c));
  }

  bool wide() const { return index_dtype == DType::kInt64; }
};

Op index_select_on(std::int64_t dim) {
  return [dim](std::span<const Tensor> in) { return ops::index_select(in[0], dim, in[1]); };
}
Op gather_on(std::int64_t dim) {
  return [dim](std::span<const Tensor> in) { return ops::gather(in[0], dim, in[1]); };
}
Op take_along(std::optional<std::int64_t> dim) {
  return [dim](std::span<const Tensor> in) { return ops::take_along_dim(in[0], in[1], dim); };
}
Op embedding_of(std::optional<std::int64_t> padding_idx = {}) {
  return [padding_idx](std::span<const Tensor> in) {
    return ops::embedding(in[1], in[0], padding_idx);
  };
}
Op take_op() {
  return [](std::span<const Tensor> in) { return ops::take(in[0], in[1]); };
}

View expand_to(Shape shape) {
  return [shape](const Tensor& t) { return t.expand(shape); };
}
View slice_of(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  return [=](const Tensor& t) { return t.slice(dim, start, end, step); };
}

// Every other row from row 1, columns 2… of a [9, 8]: an offset and steps ([4, 6]).
const View kSliced = [](const Tensor& t) { return t.slice(0, 1, 9, 2).slice(1, 2, 8); };

std::vector<FamilyCase> index_select_cases(DType dtype, DType it, Rng& rng, const Device& dev) {
  Cases a{dtype, it, rng, dev, {}};
  a.add_drawn("dim0", {7, 5}, kNone, {9}, 0, 6, kNone, index_select_on(0));
  a.add_drawn("dim-1", {4, 6}, kNone, {10}, 0, 5, kNone, index_select_on(-1));
  a.add_drawn("1-d", {40}, kNone, {25}, 0, 39, kNone, index_select_on(0));
  a.add_drawn("3-d-dim1", {3, 5, 4}, kNone, {7}, 0, 4, kNone, index_select_on(1));
  a.add_drawn("4-d-dim-2", {2, 3, 4, 5}, kNone, {6}, 0, 3, kNone, index_select_on(-2));
  a.add_drawn("4-d-dim0", {3, 2, 3, 2}, kNone, {5}, 0, 2, kNone, index_select_on(0));
  a.add_drawn("transposed-input", {5, 6}, kTranspose01, {8}, 0, 4, kNone, index_select_on(1));
  a.add_drawn("sliced-input", {9, 8}, kSliced, {7}, 0, 3, kNone, index_select_on(0));
  a.add_drawn("sliced-input-dim1", {9, 8}, kSliced, {7}, 0, 5, kNone, index_select_on(1));
  a.add_drawn(
      "permuted-3-d", {3, 4, 5},
      [](const Tensor& t) {
        return t.permute({2, 0, 1});
      },
      {6}, 0, 2, kNone, index_select_on(-1));
  a.add_drawn("strided-index", {6, 5}, kNone, {13}, 0, 5, slice_of(0, 1, 13, 3),
              index_select_on(0));
  a.add_drawn("broadcast-index", {6, 5}, kNone, {1}, 0, 4, expand_to({9}), index_select_on(1));
  a.add("duplicates", {5, 4}, kNone, {3, 3, 0, 3, 4, 4, 3}, {7}, kNone, index_select_on(0));
  a.add("every-row-reversed", {5, 3}, kNone, {4, 3, 2, 1, 0}, {5}, kNone, index_select_on(0));
  a.add("empty-index", {4, 5}, kNone, {}, {0}, kNone, index_select_on(0));
  a.add("empty-index-dim1", {4, 5}, kNone, {}, {0}, kNone, index_select_on(1));
  a.add_drawn("0-d-index", {4, 5}, kNone, {}, 0, 3, kNone, index_select_on(0));
  a.add("0-d-input", {}, kNone, {0}, {1}, kNone, index_select_on(0));
  a.add("0-d-input-0-d-index", {}, kNone, {0}, {}, kNone, index_select_on(-1));
  a.add_drawn("0-size-input", {4, 0}, kNone, {3}, 0, 3, kNone, index_select_on(0));
  a.add("0-d-input-two-indices", {}, kNone, {0, 0}, {2}, kNone, index_select_on(0));  // rejected
  a.add("2-d-index", {4, 5}, kNone, {0, 1}, {1, 2}, kNone, index_select_on(0));       // rejected
  a.add_drawn("wide", {300, 33}, kNone, {700}, 0, 299, kNone, index_select_on(0));
  return std::move(a.cases);
}

std::vector<FamilyCase> gather_cases(DType dtype, DType it, Rng& rng, const Device& dev) {
  Cases a{dtype, it, rng, dev, {}};
  a.add_drawn("dim1", {5, 7}, kNone, {4, 9}, 0, 6, kNone, gather_on(1));
  a.add_drawn("dim0", {6, 4}, kNone, {8, 3}, 0, 5, kNone, gather_on(0));
  a.add_drawn("1-d", {30}, kNone, {45}, 0, 29, kNone, gather_on(0));
  a.add_drawn("3-d-dim-1", {3, 4, 5}, kNone, {2, 4, 6}, 0, 4, kNone, gather_on(-1));
  a.add_drawn("3-d-dim1", {3, 4, 5}, kNone, {3, 7, 2}, 0, 3, kNone, gather_on(1));
  a.add_drawn("4-d-dim1", {2, 3, 4, 5}, kNone, {2, 6, 3, 5}, 0, 2, kNone, gather_on(1));
  a.add_drawn("4-d-dim-4", {3, 2, 2, 3}, kNone, {5, 2, 1, 3}, 0, 2, kNone, gather_on(-4));
  a.add_drawn("transposed-input", {6, 5}, kTranspose01, {5, 8}, 0, 5, kNone, gather_on(1));
  a.add_drawn("sliced-input", {9, 8}, kSliced, {6, 6}, 0, 3, kNone, gather_on(0));
  a.add_drawn("transposed-index", {4, 9}, kNone, {9, 4}, 0, 8, kTranspose01, gather_on(1));
  a.add_drawn("strided-index", {8, 7}, kNone, {8, 12}, 0, 6, slice_of(1, 0, 12, 2), gather_on(1));
  a.add_drawn("broadcast-index-rows", {5, 6}, kNone, {1, 6}, 0, 5, expand_to({5, 6}), gather_on(1));
  a.add_drawn("broadcast-index-along-dim", {4, 7}, kNone, {4, 1}, 0, 6, expand_to({4, 5}),
              gather_on(1));
  a.add("duplicates", {2, 4}, kNone, {1, 1, 1, 3, 3, 3, 0, 0}, {2, 4}, kNone, gather_on(1));
  a.add("empty-index", {3, 4}, kNone, {}, {3, 0}, kNone, gather_on(1));
  a.add("empty-index-rows", {3, 4}, kNone, {}, {0, 4}, kNone, gather_on(0));
  a.add("0-d", {}, kNone, {0}, {}, kNone, gather_on(0));
  a.add_drawn("0-d-index-of-1-d", {6}, kNone, {}, 0, 5, kNone, gather_on(0));
  a.add("1-d-index-of-0-d", {}, kNone, {0, 0, 0}, {3}, kNone, gather_on(-1));
  a.add_drawn("wide", {200, 40}, kNone, {200, 90}, 0, 39, kNone, gather_on(1));
  a.add("dim-out-of-range", {3, 4}, kNone, {0}, {1, 1}, kNone, gather_on(2));  // rejected
  a.add("index-larger-than-input", {3, 4}, kNone, {0, 0, 0, 0}, {4, 1}, kNone,
        gather_on(1));                                                     // rejected
  a.add("ranks-differ", {3, 4}, kNone, {0, 0}, {2}, kNone, gather_on(1));  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> take_along_dim_cases(DType dtype, DType it, Rng& rng, const Device& dev) {
  Cases a{dtype, it, rng, dev, {}};
  a.add_drawn("dim1", {5, 7}, kNone, {5, 3}, 0, 6, kNone, take_along(1));
  a.add_drawn("dim0", {6, 4}, kNone, {9, 4}, 0, 5, kNone, take_along(0));
  // Broadcast in every dim but `dim`: the index's [1, 3] over the input's 5 rows, the
  // input's [4, 1, 6] over the index's 5 columns.
  a.add_drawn("broadcast-index", {5, 7}, kNone, {1, 3}, 0, 6, kNone, take_along(1));
  a.add_drawn("broadcast-both", {4, 1, 6}, kNone, {1, 5, 3}, 0, 5, kNone, take_along(-1));
  a.add_drawn("expanded-input", {1, 6}, expand_to({4, 6}), {4, 2}, 0, 5, kNone, take_along(1));
  a.add_drawn("3-d-dim0", {6, 3, 4}, kNone, {2, 3, 4}, 0, 5, kNone, take_along(0));
  a.add_drawn("4-d-dim-1", {2, 3, 4, 5}, kNone, {2, 1, 4, 3}, 0, 4, kNone, take_along(-1));
  a.add_drawn("transposed-input", {6, 5}, kTranspose01, {5, 4}, 0, 5, kNone, take_along(1));
  a.add_drawn("strided-index", {6, 8}, kNone, {6, 10}, 0, 7, slice_of(1, 1, 10, 3), take_along(-1));
  a.add_drawn("flattened", {4, 5}, kNone, {7}, 0, 19, kNone, take_along({}));
  a.payloads = false;  // flattening copies the view with contiguous(): see take_cases
  a.add_drawn("flattened-transposed", {4, 5}, kTranspose01, {3, 4}, 0, 19, kNone, take_along({}));
  a.payloads = true;
  a.add("duplicates", {3, 4}, kNone, {2, 2, 2, 2, 0, 0}, {3, 2}, kNone, take_along(1));
  a.add("empty-index", {5, 4}, kNone, {}, {5, 0}, kNone, take_along(1));
  a.add("0-d-flattened", {}, kNone, {0}, {}, kNone, take_along({}));
  a.add("ranks-differ", {3, 4}, kNone, {0, 0}, {2}, kNone, take_along(1));  // rejected
  return std::move(a.cases);
}

std::vector<FamilyCase> embedding_cases(DType dtype, DType it, Rng& rng, const Device& dev) {
  Cases a{dtype, it, rng, dev, {}};
  a.add_drawn("vector", {8, 5}, kNone, {10}, 0, 7, kNone, embedding_of());
  a.add_drawn("batch-seq", {11, 6}, kNone, {3, 7}, 0, 10, kNone, embedding_of());
  a.add_drawn("3-d-indices", {5, 3}, kNone, {2, 3, 4}, 0, 4, kNone, embedding_of());
  a.add_drawn("0-d-index", {6, 4}, kNone, {}, 0, 5, kNone, embedding_of());
  a.add_drawn("transposed-weight", {6, 8}, kTranspose01, {2, 5}, 0, 7, kNone, embedding_of());
  a.add_drawn("sliced-weight", {9, 8}, kSliced, {3, 4}, 0, 3, kNone, embedding_of());
  a.add_drawn("strided-indices", {7, 3}, kNone, {3, 14}, 0, 6, slice_of(1, 0, 14, 2),
              embedding_of());
  a.add_drawn("broadcast-indices", {7, 3}, kNone, {1, 5}, 0, 6, expand_to({4, 5}), embedding_of());
  a.add("duplicates", {4, 3}, kNone, {2, 2, 0, 2, 2, 0}, {2, 3}, kNone, embedding_of());
  a.add_drawn("padding-idx", {6, 4}, kNone, {2, 6}, 0, 5, kNone, embedding_of(-1));
  a.add("empty", {6, 4}, kNone, {}, {2, 0}, kNone, embedding_of());
  a.add_drawn("wide", {50, 300}, kNone, {4, 16}, 0, 49, kNone, embedding_of());
  // Past the CUDA/HIP grid (32 blocks of 256 per multiprocessor, 132 on the H200):
  // every thread loops over more than one element (full mode only).
  a.add_large("grid-stride", {1000, 512}, {4200}, 0, 999, embedding_of());
  return std::move(a.cases);
}

std::vector<FamilyCase> take_cases(DType dtype, DType it, Rng& rng, const Device& dev) {
  Cases a{dtype, it, rng, dev, {}};
  a.add_drawn("1-d", {20}, kNone, {15}, -20, 19, kNone, take_op());
  a.add_drawn("2-d-input", {4, 6}, kNone, {3, 5}, -24, 23, kNone, take_op());
  // take copies a strided input with contiguous(), the elementwise copy, which computes in
  // the dtype and turns float16/bfloat16 NaN payloads into the canonical NaN (host and
  // Vulkan alike, 2026-12-02): no payloads in these two inputs, so the cells test the family.
  a.payloads = false;
  a.add_drawn("transposed-input", {5, 6}, kTranspose01, {12}, -30, 29, kNone, take_op());
  a.add_drawn("sliced-input", {9, 8}, kSliced, {2, 7}, -24, 23, kNone, take_op());
  a.payloads = true;
  a.add_drawn("4-d-input", {2, 3, 2, 4}, kNone, {9}, -48, 47, kNone, take_op());
  a.add_drawn("4-d-index", {30}, kNone, {2, 2, 3, 2}, -30, 29, kNone, take_op());
  a.add("negative-only", {7}, kNone, {-1, -7, -3, -7, -2}, {5}, kNone, take_op());
  a.add("both-ends", {7}, kNone, {0, 6, -1, -7}, {2, 2}, kNone, take_op());
  a.add_drawn("transposed-index", {10}, kNone, {4, 3}, -10, 9, kTranspose01, take_op());
  a.add_drawn("strided-index", {10}, kNone, {4, 9}, -10, 9, slice_of(1, 2, 9, 3), take_op());
  a.add_drawn("broadcast-index", {10}, kNone, {1, 3}, -10, 9, expand_to({4, 3}), take_op());
  a.add_drawn("0-d-index", {3, 4}, kNone, {}, -12, 11, kNone, take_op());
  a.add("0-d-input", {}, kNone, {0, -1, 0}, {3}, kNone, take_op());
  a.add("empty-index", {3, 4}, kNone, {}, {0}, kNone, take_op());
  a.add("empty-input-empty-index", {0}, kNone, {}, {2, 0}, kNone, take_op());
  a.add_large("grid-stride", {3000}, {1200000}, -3000, 2999, take_op());
  return std::move(a.cases);
}

// One bad index per case: just past the bound, -1 where the op does not wrap (below -n for
// take), the 32-bit extremes, and for int64 indices 2^32 (its low word in range) and the
// int64 minimum. Positions inside 2-d and transposed indices.
struct BadIndex {
  const char* name;
  std::int64_t value;
};

std::vector<BadIndex> bad_indices(bool wraps, std::int64_t bound, bool wide) {
  std::vector<BadIndex> v{{"bound", bound}, {"int32-max", INT32_MAX}, {"int32-min", INT32_MIN}};
  v.push_back(wraps ? BadIndex{"below-minus-bound", -bound - 1} : BadIndex{"minus-one", -1});
  if (wide) {
    v.push_back({"2^32", std::int64_t(1) << 32});
    v.push_back({"2^32-plus-1", (std::int64_t(1) << 32) + 1});
    v.push_back({"minus-2^32", -(std::int64_t(1) << 32)});
    v.push_back({"int64-min", INT64_MIN});
  }
  return v;
}

std::vector<FamilyCase> fault_cases(const char* op, DType dtype, DType it, Rng& rng,
                                    const Device& dev) {
  Cases a{dtype, it, rng, dev, {}};
  const std::string name(op);
  const bool take = name == "take";
  const std::int64_t bound = name == "take" ? 24 : name == "embedding" ? 5 : 6;
  int k = 0;
  for (const BadIndex& b : bad_indices(take, bound, a.wide())) {
    const std::string c = b.name;
    // Alternate the bad index's place and the index's layout between cases.
    const std::int64_t at = (k++ * 5) % 12;
    const View idx_view = k % 2 ? kTranspose01 : kNone;
    if (name == "index_select") {
      a.add_fault(c, name, {6, 5}, kNone, {12}, bound, at, b.value, kNone, index_select_on(0));
    } else if (name == "gather") {
      a.add_fault(c, name, {4, 6}, kNone, {3, 4}, bound, at, b.value, kNone, gather_on(1));
      a.add_fault(c + "-transposed-index", name, {6, 6}, kNone, {4, 3}, bound, at, b.value,
                  kTranspose01, gather_on(-1));
    } else if (name == "take_along_dim") {
      a.add_fault(c, name, {4, 6}, kNone, {4, 3}, bound, at, b.value, kNone, take_along(-1));
      a.add_fault(c + "-flattened", name, {2, 3}, kNone, {3, 4}, bound, at, b.value, idx_view,
                  take_along({}));
    } else if (name == "embedding") {
      a.add_fault(c, name, {5, 3}, kNone, {3, 4}, bound, at, b.value, idx_view, embedding_of());
    } else {
      a.add_fault(c, name, {4, 6}, kTranspose01, {3, 4}, bound, at, b.value, idx_view, take_op());
    }
  }
  return std::move(a.cases);
}

template <std::vector<FamilyCase> (*Make)(DType, DType, Rng&, const Device&), DType Index>
std::vector<FamilyCase> with_index(DType d, Rng& r, const Device& dev) {
  return Make(d, Index, r, dev);
}

// Bad indices of both widths, int64 first (a device without int64 still runs int32's).
template <const char* Op>
std::vector<FamilyCase> faults(DType d, Rng& r, const Device& dev) {
  std::vector<FamilyCase> cases = fault_cases(Op, d, DType::kInt32, r, dev);
  try {
    std::vector<FamilyCase> wide = fault_cases(Op, d, DType::kInt64, r, dev);
    for (FamilyCase& c : wide) c.name += "-int64";
    cases.insert(cases.end(), std::make_move_iterator(wide.begin()),
                 std::make_move_iterator(wide.end()));
  } catch (const Unsupported&) {  // int64 indices refused in the "<op>" cells already
  }
  return cases;
}

constexpr char kIndexSelect[] = "index_select", kGather[] = "gather",
               kTakeAlongDim[] = "take_along_dim", kEmbedding[] = "embedding", kTake[] = "take";
constexpr DType kI64 = DType::kInt64, kI32 = DType::kInt32;

const FamilySpec kSpecs[] = {
    {"index_select", "gather", true, with_index<index_select_cases, kI64>},
    {"index_select_i32", "gather", true, with_index<index_select_cases, kI32>},
    {"index_select_fault", "gather", true, faults<kIndexSelect>},
    {"gather", "gather", true, with_index<gather_cases, kI64>},
    {"gather_i32", "gather", true, with_index<gather_cases, kI32>},
    {"gather_fault", "gather", true, faults<kGather>},
    {"take_along_dim", "gather", true, with_index<take_along_dim_cases, kI64>},
    {"take_along_dim_i32", "gather", true, with_index<take_along_dim_cases, kI32>},
    {"take_along_dim_fault", "gather", true, faults<kTakeAlongDim>},
    {"embedding", "gather", true, with_index<embedding_cases, kI64>},
    {"embedding_i32", "gather", true, with_index<embedding_cases, kI32>},
    {"embedding_fault", "gather", true, faults<kEmbedding>},
    {"take", "gather", true, with_index<take_cases, kI64>},
    {"take_i32", "gather", true, with_index<take_cases, kI32>},
    {"take_fault", "gather", true, faults<kTake>},
};

}  // namespace

std::span<const FamilySpec> gather_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
