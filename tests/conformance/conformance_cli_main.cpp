// A stand-alone `nbx`-like driver with only the conformance subcommand, so the meson tests
// exercise cli/cmd_conformance.cpp exactly as `nbx conformance` runs it.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cli_conformance.hpp"
#include "cli/cli_main_commands.hpp"
#include "core/errors.hpp"

int main(int argc, char** argv) {
  CLI::App app{"nbx-conformance: the conformance subcommand of nbx, on its own."};
  app.require_subcommand(1);
  nbx::cli::register_conformance_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const nbx::Error& e) {
    std::cerr << "nbx: " << e.what() << "\n";
    return 1;
  }
  return nbx::cli::exit_code();
}
