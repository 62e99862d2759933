// explain(): the operands checked against the op's catalog entry, then the entry's family
// explain function (explain_families.cpp), its refusals caught and reported.
#include "core/ops/explain.hpp"

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/op_catalog.hpp"

namespace nbx::ops {

OpExplanation explain(std::string_view op, const std::vector<DType>& dtypes,
                      const std::vector<Shape>& shapes_in, const PlanTarget& target,
                      const ExplainArgs& args) {
  OpExplanation out;
  out.op = std::string(op);
  out.device = target.device_name;
  if (dtypes.empty())
    throw InvalidArgument("explain", "explain " + out.op + ": give at least one --dtype.");
  const OpEntry* entry = find_op(op);
  if (!entry)
    throw InvalidArgument("explain", "explain: '" + out.op +
                                         "' is not an op explain knows (nbx explain --list "
                                         "names them).");
  out.family = entry->family;
  const auto given = static_cast<int>(dtypes.size());
  if (given < entry->operands || given > entry->operands + entry->optional_operands)
    throw InvalidArgument(
        "explain", "explain " + out.op + ": the op takes " + std::to_string(entry->operands) +
                       (entry->optional_operands
                            ? " or " + std::to_string(entry->operands + entry->optional_operands)
                            : std::string()) +
                       " operands (" + entry->operand_names + "), " + std::to_string(given) +
                       " given.");
  std::vector<Shape> shapes = shapes_in;
  if (shapes.empty()) shapes.push_back(Shape{});
  if (shapes.size() == 1) shapes.resize(dtypes.size(), shapes[0]);
  if (shapes.size() != dtypes.size())
    throw InvalidArgument("explain", "explain " + out.op + ": " + std::to_string(dtypes.size()) +
                                         " dtypes but " + std::to_string(shapes.size()) +
                                         " shapes.");
  for (std::size_t k = 0; k < dtypes.size(); ++k)
    out.inputs.push_back(std::string(dtype_name(dtypes[k])) + " " + to_string(shapes[k]));
  try {
    entry->explain(*entry, {dtypes, shapes, target, args}, out);
    detail::name_single_variant(out);
  } catch (const Unsupported& e) {
    out.refused = true;
    out.refusal = e.what();
    out.refused_capability = e.capability();
  } catch (const InvalidArgument& e) {
    out.refused = true;
    out.refusal = e.what();
  }
  if (out.refused) {
    out.output.clear();
    out.kernel.clear();
    out.choices.clear();
  }
  return out;
}

std::vector<std::string> explainable_ops() {
  std::vector<std::string> names;
  for (const OpEntry& e : op_catalog()) names.push_back(e.name);
  return names;
}

std::string explanation_to_json(const OpExplanation& e, int indent) {
  nlohmann::json j;
  j["schema"] = "nbx.explain/1";
  j["op"] = e.op;
  j["family"] = e.family;
  j["device"] = e.device;
  j["inputs"] = e.inputs;
  j["refused"] = e.refused;
  if (e.refused) {
    j["refusal"] = e.refusal;
    j["capability"] = e.refused_capability;
  } else {
    j["output"] = e.output;
    j["kernel"] = e.kernel;
    for (const PlanChoice& c : e.choices)
      j["choices"].push_back({{"what", c.what},
                              {"value", c.value},
                              {"capability", c.capability},
                              {"source", c.source},
                              {"reason", c.reason}});
  }
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace nbx::ops
