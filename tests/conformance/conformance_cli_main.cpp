// A stand-alone `nbx`-like driver with only the conformance subcommand, so the meson tests
// exercise cli/cmd_conformance.cpp exactly as `nbx conformance` runs it.
#include <CLI/CLI.hpp>

#include "cli/cli_conformance.hpp"
#include "cli/cli_main_commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"nbx-conformance: the conformance subcommand of nbx, on its own."};
  app.require_subcommand(1);
  nbx::cli::register_conformance_command(app);
  return nbx::cli::run_app(app, argc, argv);
}
