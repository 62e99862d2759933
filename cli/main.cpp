// The `nbx` command-line tool: one subcommand per file (cmd_*.cpp), registered here.
#include <CLI/CLI.hpp>

#include <string>

#include "cli/cli_commands.hpp"
#include "cli/cli_conformance.hpp"
#include "cli/cli_main_commands.hpp"
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
  return nbx::cli::run_app(app, argc, argv);
}
