// The `nbx` command-line tool: one subcommand per file (cmd_*.cpp), registered here.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "cli/cli_commands.hpp"
#include "cli/cli_conformance.hpp"
#include "cli/cli_main_commands.hpp"
#include "cli/exit_status.hpp"
#include "nbx_config.h"

int main(int argc, char** argv) {
  CLI::App app{"nbx: run, inspect and check nbxtensor devices (CUDA, HIP, Vulkan, host)."};
  app.set_version_flag("--version", std::string("nbx ") + NBX_VERSION);
  app.require_subcommand(1);
  nbx::cli::register_devices_command(app);
  nbx::cli::register_caps_command(app);
  nbx::cli::register_device_files_command(app);
  nbx::cli::register_explain_command(app);
  nbx::cli::register_bench_command(app);
  nbx::cli::register_conformance_command(app);
  // A first word that is no subcommand is named (CLI11 said only "A subcommand is required").
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "nbx: unknown subcommand '" << argv[1] << "' (the subcommands: " << names
                << "); run nbx --help.\n";
      return nbx::cli::kExitUsage;
    }
  }
  return nbx::cli::run_app(app, argc, argv);
}
