// The shape ops (shape.hpp) in the explain catalog, family "shape": no kernel of their own, so
// each entry says which pieces run (a view, copies, index_select, a sum), the output's dtype and
// shape for the defaults its operand_names give, and any host work (a sync, a host index).
// The output dtype comes from the ops' own rules (shape_detail). cat and stack are the join
// family's (join_plan.cpp).
#include <string>

#include "core/errors.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/shape_detail.hpp"

namespace nbx::ops::detail {
namespace {

constexpr int kMaxInputs = 8;  // meshgrid explains up to this many inputs

std::string described(DType t, const Shape& s) {
  return std::string(dtype_name(t)) + " " + to_string(s);
}

// The one input's shape with a requirement on its rank.
const Shape& input_shape(const OpEntry& e, const ExplainCall& call, int min_rank) {
  const Shape& s = call.shapes[0];
  if (s.size() < min_rank)
    throw InvalidArgument(e.name, e.name + ": the input needs at least " +
                                      std::to_string(min_rank) + " dims, got " + to_string(s) +
                                      ".");
  return s;
}

void explain_shape(const OpEntry& e, const ExplainCall& call, OpExplanation& out) {
  for (DType t : call.dtypes)
    require_dtype_support(e.name, t, call.target.caps, call.target.device_id,
                          call.target.device_name);
  const std::string& n = e.name;
  const DType t = call.dtypes[0];
  const auto copies = [](std::int64_t k) {
    return std::to_string(k) + (k == 1 ? " elementwise copy" : " elementwise copies");
  };
  std::string runs, why;
  Shape shape = call.shapes[0];
  DType out_dtype = t;
  if (n == "split" || n == "chunk" || n == "diagonal" || n == "unfold" || n == "meshgrid") {
    const Shape& s = input_shape(e, call, n == "diagonal" ? 2 : n == "meshgrid" ? 0 : 1);
    runs = "a view, no kernel";
    why = "the result shares the input's storage (offset, sizes and strides only).";
    if (n == "split") shape[0] = 1, why = "size-1 pieces of dim 0: " + why;
    if (n == "chunk") shape[0] = (s[0] + 1) / 2, why = "2 chunks of dim 0: " + why;
    if (n == "diagonal") {
      shape = Shape{};
      for (int i = 2; i < s.size(); ++i) shape.push_back(s[i]);
      shape.push_back(std::min(s[0], s[1]));
    }
    if (n == "unfold") {
      const std::int64_t last = s.empty() ? 1 : s[s.size() - 1];
      if (last < 2) throw InvalidArgument(n, n + ": the last dim is shorter than the window (2).");
      if (!s.empty()) shape[s.size() - 1] = last - 1;
      shape.push_back(2);
    }
    if (n == "meshgrid") {
      shape = Shape{};
      for (const Shape& m : call.shapes) {
        if (m.size() > 1)
          throw InvalidArgument(n, n +
                                       ": torch.meshgrid: Expected 0D or 1D tensor in the tensor "
                                       "list but got: " +
                                       to_string(m) + ".");
        shape.push_back(numel(m));
      }
      for (DType d : call.dtypes)
        if (d != t)
          throw InvalidArgument(n, n + ": torch.meshgrid: Expected all tensors in the tensor "
                                       "list to have the same dtype.");
      why = "each output is its input expanded over the grid (stride 0 elsewhere).";
    }
  } else if (n == "repeat" || n == "tile") {
    for (int i = 0; i < shape.size(); ++i) shape[i] *= 2;
    runs = copies(shape.size());
    why = "one copy of an expanded view per repeated dim (here 2 along each).";
  } else if (n == "repeat_interleave") {
    shape = Shape{numel(shape) * 2};
    runs = "index_select (gather family), one launch";
    why =
        "x flattened; the index [0, 0, 1, 1, …] is built on the host and uploaded (int32 "
        "where it fits). With a tensor of repeats, the counts are read to the host once: a "
        "synchronize.";
  } else if (n == "flip" || n == "roll" || n == "rot90") {
    input_shape(e, call, n == "rot90" ? 2 : 1);
    runs = "index_select (gather family), one launch per " +
           std::string(n == "roll" ? "rolled" : "flipped") + " dim";
    why =
        "negative strides are refused by the launch checks, so the reversed (or rotated) "
        "index is built on the host and read through index_select.";
    if (n == "rot90") {
      std::swap(shape[0], shape[1]);
      why = "k = 1: dim 1 flipped, then read transposed (a view). " + why;
    }
  } else if (n == "pixel_shuffle" || n == "pixel_unshuffle") {
    const Shape& s = input_shape(e, call, 3);
    const int c = s.size() - 3;
    const bool up = n == "pixel_shuffle";
    if (up ? s[c] % 4 != 0 : s[c + 1] % 2 != 0 || s[c + 2] % 2 != 0)
      throw InvalidArgument(n,
                            n + ": the sizes " + to_string(s) + " do not divide by the factor 2.");
    shape[c] = up ? s[c] / 4 : s[c] * 4;
    shape[c + 1] = up ? s[c + 1] * 2 : s[c + 1] / 2;
    shape[c + 2] = up ? s[c + 2] * 2 : s[c + 2] / 2;
    runs = copies(1);
    why = "factor 2: the input read as a permuted 6-d view and copied once.";
  } else if (n == "diag_embed") {
    const Shape& s = input_shape(e, call, 1);
    shape.push_back(s[s.size() - 1]);
    runs = "a fill and " + copies(1);
    why = "zeros, then x copied into the diagonal view of the last two dims.";
  } else if (n == "trace") {
    if (shape.size() != 2)
      throw InvalidArgument(n, "trace: expected a matrix, but got tensor with dim " +
                                   std::to_string(shape.size()) + ".");
    shape = Shape{};
    out_dtype = is_floating(t) ? t : DType::kInt64;
    runs = "sum (reduce family) of the diagonal view";
    why = "integers and bool sum to int64, floats keep their dtype (torch.trace).";
  } else if (n == "pad") {
    const Shape& s = input_shape(e, call, 1);
    shape[s.size() - 1] += 2;
    runs = "a fill and " + copies(1);
    why =
        "constant mode, 1 on each side of the last dim: the value fills the output and x is "
        "copied into its window. reflect/replicate/circular run one index_select per padded "
        "dim instead (a reflection reads backwards; no stride can).";
  } else if (n == "narrow_copy") {
    input_shape(e, call, 1);
    shape[0] = std::min<std::int64_t>(shape[0], 1);
    runs = copies(1);
    why = "the narrowed view (dim 0, start 0, length 1) copied to a contiguous tensor.";
  } else {  // tril_indices, triu_indices
    const Shape& s = input_shape(e, call, 2);
    std::int64_t count = 0;
    for (std::int64_t r = 0; r < s[0]; ++r)
      for (std::int64_t c = 0; c < s[1]; ++c) count += n == "tril_indices" ? c <= r : c >= r;
    shape = Shape{2, count};
    out_dtype = DType::kInt64;
    require_dtype_support(n, out_dtype, call.target.caps, call.target.device_id,
                          call.target.device_name);
    runs = "no kernel: computed on the host and uploaded";
    why = "offset 0; the count is known on the host, so one upload of 2·N int64.";
  }
  out.output = described(out_dtype, shape);
  out.kernel = "shape (" + e.table_op + "): " + runs;
  out.choices.push_back({"runs", runs, "", "", why});
  out.choices.push_back({"out_dtype", std::string(dtype_name(out_dtype)), "", "",
                         out_dtype == t ? "the input's dtype." : "the op's result type rule."});
}

OpEntry entry(const char* name, const char* runs, const char* operands, std::vector<Shape> shapes,
              int optional = 0) {
  OpEntry e;
  e.name = name;
  e.family = "shape";
  e.table_op = runs;
  e.operands = 1;
  e.optional_operands = optional;
  e.operand_names = operands;
  e.example_shapes = std::move(shapes);
  e.example_dtypes.assign(e.example_shapes.size(), DType::kFloat32);
  e.explain = explain_shape;
  return e;
}

}  // namespace

void add_shape_ops(std::vector<OpEntry>& ops) {
  const Shape m{64, 32};
  const int more = kMaxInputs - 1;
  ops.push_back(entry("split", "view", "x (size-1 pieces of dim 0)", {m}));
  ops.push_back(entry("chunk", "view", "x (2 chunks of dim 0)", {m}));
  ops.push_back(
      entry("meshgrid", "view", "tensors (1-8, 0-d or 1-d, one dtype; ij)", {{8}, {16}}, more));
  ops.push_back(entry("repeat", "copy", "x (repeats 2 along each dim)", {m}));
  ops.push_back(entry("tile", "copy", "x (dims 2 along each dim)", {m}));
  ops.push_back(entry("repeat_interleave", "index_select", "x (repeats 2, flattened)", {m}));
  ops.push_back(entry("flip", "index_select", "x (the last dim flipped)", {m}));
  ops.push_back(entry("roll", "index_select", "x (shift 1 along the last dim)", {m}));
  ops.push_back(entry("rot90", "index_select", "x (k 1, dims 0 and 1)", {m}));
  ops.push_back(entry("pixel_shuffle", "copy", "x [*, C·4, H, W] (factor 2)", {{2, 16, 8, 8}}));
  ops.push_back(entry("pixel_unshuffle", "copy", "x [*, C, H, W] (factor 2)", {{2, 4, 16, 16}}));
  ops.push_back(entry("diagonal", "view", "x (offset 0, dims 0 and 1)", {m}));
  ops.push_back(entry("diag_embed", "copy", "x (its last dim on the diagonal)", {m}));
  ops.push_back(entry("trace", "sum", "x (2-d)", {m}));
  ops.push_back(entry("pad", "copy", "x (constant, 1 on each side of the last dim)", {m}));
  ops.push_back(entry("narrow_copy", "copy", "x (dim 0, start 0, length 1)", {m}));
  ops.push_back(entry("unfold", "view", "x (windows of 2, step 1, along the last dim)", {m}));
  ops.push_back(
      entry("tril_indices", "host", "the output's shape [row, col] (offset 0)", {{16, 16}}));
  ops.push_back(
      entry("triu_indices", "host", "the output's shape [row, col] (offset 0)", {{16, 16}}));
  for (OpEntry& e : ops)
    if (e.name == "tril_indices" || e.name == "triu_indices") e.example_dtypes = {DType::kInt64};
}

}  // namespace nbx::ops::detail
