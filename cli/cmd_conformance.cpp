// `nbx conformance [--backend B] [--device D] [--families f,g] [--ops a,b] [--dtypes …]
//                  [--seed N] [--quick] [--shard I/N] [--json FILE] [--overlay FILE]`
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <tuple>

#include "cli/cli_conformance.hpp"
#include "cli/cli_main_commands.hpp"
#include "cli/cli_numbers.hpp"
#include "cli/exit_status.hpp"
#include "core/errors.hpp"
#include "tests/conformance/conformance.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::cli {
namespace {

struct ConformanceArgs {
  std::string backend, device, json_path, overlay;
  std::vector<std::string> families, ops, dtypes;
  std::string seed = std::to_string(conformance::Options{}.seed);
  bool quick = false, list_ops = false;
  std::string shard;  // "i/n"
};

// "2/3" -> (1, 3): shards are numbered from 1 on the command line.
std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos)
    throw InvalidArgument("conformance",
                          "conformance: --shard '" + text + "': write I/N with 1 <= I <= N.");
  const std::uint64_t n =
      parse_whole_number(text.substr(slash + 1), "conformance", "--shard's N", 1, 1u << 20);
  const std::uint64_t i =
      parse_whole_number(text.substr(0, slash), "conformance", "--shard's I", 1, n);
  return {static_cast<int>(i - 1), static_cast<int>(n)};
}

// --list-ops: a line a family, its ops in suite order; nothing is run.
void list_ops() {
  for (const std::string& f : conformance::family_names()) {
    std::string ops;
    for (const std::string& op : conformance::family_op_names(f))
      ops += (ops.empty() ? "" : ", ") + op;
    std::cout << f << ": " << ops << "\n";
  }
}

int run(const ConformanceArgs& a) {
  if (a.list_ops) {
    list_ops();
    return kExitOk;
  }
  require_writable(a.json_path, "conformance");
  conformance::Options o;
  if (!a.backend.empty()) o.backend = a.backend;
  if (!a.device.empty()) o.device = a.device;
  o.ops = a.ops;
  o.families = a.families;
  for (const std::string& d : a.dtypes) {
    try {
      o.dtypes.push_back(parse_dtype(d));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("conformance", "conformance: --dtypes: " + std::string(e.what()));
    }
  }
  o.seed = parse_whole_number(a.seed, "conformance", "--seed", 0,
                              std::numeric_limits<std::uint64_t>::max());
  o.quick = a.quick;
  if (!a.shard.empty()) std::tie(o.shard_index, o.shard_count) = parse_shard(a.shard);
  o.overlay = a.overlay;
  o.progress = &std::cerr;
  o.progress_live = isatty(STDERR_FILENO) != 0;  // nothing more when piped or redirected
  const conformance::Report report = conformance::run_conformance(o);
  conformance::print_report(report, std::cout);
  if (!a.json_path.empty()) {
    std::ofstream f(a.json_path);
    f << conformance::report_to_json(report) << "\n";
    if (!f)  // the folder went away during the run: the report is lost, not the verdict
      throw Error("conformance: could not write the JSON report to " + a.json_path + ".");
  }
  if (report.counts.failed) return kExitCheckFailed;
  // Asked for one backend or device and it is not here: nothing was checked.
  if (report.devices.empty() && (o.backend || o.device)) return kExitAbsent;
  return kExitOk;
}

}  // namespace

void register_conformance_command(CLI::App& app) {
  // Owned by the callback, so each registration (one per CLI::App) has its own.
  auto args = std::make_shared<ConformanceArgs>();
  std::string op_list;
  for (const std::string& n : conformance::suite_op_names())
    op_list += (op_list.empty() ? "" : ", ") + n;
  std::string family_list;
  for (const std::string& f : conformance::family_names())
    family_list += (family_list.empty() ? "" : ", ") + f;
  auto* cmd = app.add_subcommand(
      "conformance",
      "Run every op x dtype (elementwise, cast between every dtype pair, reductions, scans, "
      "softmax, norms, matmul, creation, index reads, sorts) on every device found and compare "
      "with the "
      "host reference. Cells: . pass, F FAIL, r refused by name, "
      "- n/a. Exit status 1 on any FAIL, 77 when the requested backend/device is absent (README).");
  cmd->add_option("--backend", args->backend,
                  "Only this backend's devices (host, cuda, hip, vulkan).");
  cmd->add_option("--device", args->device, "Only this device, e.g. vulkan:0.");
  cmd->add_option("--families", args->families,
                  "Only these families (comma-separated; default all): " + family_list + ".")
      ->delimiter(',');
  cmd->add_option("--ops", args->ops, "Only these ops (comma-separated): " + op_list + ".")
      ->delimiter(',');
  cmd->add_option("--dtypes", args->dtypes,
                  "Only these input dtypes (comma-separated), e.g. float32,bf16.")
      ->delimiter(',');
  cmd->add_option("--seed", args->seed, "Seed of the random inputs (printed with every failure).")
      ->capture_default_str();
  cmd->add_flag("--quick", args->quick,
                "The CI subset: views, broadcasts and scalars only for float32 and int32 (every "
                "op x dtype still runs contiguous, 0-d and 0-size inputs).");
  cmd->add_option("--shard", args->shard,
                  "Only every N-th op, starting at the I-th (I/N), to split a slow device's run "
                  "over several processes.");
  cmd->add_option("--json", args->json_path, "Also write the full report as JSON to FILE.");
  cmd->add_option("--overlay", args->overlay,
                  "Capability overlay (YAML) restricting the devices under test, not the host "
                  "reference.");
  cmd->add_flag("--list-ops", args->list_ops,
                "List the suite's ops, a line a family, and run nothing.");
  cmd->callback([args] { set_exit_code(run(*args)); });
}

}  // namespace nbx::cli
