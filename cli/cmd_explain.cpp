// `nbx explain OP --dtype D[,D…] --shape S[;S…] [--device DEV | --arch A] [--overlay F]
// [--groups G] [--causal] [--json]` prints the decision an op's wrapper takes on a device (present
// or not), without running — exit status 3 when that decision is a refusal; `nbx explain --list
// [--json]` lists every op it knows, `--list-ops` their names; `nbx explain to --dtype D
// --shape S --device A --to B` the route Tensor::to takes between two present devices.
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>

#include "cli/cli_main_commands.hpp"
#include "cli/cli_numbers.hpp"
#include "cli/exit_status.hpp"
#include "cli/explain_args.hpp"
#include "core/capability_resolver.hpp"
#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/ops/copy_route.hpp"
#include "core/ops/explain.hpp"
#include "core/ops/op_catalog.hpp"

namespace nbx::cli {
namespace {

struct ExplainOptions {
  std::string op, dtypes, shapes, device, arch, overlay, to;
  std::string groups = "1";
  bool causal = false;
  bool json = false;
  bool list = false;
  bool list_ops = false;
};

void print_text(const ops::OpExplanation& e) {
  std::cout << "explain " << e.op << " (" << e.family << ") on " << e.device << "\n";
  std::cout << "  inputs    ";
  for (std::size_t i = 0; i < e.inputs.size(); ++i) std::cout << (i ? "; " : "") << e.inputs[i];
  std::cout << "\n";
  if (e.refused) {
    std::cout << "  refused   " << e.refusal << "\n";
    if (!e.refused_capability.empty()) std::cout << "  missing   " << e.refused_capability << "\n";
    return;
  }
  std::cout << "  output    " << e.output << "\n  kernel    " << e.kernel << "\n";
  for (const ops::PlanChoice& c : e.choices) {
    std::cout << "  " << c.what << ": " << c.value << " — " << c.reason;
    if (!c.capability.empty()) std::cout << " [" << c.capability << ": " << c.source << "]";
    std::cout << "\n";
  }
}

void print_json(const ops::OpExplanation& e) {
  std::cout << ops::explanation_to_json(e) << "\n";
}

std::string dtype_list(const std::vector<DType>& dtypes) {
  std::string text;
  for (DType t : dtypes) text += (text.empty() ? "" : ",") + std::string(dtype_name(t));
  return text;
}

void print_list(bool json) {
  const std::span<const ops::OpEntry> ops = ops::op_catalog();
  if (json) {
    nlohmann::json j = {{"schema", "nbx.explain-list/1"}, {"ops", nlohmann::json::array()}};
    for (const ops::OpEntry& e : ops)
      j["ops"].push_back({{"op", e.name},
                          {"family", e.family},
                          {"table_op", e.table_op},
                          {"code", e.code},
                          {"operands", e.operands},
                          {"optional_operands", e.optional_operands},
                          {"operand_names", e.operand_names},
                          {"example",
                           {{"dtype", dtype_list(e.example_dtypes)},
                            {"shape", format_explain_shapes(e.example_shapes)}}}});
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  std::cout << ops.size()
            << " ops; each line: op, kernel family (table op), operands, and an "
               "example.\n";
  for (const ops::OpEntry& e : ops) {
    std::string family = e.family + (e.table_op == e.name ? "" : " (" + e.table_op + ")");
    std::cout << "  " << e.name << std::string(e.name.size() < 22 ? 22 - e.name.size() : 1, ' ')
              << family << std::string(family.size() < 28 ? 28 - family.size() : 1, ' ')
              << e.operand_names << "\n"
              << std::string(24, ' ') << "nbx explain " << e.name << " --dtype "
              << dtype_list(e.example_dtypes) << " --shape '"
              << format_explain_shapes(e.example_shapes) << "'\n";
  }
}

// --list-ops: the op names, a line each, for scripts (--json: the --list object).
void print_op_names() {
  for (const ops::OpEntry& e : ops::op_catalog()) std::cout << e.name << "\n";
}

void run_explain(const ExplainOptions& o) {
  if (o.list || (o.list_ops && o.json)) return print_list(o.json);
  if (o.list_ops) return print_op_names();
  if (o.op.empty() || o.dtypes.empty())
    throw InvalidArgument("explain",
                          "explain: give an op and its --dtype (or --list to see the ops).");
  const std::vector<DType> dtypes = parse_explain_dtypes(o.dtypes);
  const std::vector<Shape> shapes = parse_explain_shapes(o.shapes);
  const auto groups = static_cast<std::int64_t>(parse_whole_number(
      o.groups, "explain", "--groups", 1, std::numeric_limits<std::int64_t>::max()));
  if (!o.device.empty() && !o.arch.empty())
    throw InvalidArgument("explain", "explain: give --device or --arch, not both.");
  if (!o.to.empty()) {
    // Tensor::to(device): the route between two present devices (the runtime is asked).
    if (o.op != "to" || !o.arch.empty() || dtypes.size() != 1 || shapes.size() > 1)
      throw InvalidArgument("explain",
                            "explain: --to goes with op 'to', one --dtype, at most "
                            "one --shape and a present --device (not --arch).");
    const Device from = o.device.empty() ? default_device() : open(o.device);
    const ops::OpExplanation e =
        ops::explain_copy_route(dtypes[0], shapes.empty() ? Shape{} : shapes[0], from, open(o.to));
    return o.json ? print_json(e) : print_text(e);
  }
  Capabilities caps;
  std::string id, name;
  std::optional<Device> present;  // open while explain asks its has_kernel() (matmul variants)
  if (!o.arch.empty()) {
    caps = capabilities_for_arch(o.arch, "", o.overlay);
    id = o.arch;
    name = "arch " + o.arch;
  } else {
    const Device& dev = present.emplace(o.device.empty() ? default_device() : open(o.device));
    caps = o.overlay.empty()
               ? dev.capabilities()
               : resolve_capabilities(dev.id().backend, dev.properties(),
                                      dev.context().backend_device().display_name(), o.overlay);
    id = dev.str();
    name = o.overlay.empty() ? dev.display_name() : caps.device;
  }
  const ops::OpExplanation e =
      ops::explain(o.op, dtypes, shapes,
                   {caps, id, name, present ? &present->context().backend_device() : nullptr},
                   {groups, o.causal});
  o.json ? print_json(e) : print_text(e);
  if (e.refused) set_exit_code(kExitRefused);
}

}  // namespace

void register_explain_command(CLI::App& app) {
  static ExplainOptions o;
  auto* cmd = app.add_subcommand("explain",
                                 "Show the decision an op takes on a device (dtypes, "
                                 "widening, kernel variant, tiles) without running it.");
  cmd->add_option("op", o.op, "The op (add, div, cumsum, group_norm, addmm, …; --list).");
  cmd->add_option("--dtype", o.dtypes, "Operand dtypes, comma-separated (int32,int32).");
  cmd->add_option("--shape", o.shapes,
                  "Operand shapes, ';'-separated (4096,4096;4096); one serves all.");
  cmd->add_option("--device", o.device, "A present device (cuda:0, vulkan:0, host).");
  cmd->add_option("--arch", o.arch,
                  "An architecture by device file (nvidia/sm_70, amd/gfx90a, a .yml).");
  cmd->add_option("--overlay", o.overlay, "A device-file overlay restricting the capabilities.");
  cmd->add_option("--to", o.to,
                  "With op 'to': the target device; shows the copy's route from --device.");
  cmd->add_option("--groups", o.groups, "group_norm's num_groups (default 1).");
  cmd->add_flag("--causal", o.causal, "scaled_dot_product_attention's is_causal.");
  cmd->add_flag("--list", o.list, "List every op explain knows, with an example call.");
  cmd->add_flag("--list-ops", o.list_ops, "List the op names only, a line each.");
  cmd->add_flag("--json", o.json, "Machine-readable output.");
  cmd->callback([] { run_explain(o); });
}

}  // namespace nbx::cli
