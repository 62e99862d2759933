// The explain entries of the index writes (scatter family) and the binary searches (search
// family): the plan run_scatter makes — atomic or the deterministic sorted pass — and what
// each composed op adds (host reads, gathers).
#include <string>

#include "core/errors.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/index_write_detail.hpp"

namespace nbx::ops::detail {
namespace {

// The reduction an op's default call makes (scatter_reduce: "sum"; index_put: assignment,
// accumulate=True adds).
abi::ScatterReduce default_reduce(const std::string& op) {
  if (op == "scatter_add" || op == "index_add" || op == "bincount" || op == "scatter_reduce")
    return abi::kScatterAdd;
  return abi::kScatterAssign;
}

std::string composition_of(const std::string& op) {
  if (op == "masked_select")
    return "the mask's count read to the host once (the size), positions by cumsum, the "
           "selected elements scattered to them";
  if (op == "nonzero" || op == "argwhere")
    return "the count of non-zero elements read to the host once (the size), their flat "
           "positions compacted by a scatter, coordinates by floor_divide and remainder";
  if (op == "masked_scatter")
    return "the mask's count read to the host once (checked against source), positions by "
           "cumsum, source gathered (take) and selected by where";
  if (op == "one_hot")
    return "zeros, then 1 scattered along the new last dim (num_classes = -1 reads max + 1 to "
           "the host)";
  if (op == "bincount")
    return "min and max read to the host once (the size), then ones or weights scatter-added";
  if (op == "scatter_reduce")
    return "include_self=False first scatters the identity; mean divides by the counts "
           "(scatter-added ones), integers floor-divide";
  if (op == "index_put")
    return "several index tensors: their checked offsets summed by keys passes, then one write; "
           "a bool mask index reads its count to the host (nonzero)";
  return "";
}

}  // namespace

// Operands: self (dtype, shape) and the index (dtype, shape).
void explain_scatter(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const std::string& op = entry.name;
  const DType t = call.dtypes[0];
  const DType index = call.dtypes.size() > 1 ? call.dtypes[1] : DType::kInt64;
  const bool reads_index =
      op != "masked_select" && op != "nonzero" && op != "argwhere" && op != "masked_scatter";
  if (reads_index && index != DType::kInt32 && index != DType::kInt64)
    throw InvalidArgument(
        op, op + ": indices must be int32 or int64, got " + std::string(dtype_name(index)) + ".");
  require_dtype_support(op, t, call.target.caps, call.target.device_id, call.target.device_name);
  require_dtype_support(op, DType::kInt64, call.target.caps, call.target.device_id,
                        call.target.device_name);
  std::vector<PlanChoice> choices;
  const bool distinct = op == "masked_select" || op == "nonzero" || op == "argwhere" ||
                        op == "one_hot" || op == "index_fill";
  int variant = abi::kScatterAtomic;
  if (op != "masked_scatter") {
    // The writes are the index's elements (masked ones: self's), into self's elements.
    const Shape& self = call.shapes[0];
    const Shape& writes = reads_index && call.shapes.size() > 1 ? call.shapes[1] : self;
    variant = plan_scatter({op, t, default_reduce(op), distinct, numel(writes), numel(self)},
                           call.target, choices)
                  .variant;
  }
  if (reads_index)
    choices.push_back({"index_dtype", std::string(dtype_name(index)), "", "",
                       "indices are read as stored (int64 needs the device's int64; none are "
                       "narrowed)."});
  choices.push_back(
      {"bounds", "device fault channel", "", "",
       op == "index_put" || op == "index_fill"
           ? "an index outside [-n, n) is recorded on the device and raised as DeviceFault at "
             "the next synchronize; negative ones count from the end; nothing is written for it."
           : "an index outside [0, n) is recorded on the device and raised as DeviceFault at "
             "the next synchronize; nothing is written for it."});
  const std::string composed = composition_of(op);
  if (!composed.empty())
    choices.push_back({"result", composed, "", "", "a composition on the device."});
  out.output = std::string(dtype_name(
                   op == "nonzero" || op == "argwhere" || op == "one_hot" ? DType::kInt64 : t)) +
               (op == "masked_select" || op == "nonzero" || op == "argwhere"
                    ? " (size read from the device)"
                    : " " + to_string(call.shapes[0]));
  out.kernel = op == "masked_scatter"
                   ? std::string("gather (take) and elementwise where")
                   : "scatter (op " + entry.table_op + "; variant " +
                         std::string(variant == abi::kScatterSorted        ? "keys, sort, sorted"
                                     : variant == abi::kScatterPartitioned ? "partitioned: count, "
                                                                             "partition, apply"
                                                                           : "atomic") +
                         ")";
  out.choices = choices;
}

// Operands: the sorted sequence (dtype, shape) and the values (dtype, shape).
void explain_search(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const std::string& op = entry.name;
  const DType t =
      promote_types(call.dtypes[0], call.dtypes.size() > 1 ? call.dtypes[1] : call.dtypes[0]);
  require_dtype_support(op, t, call.target.caps, call.target.device_id, call.target.device_name);
  require_dtype_support(op, DType::kInt64, call.target.caps, call.target.device_id,
                        call.target.device_name);
  const Shape& values = call.shapes.size() > 1 ? call.shapes[1] : call.shapes[0];
  out.output = "int64 " + to_string(values) + " (int32 with out_int32)";
  out.kernel = "search (op " + entry.table_op + ", " + std::to_string(numel(values)) +
               " values; variant binary)";
  out.choices.push_back({"variant", variant_name(KernelFamily::kSearch, abi::kSearchBinary), "", "",
                         "one thread per value: PyTorch's lower/upper-bound loop over its row, "
                         "comparisons in " +
                             std::string(dtype_name(t)) + " (NaN compares false, -0 = +0)."});
  out.choices.push_back({"dtype", std::string(dtype_name(t)), "", "",
                         "the sequence and the values promote to one dtype, as PyTorch."});
}

}  // namespace nbx::ops::detail
