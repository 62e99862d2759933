// `nbx conformance`: every elementwise op x dtype on every device against the host
// reference (the suite lives in tests/conformance, library nbx_conformance).
#pragma once

#include <CLI/CLI.hpp>

namespace nbx::cli {

// Registers the subcommand. Its exit status (through nbx::cli::set_exit_code): 0 when no
// cell failed, 1 on any FAIL, 77 when the backend or device asked for is absent (so a
// meson test reports SKIP). Bad arguments throw nbx::InvalidArgument, as elsewhere in nbx.
void register_conformance_command(CLI::App& app);

}  // namespace nbx::cli
