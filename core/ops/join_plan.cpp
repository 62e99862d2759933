// cat's plan (join_plan.hpp): which inputs join launches copy, how each launch's block is
// folded, and which variant runs it.
//
// Folding: a dim of size 1 is dropped (any stride reads its one element), and two
// neighbouring dims merge where every operand steps over the outer one exactly as over the
// whole inner one (stride[j] == stride[j + 1] · size[j + 1]): dims before the cat dim among
// themselves, dims after it into it (the inputs' extents and positions scale by the merged
// size), never a dim before it into it (its sizes differ from input to input). A cat of
// contiguous tensors along any dim so becomes rows: [outer, extent] per input, [outer, total]
// for the output, which the flat variant copies as bytes.
#include "core/ops/join_plan.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/errors.hpp"
#include "core/families/kernel_family.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/shape_detail.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops::detail {
namespace {

constexpr int kCap = abi::kJoinMaxInputs;

// A size-1 dim may carry any stride: give it the one that merges it with the next dim.
void free_unit_strides(int ndim, const std::int64_t* sizes, std::int64_t* strides) {
  for (int d = ndim - 1; d >= 0; --d)
    if (sizes[d] == 1) strides[d] = d + 1 < ndim ? strides[d + 1] * sizes[d + 1] : 1;
}

// Moves dim `from` of every operand to position `to` (to <= from).
void move_dim(abi::JoinParams& p, int from, int to) {
  p.sizes[to] = p.sizes[from];
  p.out_strides[to] = p.out_strides[from];
  for (int k = 0; k < p.count; ++k) p.inputs[k].strides[to] = p.inputs[k].strides[from];
}

void drop_unit_dims(abi::JoinParams& p) {
  int kept = 0, dim = 0;
  for (int d = 0; d < p.ndim; ++d) {
    if (d != p.dim && p.sizes[d] == 1) continue;
    if (d == p.dim) dim = kept;
    move_dim(p, d, kept++);
  }
  p.ndim = kept;
  p.dim = dim;
}

bool mergeable(const abi::JoinParams& p, int j) {
  if (j + 1 == p.dim) return false;
  const std::int64_t inner = p.sizes[j + 1];
  if (p.out_strides[j] != p.out_strides[j + 1] * inner) return false;
  for (int k = 0; k < p.count; ++k)
    if (p.inputs[k].strides[j] != p.inputs[k].strides[j + 1] * inner) return false;
  return true;
}

// Dims j and j + 1 become dim j.
void merge(abi::JoinParams& p, int j) {
  const std::int64_t inner = p.sizes[j + 1];
  p.sizes[j] *= inner;
  p.out_strides[j] = p.out_strides[j + 1];
  for (int k = 0; k < p.count; ++k) {
    abi::JoinInput& in = p.inputs[k];
    in.strides[j] = in.strides[j + 1];
    if (j == p.dim) in.extent *= inner, in.at *= inner;
  }
  for (int d = j + 1; d + 1 < p.ndim; ++d) move_dim(p, d + 1, d);
  --p.ndim;
  if (p.dim > j) --p.dim;
}

// The block of inputs `which` (each with elements), folded; a cat dim left last of at most
// two dims is given its row dim (size 1 for one dim), the flat variant's form.
abi::JoinParams block_of(const JoinOperand& out, std::span<const JoinOperand> inputs,
                         std::span<const std::int64_t> at, int dim, std::span<const int> which) {
  abi::JoinParams p{};
  p.op = abi::kJoin_cat;
  p.variant = abi::kJoinStrided;
  p.dtype = std::int32_t(out.dtype);
  p.ndim = out.shape.size();
  p.dim = dim;
  p.count = int(which.size());
  p.out_offset = out.offset;
  for (int d = 0; d < p.ndim; ++d) p.sizes[d] = out.shape[d], p.out_strides[d] = out.strides[d];
  free_unit_strides(p.ndim, p.sizes, p.out_strides);
  for (int k = 0; k < p.count; ++k) {
    const JoinOperand& x = inputs[std::size_t(which[std::size_t(k)])];
    abi::JoinInput& in = p.inputs[k];
    in.offset = x.offset;
    in.extent = x.shape[dim];
    in.at = at[std::size_t(which[std::size_t(k)])];
    for (int d = 0; d < p.ndim; ++d) in.strides[d] = x.strides[d];
    free_unit_strides(p.ndim, x.shape.begin(), in.strides);
  }
  drop_unit_dims(p);
  for (int j = p.ndim - 2; j >= 0; --j)
    if (mergeable(p, j)) merge(p, j);
  if (p.ndim == 1) {  // one row
    p.ndim = 2, p.dim = 1;
    p.sizes[1] = p.sizes[0], p.out_strides[1] = p.out_strides[0];
    p.sizes[0] = 1, p.out_strides[0] = p.sizes[1];
    for (int k = 0; k < p.count; ++k) {
      abi::JoinInput& in = p.inputs[k];
      in.strides[1] = in.strides[0], in.strides[0] = in.extent;
    }
  }
  return p;
}

bool serves_flat(abi::JoinParams p) {
  p.variant = abi::kJoinFlat;
  std::byte bytes[sizeof p];
  std::memcpy(bytes, &p, sizeof p);
  return family_spec(KernelFamily::kJoin).variant_refusal(abi::kJoinFlat, bytes, 32).empty();
}

std::string count_text(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// What a flat launch copies, in the target's words.
std::string flat_text(const abi::JoinParams& p, const PlanTarget& target) {
  const std::int64_t rows = p.sizes[0];
  const std::string shape =
      rows == 1 ? std::string("each input one run of contiguous bytes")
                : "each input " + std::to_string(rows) + " rows of contiguous bytes";
  if (target.caps.backend == "vulkan")
    return shape +
           "; up to 5 inputs a dispatch (the descriptor layout's 6 data buffers; dispatches "
           "whose spans of the output do not meet run without a barrier between them), in the "
           "widest of 16/8/4/2/1-byte words dividing every row start and row of the "
           "dispatch, each input its own run of workgroups, 8 words an invocation loaded "
           "before any is stored (join.comp).";
  if (target.caps.backend == "host") return shape + "; a memcpy a row.";
  return shape +
         "; each input its own run of 32 KiB blocks (as many as its size needs: no launch "
         "or partial wave per input), in 16-byte units where both start addresses, the row "
         "and the row strides are 16-byte aligned, else 8/4/2/1; 8 units a thread loaded "
         "before any is stored, streaming (evict-first) loads and stores.";
}

}  // namespace

JoinPlan plan_join(const JoinOperand& out, std::span<const JoinOperand> inputs,
                   std::span<const std::int64_t> at, int dim, const PlanTarget& target) {
  JoinPlan plan;
  const bool offered = target_offers(target, KernelFamily::kJoin, abi::kJoinStrided) ||
                       target_offers(target, KernelFamily::kJoin, abi::kJoinFlat);
  std::vector<int> flat, strided;
  for (int k = 0; k < int(inputs.size()); ++k) {
    const JoinOperand& x = inputs[std::size_t(k)];
    if (numel(x.shape) == 0) continue;
    if (!offered || x.dtype != out.dtype) {
      plan.casts.push_back(k);
      continue;
    }
    const int one[] = {k};
    (serves_flat(block_of(out, inputs, at, dim, one)) ? flat : strided).push_back(k);
  }
  bool named[2] = {false, false};
  for (const std::vector<int>* group : {&flat, &strided}) {
    for (std::size_t first = 0; first < group->size(); first += kCap) {
      const std::size_t n = std::min<std::size_t>(kCap, group->size() - first);
      const std::span<const int> which(group->data() + first, n);
      abi::JoinParams p = block_of(out, inputs, at, dim, which);
      const int candidates[] = {abi::kJoinFlat, abi::kJoinStrided};
      std::vector<PlanChoice> choices;
      const int v = choose_variant(p, candidates, target, choices);
      if (!named[v]) {  // each variant's reasons once
        named[v] = true;
        plan.choices.insert(plan.choices.end(), choices.begin(), choices.end());
        plan.choices.push_back(
            {"copy", v == abi::kJoinFlat ? "rows" : "element by element", "", "",
             v == abi::kJoinFlat
                 ? flat_text(p, target)
                 : "inputs read through their strides (folded to " +
                       count_text(std::size_t(p.ndim), "dim", "dims") +
                       "), 4 elements a thread loaded before any is stored, each input its own "
                       "run of blocks (CUDA/HIP; Vulkan: up to 5 inputs a dispatch)."});
      }
      plan.launches.push_back(p);
      plan.inputs.emplace_back(which.begin(), which.end());
    }
  }
  const std::size_t joined = flat.size() + strided.size();
  if (joined > 0)
    plan.choices.push_back(
        {"launches", count_text(plan.launches.size(), "join launch", "join launches"), "", "",
         count_text(joined, "input", "inputs") +
             " of the output's dtype copied bit for bit, up to " + std::to_string(kCap) +
             " a launch: the contiguous ones (rows of contiguous elements once folded) by the "
             "flat variant, the others by the strided one."});
  if (!plan.casts.empty())
    plan.choices.push_back(
        {"casts", count_text(plan.casts.size(), "elementwise copy", "elementwise copies"), "", "",
         offered ? "an input of another dtype is cast into its slice by an elementwise copy "
                   "(torch.result_type of the inputs)."
                 : target.device_name +
                       " does not offer the join family: each input is copied (and cast) into "
                       "its slice by an elementwise copy."});
  return plan;
}

// Operands: the inputs (1-8, contiguous), joined along dim 0 (stack: a new dim 0).
void explain_join(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const std::string& name = entry.name;
  for (DType t : call.dtypes)
    require_dtype_support(name, t, call.target.caps, call.target.device_id,
                          call.target.device_name);
  std::vector<Shape> shapes = call.shapes;
  if (name == "stack") {
    for (const Shape& s : shapes)
      if (!(s == shapes[0]))
        throw InvalidArgument(name, name +
                                        ": stack expects each tensor to be equal size, but got " +
                                        to_string(shapes[0]) + " and " + to_string(s) + ".");
    for (Shape& s : shapes) s.insert(0, 1);
  }
  const DType dtype = cat_dtype(name.c_str(), call.dtypes);
  const Shape shape = cat_shape(name.c_str(), shapes, 0);
  std::vector<JoinOperand> inputs;
  std::vector<std::int64_t> at;
  std::int64_t next = 0;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    if (s.size() == 1 && s[0] == 0) continue;  // PyTorch's legacy empty input: skipped
    inputs.push_back({s, contiguous_strides(s), 0, call.dtypes[k]});
    at.push_back(next);
    next += s[0];
  }
  const JoinPlan plan = numel(shape) == 0 ? JoinPlan{}
                                          : plan_join({shape, contiguous_strides(shape), 0, dtype},
                                                      inputs, at, 0, call.target);
  std::string variant;
  for (const PlanChoice& c : plan.choices)
    if (c.what == "variant" && variant.empty()) variant = c.value;
  out.output = std::string(dtype_name(dtype)) + " " + to_string(shape);
  out.kernel =
      plan.launches.empty()
          ? (plan.casts.empty()
                 ? std::string("none (no elements)")
                 : count_text(plan.casts.size(), "elementwise copy", "elementwise copies"))
          : "join (op cat, " + count_text(plan.launches.size(), "launch", "launches") +
                "; variant " + variant + ")" +
                (plan.casts.empty() ? std::string()
                                    : " and " + count_text(plan.casts.size(), "elementwise copy",
                                                           "elementwise copies"));
  out.choices = plan.choices;
  out.choices.push_back({"out_dtype", std::string(dtype_name(dtype)), "", "",
                         "torch.result_type of the inputs; a legacy 1-d [0] input is skipped."});
}

}  // namespace nbx::ops::detail
