// The `nbx` subcommands, each registered on the top-level CLI11 app by cli/main.cpp.
// A command's callback prints its own errors and ends with CLI::RuntimeError(exit code)
// on failure, so main's CLI11_PARSE / app.exit() turns that into the process exit status.
#pragma once

#include <CLI/CLI.hpp>

namespace nbx::cli {

// `nbx caps [DEVICE] [--json] [--overlay FILE] [--arch A [--backend B]] [--diff A B]`
// (cli/cmd_caps.cpp).
void register_caps_command(CLI::App& app);
// `nbx device-files check [DIR]` (cli/cmd_device_files.cpp).
void register_device_files_command(CLI::App& app);

}  // namespace nbx::cli
